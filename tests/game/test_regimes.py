"""A board's Rules picks its representation once (``game.regimes``): table look-ups up to 12
cells, answers computed from a code's digits beyond. On one board the two give the same answers,
so whichever a board gets, its rules are the same."""

from __future__ import annotations

import numpy as np
import pytest

from gym_tictactoe import game
from gym_tictactoe.game.regimes import DigitRegime, TableRegime


@pytest.mark.parametrize(("size", "regime"), [((3, 3, 3), TableRegime),
                                              ((3, 4, 3), TableRegime),
                                              ((4, 4, 3), DigitRegime),
                                              ((5, 5, 4), DigitRegime)])
def test_each_board_picks_its_regime_once(size: tuple[int, int, int], regime: type) -> None:
    rules = game.rules(*size)
    assert type(rules._regime) is regime
    assert rules.tabled == (regime is TableRegime)


@pytest.mark.parametrize("size", [(3, 3, 3), (2, 4, 3), (3, 4, 4)])
def test_tables_and_digits_answer_alike(size: tuple[int, int, int]) -> None:
    rules = game.rules(*size)
    tables, digits = TableRegime(rules), DigitRegime(rules)
    codes = np.asarray(rules.reachable, dtype=np.int64)
    for question in ("cells_of", "winner_of", "to_move_of", "terminal_of", "legal_of",
                     "next_of"):
        assert np.array_equal(getattr(tables, question)(codes),
                              getattr(digits, question)(codes)), question
    for code in np.random.default_rng(0).choice(codes, 200).tolist():
        for question in ("winner", "is_terminal", "to_move", "legal_moves", "canonical"):
            assert getattr(tables, question)(code) == getattr(digits, question)(code), question
        assert np.array_equal(tables.decode(code), digits.decode(code))


def test_a_board_without_tables_says_so() -> None:
    with pytest.raises(ValueError, match="the 4x4x3 board has 16 cells: per-code tables exist "
                                         "for boards of at most 12 cells"):
        _ = game.rules(4, 4, 3).tables
