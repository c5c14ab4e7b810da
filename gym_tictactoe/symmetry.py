"""The board's symmetries applied to batches of boards: the canonical orientation.

A symmetry ``s`` of a board is the cell permutation ``perm = rules.symmetries[s]`` (identity
first; 8 on square boards, 4 on rectangles, fewer when a side is 1): the image of a board is
``board[perm]``, so cell ``j`` of the image is cell ``perm[j]`` of the original. The *canonical*
image of a board is the one with the lowest code (``Rules.canonical``); among symmetries giving
the same image the lowest index is taken, so the choice is a function of the board alone.

``canonicalize`` maps observations to their canonical images (with the symmetry used),
``uncanonical_actions`` maps cells chosen on the canonical image back to the board as it is. Both
work on whole batches without a Python loop over boards: a per-code table on boards of at most
``game.TABLE_CELLS`` cells, the codes of all images on boards whose codes fit an int64 (at most 39
cells), and a comparison of the images cell by cell, most significant cell first, beyond that.
Observations are any arrays of 0/1/2 cells: the env's relative boards or absolute ones.

``SymmetrizedPolicy`` averages a trained policy over the board's symmetries at play time.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_flag
from gym_tictactoe.game import Rules
from gym_tictactoe.positions import as_cell
from gym_tictactoe.seeding import check_seed
from gym_tictactoe.stochastic import offers_probabilities, probabilities_of

__all__ = ["SymmetrizedPolicy", "canonical_symmetries", "canonicalize", "symmetry_table",
           "transform_cells", "uncanonical_actions", "untransform_cells"]

_INT64_CELLS = 39  # 3**39 < 2**63: the codes of the images fit an int64


@cache
def symmetry_table(rules: Rules) -> npt.NDArray[np.int8]:
    """Per code of a tabled board: the lowest symmetry index whose image is the canonical one,
    so that ``codes`` mapped by it give ``rules.tables.canonical``."""
    cells, pow3 = rules.tables.cells, rules.pow3
    best = cells.astype(np.int64) @ pow3  # the identity's image: the code itself
    table = np.zeros(rules.n_codes, dtype=np.int8)
    for s, perm in enumerate(rules.symmetries[1:], start=1):
        image = cells[:, perm].astype(np.int64) @ pow3
        lower = image < best  # strictly: an equal image keeps the lower symmetry index
        table[lower], best[lower] = s, image[lower]
    table.setflags(write=False)
    return table


def _check_boards(rules: Rules, boards: npt.ArrayLike, name: str) -> npt.NDArray[np.int8]:
    cells = np.asarray(boards)
    n = rules.n_cells
    if cells.ndim != 2 or cells.shape[1] != n or cells.dtype.kind not in "iu" \
            or (cells.size and (cells.min() < 0 or cells.max() > 2)):
        raise ValueError(f"{name} must be (N, {n}) integer boards of 0, 1, 2 for the "
                         f"{rules.name} board; got shape {cells.shape}, dtype {cells.dtype}")
    return cells.astype(np.int8, copy=False)


def canonical_symmetries(rules: Rules, observations: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """(N,): for each board of ``observations`` ``(N, cells)``, the symmetry giving its canonical
    image (the lowest code; the lowest index among equal images)."""
    cells = _check_boards(rules, observations, "observations")
    if rules.tabled:
        return symmetry_table(rules).take(cells.astype(np.int64) @ rules.pow3).astype(np.intp)
    chosen = np.empty(len(cells), dtype=np.intp)
    step = max(1, game._CHUNK // len(rules.symmetries))  # bounds the (chunk, S, cells) images
    for start in range(0, len(cells), step):
        images = cells[start : start + step][:, rules.symmetries]
        chosen[start : start + step] = _lowest_image(rules, images)
    return chosen


def _lowest_image(rules: Rules, images: npt.NDArray[np.int8]) -> npt.NDArray[np.intp]:
    """The index of the lowest-coded of each board's images ``(N, S, cells)``, first among
    equals."""
    if rules.n_cells <= _INT64_CELLS:
        pow3 = 3 ** np.arange(rules.n_cells, dtype=np.int64)
        return (images.astype(np.int64) @ pow3).argmin(axis=1)
    # Codes too long for int64: compare digit by digit from the most significant cell, keeping
    # the best image so far (a loop over the few symmetries, never over boards).
    rows = np.arange(len(images))
    best = np.zeros(len(images), dtype=np.intp)
    for s in range(1, images.shape[1]):
        here, kept = images[:, s], images[rows, best]
        differ = here != kept
        top = rules.n_cells - 1 - differ[:, ::-1].argmax(axis=1)  # highest differing cell
        lower = differ.any(axis=1) & (here[rows, top] < kept[rows, top])
        best[lower] = s
    return best


def transform_cells(rules: Rules, per_cell: npt.ArrayLike,
                    symmetry: npt.ArrayLike) -> npt.NDArray:
    """``per_cell`` ``(N, cells)`` (boards, masks, probabilities) under each row's symmetry:
    row ``i`` becomes ``per_cell[i][rules.symmetries[symmetry[i]]]``."""
    values, perms = _rows_and_perms(rules, per_cell, symmetry, rules.symmetries)
    return np.take_along_axis(values, perms, axis=1)


def untransform_cells(rules: Rules, per_cell: npt.ArrayLike,
                      symmetry: npt.ArrayLike) -> npt.NDArray:
    """The inverse of ``transform_cells``: rows given on the images, back on the boards."""
    values, perms = _rows_and_perms(rules, per_cell, symmetry, rules.inverse_symmetries)
    return np.take_along_axis(values, perms, axis=1)


def _rows_and_perms(rules: Rules, per_cell: npt.ArrayLike, symmetry: npt.ArrayLike,
                    table: npt.NDArray[np.intp]) -> tuple[npt.NDArray, npt.NDArray[np.intp]]:
    values = np.asarray(per_cell)
    symmetry = _check_symmetries(rules, symmetry)
    if values.ndim != 2 or values.shape != (symmetry.size, rules.n_cells):
        raise ValueError(f"expected ({symmetry.size}, {rules.n_cells}) per-cell rows, one per "
                         f"symmetry index; got shape {values.shape}")
    return values, table[symmetry]


def _check_symmetries(rules: Rules, symmetry: npt.ArrayLike) -> npt.NDArray[np.intp]:
    symmetry = np.asarray(symmetry)
    n = len(rules.symmetries)
    if symmetry.ndim != 1 or symmetry.dtype.kind not in "iu" \
            or (symmetry.size and (symmetry.min() < 0 or symmetry.max() >= n)):
        raise ValueError(f"symmetry indices must be a 1-d integer array of 0..{n - 1} (the "
                         f"{rules.name} board has {n} symmetries); got {symmetry!r}")
    return symmetry.astype(np.intp, copy=False)


def canonicalize(rules: Rules, observations: npt.ArrayLike
                 ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.intp]]:
    """``(canonical_observations, symmetry)``: each board of ``observations`` ``(N, cells)`` as
    its canonical image, and the index of the symmetry that gives it. Masks go along with
    ``transform_cells(rules, masks, symmetry)``; chosen cells come back with
    ``uncanonical_actions``."""
    cells = _check_boards(rules, observations, "observations")
    symmetry = canonical_symmetries(rules, cells)
    return transform_cells(rules, cells, symmetry), symmetry


def uncanonical_actions(rules: Rules, actions: npt.ArrayLike,
                        symmetry: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Cells chosen on canonical images, as cells of the boards they came from: action ``a`` of
    row ``i`` is cell ``rules.symmetries[symmetry[i]][a]``. Entries that are not cells (outside
    ``0..cells-1``) are returned unchanged, so the env still sees them as illegal moves."""
    symmetry = _check_symmetries(rules, symmetry)
    actions = np.asarray(actions)
    if actions.shape != symmetry.shape or actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be {symmetry.size} integer cells, one per symmetry "
                         f"index; got shape {actions.shape}, dtype {actions.dtype}")
    actions = actions.astype(np.int64)
    is_cell = (actions >= 0) & (actions < rules.n_cells)
    mapped = rules.symmetries[symmetry, np.where(is_cell, actions, 0)]
    return np.where(is_cell, mapped, actions)


class SymmetrizedPolicy:
    """A policy averaged over the board's symmetries: it asks ``policy`` about every symmetric
    image of the board, maps the answers back, and averages them.

    The answers are the policy's action probabilities when it offers them
    (``action_probabilities_batch`` or ``action_probabilities``), else its moves as one-hot
    votes (``act_batch`` or one call per board). By default it plays the most probable cell of
    the average (the lowest among equals); with ``stochastic=True`` it draws from the average
    (a generator seeded with ``seed``) and offers the average as its own action probabilities,
    so evaluation measures it exactly as a stochastic policy.

    ``rules``: the board (default: the policy's own ``rules``, else 3x3). Every output must be a
    cell: an answer that names no cell is a ValueError.
    """

    def __init__(self, policy: Any, rules: Rules | None = None, *, stochastic: bool = False,
                 seed: int | None = 0) -> None:
        if not callable(policy) and not offers_probabilities(policy):
            raise ValueError(f"policy must be callable as policy(obs, mask) or offer action "
                             f"probabilities; got {policy!r}")
        own = getattr(policy, "rules", None)
        self.rules = rules if rules is not None else own if isinstance(own, Rules) \
            else game.TICTACTOE
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a game.Rules (game.rules(rows, cols, win_length)); "
                             f"got {rules!r}")
        self.policy, self.stochastic = policy, check_flag(stochastic, "stochastic")
        self.rng = np.random.default_rng(check_seed(seed))
        if self.stochastic:  # only then is it a stochastic policy for evaluation
            self.action_probabilities_batch = self.average_batch
            self.action_probabilities = self._average_one

    def average_batch(self, observations: npt.ArrayLike,
                      masks: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``(N, cells)``: the policy's answers on every image of each board, averaged."""
        boards = _check_boards(self.rules, observations, "observations")
        masks = _check_boards(self.rules, masks, "masks")
        total = np.zeros(boards.shape, dtype=np.float64)
        for s in range(len(self.rules.symmetries)):
            chosen = np.full(len(boards), s, dtype=np.intp)
            images = transform_cells(self.rules, boards, chosen)
            answers = self._answers(images, transform_cells(self.rules, masks, chosen))
            total += untransform_cells(self.rules, answers, chosen)
        return total / len(self.rules.symmetries)

    def act_batch(self, observations: npt.ArrayLike, masks: npt.ArrayLike
                  ) -> npt.NDArray[np.int64]:
        average = self.average_batch(observations, masks)
        if not self.stochastic:
            return average.argmax(axis=1)
        # The first cell whose cumulative probability passes a uniform draw: never a cell of
        # probability 0, as long as the draw stays below the total.
        cumulative = np.cumsum(average, axis=1)
        draws = self.rng.random((len(average), 1)) * cumulative[:, -1:]
        return (cumulative > draws).argmax(axis=1)

    def __call__(self, observation: npt.ArrayLike, action_mask: npt.ArrayLike) -> int:
        return int(self.act_batch(np.asarray(observation)[None],
                                  np.asarray(action_mask)[None])[0])

    def _average_one(self, observation: npt.ArrayLike,
                     action_mask: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return self.average_batch(np.asarray(observation)[None],
                                  np.asarray(action_mask)[None])[0]

    def _answers(self, images: npt.NDArray[np.int8],
                 masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        if offers_probabilities(self.policy):
            return probabilities_of(self.policy, images, masks)
        act_batch = getattr(self.policy, "act_batch", None)
        if callable(act_batch):
            moves = list(np.asarray(act_batch(images.copy(), masks.copy())).reshape(-1))
        else:
            moves = [self.policy(obs.copy(), mask.copy()) for obs, mask in zip(images, masks,
                                                                               strict=True)]
        cells = [as_cell(move, self.rules.n_cells) for move in moves]
        if len(cells) != len(images) or None in cells:
            raise ValueError(f"the policy must answer one cell 0..{self.rules.n_cells - 1} per "
                             f"board; got {moves[:len(images)]!r}")
        return np.eye(self.rules.n_cells)[cells]

    def __repr__(self) -> str:
        return (f"SymmetrizedPolicy({self.policy!r}, board={self.rules.name}, "
                f"stochastic={self.stochastic})")

