"""Command line: ``python -m gym_tictactoe play | arena | facts | evaluate`` (or ``gym-tictactoe``).

- ``play``: you against an opponent in the terminal, cells typed as 0-8 (the numbers the board
  shows on its empty cells, the env's actions: one numbering wherever a person reads a cell).
- ``arena``: every ordered pairing of players (any opponent specs), N seeded games each, tallied.
- ``facts``: the game's numbers, computed from the tables rather than quoted.
- ``evaluate``: a saved model, exactly.

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

from gym_tictactoe import game, rendering, solver
from gym_tictactoe.arguments import opponent_spec, player_list, player_names, positive_int, seed_arg
from gym_tictactoe.extras import MissingExtra
from gym_tictactoe.opponents import Opponent, parse_opponent, reset_opponent

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
    play.set_defaults(run=_play_command)


def _play_command(args: argparse.Namespace) -> int:
    human, rng = game.MARKS[args.mark], np.random.default_rng(args.seed)
    opponent = parse_opponent(args.opponent)
    print("Cells are numbered 0-8, row by row, as on the empty board below; q quits.")
    print(board_text(game.EMPTY_BOARD))
    while True:
        try:
            _one_game(human, opponent, args.opponent, rng)
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


def _one_game(human: int, opponent: Opponent, name: str, rng: np.random.Generator) -> None:
    other = game.O if human == game.X else game.X
    names = {human: "you", other: name}
    print(f"\nYou are {game.MARK_NAMES[human]}, playing {name}.")

    def show(code: game.Position, mark: int, cell: int) -> None:
        print(f"\n{names[mark]} ({game.MARK_NAMES[mark]}) played {cell}:\n{board_text(code)}")

    final = play_game({human: HumanPlayer(), other: opponent}, rng, on_move=show)
    print(f"\n{result_line(final, names)}")


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

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        code = game.encode(board)
        while True:
            text = input(f"Your move ({game.MARK_NAMES[mark]}), 0-8 or q to quit: ")
            if text.strip().lower() in QUIT_WORDS:
                raise Quit
            try:
                return parse_cell(text, code)
            except ValueError as reason:
                print(f"  {reason}")


def parse_cell(text: str, code: game.Position) -> int:
    """The cell (0-8) typed, or ValueError saying why it can't be played."""
    try:
        cell = int(text.strip())
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number: type a cell 0-8 or q") from None
    if not 0 <= cell < game.N_CELLS:
        raise ValueError(f"{cell} is not a cell: type a cell 0-8 or q")
    if not game.LEGAL_MASK[code, cell]:
        owner = game.MARK_NAMES[int(game.CELLS[code, cell])]
        free = " ".join(str(free) for free in game.legal_moves(code))
        raise ValueError(f"{cell} is taken by {owner}: free cells are {free}")
    return cell


def board_text(code: game.Position) -> str:
    """Three rows with X, O and the number (0-8) of each empty cell: the env's ansi render."""
    return rendering.ansi(code).rstrip("\n")


def result_line(code: game.Position, names: dict[int, str]) -> str:
    won = game.winner(code)
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
    arena.set_defaults(run=_arena_command)


def _arena_command(args: argparse.Namespace) -> int:
    print(f"arena: {args.games} games per pairing, seed {args.seed}\n")
    rows = arena(args.players, args.games, args.seed)
    width = max(12, *(len(name) for name in args.players))
    print(f"{'X player':<{width}} {'O player':<{width}} {'X wins':>7} {'O wins':>7} {'draws':>7}")
    for x_name, o_name, tally in rows:
        counts = " ".join(f"{tally[name]:>7}" for name in RESULTS.values())
        print(f"{x_name:<{width}} {o_name:<{width}} {counts}")
    return 0


def arena(players: Sequence[str], games: int, seed: int | None) -> list[tuple[str, str, dict]]:
    """(X spec, O spec, {"X": wins, "O": wins, "draw": n}) for every ordered pair of players."""
    rng = np.random.default_rng(seed)  # one stream, pairings in a fixed order: reproducible
    return [(x, o, _tally(x, o, games, rng)) for x in players for o in players]


def _tally(x_spec: str, o_spec: str, games: int, rng: np.random.Generator) -> dict[str, int]:
    players = {game.X: parse_opponent(x_spec), game.O: parse_opponent(o_spec)}
    winners = [game.winner(play_game(players, rng)) for _ in range(games)]
    return {name: winners.count(mark) for mark, name in RESULTS.items()}


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
    evaluate.add_argument("--seed", type=seed_arg, default=0,
                          help="seed of the games, 0 <= seed < 2**32 (default: 0)")
    evaluate.set_defaults(run=_evaluate_command)


def _evaluate_command(args: argparse.Namespace) -> int:
    # The agents package (and torch, for SB3 models) loads only for this command.
    from agents.models import load_policy
    from gym_tictactoe.report import evaluating_message, format_summary, summarize

    try:
        policy, kind = load_policy(args.path)
    except MissingExtra as error:
        print(f"gym-tictactoe evaluate: error: {error}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    except (FileNotFoundError, ValueError) as error:
        print(f"gym-tictactoe evaluate: error: {error}", file=sys.stderr)
        return 2
    print(f"{args.path}: {kind} model")
    print(evaluating_message(args.games), flush=True)
    print(format_summary(summarize(policy, games=args.games, seed=args.seed)))
    return 0


# One parser builder per subcommand.
SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_play,
    _add_arena,
    _add_facts,
    _add_evaluate,
)
