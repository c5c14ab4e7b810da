"""Tabular Q-learning for TicTacToe-v0 on any board of at most 16 cells, sharing values across
the board's symmetries.

The agent learns Q(observation, cell), the observation being the env's board from the agent's
point of view (1 own mark, 2 the opponent's) indexed by its base-3 code. The opponent moves
inside ``env.step``, so a transition runs from one agent decision to the next and the target is
``r + gamma * max over legal a' of Q(s', a')``, or just ``r`` at the end of the game.

The board (``rows``, ``cols``, ``win_length``; 3x3x3 by default) is part of the agent's
configuration: ``agent.rules`` is its board, its files record it, and ``evaluation.evaluate``
measures the agent on it. With ``symmetric=True`` (the default) a position and its images under
the board's symmetries (8 on a square, 4 on a rectangle) share the row of their canonical code; a
cell maps onto the canonical board and, when that board is itself symmetric, onto the lowest of
its equivalent cells. On 3x3 the agent then learns 627 positions, not 4,520. Where the values
live on each board, and what that costs: :mod:`agents.tabular.tables`. ``train`` steps one env,
board by board; :func:`agents.tabular.batched.train_batched` trains the same agent on a vector
env of thousands of boards at once (train.py's default), many times the episodes a second
(docs/figures.md, "Batched tabular Q-learning").

Q-learning against a stochastic opponent learns expected values against *that* opponent, not
minimax values. Against ``TRAINING_OPPONENT``, minimax playing a random move 40% of the time,
the best move by expected value keeps the game value in every one of the 4,520 positions, by a
margin of at least 0.23 (solved exactly by dynamic programming), and its random moves lead the
agent into the positions that follow mistakes. A mixture drawn per episode that includes a purely
random player has no such guarantee: a position only a random player blunders into is valued
against random play there. Against ``"random+heuristic+epsilon:epsilon=0.2+minimax"`` training
touches perfect play only now and then, later, and falls back to a few dozen blunders at most.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from functools import partial
from pathlib import Path

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from agents.tabular import files as q_files
from agents.tabular import tables as q_tables
from agents.tabular.files import FORMAT as FORMAT  # still importable from here
from agents.tabular.tables import symmetry_tables as symmetry_tables
from gym_tictactoe import game
from gym_tictactoe.checks import check_flag, check_int, check_number
from gym_tictactoe.extras import require
from gym_tictactoe.seeding import check_seed

TRAINING_OPPONENT = "epsilon:epsilon=0.4"  # see the module docstring; minimax on any solved board
Callback = Callable[["QLearningAgent", int], "bool | None"]


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
        symmetric: share one table row among the symmetric images of a position (False needs
            a board of at most 12 cells).
        seed: seed of the agent's generator (exploration, tie-breaks, the env's seed).
        rows, cols, win_length: the board; tabular Q-learning needs one of at most 16 cells.
    """

    alpha: float = 0.05
    gamma: float = 0.99
    epsilon_start: float = 1.0
    epsilon_end: float = 0.8
    epsilon_decay_episodes: int = 20_000
    symmetric: bool = True
    seed: int | None = None
    rows: int = 3
    cols: int = 3
    win_length: int = 3

    def __post_init__(self) -> None:
        # Kept as plain Python values, as JSON needs: NumPy scalars become float, int, bool.
        checked = {
            "alpha": check_number(self.alpha, "alpha", 0.0, 1.0, low_open=True),
            **{name: check_number(getattr(self, name), name, 0.0, 1.0)
               for name in ("gamma", "epsilon_start", "epsilon_end")},
            "epsilon_decay_episodes": check_int(self.epsilon_decay_episodes,
                                                "epsilon_decay_episodes", 0),
            "symmetric": check_flag(self.symmetric, "symmetric"),
            "seed": check_seed(self.seed),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        _check_board(self)


def _check_board(config: QLearningConfig) -> None:
    """The board sizes as plain ints (they go to JSON), or a ValueError saying what fits."""
    rows, cols, win_length = game.check_board_size(config.rows, config.cols, config.win_length)
    for name, value in (("rows", rows), ("cols", cols), ("win_length", win_length)):
        object.__setattr__(config, name, value)
    name, cells = f"{rows}x{cols}x{win_length}", rows * cols
    if cells > q_tables.MAX_CELLS:
        raise ValueError(
            f"tabular Q-learning needs a solvable board of at most {q_tables.MAX_CELLS} cells: its "
            f"table has a row for every position up to symmetry, and only boards that small have "
            f"their positions enumerated (4x4: 9 million); the {name} board has {cells} cells. "
            "Train an SB3 agent there")
    if not config.symmetric and cells > game.TABLE_CELLS:
        raise ValueError(
            f"symmetric=False needs a board of at most {game.TABLE_CELLS} cells: one row per "
            f"position would take several times the memory on the {name} board ({cells} cells); "
            "keep symmetric=True")


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
    whole ``config``); ``QLearningAgent(rows=4, cols=4, win_length=3)`` plays 4x4x3 (``rules``).
    All its randomness comes from one NumPy Generator seeded by ``seed``.
    """

    def __init__(self, config: QLearningConfig | None = None, **overrides) -> None:
        names = [field.name for field in fields(QLearningConfig)]
        unknown = sorted(set(overrides) - set(names))
        if unknown:
            raise ValueError(f"unknown hyper-parameters {unknown}; allowed: {names}")
        self.config = QLearningConfig(**{**asdict(config or QLearningConfig()), **overrides})
        c = self.config
        self.rules = game.rules(c.rows, c.cols, c.win_length)
        self.index = q_tables.index(self.rules, c.symmetric)  # built once per process and board
        self.q = np.zeros(self.index.shape, dtype=np.float64)
        self.visits = np.zeros(self.index.shape, dtype=np.int64)  # updates of each (row, column)
        self.episodes = 0  # trained so far, over all train() calls: the schedule's clock
        self.rng = np.random.default_rng(c.seed)
        self._locate = q_tables.locator(self.index)

    def act(self, obs: npt.ArrayLike, mask: npt.ArrayLike) -> int:
        """The greedy legal cell for one observation; ties go to the lowest cell."""
        legal, n = np.asarray(mask).astype(bool), self.rules.n_cells
        if legal.shape != (n,) or not legal.any():
            raise ValueError(f"mask must be {n} cells with at least one legal (1); got {mask!r}")
        return int(np.argmax(np.where(legal, self.q_values(obs), -np.inf)))

    __call__ = act

    def act_batch(self, obs: npt.ArrayLike, masks: npt.ArrayLike) -> npt.NDArray[np.intp]:
        """``act`` for N observations (N, cells) and masks (N, cells) at once, in chunks that
        bound the temporaries (exact evaluation asks about 9 million positions on 4x4)."""
        obs, masks, n = np.asarray(obs), np.asarray(masks), self.rules.n_cells
        if obs.ndim != 2 or obs.shape[1] != n or masks.shape != obs.shape:
            raise ValueError(f"obs and masks must both be (N, {n}); got {obs.shape}, "
                             f"{masks.shape}")
        moves = np.empty(len(obs), dtype=np.intp)
        assert self.rules.pow3 is not None  # Q-tables are for solvable boards: codes fit an int64
        for start in range(0, len(obs), q_tables.CHUNK):
            part = slice(start, start + q_tables.CHUNK)
            cells, legal = obs[part], masks[part].astype(bool)
            if not np.isin(cells, (0, 1, 2)).all() or not legal.any(axis=1).all():
                raise ValueError("obs cells must be 0, 1 or 2, and every mask needs a legal cell")
            values = self._values_of(cells.astype(np.int64) @ self.rules.pow3)
            moves[part] = np.argmax(np.where(legal, values, -np.inf), axis=1)
        return moves

    def frozen(self) -> QLearningAgent:
        """A copy that keeps playing as this agent plays now, however it trains on: a self-play
        snapshot (its values copied; the board's index, built once per process, shared)."""
        snapshot = copy.copy(self)
        snapshot.q, snapshot.visits = self.q.copy(), self.visits.copy()
        snapshot.rng = copy.deepcopy(self.rng)
        return snapshot

    def q_values(self, obs: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The action values of an observation (a copy), in its own cell order; zeros for a
        board that is no position with a move to make (nothing was learned there)."""
        return self._values_of(np.array([self.rules.encode(obs)], dtype=np.int64))[0]

    def cell_values(self, observations: npt.ArrayLike,
                    masks: npt.ArrayLike) -> tuple[str, npt.NDArray[np.float64]]:
        """Its Q-values at N observations, for pictures (``players.protocol.GivesCellValues``)."""
        return "Q-value", np.stack([self.q_values(obs) for obs in np.asarray(observations)])

    def _values_of(self, codes: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        rows, columns, known = self.index.locate(codes)
        values = self.q[rows[:, None], columns]
        values[~known] = 0.0
        return values

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
        self._check_env(env)
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
    def load(cls, path: str | os.PathLike, *, rows: int | None = None, cols: int | None = None,
             win_length: int | None = None) -> QLearningAgent:
        """An agent written by ``save``: same board, values, hyper-parameters and generator
        state. Files without a board (written before boards existed) are 3x3x3.

        Given ``rows``, ``cols`` or ``win_length`` (3 for those left out), the file must hold an
        agent of that board: else a ValueError ("trained on 3x3x3, not 4x4x3"). Raises
        FileNotFoundError for a missing file and ValueError, saying what is wrong, for anything
        that is not such a file; nothing in the file is ever unpickled.
        """
        sizes = (rows, cols, win_length)
        wanted = None if sizes == (None, None, None) else game.rules(
            *(3 if size is None else size for size in sizes))
        contents = q_files.read(path, QLearningConfig, partial(_table_shape, path, wanted))
        agent = cls(contents.config)
        agent.q[...], agent.visits[...] = contents.q, contents.visits
        agent.episodes = contents.episodes
        agent.rng.bit_generator.state = contents.rng_state
        return agent

    def _check_env(self, env: gym.Env) -> None:
        board = getattr(env.unwrapped, "rules", None)
        if isinstance(board, game.Rules) and board.size != self.rules.size:
            r = self.rules
            raise ValueError(f"the agent plays {r.name}, the env {board.name}: make the env "
                             f"with rows={r.rows}, cols={r.cols}, win_length={r.win_length}")

    def _episode(self, env: gym.Env, obs: npt.ArrayLike, epsilon: float) -> tuple[float, int]:
        """Play one episode from ``obs``, updating as it goes; the final reward and the moves."""
        locate = self._locate  # observation -> row, its cells' columns, legal cells
        q, visits, alpha, gamma = self.q, self.visits, self.config.alpha, self.config.gamma
        row, cols, legal = locate(obs)
        values, steps = q[row].tolist(), 0
        while True:
            counts = visits[row].tolist()
            cell = self._behave(values, counts, cols, legal, epsilon)
            obs, reward, terminated, truncated, _ = env.step(cell)
            steps, column, target = steps + 1, cols[cell], float(reward)
            if not terminated:  # s' values serve this target and the next move alike
                next_row, cols, legal = locate(obs)
                next_values = q[next_row].tolist()
                target += gamma * max(next_values[cols[a]] for a in legal)
            visits[row, column] = n = counts[column] + 1
            q[row, column] = values[column] + max(alpha, 1.0 / n) * (target - values[column])
            if terminated or truncated:
                return float(reward), steps
            row, values = next_row, next_values

    def _behave(self, values: list[float], counts: list[int], cols: Sequence[int],
                legal: Sequence[int], epsilon: float) -> int:
        """Every legal cell once first (in random order), then epsilon-greedy with random
        tie-breaks; ``values`` and ``counts`` are the row, ``cols`` maps cells into it."""
        choices = [cell for cell in legal if counts[cols[cell]] == 0] or legal
        if choices is legal and self.rng.random() >= epsilon:
            best = max(values[cols[cell]] for cell in legal)
            choices = [cell for cell in legal if values[cols[cell]] == best]
        return choices[int(self.rng.random() * len(choices))]


def _table_shape(path: str | os.PathLike, wanted: game.Rules | None,
                 config: QLearningConfig) -> tuple[int, int]:
    """The shape of the tables of a file with ``config``; first the board must be the one the
    caller asked for, if any."""
    board = game.rules(config.rows, config.cols, config.win_length)
    if wanted is not None and board != wanted:
        raise ValueError(f"{path} holds a Q-learning agent trained on {board.name}, not "
                         f"{wanted.name} (rows x cols x win length): train one on {wanted.name}, "
                         "or use this one on its own board")
    return q_tables.index(board, config.symmetric).shape


def _check_counts(**counts: object) -> None:
    for name, value in counts.items():
        check_int(value, name, 0)


def _progress_bar(total: int):
    """A tqdm bar; tqdm is an optional dependency (the ``train`` extra): MissingExtra without."""
    tqdm = require("tqdm.auto", "train", "the progress bar (progress=True)").tqdm
    return tqdm(total=total, unit="episode")
