"""Command line: ``python -m gym_tictactoe play | arena | facts`` (also ``gym-tictactoe ...``).

- ``play``: you against a built-in opponent in the terminal, cells typed as keypad digits 1-9.
- ``arena``: every ordered pairing of built-in players, N seeded games each, tallied.
- ``facts``: the game's numbers, computed from the tables rather than quoted.

A subcommand is one ``_<name>_command(args) -> int`` and one ``_add_<name>(subparsers)`` listed in
``SUBCOMMANDS``. Exit codes: 0 done (also when input ends mid-game), 2 usage error, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game, solver
from gym_tictactoe.opponents import OPPONENTS, Opponent, make_opponent, reset_opponent

ARENA_PLAYERS = ("random", "heuristic", "montecarlo", "minimax")
EXIT_INTERRUPTED = 130  # the shell's convention for a process ended by SIGINT
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


@cache
def player_names() -> tuple[str, ...]:
    """Built-in opponents that need no arguments (a mixture or a policy needs objects)."""
    names = []
    for name in OPPONENTS:
        try:
            make_opponent(name)
        except ValueError:
            continue
        names.append(name)
    return tuple(names)


def play_game(
    players: dict[int, Opponent], rng: np.random.Generator, on_move: MoveCallback | None = None
) -> game.Position:
    """One game from the empty board between ``players[X]`` and ``players[O]``; the last position.

    ``on_move(code, mark, cell)`` is called after every move (the play command shows the board).
    """
    for player in players.values():
        reset_opponent(player, rng)
    code = game.EMPTY_BOARD
    while not game.TERMINAL[code]:
        mark = game.to_move(code)
        cell = int(players[mark].act(game.decode(code), mark, rng))
        code = game.play(code, cell)
        if on_move is not None:
            on_move(code, mark, cell)
    return code


# --- play -------------------------------------------------------------------------------------


def _add_play(subparsers: argparse._SubParsersAction) -> None:
    play = subparsers.add_parser(
        "play", help="play against an opponent in the terminal",
        description="Play a game in the terminal. Type a cell as its keypad digit: 1 2 3 is the "
        "top row, 7 8 9 the bottom. End of input leaves the game (exit 0); Ctrl-C exits 130.",
    )
    play.add_argument("--opponent", default="minimax", choices=player_names(),
                      help="who you play against (default: minimax, which never loses)")
    play.add_argument("--as", dest="mark", default="X", choices=("X", "O"),
                      help="your mark; X moves first (default: X)")
    play.add_argument("--seed", type=int, default=None,
                      help="seed for the opponent's random choices (default: fresh each run)")
    play.set_defaults(run=_play_command)


def _play_command(args: argparse.Namespace) -> int:
    human = game.MARKS[args.mark]
    other = game.O if human == game.X else game.X
    names = {human: "you", other: args.opponent}
    players = {human: HumanPlayer(), other: make_opponent(args.opponent)}
    print(f"You are {args.mark}, playing {args.opponent}. Cells are numbered like a keypad:")
    print(board_text(game.EMPTY_BOARD))

    def show(code: game.Position, mark: int, cell: int) -> None:
        print(f"\n{names[mark]} ({game.MARK_NAMES[mark]}) played {cell + 1}:\n{board_text(code)}")

    try:
        final = play_game(players, np.random.default_rng(args.seed), on_move=show)
    except EOFError:  # stdin closed or Ctrl-D: leave quietly, nothing went wrong
        print("\nNo more input: game abandoned.")
        return 0
    print(f"\n{result_line(final, names)}")
    return 0


class HumanPlayer:
    """The person at the terminal, as an opponent: asks ``input()`` until a legal keypad digit."""

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        code = game.encode(board)
        while True:
            text = input(f"Your move ({game.MARK_NAMES[mark]}), 1-9: ")
            try:
                return parse_key(text, code)
            except ValueError as reason:
                print(f"  {reason}")


def parse_key(text: str, code: game.Position) -> int:
    """The cell (0-8) for a typed keypad digit, or ValueError saying why it can't be played."""
    try:
        key = int(text.strip())
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number: type a digit 1-9") from None
    if not 1 <= key <= game.N_CELLS:
        raise ValueError(f"{key} is not a cell: type a digit 1-9")
    if not game.LEGAL_MASK[code, key - 1]:
        owner = game.MARK_NAMES[int(game.CELLS[code, key - 1])]
        free = " ".join(str(cell + 1) for cell in game.legal_moves(code))
        raise ValueError(f"{key} is taken by {owner}: free cells are {free}")
    return key - 1


def board_text(code: game.Position) -> str:
    """Three rows with X, O and the keypad digit (cell + 1) of each empty cell."""
    return game.render_text(code, first=1)


def result_line(code: game.Position, names: dict[int, str]) -> str:
    won = game.winner(code)
    if won == game.NO_WINNER:
        return "Result: draw."
    return f"Result: {game.MARK_NAMES[won]} wins ({names[won]})."


# --- arena ------------------------------------------------------------------------------------


def _add_arena(subparsers: argparse._SubParsersAction) -> None:
    arena = subparsers.add_parser(
        "arena", help="built-in players against each other, every pairing and seat",
        description="Every player meets every player (itself included) as X and as O.",
    )
    arena.add_argument("--players", type=_player_list, default=list(ARENA_PLAYERS),
                       help=f"comma-separated names from {', '.join(player_names())} "
                       f"(default: {','.join(ARENA_PLAYERS)})")
    arena.add_argument("--games", type=positive_int, default=100,
                       help="games per ordered pairing (default: 100, a few seconds)")
    arena.add_argument("--seed", type=int, default=0,
                       help="seed of the whole tournament: same seed, same table (default: 0)")
    arena.set_defaults(run=_arena_command)


def _arena_command(args: argparse.Namespace) -> int:
    print(f"arena: {args.games} games per pairing, seed {args.seed}\n")
    rows = arena(args.players, args.games, args.seed)
    header = f"{'X player':<12} {'O player':<12} {'X wins':>7} {'O wins':>7} {'draws':>7}"
    print(header)
    for x_name, o_name, tally in rows:
        counts = " ".join(f"{tally[name]:>7}" for name in RESULTS.values())
        print(f"{x_name:<12} {o_name:<12} {counts}")
    return 0


def arena(players: Sequence[str], games: int, seed: int | None) -> list[tuple[str, str, dict]]:
    """(X name, O name, {"X": wins, "O": wins, "draw": n}) for every ordered pair of players."""
    rng = np.random.default_rng(seed)  # one stream, pairings in a fixed order: reproducible
    return [(x, o, _tally(x, o, games, rng)) for x in players for o in players]


def _tally(x_name: str, o_name: str, games: int, rng: np.random.Generator) -> dict[str, int]:
    players = {game.X: make_opponent(x_name), game.O: make_opponent(o_name)}
    winners = [game.winner(play_game(players, rng)) for _ in range(games)]
    return {name: winners.count(mark) for mark, name in RESULTS.items()}


def _player_list(text: str) -> list[str]:
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in player_names()]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown player {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(player_names())}"
        )
    return names


def positive_int(text: str, low: int = 1) -> int:
    """An argparse type: an integer of at least ``low`` (1 by default, or 0)."""
    kind = "a positive" if low == 1 else "a non-negative"
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {kind} integer, got {text!r}")
    return value


# --- facts ------------------------------------------------------------------------------------


def _add_facts(subparsers: argparse._SubParsersAction) -> None:
    facts = subparsers.add_parser(
        "facts", help="the game's numbers, computed from the tables",
        description="Counts of positions and games, the game value and random play, exactly.",
    )
    facts.set_defaults(run=_facts_command)


def _facts_command(args: argparse.Namespace) -> int:
    reachable = game.REACHABLE
    games = game.count_games()
    value = {1: "X wins", 0: "draw", -1: "O wins"}[int(solver.solve().value[game.EMPTY_BOARD])]
    random_play = game.random_play_outcome()
    lines = [
        ("legal positions (reachable in a game)", f"{reachable.size:,}"),
        ("terminal positions", f"{int(game.TERMINAL[reachable].sum()):,}"),
        ("positions up to symmetry", f"{np.unique(game.CANONICAL[reachable]).size:,}"),
        ("distinct games (move sequences)", f"{games['games']:,}"),
        ("  won by X / won by O / drawn", f"{games['X']:,} / {games['O']:,} / {games['draw']:,}"),
        ("value of the empty board, perfect play", value),
        ("random vs random, exact: X / O / draw",
         " / ".join(f"{random_play[name]:.4f}" for name in RESULTS.values())),
    ]
    for label, text in lines:
        print(f"{label:<40} {text}")
    return 0


# --- evaluate ---------------------------------------------------------------------------------


def _add_evaluate(subparsers: argparse._SubParsersAction) -> None:
    evaluate = subparsers.add_parser(
        "evaluate", help="evaluate a saved model (Q-table .npz or SB3 .zip) exactly",
        description="Games against random, heuristic and minimax in both seats, the best "
                    "response per seat and the optimal-move rate over all 4,520 positions.",
    )
    evaluate.add_argument("path", help="a model file written by train.py")
    evaluate.add_argument("--games", type=positive_int, default=200,
                          help="games per opponent and seat")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the games")
    evaluate.set_defaults(run=_evaluate_command)


def _evaluate_command(args: argparse.Namespace) -> int:
    # The agents package (and torch, for SB3 models) loads only for this command.
    from agents.models import load_policy
    from gym_tictactoe.report import format_summary, summarize

    try:
        policy, kind = load_policy(args.path)
    except (FileNotFoundError, ValueError) as error:
        print(f"gym-tictactoe evaluate: error: {error}", file=sys.stderr)
        return 2
    print(f"{args.path}: {kind} model")
    print(format_summary(summarize(policy, games=args.games, seed=args.seed)))
    return 0


# One parser builder per subcommand.
SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_play,
    _add_arena,
    _add_facts,
    _add_evaluate,
)
