"""Elo ratings from arena results: the Bradley-Terry fit, its interval, the arena's table, and a
missing choix."""

from __future__ import annotations

import math

import pytest
from missing_packages import run_without

from gym_tictactoe import cli
from gym_tictactoe.evaluation import ratings

pytest.importorskip("choix")


def _rows(pairs: dict[tuple[str, str], tuple[int, int, int]]) -> list[tuple[str, str, dict]]:
    return [(x, o, {"X": w, "O": lost, "draw": d}) for (x, o), (w, lost, d) in pairs.items()]


def test_a_75_percent_score_is_191_elo_and_the_interval_shrinks_with_games():
    few = ratings.elo_ratings(["a", "b"], _rows({("b", "a"): (15, 5, 0)}))
    many = ratings.elo_ratings(["a", "b"], _rows({("b", "a"): (1500, 500, 0)}))
    expected = 400 * math.log10(3)  # 1 / (1 + 10**(-d / 400)) = 0.75
    assert abs(many[1].elo - expected) < 2 and many[0].elo == 0
    assert many[1].interval < few[1].interval / 5
    # The normal approximation: the sd of the difference of log-strengths is 1 / sqrt(n p (1 -
    # p)); each of two players is half that difference away from their mean.
    half = 1.96 * 400 / math.log(10) / math.sqrt(2000 * 0.1875) / 2
    assert abs(many[1].interval - half) < 1 and abs(many[0].interval - half) < 1


def test_the_gap_between_two_players_has_the_interval_of_the_difference():
    rows = _rows({("b", "a"): (1500, 500, 0), ("c", "a"): (10, 10, 0)})
    gap, interval = ratings.elo_gap(["a", "b", "c"], rows, "b", "a")
    fitted = ratings.elo_ratings(["a", "b", "c"], rows)
    assert abs(gap - fitted[1].elo) < 1e-9 and abs(gap - 400 * math.log10(3)) < 2
    # 2,000 games between a and b: the sd of their difference is 1 / sqrt(n p (1 - p)).
    whole = 1.96 * 400 / math.log(10) / math.sqrt(2000 * 0.1875)
    assert abs(interval - whole) < 2
    assert math.isnan(ratings.elo_gap(["a", "b"], [], "b", "a")[1])


def test_draws_count_half_and_seats_both_count():
    even = ratings.elo_ratings(["a", "b"], _rows({("a", "b"): (10, 0, 0), ("b", "a"): (10, 0, 0),
                                                 ("a", "a"): (7, 0, 0)}))
    assert abs(even[1].elo) < 1e-6 and even[1].games == 20 and even[1].points == 10
    drawn = ratings.elo_ratings(["a", "b"], _rows({("a", "b"): (0, 0, 40)}))
    assert abs(drawn[1].elo) < 1e-6


def test_a_player_that_never_lost_is_a_lower_bound():
    result = ratings.elo_ratings(["random", "minimax"], _rows({("minimax", "random"): (50, 0, 0)}))
    assert result[1].bound == "lower" and result[0].bound == "upper"
    assert result[1].elo > 400 and math.isfinite(result[1].elo)
    text = "\n".join(ratings.ratings_table(result))
    assert "never lost: at least" in text and text.splitlines()[1].startswith("minimax")


def test_arena_prints_ratings(capsys):
    assert cli.main(["arena", "--players", "random,heuristic", "--games", "10"]) == 0
    out = capsys.readouterr().out
    assert "Elo ratings (Bradley-Terry fit, a draw half a win; random = 0):" in out
    table = out[out.index("Elo ratings"):].splitlines()
    assert table[2].split()[0] == "heuristic" and table[3].split()[:3] == ["random", "0", "+/-"]


@pytest.mark.e2e
def test_arena_without_choix_plays_and_says_so_in_one_line():
    done = run_without("choix", "arena", "--players", "random,heuristic", "--games", "2")
    assert done.returncode == 0 and "X player" in done.stdout and "Elo" not in done.stdout
    assert done.stderr.strip().count("\n") == 0
    assert 'needs choix, which is not installed: pip install ".[ratings]"' in done.stderr


def test_a_rating_just_below_zero_shows_as_0_not_minus_0():
    table = ratings.ratings_table([ratings.Rating("a", 0.0, 10.0, 4, 2.0, ""),
                                   ratings.Rating("b", -0.4, 10.0, 4, 2.0, "")])
    assert [line.split()[1] for line in table[1:]] == ["0", "0"]
