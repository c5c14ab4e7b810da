"""What a training setting may make a run allocate, and the one rule every such limit follows.

A setting that scales memory (SB3's envs and their buffers, AlphaZero's replay buffer, the games
it searches at once, its batch) is checked against the bytes it implies before anything is
allocated, on the command line and when read from a file (a checkpoint, a model): past its limit
it is a ValueError of one line naming the setting, the board and the limit (:func:`check_bytes`;
docs/limits.md). Nothing here imports torch or SB3, so ``train.py`` checks its flags before
loading either.
"""

from __future__ import annotations

MAX_BUFFER_BYTES = 2**30  # a replay or rollout buffer (SB3's, AlphaZero's); ours take 1-20 MB
MAX_N_ENVS = 2**16  # SB3's envs stepped together
# What one AlphaZero self-play round (its search trees, network calls and samples) or one
# gradient step (the batch's activations) holds at once; the vector env's budget is the same.
MAX_WORK_BYTES = 4 * 2**30


def check_bytes(setting: str, count: int, each: int, limit: int, board: str, what: str,
                given: str = "") -> int:
    """The bytes ``count`` of ``setting`` take at ``each`` bytes apiece, if at most ``limit``;
    else a ValueError: "{setting} {count}{given} on {board} needs {bytes} for {what} ({each}
    each), more than the limit of {limit}: give at most {the count that fits}"."""
    needed = count * each
    if needed > limit:
        raise ValueError(f"{setting} {count:,}{given} on {board} needs {size(needed)} for "
                         f"{what} ({size(each)} each), more than the limit of {size(limit)}: "
                         f"give at most {limit // each:,}")
    return needed


def size(count: int) -> str:
    """``count`` bytes in words: ``5,120 bytes``, ``3.25 MiB``, ``1 GiB``, ``3,520 GiB``."""
    for power, unit, least in ((3, "GiB", 1), (2, "MiB", 1), (1, "KiB", 10)):
        if count >= least * 1024**power:
            value = count / 1024**power
            return f"{value:.3g} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{count:,} bytes"


def sb3_transition_bytes(algo: str, n_cells: int) -> int:
    """About the bytes one transition takes in SB3's buffer for ``algo``: the one-hot observation
    in float32 (twice in DQN's replay buffer, which keeps the next one), the action mask and a
    few numbers."""
    return 4 * 3 * n_cells * (2 if algo == "dqn" else 1) + 64 + n_cells
