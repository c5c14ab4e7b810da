"""Tabular Q-learning for TicTacToe-v0, sharing values across the 8 board symmetries.

The agent learns Q(observation, cell), the observation being the env's board from the agent's
point of view (1 own mark, 2 the opponent's) indexed by its base-3 code. The opponent moves
inside ``env.step``, so a transition runs from one agent decision to the next and the target is
``r + gamma * max over legal a' of Q(s', a')``, or just ``r`` at the end of the game.

With ``symmetric=True`` (the default) a position and its rotations and reflections share the
row of their canonical code; a cell maps onto the canonical board and, when that board is itself
symmetric, onto the lowest of its equivalent cells. The agent then learns 627 positions, not 4,520.

Q-learning against a stochastic opponent learns expected values against *that* opponent, not
minimax values. Against ``TRAINING_OPPONENT``, minimax playing a random move 40% of the time,
the best move by expected value keeps the game value in every one of the 4,520 positions, by a
margin of at least 0.23 (solved exactly by dynamic programming), and its random moves lead the
agent into the positions that follow mistakes. A mixture drawn per episode that includes a purely
random player has no such guarantee: a position only a random player blunders into is valued
against random play there. Against ``"random+heuristic+epsilon:epsilon=0.2+minimax"`` training
touches perfect play only now and then, about 4 times later, and falls back to 8-32 blunders.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from agents import q_files
from agents.q_files import FORMAT as FORMAT  # still importable from here
from agents.q_files import TABLE_SHAPE
from gym_tictactoe import game
from gym_tictactoe.extras import require
from gym_tictactoe.seeding import check_seed

TRAINING_OPPONENT = "epsilon:epsilon=0.4"  # see the module docstring
Callback = Callable[["QLearningAgent", int], "bool | None"]


@cache
def symmetry_tables(symmetric: bool = True) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
    """Per code: the table row holding its values and, per cell, the column of that row.

    Without sharing every code is its own row and every cell its own column.
    """
    if not symmetric:
        rows = np.arange(game.N_CODES, dtype=np.int64)
        columns = np.tile(np.arange(game.N_CELLS, dtype=np.intp), (game.N_CODES, 1))
    else:
        images = game.CELLS[:, game.SYMMETRIES].astype(np.int64) @ game.POW3  # (codes, 8)
        reaches = (images == game.CANONICAL[:, None])[:, :, None]
        # Symmetry s takes cell a to INVERSE_SYMMETRIES[s][a] of the canonical board; when
        # several symmetries reach it (a symmetric board), equivalent cells share the lowest.
        candidates = np.where(reaches, game.INVERSE_SYMMETRIES[None], game.N_CELLS)
        rows, columns = game.CANONICAL.astype(np.int64), candidates.min(axis=1).astype(np.intp)
    for table in (rows, columns):
        table.setflags(write=False)
    return rows, columns


@cache
def _loop_tables(symmetric: bool) -> tuple[dict[bytes, int], list, list, list]:
    """The training loop's look-ups as plain Python objects, several times faster than NumPy
    scalar indexing: observation bytes -> code, and per code its row, columns and legal cells."""
    rows, columns = symmetry_tables(symmetric)
    codes = {game.CELLS[code].tobytes(): code for code in range(game.N_CODES)}
    legal = [tuple(np.flatnonzero(mask).tolist()) for mask in game.LEGAL_MASK]
    return codes, rows.tolist(), [tuple(row) for row in columns.tolist()], legal


@dataclass(frozen=True)
class QLearningConfig:
    """Hyper-parameters of ``QLearningAgent``.

    Attributes:
        alpha: floor of the learning rate. A pair (s, a) updated for the n-th time learns at
            ``max(alpha, 1 / n)``: the plain mean of its first targets, so rare positions learn
            from their first games, then a constant rate that follows targets still moving.
        gamma: discount; below 1 a sooner win is worth more and a later loss less bad, so the
            agent, like the solver's perfect player, prefers fast wins and slow losses.
        epsilon_start, epsilon_end, epsilon_decay_episodes: the exploration rate falls linearly
            from start to end over that many episodes, then stays at end. Q-learning learns the
            greedy policy's values whatever the behaviour, and exploration is what brings the
            agent to the positions that follow its own mistakes, so it stays high.
        symmetric: share one table row among the 8 symmetric images of a position.
        seed: seed of the agent's generator (exploration, tie-breaks, the env's seed).
    """

    alpha: float = 0.05
    gamma: float = 0.99
    epsilon_start: float = 1.0
    epsilon_end: float = 0.8
    epsilon_decay_episodes: int = 20_000
    symmetric: bool = True
    seed: int | None = None

    def __post_init__(self) -> None:
        _check_fraction("alpha", self.alpha, low_open=True)
        for name in ("gamma", "epsilon_start", "epsilon_end"):
            _check_fraction(name, getattr(self, name))
        if not _is_int(self.epsilon_decay_episodes) or self.epsilon_decay_episodes < 0:
            raise ValueError("epsilon_decay_episodes must be a non-negative integer; "
                             f"got {self.epsilon_decay_episodes!r}")
        if not isinstance(self.symmetric, bool):
            raise ValueError(f"symmetric must be True or False; got {self.symmetric!r}")
        check_seed(self.seed)


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _check_fraction(name: str, value: object, low_open: bool = False) -> None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not (0 < value <= 1 if low_open else 0 <= value <= 1):
        raise ValueError(f"{name} must be a number in {'(' if low_open else '['}0, 1]; "
                         f"got {value!r}")


def linear(start: float, end: float, duration: int, t: int) -> float:
    """``start`` at t = 0 moving linearly to ``end`` at t = duration, then ``end``."""
    return end if t >= duration else start + (end - start) * t / duration


@dataclass
class TrainingStats:
    """What one ``train`` call did; results are the agent's, under its exploring behaviour."""

    episodes: int = 0
    steps: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    seconds: float = 0.0
    stopped: bool = False  # on_eval asked to stop

    def record(self, reward: float, steps: int) -> None:
        self.episodes += 1
        self.steps += steps
        self.wins += reward > 0
        self.draws += reward == 0
        self.losses += reward < 0


class QLearningAgent:
    """Tabular Q-learning agent; a Policy: ``agent(obs, mask) -> cell`` plays greedily.

    ``QLearningAgent(seed=0, gamma=0.9)`` takes ``QLearningConfig`` fields as keywords (or a
    whole ``config``). All its randomness comes from one NumPy Generator seeded by ``seed``.
    """

    def __init__(self, config: QLearningConfig | None = None, **overrides) -> None:
        names = [field.name for field in fields(QLearningConfig)]
        unknown = sorted(set(overrides) - set(names))
        if unknown:
            raise ValueError(f"unknown hyper-parameters {unknown}; allowed: {names}")
        self.config = QLearningConfig(**{**asdict(config or QLearningConfig()), **overrides})
        self.q = np.zeros(TABLE_SHAPE, dtype=np.float64)
        self.visits = np.zeros(TABLE_SHAPE, dtype=np.int64)  # updates of each (row, column)
        self.episodes = 0  # trained so far, over all train() calls: the schedule's clock
        self.rng = np.random.default_rng(self.config.seed)
        self._rows, self._columns = symmetry_tables(self.config.symmetric)

    def act(self, obs: npt.ArrayLike, mask: npt.ArrayLike) -> int:
        """The greedy legal cell for one observation; ties go to the lowest cell."""
        legal = np.asarray(mask).astype(bool)
        if legal.shape != (game.N_CELLS,) or not legal.any():
            raise ValueError(f"mask must be 9 cells with at least one legal (1); got {mask!r}")
        return int(np.argmax(np.where(legal, self.q_values(obs), -np.inf)))

    __call__ = act

    def act_batch(self, obs: npt.ArrayLike, masks: npt.ArrayLike) -> npt.NDArray[np.intp]:
        """``act`` for N observations (N, 9) and masks (N, 9) at once."""
        obs, legal = np.asarray(obs), np.asarray(masks).astype(bool)
        if obs.ndim != 2 or obs.shape[1] != game.N_CELLS or legal.shape != obs.shape:
            raise ValueError(f"obs and masks must both be (N, 9); got {obs.shape}, {legal.shape}")
        if not np.isin(obs, (0, 1, 2)).all() or not legal.any(axis=1).all():
            raise ValueError("obs cells must be 0, 1 or 2, and every mask needs a legal cell")
        codes = obs.astype(np.int64) @ game.POW3
        values = self.q[self._rows[codes][:, None], self._columns[codes]]
        return np.argmax(np.where(legal, values, -np.inf), axis=1)

    def q_values(self, obs: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The 9 action values of an observation (a copy), in its own cell order."""
        code = game.encode(obs)
        return self.q[self._rows[code], self._columns[code]]

    def epsilon(self) -> float:
        """The exploration rate of the next training episode."""
        c = self.config
        return linear(c.epsilon_start, c.epsilon_end, c.epsilon_decay_episodes, self.episodes)

    def train(self, env: gym.Env, episodes: int, *, seed: int | None = None,
              eval_every: int = 1000, on_eval: Callback | None = None,
              progress: bool = False) -> TrainingStats:
        """Run ``episodes`` episodes of masked epsilon-greedy Q-learning on ``env``.

        ``env.reset(seed=...)`` is called once, with ``seed`` or else a seed drawn from the
        agent's generator, so the agent's seed fixes the whole run. Every ``eval_every``
        episodes, and after the last, ``on_eval(agent, episodes_trained)`` runs (an exact
        evaluation, a checkpoint); when it returns True training stops there.
        """
        _check_counts(episodes=episodes, eval_every=eval_every)
        stats, start = TrainingStats(), time.perf_counter()
        bar = _progress_bar(episodes) if progress else None
        obs, _ = env.reset(seed=int(self.rng.integers(2**31)) if seed is None else seed)
        for episode in range(1, episodes + 1):
            if episode > 1:
                obs, _ = env.reset()
            stats.record(*self._episode(env, obs, self.epsilon()))
            self.episodes += 1
            if bar is not None:
                bar.update()
            checkpoint = eval_every and (episode % eval_every == 0 or episode == episodes)
            if on_eval and checkpoint and on_eval(self, self.episodes):
                stats.stopped = True
                break
        if bar is not None:
            bar.close()
        stats.seconds = time.perf_counter() - start
        return stats

    def save(self, path: str | os.PathLike) -> Path:
        """Write the agent to ``path`` (that exact name; ``.npz`` by convention) atomically.

        The file is a NumPy ``.npz`` of plain arrays: ``format`` (``FORMAT``), ``config`` and
        ``rng`` (JSON strings), ``q``, ``visits`` and ``episodes``; loading needs no pickle.
        """
        state = self.rng.bit_generator.state
        contents = q_files.Contents(self.config, self.q, self.visits, self.episodes, state)
        return q_files.write(path, contents)

    @classmethod
    def load(cls, path: str | os.PathLike) -> QLearningAgent:
        """An agent written by ``save``: same values, hyper-parameters and generator state.

        Raises FileNotFoundError for a missing file and ValueError, saying what is wrong, for
        anything that is not such a file; nothing in the file is ever unpickled.
        """
        contents = q_files.read(path, QLearningConfig)
        agent = cls(contents.config)
        agent.q[...], agent.visits[...] = contents.q, contents.visits
        agent.episodes = contents.episodes
        agent.rng.bit_generator.state = contents.rng_state
        return agent

    def _episode(self, env: gym.Env, obs: npt.ArrayLike, epsilon: float) -> tuple[float, int]:
        """Play one episode from ``obs``, updating as it goes; the final reward and the moves."""
        codes, rows, columns, legal_cells = _loop_tables(self.config.symmetric)
        q, visits, alpha, gamma = self.q, self.visits, self.config.alpha, self.config.gamma
        code = _code(codes, obs)
        row, cols, legal = rows[code], columns[code], legal_cells[code]
        values, steps = q[row].tolist(), 0
        while True:
            counts = visits[row].tolist()
            cell = self._behave(values, counts, cols, legal, epsilon)
            obs, reward, terminated, truncated, _ = env.step(cell)
            steps, column, target = steps + 1, cols[cell], float(reward)
            if not terminated:  # s' values serve this target and the next move alike
                code = _code(codes, obs)
                next_row, cols, legal = rows[code], columns[code], legal_cells[code]
                next_values = q[next_row].tolist()
                target += gamma * max(next_values[cols[a]] for a in legal)
            visits[row, column] = n = counts[column] + 1
            q[row, column] = values[column] + max(alpha, 1.0 / n) * (target - values[column])
            if terminated or truncated:
                return float(reward), steps
            row, values = next_row, next_values

    def _behave(self, values: list[float], counts: list[int], cols: tuple[int, ...],
                legal: tuple[int, ...], epsilon: float) -> int:
        """Every legal cell once first (in random order), then epsilon-greedy with random
        tie-breaks; ``values`` and ``counts`` are the row, ``cols`` maps cells into it."""
        choices = [cell for cell in legal if counts[cols[cell]] == 0] or legal
        if choices is legal and self.rng.random() >= epsilon:
            best = max(values[cols[cell]] for cell in legal)
            choices = [cell for cell in legal if values[cols[cell]] == best]
        return choices[int(self.rng.random() * len(choices))]


def _check_counts(**counts: object) -> None:
    for name, value in counts.items():
        if not _is_int(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}")


def _code(codes: dict[bytes, int], obs: npt.ArrayLike) -> int:
    """The code of an observation, through the bytes of its int8 cells."""
    try:
        return codes[np.asarray(obs, dtype=np.int8).tobytes()]
    except (KeyError, ValueError, TypeError, OverflowError):
        raise ValueError(f"an observation is 9 cells of 0, 1 or 2; got {obs!r}") from None


def _progress_bar(total: int):
    """A tqdm bar; tqdm is an optional dependency (the ``train`` extra): MissingExtra without."""
    tqdm = require("tqdm.auto", "train", "the progress bar (progress=True)").tqdm
    return tqdm(total=total, unit="episode")
