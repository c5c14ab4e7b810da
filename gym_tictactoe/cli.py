"""Command line: ``python -m gym_tictactoe play | arena | facts | evaluate`` (or ``gym-tictactoe``).

- ``play``: you against an opponent in the terminal, cells typed as 0-8 (the numbers the board
  shows on its empty cells, the env's actions: one numbering wherever a person reads a cell).
- ``arena``: every ordered pairing of players (opponent specs or saved models), N seeded games
  each, tallied.
- ``facts``: the game's numbers, computed from the tables rather than quoted.
- ``evaluate``: a saved model, exactly, or two against each other (``cli_models``).

A subcommand is one ``_<name>_command(args) -> int`` and one ``_add_<name>(subparsers)`` listed in
``SUBCOMMANDS``. Exit codes: 0 done (also when input ends mid-game or on q), 1 an optional
dependency missing, 2 usage error or a file that is not a model, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from gym_tictactoe import cli_models, game, ratings, rendering, solver
from gym_tictactoe.arguments import (
    board_arg,
    model_file,
    opponent_spec,
    player_list,
    player_names,
    positive_int,
    seed_arg,
)
from gym_tictactoe.checks import check_int
from gym_tictactoe.extras import MissingExtra
from gym_tictactoe.opponents import Opponent, parse_opponent, reset_opponent
from gym_tictactoe.seeding import check_seed

ARENA_PLAYERS = ("random", "heuristic", "montecarlo", "minimax")
EXIT_INTERRUPTED = 130  # the shell's convention for a process ended by SIGINT
EXIT_MISSING_EXTRA = 1
RESULTS = {game.X: "X", game.O: "O", game.NO_WINNER: "draw"}
MoveCallback = Callable[[game.Position, int, int], None]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the exit code (argparse exits with 2 on bad usage)."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("\nInterrupted.")
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gym-tictactoe", description="Tic-tac-toe, solved exactly: play, compare, count."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_subcommand in SUBCOMMANDS:
        add_subcommand(subparsers)
    return parser


def play_game(
    players: dict[int, Opponent], rng: np.random.Generator, on_move: MoveCallback | None = None,
    rules: game.Rules = game.TICTACTOE,
) -> game.Position:
    """One game from the empty board between ``players[X]`` and ``players[O]``; the last position.

    ``on_move(code, mark, cell)`` is called after every move (the play command shows the board).
    """
    for player in players.values():
        reset_opponent(player, rng)
    code = game.EMPTY_BOARD
    while not rules.is_terminal(code):
        mark = rules.to_move(code)
        cell = int(players[mark].act(rules.decode(code).copy(), mark, rng))
        code = rules.play(code, cell)
        if on_move is not None:
            on_move(code, mark, cell)
    return code


def _add_board(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--board", type=board_arg, default=game.TICTACTOE, metavar="RxCxK",
                        help="rows x cols x win length, e.g. 4x4x3 or 15x15x5 (sides 1-15, "
                        "k up to the longer side; default: 3x3x3)")


def _players(specs: Sequence[str], rules: game.Rules, command: str) -> list[Opponent] | None:
    """The specs as players on ``rules``'s board, or None after printing why one can't play."""
    try:
        return [_player(spec, rules) for spec in specs]
    except (ValueError, FileNotFoundError, MissingExtra) as error:
        print(f"gym-tictactoe {command}: error: {error}", file=sys.stderr)
        return None


def _player(spec: str, rules: game.Rules) -> Opponent:
    """A built-in opponent from its spec, or a saved model (a path ending .npz or .zip)."""
    if cli_models.is_model_path(spec):
        return cli_models.model_player(spec, rules)
    return parse_opponent(spec, rules)


# --- play -------------------------------------------------------------------------------------


class Quit(Exception):
    """The person typed q or quit."""


QUIT_WORDS = ("q", "quit")
AGAIN = {"": "same", "y": "same", "yes": "same", "same": "same", "s": "swap", "swap": "swap",
         **{word: "quit" for word in (*QUIT_WORDS, "n", "no")}}


def _add_play(subparsers: argparse._SubParsersAction) -> None:
    play = subparsers.add_parser(
        "play", help="play against an opponent in the terminal",
        description="Play in the terminal. Type a cell as its number 0-8, row by row, as shown "
        "on the empty cells (the env's action numbers); q quits. After a game, play another "
        "in the same or swapped seats. End of input leaves (exit 0); Ctrl-C exits 130.",
    )
    play.add_argument("--opponent", default="minimax", type=opponent_spec,
                      help="who you play against: a name or spec, as train.py --opponent "
                      f"({', '.join(player_names())}; default: minimax, which never loses)")
    play.add_argument("--as", dest="mark", default="X", choices=("X", "O"),
                      help="your mark; X moves first (default: X)")
    play.add_argument("--seed", type=seed_arg, default=None,
                      help="seed for the opponent's random choices, 0 <= seed < 2**32 "
                      "(default: fresh each run)")
    _add_board(play)
    play.set_defaults(run=_play_command)


def _play_command(args: argparse.Namespace) -> int:
    human, rng, rules = game.MARKS[args.mark], np.random.default_rng(args.seed), args.board
    players = _players([args.opponent], rules, "play")
    if players is None:
        return 2
    last = rules.n_cells - 1
    print(f"{rules.name}: {rules.win_length} in a row wins. Cells are numbered 0-{last}, row by "
          f"row, as on the empty board below; type a cell or 'row col' (from 0); q quits.")
    print(board_text(game.EMPTY_BOARD, rules))
    while True:
        try:
            _one_game(human, players[0], args.opponent, rng, rules)
        except EOFError:  # stdin closed or Ctrl-D: leave quietly, nothing went wrong
            print("\nNo more input: game abandoned.")
            return 0
        except Quit:
            print("Game abandoned.")
            return 0
        try:
            again = _ask_again()
        except (EOFError, Quit):
            print("Bye.")
            return 0
        if again == "swap":
            human = game.O if human == game.X else game.X


def _one_game(human: int, opponent: Opponent, name: str, rng: np.random.Generator,
              rules: game.Rules = game.TICTACTOE) -> None:
    other = game.O if human == game.X else game.X
    names = {human: "you", other: name}
    print(f"\nYou are {game.MARK_NAMES[human]}, playing {name}.")

    def show(code: game.Position, mark: int, cell: int) -> None:
        where = str(cell) if rules == game.TICTACTOE else \
            f"{cell} (row {cell // rules.cols}, col {cell % rules.cols})"
        print(f"\n{names[mark]} ({game.MARK_NAMES[mark]}) played {where}:\n"
              f"{board_text(code, rules)}")

    final = play_game({human: HumanPlayer(rules), other: opponent}, rng, show, rules)
    print(f"\n{result_line(final, names, rules)}")


def _ask_again() -> str:
    """"same" or "swap" for another game; Quit when the person is done."""
    while True:
        text = input("Another game? Enter: same seats, s: swap seats, q: quit: ")
        answer = AGAIN.get(text.strip().lower())
        if answer == "quit":
            raise Quit
        if answer is not None:
            return answer
        print(f"  {text.strip()!r}: press Enter for the same seats, s to swap, q to quit")


class HumanPlayer:
    """The person at the terminal, as an opponent: asks ``input()`` until a legal cell or q."""

    def __init__(self, rules: game.Rules = game.TICTACTOE) -> None:
        self.rules = rules

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        code = self.rules.encode(board)
        prompt = f"0-{self.rules.n_cells - 1}" if self.rules == game.TICTACTOE else \
            f"0-{self.rules.n_cells - 1}, 'row col'"
        while True:
            text = input(f"Your move ({game.MARK_NAMES[mark]}), {prompt} or q to quit: ")
            if text.strip().lower() in QUIT_WORDS:
                raise Quit
            try:
                return parse_cell(text, code, self.rules)
            except ValueError as reason:
                print(f"  {reason}")


def parse_cell(text: str, code: game.Position, rules: game.Rules = game.TICTACTOE) -> int:
    """The cell typed, as its number (0 to cells - 1) or as 'row col' (each from 0), or
    ValueError saying why it can't be played."""
    words = text.replace(",", " ").split()
    hint = f"type a cell 0-{rules.n_cells - 1}, or 'row col' (rows 0-{rules.rows - 1}, " \
           f"cols 0-{rules.cols - 1}), or q"
    try:
        numbers = [int(word) for word in words]
    except ValueError:
        numbers = []
    if len(numbers) == 2 and 0 <= numbers[0] < rules.rows and 0 <= numbers[1] < rules.cols:
        cell = numbers[0] * rules.cols + numbers[1]
    elif len(numbers) == 1 and 0 <= numbers[0] < rules.n_cells:
        cell = numbers[0]
    elif len(numbers) == 1:
        raise ValueError(f"{numbers[0]} is not a cell: {hint}")
    elif numbers:
        raise ValueError(f"{' '.join(map(str, numbers))} is not a cell: {hint}")
    else:
        raise ValueError(f"{text.strip()!r} is not a number: {hint}")
    legal = rules.legal_moves(code)
    if cell not in legal:
        owner = game.MARK_NAMES[int(rules.decode(code)[cell])]
        raise ValueError(f"{cell} is taken by {owner}: free cells are "
                         f"{' '.join(map(str, legal))}")
    return cell


def board_text(code: game.Position, rules: game.Rules = game.TICTACTOE) -> str:
    """Rows with X, O and the number of each empty cell: the env's ansi render."""
    return rendering.ansi(rules.decode(code), rules.shape).rstrip("\n")


def result_line(code: game.Position, names: dict[int, str],
                rules: game.Rules = game.TICTACTOE) -> str:
    won = rules.winner(code)
    if won == game.NO_WINNER:
        return "Result: draw."
    return f"Result: {game.MARK_NAMES[won]} wins ({names[won]})."


# --- arena ------------------------------------------------------------------------------------


def _add_arena(subparsers: argparse._SubParsersAction) -> None:
    arena = subparsers.add_parser(
        "arena", help="players against each other, every pairing and seat",
        description="Every player meets every player (itself included) as X and as O. A player "
        "is any opponent spec train.py --opponent takes, e.g. 'epsilon:epsilon=0.3,inner="
        "heuristic' or 'random+minimax*2'.",
    )
    arena.add_argument("--players", type=player_list, default=list(ARENA_PLAYERS),
                       help="comma-separated specs; a key=value after a comma belongs to the "
                       f"player before it (names: {', '.join(player_names())}; default: "
                       f"{','.join(ARENA_PLAYERS)})")
    arena.add_argument("--games", type=positive_int, default=100,
                       help="games per ordered pairing (default: 100, a few seconds)")
    arena.add_argument("--seed", type=seed_arg, default=0,
                       help="seed of the whole tournament, 0 <= seed < 2**32: same seed, same "
                       "table (default: 0)")
    _add_board(arena)
    arena.set_defaults(run=_arena_command)


def _arena_command(args: argparse.Namespace) -> int:
    players = _players(args.players, args.board, "arena")
    if players is None:
        return 2
    print(f"arena on {args.board.name}: {args.games} games per pairing, seed {args.seed}\n")
    models = {spec: player for spec, player in zip(args.players, players, strict=True)
              if cli_models.is_model_path(spec)}
    kinds = ["sb3" if spec.lower().endswith(".zip") else "q" for spec in models]
    with cli_models.one_torch_thread(kinds):
        rows = arena(args.players, args.games, args.seed, args.board, models)
    width = max(12, *(len(name) for name in args.players))
    print(f"{'X player':<{width}} {'O player':<{width}} {'X wins':>7} {'O wins':>7} {'draws':>7}")
    for x_name, o_name, tally in rows:
        counts = " ".join(f"{tally[name]:>7}" for name in RESULTS.values())
        print(f"{x_name:<{width}} {o_name:<{width}} {counts}")
    _print_ratings(args.players, rows)
    return 0


def _print_ratings(players: Sequence[str], rows: list[tuple[str, str, dict]]) -> None:
    """Elo ratings of the players (a Bradley-Terry fit, ``ratings``), or one line saying why
    not: choix missing, or fewer than two distinct players."""
    names = list(dict.fromkeys(players))
    if len(names) < 2:
        return
    try:
        table = ratings.ratings_table(ratings.elo_ratings(names, rows))
    except MissingExtra as error:
        print(f"\ngym-tictactoe arena: no Elo ratings: {error}", file=sys.stderr)
        return
    print(f"\nElo ratings (Bradley-Terry fit, a draw half a win; {names[0]} = 0):")
    print("\n".join(table))


def arena(players: Sequence[str], games: int, seed: int | None,
          rules: game.Rules = game.TICTACTOE,
          models: dict[str, Opponent] | None = None) -> list[tuple[str, str, dict]]:
    """(X spec, O spec, {"X": wins, "O": wins, "draw": n}) for every ordered pair of players.
    ``models``: the players already loaded from model files, by path (loaded once)."""
    games, seed = check_int(games, "games", 0), check_seed(seed)
    rng = np.random.default_rng(seed)  # one stream, pairings in a fixed order: reproducible
    return [(x, o, _tally(x, o, games, rng, rules, models or {}))
            for x in players for o in players]


def _tally(x_spec: str, o_spec: str, games: int, rng: np.random.Generator,
           rules: game.Rules, models: dict[str, Opponent]) -> dict[str, int]:
    # Built-ins are parsed afresh per pairing (a mixture keeps per-game state); models are
    # stateless policies.
    players = {mark: models[spec] if spec in models else parse_opponent(spec, rules)
               for mark, spec in ((game.X, x_spec), (game.O, o_spec))}
    winners = [rules.winner(play_game(players, rng, rules=rules)) for _ in range(games)]
    return {name: winners.count(mark) for mark, name in RESULTS.items()}


# --- facts ------------------------------------------------------------------------------------


def _add_facts(subparsers: argparse._SubParsersAction) -> None:
    facts = subparsers.add_parser(
        "facts", help="the game's numbers, computed from the tables",
        description="Counts of positions and games, the game value and random play, exactly, "
        "for any board of at most 16 cells (4x4 takes about a minute the first time).",
    )
    _add_board(facts)
    facts.set_defaults(run=_facts_command)


def facts(rules: game.Rules = game.TICTACTOE) -> list[tuple[str, str]]:
    """(label, value) lines about a solvable board, every number computed here."""
    rules.check_solvable("facts")
    layers, solution = rules.positions, solver.solve(rules)
    value = {1: "X wins", 0: "draw", -1: "O wins"}[solver.value(game.EMPTY_BOARD, rules)]
    plies = int(solution.distance_of([game.EMPTY_BOARD])[0])
    games, random_play = game.count_games(rules), game.random_play_outcome(rules)
    lines = [
        ("board", f"{rules.rows} x {rules.cols}, {rules.win_length} in a row wins"),
        ("legal positions (reachable in a game)", f"{sum(layer.codes.size for layer in layers):,}"),
        ("terminal positions", f"{sum(int(layer.terminal.sum()) for layer in layers):,}"),
        ("distinct games (move sequences)", f"{games['games']:,}"),
        ("  won by X / won by O / drawn", f"{games['X']:,} / {games['O']:,} / {games['draw']:,}"),
        ("value of the empty board, perfect play", f"{value} in {plies} plies"),
        ("random vs random, exact: X / O / draw",
         " / ".join(f"{random_play[name]:.4f}" for name in RESULTS.values())),
    ]
    if rules.tabled:  # one canonical code per position: a table look-up
        canonical = np.unique(rules.tables.canonical[rules.reachable]).size
        lines.insert(3, ("positions up to symmetry", f"{canonical:,}"))
    return lines


def _facts_command(args: argparse.Namespace) -> int:
    try:
        lines = facts(args.board)
    except ValueError as error:
        print(f"gym-tictactoe facts: error: {error}", file=sys.stderr)
        return 2
    for label, text in lines:
        print(f"{label:<40} {text}")
    return 0


# --- evaluate ---------------------------------------------------------------------------------


def _add_evaluate(subparsers: argparse._SubParsersAction) -> None:
    evaluate = subparsers.add_parser(
        "evaluate", help="evaluate a saved model (Q-table .npz or SB3 .zip) exactly, or two "
                         "against each other",
        description="Games against random, heuristic and minimax in both seats, the best "
                    "response per seat and the optimal-move rate over every position. With two "
                    "models (of one board): first their games against each other in both "
                    "seatings, then each one's evaluation.",
    )
    evaluate.add_argument("paths", nargs="+", metavar="path", type=model_file,
                          help="a model file written by train.py (one, or two to compare)")
    evaluate.add_argument("--games", type=positive_int, default=200,
                          help="games per opponent and seat")
    evaluate.add_argument("--seed", type=seed_arg, default=0,
                          help="seed of the games, 0 <= seed < 2**32 (default: 0)")
    evaluate.set_defaults(run=cli_models.evaluate_command)


# One parser builder per subcommand.
SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_play,
    _add_arena,
    _add_facts,
    _add_evaluate,
)
