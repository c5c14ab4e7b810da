"""The command line, driven through main([...]) with scripted stdin, plus one real subprocess."""

from __future__ import annotations

import io
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from gym_tictactoe import cli, game

REPO = Path(__file__).resolve().parents[1]

# You (X) play keypad 1, 2, 4 and every reply of minimax is its only best move: 5 (the centre),
# 3 (block), 7 (win). Bad entries are mixed in; each must re-prompt with its reason.
LOSING_SCRIPT = ["abc", "1", "0", "10", "5", "2", "", "4"]


def run(argv: list[str], monkeypatch, capsys, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def arena_rows(out: str) -> dict[tuple[str, str], tuple[int, int, int]]:
    """{(X player, O player): (X wins, O wins, draws)} from the arena table."""
    lines = out.splitlines()
    body = lines[lines.index(next(li for li in lines if li.startswith("X player"))) + 1 :]
    return {(f[0], f[1]): tuple(map(int, f[2:])) for f in (li.split() for li in body if li)}


# --- play -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_play_a_full_game_with_bad_inputs(monkeypatch, capsys, seed):
    stdin = "\n".join(LOSING_SCRIPT) + "\n"
    code, out, _ = run(["play", "--seed", str(seed)], monkeypatch, capsys, stdin)
    assert code == 0
    assert " 1 | 2 | 3\n---+---+---\n 4 | 5 | 6\n---+---+---\n 7 | 8 | 9" in out  # the keypad
    assert "'abc' is not a number" in out
    assert "0 is not a cell" in out and "10 is not a cell" in out
    assert "5 is taken by O: free cells are 2 3 4 6 7 8 9" in out
    assert "'' is not a number" in out
    assert "minimax (O) played 5:\n X | 2 | 3\n---+---+---\n 4 | O | 6" in out
    assert "you (X) played 4:" in out and "minimax (O) played 7:" in out
    assert out.rstrip().endswith("Result: O wins (minimax).")


def test_play_as_o_and_end_of_input_leaves_cleanly(monkeypatch, capsys):
    code, out, _ = run(["play", "--as", "O", "--seed", "3"], monkeypatch, capsys, stdin="")
    assert code == 0
    assert "You are O, playing minimax" in out
    assert "minimax (X) played" in out  # X moves first, so the opponent opened
    assert "No more input: game abandoned." in out


def test_end_of_input_mid_game(monkeypatch, capsys):
    code, out, _ = run(["play", "--opponent", "random", "--seed", "0"], monkeypatch, capsys, "5\n")
    assert code == 0
    assert "you (X) played 5" in out and "random (O) played" in out
    assert out.rstrip().endswith("No more input: game abandoned.")


def test_ctrl_c_exits_130(monkeypatch, capsys):
    def interrupt(prompt: str = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupt)
    assert cli.main(["play"]) == cli.EXIT_INTERRUPTED == 130
    assert "Interrupted." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cells", "line"),
    [
        ("XXXOO....", "Result: X wins (you)."),
        ("XX.OOOX..", "Result: O wins (minimax)."),
        ("XOXXOOOXX", "Result: draw."),
    ],
)
def test_result_line(cells, line):
    code = game.encode([".XO".index(c) for c in cells])
    assert cli.result_line(code, {game.X: "you", game.O: "minimax"}) == line


def test_unknown_opponent_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["play", "--opponent", "nobody"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nobody'" in capsys.readouterr().err


# --- arena ------------------------------------------------------------------------------------

SMALL = ["arena", "--players", "random,heuristic,minimax", "--games", "30", "--seed", "7"]


def test_arena_table_counts_every_game_of_every_pairing(monkeypatch, capsys):
    code, out, _ = run(SMALL, monkeypatch, capsys)
    assert code == 0
    rows = arena_rows(out)
    names = ["random", "heuristic", "minimax"]
    assert list(rows) == [(x, o) for x in names for o in names]  # both seats, self-play too
    assert all(sum(counts) == 30 for counts in rows.values())


def test_arena_same_seed_same_table(monkeypatch, capsys):
    assert run(SMALL, monkeypatch, capsys)[1] == run(SMALL, monkeypatch, capsys)[1]


def test_arena_default_players_and_minimax_never_loses(monkeypatch, capsys):
    code, out, _ = run(["arena", "--games", "10"], monkeypatch, capsys)
    assert code == 0
    rows = arena_rows(out)
    assert len(rows) == len(cli.ARENA_PLAYERS) ** 2
    for (x_name, o_name), (x_wins, o_wins, _) in rows.items():
        assert x_name != "minimax" or o_wins == 0
        assert o_name != "minimax" or x_wins == 0


@pytest.mark.parametrize("players", ["random,foo", "", "heuristic,,bar"])
def test_arena_unknown_player_lists_the_names(capsys, players):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["arena", "--players", players])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown player" in err
    assert all(name in err for name in ("random", "heuristic", "montecarlo", "minimax"))


@pytest.mark.parametrize("games", ["0", "-3", "many"])
def test_arena_games_must_be_positive(capsys, games):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["arena", "--games", games])
    assert exit_info.value.code == 2
    assert "positive integer" in capsys.readouterr().err


# --- facts ------------------------------------------------------------------------------------


def test_facts_prints_the_numbers(monkeypatch, capsys):
    code, out, _ = run(["facts"], monkeypatch, capsys)
    assert code == 0
    for number in ("5,478", "958", "765", "255,168", "131,184", "77,904", "46,080", "0.5849"):
        assert number in out
    assert "value of the empty board, perfect play   draw" in out


def test_random_play_outcome_matches_a_plain_recursion():
    outcome = game.random_play_outcome()
    assert outcome == pytest.approx(_random_outcome(game.EMPTY_BOARD), abs=1e-12)
    assert sum(outcome.values()) == pytest.approx(1.0)
    assert round(outcome["X"], 4) == 0.5849


@cache
def _random_outcome(code: int) -> dict[str, float]:
    """The same probabilities by memoised recursion: an independent check of the DP."""
    if game.is_terminal(code):
        won = cli.RESULTS[game.winner(code)]
        return {name: float(name == won) for name in cli.RESULTS.values()}
    children = [_random_outcome(game.play(code, cell)) for cell in game.legal_moves(code)]
    return {name: sum(child[name] for child in children) / len(children)
            for name in cli.RESULTS.values()}


# --- the program itself -----------------------------------------------------------------------


def test_a_subcommand_is_required(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([])
    assert exit_info.value.code == 2


def test_python_dash_m_facts():
    done = subprocess.run(
        [sys.executable, "-m", "gym_tictactoe", "facts"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "255,168" in done.stdout
