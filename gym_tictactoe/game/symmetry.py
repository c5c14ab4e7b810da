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

``gym_tictactoe.players.symmetrized.SymmetrizedPolicy`` averages a policy over them at play time.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe.game import Rules, basics

__all__ = ["canonical_symmetries", "canonicalize", "symmetry_table",
           "transform_cells", "uncanonical_actions", "untransform_cells"]

_INT64_CELLS = 39  # 3**39 < 2**63: the codes of the images fit an int64


@cache
def symmetry_table(rules: Rules) -> npt.NDArray[np.int8]:
    """Per code of a tabled board: the lowest symmetry index whose image is the canonical one,
    so that ``codes`` mapped by it give ``rules.tables.canonical``."""
    cells, pow3 = rules.tables.cells, rules.pow3
    assert pow3 is not None  # a tabled board's codes fit an int64
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
        assert rules.pow3 is not None  # a tabled board's codes fit an int64
        return symmetry_table(rules).take(cells.astype(np.int64) @ rules.pow3).astype(np.intp)
    chosen = np.empty(len(cells), dtype=np.intp)
    step = max(1, basics._CHUNK // len(rules.symmetries))  # bounds the (chunk, S, cells) images
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
