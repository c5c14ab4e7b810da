"""Tabular Q-learning on many boards at once: one vectorised update per step of the vector env.

``train_batched(agent, envs, episodes)`` trains a ``QLearningAgent`` (same table, same symmetry
sharing, same behaviour rule, same model file) on a ``TicTacToeVectorEnv`` of B boards. Each step
chooses B moves from the table, steps every board, and updates the B (row, column) entries the
moves came from in one NumPy pass; targets read the table as it was before the step.

Collisions: several boards can update the same entry in one step (the same position up to
symmetry, the same move), most often near the empty board. Their updates are **averaged, with
the schedule's compound rate**: the k targets of one entry in one step are replaced by their mean,
the visit count grows by k, and the entry moves towards the mean at rate
``max(k / n, 1 - (1 - alpha) ** k)`` (n the new count). That is what k sequential updates of
``QLearningConfig``'s schedule ``max(alpha, 1 / n)`` would do with k equal targets: in the 1/n
phase exactly the running mean of all targets so far, in the constant phase the weight k
constant-rate steps give. With k = 1 it is the sequential rule itself, so alpha and the visit
counts keep their meaning and a batched table trains on sequentially.

The exploration rate follows the agent's schedule by episodes finished over all boards. Boards
autoreset in Gymnasium's NEXT_STEP mode: the step after a board's episode ends only resets it, so
about one step in (moves per episode + 1) of a board does no learning. Episodes are counted
exactly: a step that would finish more than the next checkpoint (every ``eval_every``, and the
budget) needs keeps the first ones in board order and drops the rest, unlearned (a few per
checkpoint), so checkpoints fall on multiples of ``eval_every`` as in the sequential loop. Without
``on_eval`` there is no checkpoint to fall on: only the budget cuts.
"""

from __future__ import annotations

import contextlib
import time
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.tabular.q_learning import Callback, QLearningAgent, TrainingStats, _progress_bar
from agents.tabular.tables import block_offsets
from gym_tictactoe.checks import check_int

# Boards per step by default (benchmarks/q_batched.py measures the speed). On 3x3, 64 boards need
# no more episodes than one board at a time and train several times faster in wall time; 128
# boards need more, and batching pays from a few boards on. On 16 cells a step is mostly random
# reads in tables of hundreds of MB: bigger batches gain up to 4,096 boards, little beyond (the
# figures: docs/figures.md, "Tabular Q-learning" and "Batched tabular Q-learning").
SMALL_BATCH, BIG_BATCH = 64, 4096


def default_batch(n_cells: int) -> int:
    """The batch size train.py uses on a board of ``n_cells`` cells."""
    return SMALL_BATCH if n_cells <= 12 else BIG_BATCH


def make_envs(agent: QLearningAgent, num_envs: int, opponent: Any, agent_mark: str = "random",
              **options: Any):
    """The vector env for ``agent``'s board: ``num_envs`` boards (checked first, one line)."""
    from gym_tictactoe.envs.vector import TicTacToeVectorEnv

    rules = agent.rules
    check_int(num_envs, "num_envs", 1, max_batch(rules),
              note=" (the boards trained at once: what the vector env takes on this board)")
    return TicTacToeVectorEnv(num_envs, opponent, agent_mark, rows=rules.rows, cols=rules.cols,
                              win_length=rules.win_length, **options)


# What the learner's own per-step arrays take beside the env's, a board and a cell: measured
# with tracemalloc at 58 (3x3) to 61 (4x4x4) bytes while training 65,536 boards.
LEARNER_BYTES_PER_CELL = 64


def max_batch(rules: Any) -> int:
    """The most boards trained at once on ``rules``' board: the vector env's memory budget, with
    the learner's own arrays counted beside the env's."""
    from gym_tictactoe.envs.vector import MAX_NUM_ENVS, MEMORY_BUDGET, memory_needed

    per_board = memory_needed(1, rules) + LEARNER_BYTES_PER_CELL * rules.n_cells
    return min(MAX_NUM_ENVS, MEMORY_BUDGET // per_board)


def train_batched(agent: QLearningAgent, envs: Any, episodes: int, *, seed: int | None = None,
                  eval_every: int = 1000, on_eval: Callback | None = None,
                  progress: bool = False) -> TrainingStats:
    """Train ``agent`` for ``episodes`` episodes on the vector env ``envs`` (any number of
    boards of the agent's board), as ``QLearningAgent.train`` does on one env: one reset with
    ``seed`` (else drawn from the agent's generator), ``on_eval(agent, episodes_trained)`` every
    ``eval_every`` episodes and at the end, stopping when it returns True."""
    for name, value in (("episodes", episodes), ("eval_every", eval_every)):
        check_int(value, name, 0)
    _check_envs(agent, envs)
    learner = _Learner(agent, envs.num_envs)
    stats, start = TrainingStats(), time.perf_counter()
    obs, infos = envs.reset(seed=int(agent.rng.integers(2**31)) if seed is None else seed)
    learner.observe(obs, infos["action_mask"])
    # Without on_eval no checkpoint is seen: only the budget cuts a step's episodes.
    done, every = 0, eval_every if on_eval else 0
    # The bar closes on any way out, Ctrl-C included.
    with _progress_bar(episodes) if progress else contextlib.nullcontext() as bar:
        while done < episodes:
            target = min(episodes, (done // every + 1) * every) if every else episodes
            obs, rewards, terminated, _, infos = envs.step(learner.act(agent.epsilon()))
            finished = learner.learn(obs, rewards, terminated, infos["action_mask"],
                                     target - done)
            _record(stats, rewards, finished, learner.moved)
            count = int(finished.sum())
            done += count
            agent.episodes += count
            if bar is not None:
                bar.update(count)
            if every and done == target and on_eval(agent, agent.episodes):
                stats.stopped = True
                break
    stats.seconds = time.perf_counter() - start
    return stats


def train_self_play(agent: QLearningAgent, pool: Any, episodes: int, refresh_every: int, *,
                    batch: int, seed: int | None = None, agent_mark: str = "random",
                    eval_every: int = 1000, on_eval: Callback | None = None,
                    progress: bool = False, env_options: dict[str, Any] | None = None,
                    envs: Any = None) -> int:
    """``agents.self_play.train_q`` on ``batch`` boards: ``agent`` trains against ``pool``'s
    snapshots (its slots, refilled in place), a snapshot joins every ``refresh_every`` episodes,
    and ``on_eval`` runs at the first refresh at or after every ``eval_every`` episodes and at
    the end. One run of ``train_batched``, so no episode in flight is cut at a refresh.
    ``envs``: the vector env to train on, made by the caller (``make_envs`` with
    ``pool.opponent()``, to aim its starts between checkpoints); then ``batch``,
    ``agent_mark`` and ``env_options`` are its own."""
    from agents import EXPLORING_STARTS, next_mark

    if envs is None:
        options = EXPLORING_STARTS if env_options is None else env_options
        envs = make_envs(agent, batch, pool.opponent(), agent_mark, **options)
    first, mark = agent.episodes, check_int(eval_every, "eval_every", 1)

    def refresh(agent: QLearningAgent, trained: int) -> bool:
        nonlocal mark
        pool.add(agent)
        done = trained - first
        if on_eval is None or not (done >= mark or done == episodes):
            return False
        mark = next_mark(done, mark, eval_every)
        return bool(on_eval(agent, trained))

    stats = train_batched(agent, envs, episodes, seed=seed,
                          eval_every=check_int(refresh_every, "refresh_every", 1),
                          on_eval=refresh, progress=progress)
    return stats.episodes


def _check_envs(agent: QLearningAgent, envs: Any) -> None:
    rules = getattr(envs, "rules", None)
    if rules is None or not hasattr(envs, "num_envs"):
        raise TypeError("train_batched needs a TicTacToeVectorEnv (gym.make_vec('TicTacToe-v0', "
                        f"vectorization_mode='vector_entry_point')); got {type(envs).__name__}")
    if rules.size != agent.rules.size:
        r = agent.rules
        raise ValueError(f"the agent plays {r.name}, the vector env {rules.name}: make it with "
                         f"rows={r.rows}, cols={r.cols}, win_length={r.win_length}")


def _record(stats: TrainingStats, rewards: npt.NDArray, finished: npt.NDArray[np.bool_],
            moved: npt.NDArray[np.bool_]) -> None:
    final = rewards[finished]
    stats.episodes += final.size
    stats.steps += int(moved.sum())
    stats.wins += int((final > 0).sum())
    stats.draws += int((final == 0).sum())
    stats.losses += int((final < 0).sum())


class _Learner:
    """The per-board state between steps: where each board's observation is in the table (its
    row, and its cells' columns), its values, and the entry (row * cells + column) its last move
    came from.

    Speed (benchmarks/q_batched.py): NumPy is slow at reducing (boards, cells) arrays along their
    16 cells, so each board's cells are folded once into an int, one bit a cell (legal, untried,
    greedy, by a matrix product), and the move is drawn from that int by table look-ups; the
    largest legal value is taken once a step, for the target and the greedy move alike."""

    def __init__(self, agent: QLearningAgent, num_envs: int) -> None:
        self.agent, self.n = agent, agent.rules.n_cells
        # Float64 products are exact here (codes < 3**16 < 2**53) and several times faster
        # than int64 ones, which NumPy does without BLAS.
        self.pow3 = agent.rules.pow3.astype(np.float64)
        self.pow2 = 2.0 ** np.arange(self.n)
        self.popcount, self.select = _bit_tables(self.n)
        self.boards = np.arange(num_envs) * self.n  # each board's first flat cell in (B, n)
        self.moved = np.zeros(num_envs, dtype=bool)
        self.entries = np.zeros(num_envs, dtype=np.int64)  # of each board's last move
        # False once a row is seen with every legal column tried: then forever, since the legal
        # columns are the row's (its canonical board's empty cells) and visits only grow.
        self.untried_rows = np.ones(agent.index.n_rows, dtype=bool)

    def observe(self, obs: npt.NDArray[np.int8], masks: npt.NDArray) -> None:
        """Locate every board's observation, read its values and its best legal value (finished
        boards, all-zero masks, have no row: their best value is meaningless, never used)."""
        masks = np.asarray(masks)
        self.legal = masks.astype(bool)
        self.legal_bits = self._bits(self.legal)
        codes = (obs @ self.pow3).astype(np.int64)
        self.rows, self.columns, _ = self.agent.index.locate(codes)
        # Each board's row read whole (cache lines, not cells), then its cells' columns in it.
        self.local = self.columns.astype(np.intp)
        self.local += block_offsets(len(codes), self.n)
        # Illegal cells pushed far below any value (|Q| <= 1); a legal one stays exact (+ -0.0).
        self.values = ~self.legal * ILLEGAL
        self.values += self.agent.q.take(self.rows, axis=0).take(self.local)
        self.best = _row_max(self.values)

    def act(self, epsilon: float) -> npt.NDArray[np.int64]:
        """``QLearningAgent._behave`` on every board: an untried legal cell first, else with
        probability epsilon a random legal cell, else a greedy one, ties broken at random."""
        rng, n = self.agent.rng, self.n
        explore = rng.random(len(self.legal)) < epsilon
        untried = self._untried()
        pool = np.where(explore, self.legal_bits, 0)
        greedy = np.flatnonzero(~explore & (untried == 0) & (self.legal_bits != 0))
        best = self.values.take(greedy, axis=0) == self.best.take(greedy)[:, None]
        pool[greedy] = self._bits(best)
        pool = np.where(untried != 0, untried, pool)
        # A uniform member of each pool: its k-th cell, k = floor(u * size).
        size = self.popcount.take(pool)
        k = (rng.random(len(pool)) * size).astype(np.int64)
        cells = self.select.take(pool * n + k)
        self.moved = size > 0  # boards waiting for their autoreset ignore the move
        self.entries = self.rows.astype(np.int64) * n + self.columns.take(self.boards + cells)
        return cells

    def _untried(self) -> npt.NDArray[np.int64]:
        """Each board's legal cells never tried (their entry has no visit), as bits; only boards
        whose row may still have one are looked at."""
        untried = np.zeros(len(self.legal), dtype=np.int64)
        boards = np.flatnonzero(self.untried_rows.take(self.rows) & (self.legal_bits != 0))
        if boards.size:
            entries = self.columns.take(boards, axis=0).astype(np.int64)
            entries += self.rows.take(boards)[:, None] * np.int64(self.n)
            unvisited = self.agent.visits.take(entries) == 0
            found = self._bits(unvisited & self.legal.take(boards, axis=0))
            untried[boards] = found
            self.untried_rows[self.rows.take(boards[found == 0])] = False
        return untried

    def _bits(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """Each board's cells as an int, bit c for cell c."""
        return (mask @ self.pow2).astype(np.int64)

    def learn(self, obs: npt.NDArray[np.int8], rewards: npt.NDArray, terminated: npt.NDArray,
              masks: npt.NDArray, quota: int) -> npt.NDArray[np.bool_]:
        """Update the entries of this step's moves from the boards they led to; returns the
        boards whose episode just finished, at most ``quota`` of them: the episodes that end
        beyond it (the last boards in order) are dropped, their final move not learned from, so
        that checkpoints and the budget fall on exact counts. The values read here, before the
        update, also choose the next moves, as the sequential loop's ``next_values`` do."""
        ended = np.asarray(terminated, dtype=bool)
        finished = ended & self.moved
        beyond = np.flatnonzero(finished)[quota:]
        finished[beyond] = False
        self.moved[beyond] = False
        moved, entries = self.moved, self.entries
        self.observe(obs, masks)
        after = np.where(ended, 0.0, self.best)
        targets = rewards + self.agent.config.gamma * after
        update(self.agent, entries[moved], targets[moved])
        return finished


ILLEGAL = -1e9  # added to the values of illegal cells


def _row_max(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``values.max(axis=1)``, a few times faster on rows of a few cells: one pass per cell."""
    best = values[:, 0].copy()
    for cell in range(1, values.shape[1]):
        np.maximum(best, values[:, cell], out=best)
    return best


@cache
def _bit_tables(n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """For every set of cells of an n-cell board as an int (bit c for cell c): its size, and
    its k-th cell in increasing order at [set * n + k] (0 past its size)."""
    sets = np.arange(2**n)[:, None]
    members = (sets >> np.arange(n)) & 1
    rank = np.cumsum(members, axis=1) - 1  # of each member among the set's cells
    select = np.zeros((2**n, n), dtype=np.int64)
    at, cells = np.nonzero(members)
    select[at, rank[at, cells]] = cells
    for table in (size := members.sum(axis=1), select):
        table.setflags(write=False)
    return size, select.reshape(-1)


def update(agent: QLearningAgent, entries: npt.NDArray[np.int64],
           targets: npt.NDArray[np.float64]) -> None:
    """One batched update of the flat table ``entries`` (row * cells + column) towards
    ``targets``, collisions averaged at the schedule's compound rate (module docstring)."""
    if entries.size == 0:
        return
    unique, inverse, counts = np.unique(entries, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=targets) / counts
    q, visits = agent.q.reshape(-1), agent.visits.reshape(-1)
    n = visits[unique] + counts
    rate = np.maximum(counts / n, 1.0 - (1.0 - agent.config.alpha) ** counts)
    q[unique] += rate * (means - q[unique])
    visits[unique] = n
