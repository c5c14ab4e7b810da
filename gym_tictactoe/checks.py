"""The one argument checker: integers, numbers, flags and choices, checked with one rule and one
wording everywhere (seeds: :func:`gym_tictactoe.seeding.check_seed`, built on this).

Python and NumPy scalars are accepted alike (``3``, ``np.int64(3)``, ``np.float32(0.5)``) and
returned as plain Python values, so they go to JSON and compare as the user expects. ``bool`` is
refused where a number is meant (``True`` is an ``int`` to Python, never a count to a user), and
so is ``np.timedelta64`` (a NumPy integer subclass that is a duration, not a number). A bad value
is a ``ValueError`` of one line: ``"{name} must be {what is allowed}; got {value!r}"``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Literal, overload

import numpy as np

_NOT_NUMBERS = (bool, np.bool_, np.timedelta64, np.datetime64)


def shown(value: Any, limit: int = 120) -> str:
    """``repr(value)`` on one line and at most about ``limit`` characters, for error messages (an
    array's repr spans lines; a huge value would bury the message)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else f"{text[:limit]}..."


def is_integer(value: Any) -> bool:
    """A Python or NumPy integer, not a bool (nor a NumPy duration)."""
    return isinstance(value, Integral) and not isinstance(value, _NOT_NUMBERS)


def is_number(value: Any) -> bool:
    """A finite real Python or NumPy number, not a bool."""
    return (isinstance(value, Real) and not isinstance(value, _NOT_NUMBERS)
            and math.isfinite(value))


# The overloads tell the type checker that only ``none=True`` can give None.
@overload
def check_int(value: Any, name: str, low: int | None = None, high: int | None = None, *,
              none: Literal[False] = False, note: str = "") -> int: ...
@overload
def check_int(value: Any, name: str, low: int | None = None, high: int | None = None, *,
              none: bool, note: str = "") -> int | None: ...
def check_int(value: Any, name: str, low: int | None = None, high: int | None = None, *,
              none: bool = False, note: str = "") -> int | None:
    """``value`` as an int in [low, high] (either end open when None); None as it is when
    ``none``. Otherwise a ValueError: "{name} must be an integer from {low} to {high}[ or
    None]{note}; got {value!r}" (``note`` says why the range is what it is)."""
    if value is None and none:
        return None
    if not is_integer(value) or (low is not None and value < low) \
            or (high is not None and value > high):
        what = "an integer" + _range(low, high) + (" or None" if none else "")
        raise ValueError(f"{name} must be {what}{note}; got {shown(value)}")
    return int(value)


@overload
def check_number(value: Any, name: str, low: float | None = None, high: float | None = None,
                 *, low_open: bool = False, high_open: bool = False,
                 none: Literal[False] = False, note: str = "") -> float: ...
@overload
def check_number(value: Any, name: str, low: float | None = None, high: float | None = None,
                 *, low_open: bool = False, high_open: bool = False, none: bool,
                 note: str = "") -> float | None: ...
def check_number(value: Any, name: str, low: float | None = None, high: float | None = None,
                 *, low_open: bool = False, high_open: bool = False, none: bool = False,
                 note: str = "") -> float | None:
    """``value`` as a finite float in the interval from ``low`` to ``high`` (closed unless
    ``low_open``/``high_open``; unbounded where None); None as it is when ``none``. Otherwise a
    ValueError: "{name} must be a number in [low, high][ or None]{note}; got {value!r}"."""
    if value is None and none:
        return None
    inside = is_number(value) and not (
        (low is not None and (value <= low if low_open else value < low))
        or (high is not None and (value >= high if high_open else value > high)))
    if not inside:
        what = "a number" if low is not None or high is not None else "a finite number"
        what += _interval(low, high, low_open, high_open) + (" or None" if none else "")
        raise ValueError(f"{name} must be {what}{note}; got {shown(value)}")
    return float(value)


def check_flag(value: Any, name: str) -> bool:
    """``value`` as a bool: True or False (Python or NumPy), nothing else (not 0, not "no")."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {shown(value)}")
    return bool(value)


def check_choice(value: Any, name: str, allowed: tuple | list) -> Any:
    """The one of ``allowed`` that ``value`` is, else a ValueError listing them. Equal means the
    same kind of value (``np.str_("X")`` is ``"X"``; ``True`` is not ``1``); values that cannot
    be compared, such as arrays, are refused too."""
    for choice in allowed:
        try:
            if value is choice or (_kind(value) is _kind(choice) and bool(value == choice)):
                return choice
        except (TypeError, ValueError):  # an array's == gives no single truth value
            break
    raise ValueError(f"{name} must be one of {list(allowed)}; got {shown(value)}")


def _kind(value: Any) -> type:
    return str if isinstance(value, str) else type(value)


def _range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" from {low:,} to {high:,}"
    if low is not None:
        return f" >= {low:,}"
    return f" <= {high:,}" if high is not None else ""


def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    return f" {'<' if high_open else '<='} {high:g}" if high is not None else ""
