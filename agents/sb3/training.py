"""Stable-Baselines3 / sb3-contrib glue for TicTacToe-v0: envs, models, exact evaluation.

Three algorithms, one table of hyperparameters each (``HYPERPARAMETERS``):

* ``"maskable-ppo"``: sb3-contrib's MaskablePPO on the env's own ``MultiDiscrete([3] * 9)``
  board (SB3 one-hot encodes MultiDiscrete itself) with ``env.action_masks()``, which SB3
  reaches through Monitor and DummyVecEnv with ``env_method``, so no wrapper is needed.
* ``"ppo"`` and ``"dqn"``: plain PPO and DQN on :class:`OneHotObservation` (27 floats). They get
  no mask, so an illegal move loses the game and they learn legality from the reward.

By default the training envs show every algorithm canonical boards with exploring starts
(``ENV_OPTIONS``). :class:`ModelPolicy` (``agents.sb3.policy``) turns any of them into a Policy
``(obs, mask) -> cell`` that always respects the mask, :class:`ExactEvalCallback` runs
``gym_tictactoe.evaluation.evaluate`` during training; ``agents.sb3.files`` writes and reads
the models' zips without pickle.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import gymnasium as gym
import torch as th
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from agents import EXPLORING_STARTS, next_mark
from agents.sb3 import policy as sb3_policy
from agents.sb3.policy import (  # re-exported: agents.sb3 is the module users import
    ALGO_CLASSES,
    ALGOS,
    ModelPolicy,
    algo_of,
    check_algo,
    observation_space,
    uses_one_hot,
)
from agents.sb3.vec_env import TicTacToeSB3VecEnv
from gym_tictactoe import evaluation, game
from gym_tictactoe.checks import check_int
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.wrappers import OneHotObservation
from gym_tictactoe.evaluation.report import checkpoint_message, checkpoint_result, curve_entry
from gym_tictactoe.players.opponents import Opponent, parse_opponent
from gym_tictactoe.seeding import check_seed

__all__ = [
    "ALGOS", "ALGO_CLASSES", "CURRICULUM", "ENV_OPTIONS", "HYPERPARAMETERS", "N_ENVS",
    "ExactEvalCallback", "ModelPolicy", "algo_of", "build_model", "check_algo", "make_env",
    "make_training_env", "make_vec_env", "observation_space", "one_hot", "torch_threads",
    "train", "uses_one_hot",
]
one_hot = sb3_policy.one_hot  # boards as OneHotObservation encodes them

# Minimax that plays a random move 20% of the time: its perfect moves punish the agent's
# mistakes, its random ones lead into the positions that follow the opponent's. With exploring
# starts (ENV_OPTIONS) reaching rare positions no longer rests on the opponent's randomness, and
# the stronger opponent gives sharper values (docs/figures.md, "What each change buys": the
# curriculum row). Without exploring starts 0.4 was the better one.
CURRICULUM = "epsilon:epsilon=0.2"
# The curriculum before exploring starts: what benchmarks/training.py's "before" variant uses.
OLD_CURRICULUM = "epsilon:epsilon=0.4"

# Small networks: the whole game has 4,520 positions to face, so two layers of 64 are plenty and
# keep CPU updates cheap. Constant schedules only, so sb3_files.save_model can store them as
# plain JSON.
# PPO's limit here is exploration: most of the 4,520 positions follow the agent's OWN mistakes,
# so a high entropy bonus matters most, and two layers of 128 beat two of 64 (the sweep that
# chose both: docs/figures.md, "How the settings were chosen").
_PPO_COMMON: dict[str, Any] = {
    "n_steps": 64,           # x 64 boards = 4,096 transitions (about 1,200 games) per update
    "batch_size": 512,       # 8 minibatches x 10 epochs = 80 gradient steps per update
    "n_epochs": 10,
    "learning_rate": 1e-3,   # higher than SB3's 3e-4: the problem is tiny and rewards exact
    "gamma": 0.99,           # < 1 prefers the faster win; episodes last at most 5 agent moves
    "gae_lambda": 0.95,
    "ent_coef": 0.3,
    "clip_range": 0.2,
    "policy_kwargs": {"net_arch": {"pi": [128, 128], "vf": [128, 128]}},
}
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "maskable-ppo": copy.deepcopy(_PPO_COMMON),
    "ppo": copy.deepcopy(_PPO_COMMON),
    "dqn": {
        "learning_rate": 5e-4,
        "buffer_size": 50_000,           # the last ~15k games, ~11 MB of one-hot boards
        "learning_starts": 1_000,
        "batch_size": 128,
        "gamma": 0.99,
        "train_freq": 1,                 # one gradient step per vector step (4 transitions)
        "gradient_steps": 1,
        "target_update_interval": 1_000,
        # Of the learn() budget, from epsilon 1 down to 0.2, which stays: exploration is what
        # reaches the positions after the agent's own mistakes (0.05 plateaued lower).
        "exploration_fraction": 0.2,
        "exploration_final_eps": 0.2,
        "policy_kwargs": {"net_arch": [128, 128]},  # Q-values of all 9 cells share one head
    },
}
N_ENVS = {"maskable-ppo": 64, "ppo": 64, "dqn": 8}
# What the training envs show each algorithm by default (``benchmarks/training.py --ablation``
# measures each choice; README "Stable-Baselines3 agents"). Every board in its canonical
# orientation: the 8 symmetric copies of a position become one input, so what is learnt in one
# corner holds in all four. And agents.EXPLORING_STARTS: three quarters of the episodes start at
# a uniformly drawn position, since games from the empty board against one curriculum rarely
# reach the positions off the agent's own line of play, where a best response then beats it.
ENV_OPTIONS: dict[str, dict[str, Any]] = {
    algo: {"canonical": True, **EXPLORING_STARTS} for algo in ALGOS
}


# --- environments ---------------------------------------------------------------------------

def _base_env(opponent: str | Opponent, agent_mark: str, rules: game.Rules) -> TicTacToeEnv:
    # Each env needs its own opponent: a mixture remembers which player it drew this episode.
    player = (parse_opponent(opponent, rules) if isinstance(opponent, str)
              else copy.deepcopy(opponent))
    return TicTacToeEnv(opponent=player, agent_mark=agent_mark, **rules.kwargs)


def make_env(
    opponent: str | Opponent = CURRICULUM, agent_mark: str = "random", one_hot: bool = False,
    seed: int | None = None, rules: game.Rules = game.TICTACTOE,
) -> Callable[[], gym.Env]:
    """A thunk building TicTacToeEnv -> Monitor (-> OneHotObservation), as SB3 expects.

    ``opponent`` is an opponent spec (``gym_tictactoe.players.opponents.parse_opponent``) or object
    (copied per env). With ``seed`` the env's first reset and its action space are seeded.
    ``rules``: the board (``game.rules(rows, cols, win_length)``; 3x3 by default).
    """
    def thunk() -> gym.Env:
        env: gym.Env = Monitor(_base_env(opponent, agent_mark, rules))
        if one_hot:
            env = OneHotObservation(env)
        if seed is not None:
            env.reset(seed=seed)
            env.action_space.seed(seed)
        return env
    return thunk


def make_vec_env(
    algo: str, n_envs: int | None = None, opponent: str | Opponent = CURRICULUM,
    agent_mark: str = "random", seed: int | None = None, rules: game.Rules = game.TICTACTOE,
) -> VecEnv:
    """SB3's own ``make_vec_env`` (a DummyVecEnv of monitored envs) with ``algo``'s encoding.

    ``n_envs`` defaults to ``N_ENVS[algo]``; env ``i`` is seeded with ``seed + i``.
    """
    check_algo(algo)
    n_envs, seed = check_int(n_envs, "n_envs", 1, none=True), check_seed(seed)
    wrapper = OneHotObservation if uses_one_hot(algo) else None
    return sb3_make_vec_env(
        partial(_base_env, opponent, agent_mark, rules), n_envs=n_envs or N_ENVS[algo], seed=seed,
        wrapper_class=wrapper, vec_env_cls=DummyVecEnv,
    )


def make_training_env(
    algo: str, n_envs: int | None = None, opponent: str | Opponent = CURRICULUM,
    agent_mark: str = "random", seed: int | None = None, rules: game.Rules = game.TICTACTOE,
    **options: Any,
) -> VecEnv:
    """The NumPy-batched ``TicTacToeSB3VecEnv`` for ``algo`` on the board ``rules``. (The vector
    env asks opponents that are not table players board by board, so every opponent works.)
    ``options``: the adapter's ``canonical``, ``start`` and ``start_probability``."""
    n = check_int(n_envs, "n_envs", 1, none=True) or N_ENVS[check_algo(algo)]
    return TicTacToeSB3VecEnv(n, opponent, agent_mark, one_hot=uses_one_hot(algo), seed=seed,
                              **rules.kwargs, **options)


def build_model(algo: str, env: gym.Env | VecEnv, seed: int | None = None,
                **kwargs: Any) -> BaseAlgorithm:
    """A fresh model of ``algo`` on ``env`` with ``HYPERPARAMETERS[algo]`` updated by kwargs."""
    cells = getattr(env.action_space, "n", None)
    if cells is None:
        raise ValueError(f"{algo} needs an env whose actions are cells (Discrete); the env has "
                         f"{env.action_space}")
    expected = observation_space(algo, int(cells))
    if env.observation_space != expected:
        raise ValueError(f"{algo} needs observation space {expected}; the env has "
                         f"{env.observation_space} (build it with make_vec_env({algo!r}))")
    params = {**copy.deepcopy(HYPERPARAMETERS[algo]), **kwargs}  # SB3 keeps policy_kwargs
    model = ALGO_CLASSES[algo]("MlpPolicy", env, seed=check_seed(seed), **params)
    if not params.get("verbose") and params.get("tensorboard_log") is None:
        # A quiet SB3 model still builds its default logger on every learn(), and that makes
        # an empty /tmp/SB3-<date> folder each time; a logger with no outputs makes none.
        model.set_logger(Logger(folder=None, output_formats=[]))
    return model


# --- exact evaluation during training --------------------------------------------------------

class ExactEvalCallback(BaseCallback):
    """Every ``eval_every`` timesteps, and once at the end, evaluates the model exactly.

    Each evaluation is logged (``exact/optimal_move_rate``, ``exact/best_response_X`` and
    ``_O`` as win 1 / draw 0 / loss -1, ``exact/perfect``) and appended to ``history`` as
    ``{timesteps, seconds, rate, X, O, perfect}`` (seconds since training began). ``draws_at``
    keeps the timesteps of the first evaluation with draws in both seats against any opponent,
    ``perfect_at`` those of the first perfect one (``Report.perfect``: both draws and every move
    value-keeping); with ``stop_when_perfect`` training stops there.

    ``announce(line)`` (or ``print`` with ``verbose``) gets a line before each evaluation and
    one with its result after: on boards of 13-16 cells an evaluation takes seconds, during
    which the progress bar would otherwise stand still without a word.
    """

    def __init__(self, algo: str, eval_every: int = 10_000, stop_when_perfect: bool = True,
                 verbose: int = 0, rules: game.Rules = game.TICTACTOE,
                 canonical: bool = False, announce: Callable[[str], Any] | None = None) -> None:
        super().__init__(verbose)
        self.rules, self.canonical = rules, canonical
        self.announce = announce if announce is not None else (print if verbose else None)
        self.algo = check_algo(algo)
        self.eval_every = check_int(eval_every, "eval_every", 1, note=" (timesteps)")
        self.stop_when_perfect = stop_when_perfect
        self.history: list[dict[str, Any]] = []
        self.draws_at: int | None = None
        self.perfect_at: int | None = None
        self.report: Any = None
        self._next, self._start, self._stopped = 0, 0.0, False

    def _on_training_start(self) -> None:
        self._start = time.perf_counter()
        self._next = self.num_timesteps + self.eval_every

    def _on_step(self) -> bool:
        if self.num_timesteps < self._next:
            return True
        self._next = next_mark(self.num_timesteps, self._next, self.eval_every)
        return self.evaluate()

    def _on_training_end(self) -> None:
        # An evaluation taken while collecting the last rollout is followed by one more gradient
        # update (PPO and DQN both train after collecting), so it would not describe the model
        # that is saved: evaluate again, in its place, unless training stopped right there.
        if self.history and self._stopped:
            return
        if self.history and self.history[-1]["timesteps"] == self.num_timesteps:
            self.history.pop()
        self.evaluate()

    def evaluate(self) -> bool:
        """Evaluate now; False when training should stop."""
        policy = ModelPolicy(self.model, self.algo, self.rules, self.canonical)
        if self.announce is not None:
            self.announce(checkpoint_message(self.num_timesteps, "timesteps", self.rules))
        self.report = report = evaluation.evaluate(policy)
        entry = curve_entry(report, timesteps=int(self.num_timesteps),
                            seconds=time.perf_counter() - self._start)
        self.history.append(entry)
        self._log(entry)
        if entry["X"] == entry["O"] == "draw" and self.draws_at is None:
            self.draws_at = entry["timesteps"]
        if entry["perfect"] and self.perfect_at is None:
            self.perfect_at = entry["timesteps"]
        self._stopped = self.stop_when_perfect and entry["perfect"]
        return not self._stopped

    def _log(self, entry: dict[str, Any]) -> None:
        self.logger.record("exact/optimal_move_rate", entry["rate"])
        for seat in ("X", "O"):
            self.logger.record(f"exact/best_response_{seat}", evaluation.RESULT_SCORES[entry[seat]])
        self.logger.record("exact/perfect", int(entry["perfect"]))
        if self.announce is not None:
            self.announce(checkpoint_result(entry))


def train(
    algo: str, timesteps: int, opponent: str | Opponent = CURRICULUM, agent_mark: str = "random",
    seed: int | None = 0, n_envs: int | None = None, eval_every: int = 10_000,
    progress_bar: bool = True, stop_when_perfect: bool = True, threads: int | None = 1,
    rules: game.Rules = game.TICTACTOE, env_options: dict[str, Any] | None = None,
    callbacks: list[BaseCallback] | None = None,
    announce: Callable[[str], Any] | None = None, **kwargs: Any,
) -> tuple[BaseAlgorithm, ExactEvalCallback]:
    """Train ``algo`` for up to ``timesteps`` with exact evaluation; returns (model, callback).

    Extra keyword arguments override ``HYPERPARAMETERS[algo]``. ``threads`` sets torch's CPU
    threads while training (None leaves them). ``rules``: the board (a solvable one: the
    callback evaluates exactly). ``env_options``: the adapter's ``canonical``, ``start`` and
    ``start_probability`` (default ``ENV_OPTIONS[algo]``; ``{}`` for neither; the callback
    evaluates a canonical model through canonical boards). ``callbacks`` run after the exact
    evaluation's (``agents.self_play.SnapshotCallback`` refreshes a self-play pool).
    ``announce``: ``ExactEvalCallback``'s, a line before and after each evaluation.
    """
    rules.check_solvable("training with exact evaluation")
    timesteps = check_int(timesteps, "timesteps", 1)
    options = copy.deepcopy(ENV_OPTIONS[check_algo(algo)] if env_options is None
                            else env_options)
    env = make_training_env(algo, n_envs, opponent, agent_mark, check_seed(seed), rules,
                            **options)
    model = build_model(algo, env, seed, **kwargs)
    callback = ExactEvalCallback(algo, eval_every, stop_when_perfect, rules=rules,
                                 canonical=bool(options.get("canonical", False)),
                                 announce=announce)
    with torch_threads(threads):
        model.learn(timesteps, callback=[callback, *(callbacks or [])],
                    progress_bar=progress_bar)
    return model, callback


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with ``threads`` torch CPU threads, then restore the previous number.

    One thread is several times faster for these tiny networks: more only adds synchronisation,
    and on a busy 2-core machine threads wait for each other (docs/figures.md, "What the figures
    depend on").
    """
    threads = check_int(threads, "threads", 1, none=True)
    previous = th.get_num_threads()
    if threads is not None:
        th.set_num_threads(threads)
    try:
        yield
    finally:
        th.set_num_threads(previous)
