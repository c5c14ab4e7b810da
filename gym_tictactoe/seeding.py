"""One rule for seeds everywhere: an integer with 0 <= seed < 2**32, or None for a fresh one.

NumPy's Generator takes any non-negative integer, but NumPy's legacy seeding, which
Stable-Baselines3 calls, takes only 32 bits; one limit for every entry point (the command line,
train.py, the agents, the SB3 adapter) means a seed that works in one works in all.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from gym_tictactoe.checks import is_integer, shown

SEED_LIMIT = 2**32


# The overloads tell the type checker that an integer seed stays an integer.
@overload
def check_seed(seed: None, name: str = "seed") -> None: ...
@overload
def check_seed(seed: int | np.integer, name: str = "seed") -> int: ...
@overload
def check_seed(seed: Any, name: str = "seed") -> int | None: ...
def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an int, None as it is; a ValueError naming the allowed range otherwise.
    Python and NumPy integers alike (the same int, so the same games); not bools."""
    if seed is None:
        return None
    if not is_integer(seed) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{name} must be None or an integer with 0 <= {name} < 2**32; "
                         f"got {shown(seed)}")
    return int(seed)
