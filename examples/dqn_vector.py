"""DQN on gym-tictactoe's NumPy vector env, in one file, in the style of CleanRL's dqn.py.

Read it top to bottom: the settings (``Args``), the Q-network, then the training loop (act
epsilon-greedily among the legal cells, store the transitions, regress Q on the one-step target,
copy the target network now and then) and, at the end, the exact evaluation: the best any
opponent can do against the greedy policy in each seat, and its move in all 4,520 positions.

    pip install ".[examples]" -c constraints.txt   # torch, tyro (CleanRL's argument parser)
    python examples/dqn_vector.py                   # --help lists every setting
    python examples/dqn_vector.py --tiny            # a few seconds: the test suite's run

Differences from CleanRL's dqn.py, each for tic-tac-toe: the action mask (the greedy move and
the target's max are over the legal cells only, random moves are drawn among them), the
observation one-hot encoded in the network (empty / own / opponent per cell), exploring starts
(most episodes begin at a random position, so the positions after the agent's own mistakes are
seen), Gymnasium 1.x's next-step autoreset (the step that resets a board is no transition), a
plain NumPy replay buffer, and no logging beyond a line per evaluation period.
"""

import random
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)
from gym_tictactoe.evaluation import evaluate

try:
    import torch
    import torch.nn.functional as F
    import tyro
    from torch import nn
except ModuleNotFoundError as error:
    raise SystemExit(f"{error.name} is not installed: pip install \".[examples]\" "
                     "-c constraints.txt in a clone of gym-tictactoe") from None


@dataclass
class Args:
    seed: int = 1
    """seed of the experiment (torch, the envs, exploration)"""
    total_timesteps: int = 200_000
    """transitions to collect, over all envs"""
    num_envs: int = 16
    """boards played at once by the vector env"""
    opponent: str = "epsilon:epsilon=0.2,inner=minimax"
    """the env's opponent: minimax with 20% random moves"""
    start_probability: float = 0.75
    """share of episodes that begin at a random reachable position (exploring starts)"""
    learning_rate: float = 5e-4
    buffer_size: int = 50_000
    gamma: float = 0.99
    tau: float = 1.0
    """target network update rate (1: a full copy)"""
    target_network_frequency: int = 1_000
    """timesteps between target network updates"""
    batch_size: int = 128
    start_e: float = 1.0
    end_e: float = 0.2
    exploration_fraction: float = 0.2
    """fraction of total_timesteps to go from start_e down to end_e"""
    learning_starts: int = 1_000
    train_frequency: int = 1
    """vector steps (of num_envs timesteps each) between gradient steps"""
    eval_frequency: int = 50_000
    """timesteps between exact evaluations printed during training"""
    tiny: bool = False
    """a smoke-sized run (2,000 timesteps) for tests: checks that everything runs, learns little"""


class QNetwork(nn.Module):
    def __init__(self, n_cells: int):
        super().__init__()
        self.network = nn.Sequential(
            nn.Linear(3 * n_cells, 256), nn.ReLU(),
            nn.Linear(256, 256), nn.ReLU(),
            nn.Linear(256, n_cells),
        )

    def forward(self, boards):  # boards: (N, cells) of 0 empty, 1 own mark, 2 opponent's
        return self.network(F.one_hot(boards.long(), 3).flatten(1).float())


def masked(q_values, masks):
    """Q-values with illegal cells pushed far below any real value (finite: 0 * it is 0)."""
    return torch.where(masks.bool(), q_values, torch.tensor(-1e9))


class GreedyPolicy:
    """The trained network as a gym_tictactoe policy: the legal cell of highest Q-value."""

    def __init__(self, q_network: QNetwork):
        self.q_network = q_network

    def act_batch(self, observations, masks):
        with torch.no_grad():
            q_values = self.q_network(torch.as_tensor(observations))
        return masked(q_values, torch.as_tensor(masks)).argmax(dim=1).numpy()

    def __call__(self, observation, mask):
        return int(self.act_batch(observation[None], mask[None])[0])


def linear_schedule(start_e: float, end_e: float, duration: int, t: int):
    slope = (end_e - start_e) / duration
    return max(slope * t + start_e, end_e)


def report_line(policy: GreedyPolicy) -> str:
    report = evaluate(policy)
    seats = report.best_response
    return (f"best response as X: {seats['X'].result}, as O: {seats['O'].result}; "
            f"optimal-move rate {report.move_rate.rate:.2%}; perfect: {report.perfect}")


if __name__ == "__main__":
    args = tyro.cli(Args)
    for name in ("total_timesteps", "num_envs", "buffer_size", "batch_size", "train_frequency",
                 "target_network_frequency", "eval_frequency"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1; "
                             f"got {getattr(args, name)}")
    if args.tiny:
        args.total_timesteps, args.learning_starts, args.eval_frequency = 2_000, 500, 10**9
        args.target_network_frequency = 500
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: threads cost more than they give

    # env setup
    try:  # the env checks its arguments: a bad --opponent is one line, not a traceback
        envs = gym.make_vec("TicTacToe-v0", num_envs=args.num_envs,
                            vectorization_mode="vector_entry_point", opponent=args.opponent,
                            agent_mark="random", start="random",
                            start_probability=args.start_probability)
    except ValueError as error:
        raise SystemExit(f"bad setting: {error}") from None
    n_cells = envs.single_action_space.n

    q_network = QNetwork(n_cells)
    optimizer = torch.optim.Adam(q_network.parameters(), lr=args.learning_rate)
    target_network = QNetwork(n_cells)
    target_network.load_state_dict(q_network.state_dict())
    policy = GreedyPolicy(q_network)

    # the replay buffer: plain arrays, overwritten in a ring
    rb_obs = np.zeros((args.buffer_size, n_cells), dtype=np.int8)
    rb_next_obs = np.zeros((args.buffer_size, n_cells), dtype=np.int8)
    rb_next_masks = np.zeros((args.buffer_size, n_cells), dtype=np.int8)
    rb_actions = np.zeros(args.buffer_size, dtype=np.int64)
    rb_rewards = np.zeros(args.buffer_size, dtype=np.float32)
    rb_dones = np.zeros(args.buffer_size, dtype=np.float32)
    rb_size, rb_pos = 0, 0

    start_time = time.time()
    obs, infos = envs.reset(seed=args.seed)
    masks = infos["action_mask"]
    autoreset = np.zeros(args.num_envs, dtype=bool)  # these boards reset on the next step
    n_steps = args.total_timesteps // args.num_envs
    for step in range(n_steps):
        global_step = step * args.num_envs
        # ALGO LOGIC: put action logic here
        epsilon = linear_schedule(args.start_e, args.end_e,
                                  args.exploration_fraction * args.total_timesteps, global_step)
        actions = policy.act_batch(obs, masks)
        # A board whose game just ended has no legal cell: it resets and ignores its action.
        explore = (np.random.random(args.num_envs) < epsilon) & masks.any(axis=1)
        for i in np.flatnonzero(explore):
            actions[i] = np.random.choice(np.flatnonzero(masks[i]))

        # TRY NOT TO MODIFY: execute the game and log data.
        next_obs, rewards, terminations, truncations, infos = envs.step(actions)
        next_masks = infos["action_mask"]

        # Store the transitions; a board that was resetting on this step made none.
        for i in np.flatnonzero(~autoreset):
            rb_obs[rb_pos], rb_next_obs[rb_pos] = obs[i], next_obs[i]
            rb_actions[rb_pos], rb_rewards[rb_pos] = actions[i], rewards[i]
            rb_dones[rb_pos], rb_next_masks[rb_pos] = terminations[i], next_masks[i]
            rb_pos, rb_size = (rb_pos + 1) % args.buffer_size, min(rb_size + 1, args.buffer_size)
        autoreset = terminations | truncations
        obs, masks = next_obs, next_masks

        # ALGO LOGIC: training.
        if global_step > args.learning_starts and step % args.train_frequency == 0:
            batch = np.random.randint(0, rb_size, args.batch_size)
            with torch.no_grad():
                next_q = target_network(torch.as_tensor(rb_next_obs[batch]))
                target_max = masked(next_q, torch.as_tensor(rb_next_masks[batch])).max(dim=1)[0]
                dones = torch.as_tensor(rb_dones[batch])
                rewards_ = torch.as_tensor(rb_rewards[batch])
                td_target = rewards_ + args.gamma * target_max * (1 - dones)
            old_val = q_network(torch.as_tensor(rb_obs[batch])).gather(
                1, torch.as_tensor(rb_actions[batch])[:, None]).squeeze(1)
            loss = F.mse_loss(td_target, old_val)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        # update the target network
        if step % max(args.target_network_frequency // args.num_envs, 1) == 0:
            for target_param, param in zip(target_network.parameters(), q_network.parameters(),
                                           strict=True):
                target_param.data.copy_(args.tau * param.data
                                        + (1.0 - args.tau) * target_param.data)

        if global_step and global_step % args.eval_frequency < args.num_envs:
            print(f"{global_step:>9,} timesteps, {time.time() - start_time:5.0f} s: "
                  f"{report_line(policy)}", flush=True)

    envs.close()
    # The exact evaluation of the greedy policy (gym_tictactoe.evaluation): every position.
    print(f"after {n_steps * args.num_envs:,} timesteps ({time.time() - start_time:.0f} s): "
          f"{report_line(policy)}")
