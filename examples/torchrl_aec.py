"""Self-play DQN on gym-tictactoe's two-player AEC env (PettingZoo), with TorchRL.

TorchRL's own ``PettingZooWrapper`` turns the AEC env into TorchRL's env API: both seats in one
group, ``("agents", "mask")`` saying which of the two moves at each step, and the legal cells in
``("agents", "action_mask")``. One Q-network plays both seats (each agent observes the board as
its own marks and the other's), TorchRL's ``Collector`` plays it epsilon-greedily, and a
``ReplayBuffer`` keeps each move as one transition. At the end the greedy network is measured
exactly with ``gym_tictactoe.evaluation``: the best any opponent can do against it in each seat,
and its move in all 4,520 positions.

    pip install ".[examples]" -c constraints.txt   # torch, torchrl, tyro; pettingzoo comes too
    python examples/torchrl_aec.py                  # --help lists every setting
    python examples/torchrl_aec.py --tiny           # a few seconds: the test suite's run

The target is the *negamax* one of a zero-sum game whose moves alternate: after a move the
opponent is to move, and what is best for it is worst for the mover, so

    Q(s, a) <- r + gamma * (1 - done) * (-max_a' Q(s', a'))

with ``s'`` the position as the next mover sees it (its marks first) and the max over its legal
cells. ``r`` is the mover's reward at its own move: +1 for the winning move, 0 otherwise (a loss
shows up as the -1 that the opponent's winning reply passes back through the negation).
"""

import copy
import logging
import time
import warnings
from dataclasses import dataclass

import numpy as np

from gym_tictactoe.evaluation import evaluate
from gym_tictactoe.extras import MissingExtra

try:
    import torch
    import tyro
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.modules import EGreedyModule, QValueModule

    from gym_tictactoe.envs.pettingzoo import env as two_player_env
except (ModuleNotFoundError, MissingExtra) as error:  # MissingExtra: pettingzoo
    raise SystemExit(f"{error.name} is not installed: pip install \".[examples]\" "
                     "-c constraints.txt in a clone of gym-tictactoe") from None

OBSERVATION = ("agents", "observation", "observation")  # (..., 2 agents, rows, cols, 2) int8


@dataclass
class Args:
    seed: int = 0
    """seed of torch (exploration, replay sampling, the network's initial weights)"""
    total_frames: int = 150_000
    """moves to play, both seats counted"""
    frames_per_batch: int = 500
    """moves the collector plays between training phases"""
    updates_per_batch: int = 50
    """gradient steps after each batch of moves"""
    buffer_size: int = 50_000
    batch_size: int = 128
    learning_rate: float = 5e-4
    gamma: float = 0.99
    eps_init: float = 1.0
    eps_end: float = 0.2
    exploration_fraction: float = 0.3
    """fraction of total_frames to go from eps_init down to eps_end"""
    target_update_every: int = 250
    """gradient steps between copies of the network into the target network"""
    eval_frequency: int = 30_000
    """moves between exact evaluations printed during training"""
    tiny: bool = False
    """a smoke-sized run (1,000 moves) for tests: checks that everything runs, learns little"""


class QNetwork(nn.Module):
    """Q-values of the 9 cells from the two observation planes (own marks, the other's)."""

    def __init__(self, n_cells: int = 9):
        super().__init__()
        self.network = nn.Sequential(
            nn.Linear(2 * n_cells, 256), nn.ReLU(),
            nn.Linear(256, 256), nn.ReLU(),
            nn.Linear(256, n_cells),
        )

    def forward(self, planes):
        return self.network(planes.flatten(-3).float())


def masked_max(q_values, masks):
    """The max over the legal cells; a finished game has none, and its value is multiplied by
    (1 - done) = 0 anyway, so a finite stand-in keeps it from becoming nan."""
    return torch.where(masks, q_values, torch.tensor(-1e9)).max(dim=-1).values


def mover_transitions(batch: TensorDict) -> TensorDict:
    """One transition per move, from the mover's side: its observation and move, its reward,
    whether the game ended, and the position and legal cells the *next* mover sees."""
    steps = torch.arange(batch.shape[0])
    mover = batch["agents", "mask"].long().argmax(dim=-1)
    next_mover = batch["next", "agents", "mask"].long().argmax(dim=-1)
    return TensorDict({
        "observation": batch[OBSERVATION][steps, mover],
        "action": batch["agents", "action"][steps, mover],
        "reward": batch["next", "agents", "reward"][steps, mover, 0],
        "done": batch["next", "done"][:, 0].float(),
        "next_observation": batch[("next", *OBSERVATION)][steps, next_mover],
        "next_mask": batch["next", "agents", "action_mask"][steps, next_mover],
    }, batch_size=[batch.shape[0]])


class GreedyPolicy:
    """The network as a gym_tictactoe policy: boards of 0 empty, 1 own mark, 2 the other's
    (the single env's observation) become the AEC env's two planes; the legal cell of highest
    Q-value is played."""

    def __init__(self, q_network: QNetwork):
        self.q_network = q_network

    def act_batch(self, boards, masks):
        boards = torch.as_tensor(np.asarray(boards))
        planes = torch.stack([boards == 1, boards == 2], dim=-1).reshape(-1, 3, 3, 2)
        with torch.no_grad():
            q_values = self.q_network(planes)
        legal = torch.as_tensor(np.asarray(masks)).bool()
        return torch.where(legal, q_values, torch.tensor(-1e9)).argmax(dim=-1).numpy()

    def __call__(self, board, mask):
        return int(self.act_batch(board[None], mask[None])[0])


def report_line(q_network: QNetwork) -> str:
    report = evaluate(GreedyPolicy(q_network))
    seats = report.best_response
    return (f"best response as X: {seats['X'].result}, as O: {seats['O'].result}; "
            f"optimal-move rate {report.move_rate.rate:.2%}; perfect: {report.perfect}")


if __name__ == "__main__":
    args = tyro.cli(Args)
    for name in ("total_frames", "frames_per_batch", "buffer_size", "batch_size",
                 "target_update_every", "eval_frequency"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1; "
                             f"got {getattr(args, name)}")
    if args.tiny:
        args.total_frames, args.frames_per_batch, args.updates_per_batch = 1_000, 250, 10
        args.eval_frequency = 10**9
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: threads cost more than they give
    logging.getLogger("torchrl").setLevel(logging.WARNING)  # no INFO line per buffer
    # TorchRL tests its wrapper on PettingZoo 1.24.3 and says so on every newer one.
    warnings.filterwarnings("ignore", "PettingZoo in TorchRL is tested", UserWarning)

    # The AEC env, wrapped by TorchRL: both agents in one group "agents".
    env = PettingZooWrapper(env=two_player_env(), use_mask=True, categorical_actions=True,
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)
    action_spec = env.full_action_spec["agents", "action"]

    q_network = QNetwork()
    target_network = copy.deepcopy(q_network)
    greedy = TensorDictSequential(
        TensorDictModule(q_network, in_keys=[OBSERVATION], out_keys=[("agents", "action_value")]),
        QValueModule(action_value_key=("agents", "action_value"),
                     action_mask_key=("agents", "action_mask"), action_space="categorical",
                     out_keys=[("agents", "action"), ("agents", "action_value"),
                               ("agents", "chosen_action_value")]),
    )
    exploration = EGreedyModule(action_spec, args.eps_init, args.eps_end,
                                int(args.exploration_fraction * args.total_frames),
                                action_key=("agents", "action"),
                                action_mask_key=("agents", "action_mask"))
    collector = Collector(env, TensorDictSequential(greedy, exploration),
                          frames_per_batch=args.frames_per_batch, total_frames=args.total_frames,
                          auto_register_policy_transforms=False)  # no recurrent state to track
    buffer = ReplayBuffer(storage=LazyTensorStorage(args.buffer_size),
                          batch_size=args.batch_size)
    optimizer = torch.optim.Adam(q_network.parameters(), lr=args.learning_rate)

    start_time, updates, frames = time.time(), 0, 0
    for batch in collector:
        frames += batch.numel()
        buffer.extend(mover_transitions(batch.reshape(-1)))
        exploration.step(batch.numel())
        for _ in range(args.updates_per_batch):
            sample = buffer.sample()
            with torch.no_grad():
                next_q = target_network(sample["next_observation"])
                opponent_best = masked_max(next_q, sample["next_mask"])
                target = sample["reward"] - args.gamma * (1 - sample["done"]) * opponent_best
            q = q_network(sample["observation"]).gather(-1, sample["action"][:, None])[:, 0]
            loss = nn.functional.mse_loss(q, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            updates += 1
            if updates % args.target_update_every == 0:
                target_network.load_state_dict(q_network.state_dict())
        if frames % args.eval_frequency < batch.numel() and frames < args.total_frames:
            print(f"{frames:>9,} moves, {time.time() - start_time:5.0f} s: "
                  f"{report_line(q_network)}", flush=True)
    collector.shutdown()

    # The exact evaluation of the greedy network in both seats (gym_tictactoe.evaluation).
    print(f"after {frames:,} moves ({time.time() - start_time:.0f} s): {report_line(q_network)}")
