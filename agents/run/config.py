"""What a training run is asked to do: one frozen :class:`RunConfig`, its defaults filled in.

``train.py`` builds it from its flags (and checks them); nothing changes it afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import EXPLORING_STARTS, start_options
from agents.tabular.focus import Focus
from gym_tictactoe import game

ALGOS = ("q", "maskable-ppo", "ppo", "dqn", "alphazero")
ALGO_NAMES = {"q": "tabular Q-learning", "maskable-ppo": "MaskablePPO", "ppo": "PPO",
              "dqn": "DQN", "alphazero": "AlphaZero"}
EPISODES, TIMESTEPS = 200_000, 300_000  # SB3: benchmarks/training.py's budget
# AlphaZero counts self-play games as its episodes: its exact checkpoint is one network call.
EVAL_EVERY = {"q": 1000, "sb3": 10_000, "alphazero": 256}
# On 13-16 cells one exact evaluation takes seconds for a Q-table and minutes for a network
# (docs/agents.md, "Bigger boards"): every 1,000 episodes or 10,000 timesteps would
# be most of the run. Past 16 cells a checkpoint
# plays games instead (CHECKPOINT_GAMES); on 15x15x5 they take seconds too.
EVAL_EVERY_BIG = {"q": 100_000, "sb3": 100_000, "alphazero": 2048}
POOL, MIX_SHARE = 5, 0.2
REFRESH_EVERY = {"q": 1000, "sb3": 10_000}
# Boards too big to solve: checkpoints play this many seeded games per seat against each of
# CHECKPOINT_OPPONENTS, and the default training opponent searches no deeper than heuristic.
CHECKPOINT_GAMES = 20
CHECKPOINT_OPPONENTS = ("random", "heuristic")
UNSOLVED_OPPONENT = "epsilon:epsilon=0.2,inner=heuristic"


@dataclass(frozen=True)
class SelfPlay:
    """``--opponent self``: the pool's size, how often it is refreshed, the saved models it
    starts with, and a built-in opponent played in a share of the episodes."""

    pool: int = POOL
    refresh_every: int = REFRESH_EVERY["q"]
    snapshots: tuple[Path, ...] = ()
    mix: str | None = None
    mix_share: float | None = None

    def settings(self, taken: int) -> dict[str, Any]:
        """As results.json records them, with the number of snapshots ``taken``."""
        return {"pool": self.pool, "refresh_every": self.refresh_every, "mix": self.mix,
                "mix_share": self.mix_share, "snapshot_files": [str(p) for p in self.snapshots],
                "snapshots_taken": taken}


@dataclass(frozen=True)
class RunConfig:
    """One training run. ``opponent`` is None for the algorithm's default, ``"self"`` for
    self-play (then ``self_play`` is set); ``focus`` None for uniform starts and a fixed
    learning-rate floor; ``n_envs``, ``canonical``, ``start`` and
    ``start_probability`` None for the algorithm's defaults; ``workers`` None: self-play in
    this process."""

    algo: str = "q"
    board: game.Rules = game.TICTACTOE
    seed: int = 0
    seat: str = "random"
    opponent: str | None = None
    episodes: int | None = EPISODES  # None: AlphaZero with a --minutes budget only
    timesteps: int = TIMESTEPS
    n_envs: int | None = None
    canonical: bool | None = None
    start: str | None = None
    start_probability: float | None = None
    eval_every: int | None = None
    games: int = 200
    out: Path = Path("runs")
    name: str | None = None
    progress: bool = True
    self_play: SelfPlay | None = field(default=None)
    # Starts aimed at the positions played wrong at each checkpoint (tabular Q and AlphaZero)
    # and, tabular Q only, the learning-rate floor annealed (``agents.tabular.focus.Focus``;
    # None: neither).
    focus: Focus | None = None
    # AlphaZero only: its settings given (flat AlphaZeroSettings field names: simulations,
    # c_puct, channels...), a training-time budget and checkpoint period in minutes, and the
    # run folder whose checkpoint.npz this run continues.
    alphazero: dict[str, Any] = field(default_factory=dict)
    minutes: float | None = None
    eval_minutes: float | None = None
    resume: Path | None = None
    workers: int | None = None  # AlphaZero: self-play in this many Ray actors
    ray_address: str | None = None  # their cluster (None: a local Ray)
    device: str = "cpu"  # AlphaZero and SB3: where torch trains ("cpu" or "cuda")
    # The hyperparameter file's values as results.json records them (agents.hyperparams;
    # None for a resumed run, which keeps its own).
    hyperparams: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # Defaults that depend on other fields, filled in once here.
        if self.eval_every is None and self.eval_minutes is None:
            table = EVAL_EVERY if self.board.tabled else EVAL_EVERY_BIG
            object.__setattr__(self, "eval_every", table[self.kind])
        if self.name is None:
            board = "" if self.board == game.TICTACTOE else f"-{self.board.name}"
            # A self-play run apart at a glance from one against an opponent (q-seed0_3).
            self_play = "-self-play" if self.opponent == "self" else ""
            object.__setattr__(self, "name", f"{self.algo}{board}{self_play}-seed{self.seed}")

    @property
    def kind(self) -> str:
        """``"q"`` (tabular), ``"alphazero"`` or ``"sb3"``: which trainer, budget and clock
        apply."""
        return self.algo if self.algo in ("q", "alphazero") else "sb3"

    @property
    def clock(self) -> str:
        """Episodes (AlphaZero's self-play games are its episodes) or timesteps."""
        return "timesteps" if self.kind == "sb3" else "episodes"

    @property
    def exact(self) -> bool:
        """Whether checkpoints evaluate exactly (a solved board) or play games."""
        return self.board.solvable

    @property
    def title(self) -> str:
        """The run in a few words, e.g. "tabular Q-learning on 3x3x3, seed 0"."""
        against = " (self-play)" if self.opponent == "self" else ""
        return f"{ALGO_NAMES[self.algo]}{against} on {self.board.name}, seed {self.seed}"


def env_options(config: RunConfig, defaults: dict[str, Any]) -> dict[str, Any]:
    """The training envs' options: ``defaults`` (``agents.EXPLORING_STARTS``, or for SB3
    ``agents.sb3.ENV_OPTIONS``, which adds ``canonical``) overridden by --start,
    --start-probability and (SB3) --canonical / --no-canonical."""
    options = start_options(config.start, config.start_probability, defaults)
    if "canonical" in defaults:
        options = {"canonical": defaults["canonical"] if config.canonical is None
                   else config.canonical, **options}
    return options


def check_out(out: Path) -> None:
    """A ValueError saying what is wrong when runs cannot be written under ``out``."""
    parent = out.resolve().parent
    if not parent.is_dir():
        raise ValueError(f"--out {out}: its parent folder {parent} does not exist")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder")
    if not os.access(out if out.exists() else parent, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: cannot write there")


__all__ = ["ALGOS", "EXPLORING_STARTS", "RunConfig", "SelfPlay", "check_out", "env_options"]


@dataclass
class Trained:
    """What a trainer hands on: the policy, how to save it, the model file's name, the opponent
    it trained against, the settings that applied and, for a resumed run, the seconds its
    earlier sittings took."""

    policy: Any
    save: Callable[[Path], Any]
    model_file: str
    opponent: str
    settings: dict[str, Any]
    seconds_before: float = 0.0  # a resumed run's earlier sittings
