"""The command line, driven through main([...]) with scripted stdin (as a separate process:
tests/e2e/test_cli_processes.py)."""

from __future__ import annotations

import io
import re
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from gym_tictactoe import cli, game
from gym_tictactoe.cli import play as cli_play
from gym_tictactoe.envs import rendering

T3 = game.TICTACTOE  # tic-tac-toe's rules

# You (X) play cells 0, 1, 3 and every reply of minimax is its only best move: 4 (the centre),
# 2 (block), 6 (win). Bad entries are mixed in; each must re-prompt with its reason.
LOSING_SCRIPT = ["abc", "0", "9", "-1", "4", "1", "", "3"]


def run(argv: list[str], monkeypatch, capsys, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def arena_rows(out: str) -> dict[tuple[str, str], tuple[int, int, int]]:
    """{(X player, O player): (X wins, O wins, draws)} from the arena table (it ends at the
    first blank line; the ratings follow)."""
    lines = out.splitlines()
    body = lines[lines.index(next(li for li in lines if li.startswith("X player"))) + 1 :]
    body = body[: body.index("")] if "" in body else body
    return {(f[0], f[1]): tuple(map(int, f[2:])) for f in (li.split() for li in body)}


# --- play -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_play_a_full_game_with_bad_inputs(monkeypatch, capsys, seed):
    stdin = "\n".join([*LOSING_SCRIPT, "q"]) + "\n"
    code, out, _ = run(["play", "--seed", str(seed)], monkeypatch, capsys, stdin)
    assert code == 0
    assert " 0 | 1 | 2\n---+---+---\n 3 | 4 | 5\n---+---+---\n 6 | 7 | 8" in out
    assert "'abc' is not a cell" in out
    assert "9 is not a cell" in out and "-1 is not a cell" in out
    assert "4 is taken by O: free cells are 1 2 3 5 6 7 8" in out
    assert "'' is not a cell" in out
    # One board a turn, after the reply; the last move in parentheses.
    assert "you (X) played 0.\n\nminimax (O) played 4:\n X | 1 | 2\n---+---+---\n 3 |(O)| 5" in out
    assert out.count("+---\n") == 2 * 4  # 4 boards: the empty one, then after each reply
    assert "you (X) played 3." in out and "minimax (O) played 6:" in out
    assert ("You lose: minimax (O) has 2 4 6 in a row.\nScore: you 0, minimax 1, draws 0.\n"
            "Another game?") in out
    assert out.rstrip().endswith("Bye.")


def test_the_board_a_person_reads_is_the_envs_ansi_render():
    # One numbering wherever a person reads a cell: play's board, the env's ansi render, the
    # env's actions and the losing lines of a report all count 0-8 row by row.
    for code in (game.EMPTY_BOARD, T3.encode([1, 0, 0, 0, 2, 0, 0, 0, 0])):
        assert cli.board_text(code, T3) + "\n" == rendering.ansi(code)
        assert cli.board_text(code, T3, last=4) + "\n" == rendering.ansi(code, last=4)


def test_the_prompt_says_how_to_quit_and_q_quits(monkeypatch, capsys):
    prompts = []

    def answer(prompt: str = "") -> str:
        prompts.append(prompt)
        return ["4", "quit"][len(prompts) - 1]

    monkeypatch.setattr("builtins.input", answer)
    assert cli.main(["play", "--seed", "0"]) == 0
    assert prompts == ["Your move (X), 0-8 or q to quit: "] * 2
    assert capsys.readouterr().out.rstrip().endswith("Game abandoned.")


def test_another_game_in_the_same_or_swapped_seats(monkeypatch, capsys):
    # Game 1 as X (lost as scripted); Enter: game 2 as X again; s: game 3 as O, left with q.
    game_as_x = "\n".join(["0", "1", "3"])
    stdin = "\n".join([game_as_x, "", game_as_x, "maybe", "s", "q"]) + "\n"
    code, out, _ = run(["play", "--seed", "0"], monkeypatch, capsys, stdin)
    assert code == 0
    assert out.count("You are X, playing minimax.") == 2
    assert out.count("You are O, playing minimax.") == 1
    assert "minimax (X) played" in out.split("You are O")[1]  # the seats really swapped
    assert "'maybe': press Enter for the same seats, s to swap, q to quit" in out
    assert out.count("You lose: minimax (O) has 2 4 6 in a row.") == 2
    assert "Score: you 0, minimax 2, draws 0." in out
    assert out.rstrip().endswith("Game abandoned.")


def test_end_of_input_after_a_game_leaves_cleanly(monkeypatch, capsys):
    stdin = "\n".join(["0", "1", "3"]) + "\n"
    code, out, _ = run(["play", "--seed", "0"], monkeypatch, capsys, stdin)
    assert code == 0 and out.rstrip().endswith("Bye.")


def test_play_as_o_and_end_of_input_leaves_cleanly(monkeypatch, capsys):
    code, out, _ = run(["play", "--as", "O", "--seed", "3"], monkeypatch, capsys, stdin="")
    assert code == 0
    assert "You are O, playing minimax" in out
    assert "minimax (X) played" in out  # X moves first, so the opponent opened
    assert "No more input: game abandoned." in out


def test_end_of_input_mid_game(monkeypatch, capsys):
    code, out, _ = run(["play", "--opponent", "random", "--seed", "0"], monkeypatch, capsys, "4\n")
    assert code == 0
    assert "you (X) played 4." in out and "random (O) played" in out
    assert out.rstrip().endswith("No more input: game abandoned.")


def test_play_takes_any_opponent_spec(monkeypatch, capsys):
    spec = "epsilon:epsilon=0.5,inner=heuristic"
    code, out, _ = run(["play", "--opponent", spec, "--seed", "0"], monkeypatch, capsys, "q\n")
    assert code == 0 and f"You are X, playing {spec}." in out


def test_play_on_a_big_board_defaults_to_the_search_player(monkeypatch, capsys):
    # README: python -m gym_tictactoe play --board 15x15x5 (minimax needs a solved board).
    stdin = "h8\nh8\n0 0\nq\n"
    code, out, err = run(["play", "--board", "15x15x5", "--seed", "0"], monkeypatch, capsys, stdin)
    assert code == 0 and err == ""
    assert "You are X, playing alphabeta." in out
    assert "    a b c d e f g h i j k l m n o\n15  . . . . . . . . . . . . . . .  15" in out
    assert "you (X) played h8.\n\nalphabeta (O) played " in out
    assert "h8 is taken by X: choose an empty cell (a dot)" in out
    assert "you (X) played a15." in out  # row 0, col 0: the top left
    boards = out.split("    a b c d e f g h i j k l m n o\n")
    assert len(boards) == 1 + 2 * 3  # the empty board and one after each reply: a header, a foot
    assert max(len(line) for line in out.splitlines() if line.startswith(" 8 ")) <= 40
    rows = [line for line in out.splitlines() if line[:2].strip().isdigit()]
    assert sum("(O)" in row for row in rows) == 2  # each reply marked as the last move
    assert "Your move (X), a cell such as h8 or q to quit: " in out


@pytest.mark.parametrize(("board", "name"), [("3x3x3", "minimax"), ("4x4x3", "minimax"),
                                             ("5x5x4", "alphabeta"), ("15x15x5", "alphabeta")])
def test_the_default_opponent_is_the_strongest_for_the_board(board, name):
    args = cli.build_parser().parse_args(["play", "--board", board])
    assert args.opponent is None and cli_play.default_opponent(args.board) == name


def test_the_score_runs_across_games_and_seats(monkeypatch, capsys):
    # X loses twice to minimax, then as O quits: the score counts the person, not the seat.
    game_as_x = "\n".join(["0", "1", "3"])
    code, out, _ = run(["play", "--seed", "0"], monkeypatch, capsys,
                       "\n".join([game_as_x, "", game_as_x, "s", "q"]) + "\n")
    assert code == 0
    assert out.count("Score: you 0, minimax 1, draws 0.") == 1
    assert out.count("Score: you 0, minimax 2, draws 0.") == 1


def test_a_terminal_gets_line_editing_and_colour(monkeypatch):
    monkeypatch.delitem(sys.modules, "readline", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    cli_play._line_editing()
    assert "readline" not in sys.modules  # piped input: plain input()
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    cli_play._line_editing()
    assert "readline" in sys.modules or sys.platform == "win32"
    code = T3.encode([1, 1, 1, 2, 2, 0, 0, 0, 0])
    text = cli.board_text(code, T3, last=2, colour=True)
    assert text.count("\x1b[7m") == 3  # the winning line in reverse video


def test_ctrl_c_exits_130(monkeypatch, capsys):
    def interrupt(prompt: str = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupt)
    assert cli.main(["play"]) == cli.EXIT_INTERRUPTED == 130
    assert "Interrupted." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cells", "line"),
    [
        ("XXXOO....", "You win: 0 1 2 in a row."),
        ("XX.OOOX..", "You lose: minimax (O) has 3 4 5 in a row."),
        ("XOXXOOOXX", "Draw: the board is full."),
    ],
)
def test_result_line(cells, line):
    code = T3.encode([".XO".index(c) for c in cells])
    assert cli.result_line(code, {game.X: "you", game.O: "minimax"}, T3) == line


def test_unknown_opponent_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["play", "--opponent", "nobody"])
    assert exit_info.value.code == 2
    assert "unknown opponent 'nobody'; choose one of" in capsys.readouterr().err


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


def test_arena_default_players_on_a_big_board_put_search_in_minimax_s_place(monkeypatch,
                                                                            capsys):
    code, out, _ = run(["arena", "--board", "6x6x4", "--games", "1"], monkeypatch, capsys)
    assert code == 0
    names = {name for pair in arena_rows(out) for name in pair}
    assert names == {"random", "heuristic", "montecarlo", "alphabeta"}


@pytest.mark.parametrize(("players", "message"), [
    ("random,foo", "unknown opponent 'foo'; choose one of"),
    ("heuristic,,bar", "unknown opponent 'bar'; choose one of"),
    ("", "no player given; choose from random, minimax"),
    ("epsilon:epsilon=2", r"epsilon must be a number in \[0, 1\]"),
    ("random,alphabeta:rows=3", "opponent 'alphabeta': rows is set by the board"),
])
def test_arena_bad_players_are_named(capsys, players, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["arena", "--players", players])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err


def test_arena_takes_every_opponent_spec(monkeypatch, capsys):
    # The README's specs: keyword arguments after a colon (commas inside them too), mixtures.
    players = "epsilon:epsilon=0.3,inner=heuristic,random+minimax*2,montecarlo:playouts=5"
    code, out, _ = run(["arena", "--players", players, "--games", "4"], monkeypatch, capsys)
    assert code == 0
    specs = ["epsilon:epsilon=0.3,inner=heuristic", "random+minimax*2", "montecarlo:playouts=5"]
    assert list(arena_rows(out)) == [(x, o) for x in specs for o in specs]
    assert all(sum(counts) == 4 for counts in arena_rows(out).values())


class FirstEmptyCell:
    """A player that always answers alike: the first empty cell."""

    def act(self, board, mark, rng):
        return int(np.flatnonzero(board == 0)[0])


def test_an_opening_of_random_plies_makes_players_that_always_answer_alike_meet_anew():
    players = {game.X: FirstEmptyCell(), game.O: FirstEmptyCell()}
    rng = np.random.default_rng(0)
    alike = {cli.play_game(players, rng, rules=T3) for _ in range(20)}
    assert len(alike) == 1  # without an opening: one game, twenty times
    seen, openings = set(), set()
    for _ in range(20):
        moves: list[int] = []
        seen.add(cli.play_game(players, rng, lambda code, mark, cell, moves=moves:
                               moves.append(cell), rules=T3, opening=2))
        openings.add(tuple(moves[:2]))
        rest = moves[2:]  # after the opening the players play: the first empty cells, in order
        assert rest == sorted(rest) and rest[0] == min(set(range(9)) - set(moves[:2]))
    assert len(openings) > 10 and len(seen) > 10


def test_arena_opening_is_stated_and_seeded(monkeypatch, capsys):
    flags = ["arena", "--players", "heuristic,minimax", "--games", "20", "--opening", "3"]
    code, out, _ = run(flags, monkeypatch, capsys)
    assert code == 0 and "3 random opening plies" in out.splitlines()[0]
    assert run(flags, monkeypatch, capsys)[1] == out
    rows = arena_rows(out)
    assert all(sum(counts) == 20 for counts in rows.values())


@pytest.mark.parametrize("opening", ["-1", "two"])
def test_arena_opening_must_be_a_non_negative_integer(capsys, opening):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["arena", "--opening", opening])
    assert exit_info.value.code == 2
    assert f"expected a non-negative integer, got {opening!r}" in capsys.readouterr().err


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
    if T3.is_terminal(code):
        won = cli.RESULTS[T3.winner(code)]
        return {name: float(name == won) for name in cli.RESULTS.values()}
    children = [_random_outcome(T3.play(code, cell)) for cell in T3.legal_moves(code)]
    return {name: sum(child[name] for child in children) / len(children)
            for name in cli.RESULTS.values()}


# --- the program itself -----------------------------------------------------------------------


def test_a_subcommand_is_required(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([])
    assert exit_info.value.code == 2


# --- seeds, a folder for a model -------------------------------------------------------------


@pytest.mark.parametrize("command", [["play"], ["arena"], ["evaluate", "model.npz"]])
@pytest.mark.parametrize("seed", ["-1", "4294967296", "1.5", "x"])
def test_a_bad_seed_is_a_one_line_usage_error(capsys, command, seed):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*command, "--seed", seed])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"expected a seed, an integer with 0 <= seed < 2**32; got '{seed}'" in err
    assert "Traceback" not in err


def test_the_largest_seed_is_accepted(monkeypatch, capsys):
    assert run(["arena", "--players", "random", "--games", "1", "--seed", str(2**32 - 1)],
               monkeypatch, capsys)[0] == 0


def test_evaluating_a_folder_says_so(tmp_path, capsys):
    assert cli.main(["evaluate", str(tmp_path)]) == 2
    assert f"{tmp_path} is a folder, not a model file" in capsys.readouterr().err


# --- saved models: evaluate two, arena players -----------------------------------------------


def _q_model(path: Path, episodes: int, **board) -> Path:
    from agents.tabular.q_learning import QLearningAgent
    from gym_tictactoe.envs.env import TicTacToeEnv

    agent = QLearningAgent(seed=0, **board)
    agent.train(TicTacToeEnv("random", "random", **board), episodes)
    return agent.save(path)


def test_evaluate_plays_two_models_against_each_other(tmp_path, capsys):
    first, second = _q_model(tmp_path / "a.npz", 2_000), _q_model(tmp_path / "b.npz", 50)
    assert cli.main(["evaluate", str(first), str(second), "--games", "4"]) == 0
    out = capsys.readouterr().out
    seatings = re.findall(r"X (\S+), O (\S+): X wins (\d+), O wins (\d+), draws (\d+)", out)
    assert [(x, o) for x, o, *_ in seatings] == [(str(first), str(second)),
                                                 (str(second), str(first))]
    assert all(sum(map(int, counts)) == 4 for _, _, *counts in seatings)
    assert out.count("optimal-move rate") == 2  # then each one's own evaluation


@pytest.mark.slow
def test_evaluate_refuses_two_models_of_different_boards(tmp_path, capsys):
    small = _q_model(tmp_path / "3x3.npz", 10)
    big = _q_model(tmp_path / "3x4.npz", 10, rows=3, cols=4, win_length=3)
    assert cli.main(["evaluate", str(small), str(big)]) == 2
    err = capsys.readouterr().err
    assert "plays the 3x3x3 board and" in err and "the 3x4x3 board: two models must play the " \
        "same board" in err
    assert cli.main(["evaluate", str(small), str(small), str(small)]) == 2
    assert "give one model to evaluate or two to play each other; got 3" in capsys.readouterr().err


def test_arena_takes_saved_models_of_its_board_only(tmp_path, capsys):
    model = _q_model(tmp_path / "q.npz", 2_000)
    assert cli.main(["arena", "--players", f"{model},minimax", "--games", "3"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out[: out.index("\n\n", out.index("X player"))].splitlines()
            if line.startswith((str(model), "minimax "))]
    assert len(rows) == 4 and all(sum(map(int, row[-3:])) == 3 for row in rows)
    assert cli.main(["arena", "--players", f"{model},minimax", "--board", "3x4x3"]) == 2
    assert "plays the 3x3x3 board; this arena is on 3x4x3 (choose it with --board 3x3x3)" in \
        capsys.readouterr().err
    assert cli.main(["arena", "--players", f"{tmp_path / 'missing.zip'},minimax"]) == 2
    assert "missing.zip" in capsys.readouterr().err


def test_arena_refuses_an_opening_longer_than_the_board_allows(capsys):
    assert cli.main(["arena", "--opening", "1000000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "opening must be an integer from 0 to 8 on 3x3x3" in err
    with pytest.raises(ValueError, match="opening must be an integer from 0 to 15 on 4x4x3"):
        cli.arena(["random"], 1, 0, game.rules(4, 4, 3), opening=16)


class AskedAt(FirstEmptyCell):
    """FirstEmptyCell that notes the ply of every position it is asked to answer."""

    def __init__(self, asked: list[int]) -> None:
        self.asked = asked

    def act(self, board, mark, rng):
        self.asked.append(int(np.count_nonzero(board)))
        return super().act(board, mark, rng)


def test_an_opening_never_ends_the_game():
    # Eight random plies on 3x3 often win; an opening leaves a game-ending move out, so the
    # last move of every game is a player's, never the opening's.
    rng = np.random.default_rng(0)
    for _ in range(200):
        asked: list[int] = []
        moves: list[int] = []
        cli.play_game({game.X: AskedAt(asked), game.O: AskedAt(asked)}, rng,
                      lambda code, mark, cell, moves=moves: moves.append(cell), rules=T3,
                      opening=8)
        assert asked and asked[-1] == len(moves) - 1



@pytest.mark.parametrize(("board", "phrase"), [
    ((6, 6, 4), "(c4, d4, c3 and d3 are the centre cells)"),
    ((5, 6, 4), "(c3 and d3 are the centre cells)"),
    ((15, 15, 5), "(h8 is the centre)"),
])
def test_the_introduction_names_every_centre_cell_of_an_even_board(board, phrase):
    assert phrase in cli_play.introduction(game.rules(*board))
