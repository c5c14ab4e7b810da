"""Command line: ``python -m gym_tictactoe play | arena | facts | evaluate`` (or ``gym-tictactoe``).

- ``play``: you against an opponent in the terminal or a window (``cli.play``, ``cli.gui``).
- ``arena``: every ordered pairing of players (opponent specs or saved models), N seeded games
  each, tallied.
- ``facts``: the game's numbers, computed from the tables rather than quoted.
- ``evaluate``: a saved model, exactly, or two against each other (``cli.models``).

A subcommand is one ``_<name>_command(args) -> int`` and one ``_add_<name>(subparsers)`` listed in
``SUBCOMMANDS``. Exit codes: 0 done (also when input ends mid-game or on q), 1 an optional
dependency missing, 2 usage error or a file that is not a model, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.cli import models as cli_models
from gym_tictactoe.cli import play as cli_play
from gym_tictactoe.cli.arguments import (
    board_arg,
    bounded_int,
    model_file,
    non_negative_int,
    player_list,
    player_names,
    positive_int,
    seed_arg,
    simulations_arg,
)
from gym_tictactoe.cli.match import (  # noqa: F401  (names the command line offered before)
    EXIT_INTERRUPTED,
    EXIT_MISSING_EXTRA,
    RESULTS,
    MoveCallback,
    Quit,
    check_opening,
    play_game,
    result_line,
)
from gym_tictactoe.cli.models import players_for
from gym_tictactoe.cli.play import (  # noqa: F401  (the play command's names, as before)
    HumanPlayer,
    board_text,
    parse_cell,
)
from gym_tictactoe.evaluation import ratings
from gym_tictactoe.evaluation.sampled import MAX_SAMPLE, WALK_NODES
from gym_tictactoe.extras import MissingExtra
from gym_tictactoe.game.facts import facts
from gym_tictactoe.game.proofs import CoreUnavailable
from gym_tictactoe.players.opponents import Opponent, parse_opponent
from gym_tictactoe.seeding import check_seed

ARENA_PLAYERS = ("random", "heuristic", "montecarlo", "minimax")
MAX_WALK = 10**6  # positions of a best-response walk per seat


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


def _add_board(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--board", type=board_arg, default=game.TICTACTOE, metavar="RxCxK",
                        help="rows x cols x win length, e.g. 4x4x3 or 15x15x5 (sides 1-15, "
                        "k up to the longer side; default: 3x3x3)")


# --- play: cli_play -------------------------------------------------------------------------


def _add_play(subparsers: argparse._SubParsersAction) -> None:
    cli_play.add_play(subparsers, _add_board)


# --- arena ------------------------------------------------------------------------------------


def _add_arena(subparsers: argparse._SubParsersAction) -> None:
    arena = subparsers.add_parser(
        "arena", help="players against each other, every pairing and seat",
        description="Every player meets every player (itself included) as X and as O. A player "
        "is any opponent spec train.py --opponent takes, e.g. 'epsilon:epsilon=0.3,inner="
        "heuristic' or 'random+minimax*2', or a model file train.py wrote (an AlphaZero "
        "model with a search: 'model.npz:simulations=100'). After the table: Elo ratings from "
        "a Bradley-Terry fit of the results (a draw half a win; the first player rated 0; "
        "needs the 'ratings' extra, choix).",
    )
    arena.add_argument("--players", type=player_list, default=None,
                       help="comma-separated specs; a key=value after a comma belongs to the "
                       f"player before it (names: {', '.join(player_names())}; default: "
                       f"{','.join(ARENA_PLAYERS)}, with alphabeta for minimax on boards over "
                       "16 cells)")
    arena.add_argument("--games", type=positive_int, default=100,
                       help="games per ordered pairing (default: 100, a few seconds)")
    arena.add_argument("--seed", type=seed_arg, default=0,
                       help="seed of the whole tournament, 0 <= seed < 2**32: same seed, same "
                       "table (default: 0)")
    arena.add_argument("--opening", type=non_negative_int, default=0, metavar="PLIES",
                       help="the first PLIES moves of every game are random (seeded), so that "
                       "two players that always answer alike meet in different games, not "
                       "one game over and over; at most the board's cells - 1, and a random "
                       "move that would end the game is never played (default: 0)")
    _add_board(arena)
    arena.set_defaults(run=_arena_command)


def _arena_command(args: argparse.Namespace) -> int:
    try:
        check_opening(args.opening, args.board)
    except ValueError as error:
        print(f"gym-tictactoe arena: error: --{error}", file=sys.stderr)
        return 2
    if args.players is None:  # minimax needs a solved board: search stands in beyond
        args.players = [name if args.board.solvable or name != "minimax" else "alphabeta"
                        for name in ARENA_PLAYERS]
    players = players_for(args.players, args.board, "arena")
    if players is None:
        return 2
    opening = f", {args.opening} random opening plies" if args.opening else ""
    print(f"arena on {args.board.name}: {args.games} games per pairing, seed {args.seed}"
          f"{opening}\n")
    models = {spec: player for spec, player in zip(args.players, players, strict=True)
              if cli_models.is_model_path(spec)}
    kinds = [cli_models.kind_of(spec) for spec in models]
    with cli_models.one_torch_thread(kinds):
        rows = arena(args.players, args.games, args.seed, args.board, models, args.opening)
    width = max(12, *(len(name) for name in args.players))
    print(f"{'X player':<{width}} {'O player':<{width}} {'X wins':>7} {'O wins':>7} {'draws':>7}")
    for x_name, o_name, tally in rows:
        counts = " ".join(f"{tally[name]:>7}" for name in RESULTS.values())
        print(f"{x_name:<{width}} {o_name:<{width}} {counts}")
    _print_ratings(args.players, rows)
    return 0


def _print_ratings(players: Sequence[str], rows: list[tuple[str, str, dict]]) -> None:
    """Elo ratings of the players (a Bradley-Terry fit, ``ratings``), or one line saying why
    not: choix missing. Nothing with fewer than two distinct players."""
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


def arena(players: Sequence[str], games: int, seed: int | None, rules: game.Rules,
          models: dict[str, Opponent] | None = None,
          opening: int = 0) -> list[tuple[str, str, dict]]:
    """(X spec, O spec, {"X": wins, "O": wins, "draw": n}) for every ordered pair of players.
    ``models``: the players already loaded from model files, by path (loaded once);
    ``opening``: random plies at the start of every game."""
    games, seed = check_int(games, "games", 0), check_seed(seed)
    opening = check_opening(opening, rules)
    rng = np.random.default_rng(seed)  # one stream, pairings in a fixed order: reproducible
    return [(x, o, pairing(x, o, games, rng, rules, models or {}, opening))
            for x in players for o in players]


def pairing(x_spec: str, o_spec: str, games: int, rng: np.random.Generator,
            rules: game.Rules, models: dict[str, Opponent], opening: int = 0) -> dict[str, int]:
    """``games`` games of ``x_spec`` as X against ``o_spec`` as O, drawn from ``rng`` (the
    first ``opening`` plies at random): how many each side won and how many were drawn."""
    # Built-ins are parsed afresh per pairing (a mixture keeps per-game state); models are
    # stateless policies.
    players = {mark: models[spec] if spec in models else parse_opponent(spec, rules)
               for mark, spec in ((game.X, x_spec), (game.O, o_spec))}
    winners = [rules.winner(play_game(players, rng, rules=rules, opening=opening))
               for _ in range(games)]
    return {name: winners.count(mark) for mark, name in RESULTS.items()}


# --- facts ------------------------------------------------------------------------------------


def _add_facts(subparsers: argparse._SubParsersAction) -> None:
    facts = subparsers.add_parser(
        "facts", help="the game's numbers, computed from the tables",
        description="Counts of positions and games, the game value and random play, exactly, "
        "for any board of at most 16 cells (4x4 takes about a minute the first time, then "
        "about a second: the solution and the counts are cached); boards of 17 to 64 cells "
        "get the value of the empty board, proved (then cached).",
    )
    _add_board(facts)
    facts.set_defaults(run=_facts_command)


def _facts_command(args: argparse.Namespace) -> int:
    def say(line: str) -> None:  # the slow steps of a big board's first run, kept off stdout
        print(line, file=sys.stderr, flush=True)

    try:
        lines = facts(args.board, say)
    except (ValueError, CoreUnavailable) as error:
        print(f"gym-tictactoe facts: error: {error}", file=sys.stderr)
        return 2
    for label, text in lines:
        print(f"{label:<40} {text}")
    return 0


# --- evaluate ---------------------------------------------------------------------------------


def _add_evaluate(subparsers: argparse._SubParsersAction) -> None:
    evaluate = subparsers.add_parser(
        "evaluate", help="evaluate a saved model (Q-table .npz, SB3 .zip or AlphaZero .npz) "
                         "exactly, or two against each other",
        description="Games against random, heuristic and minimax in both seats, the best "
                    "response per seat and the optimal-move rate over every position. With two "
                    "models (of one board): first their games against each other in both "
                    "seatings, then each one's evaluation. An AlphaZero model playing through "
                    "a search (--simulations) on a board of more than "
                    f"{cli_models.FULL_SEARCH_POSITIONS:,} positions (4x4) gets the best "
                    "response alone, asked only at the positions reached against it.",
    )
    evaluate.add_argument("paths", nargs="+", metavar="path", type=model_file,
                          help="a model file written by train.py (one, or two to compare); "
                          "PATH:simulations=N for an AlphaZero model with a search of its own")
    evaluate.add_argument("--simulations", type=simulations_arg, default=None, metavar="N",
                          help="an AlphaZero model plays through a search of N simulations a "
                          "move (1 to 10,000; deterministic); default: the raw network, greedy "
                          "on its prior")
    evaluate.add_argument("--games", type=positive_int, default=200,
                          help="games per opponent and seat")
    evaluate.add_argument("--seed", type=seed_arg, default=0,
                          help="seed of the games, 0 <= seed < 2**32 (default: 0)")
    evaluate.add_argument("--report", metavar="DIR", default=None,
                          help="also write a web page of the model (one model, solved boards): "
                          "DIR/index.html with its losing lines, blunders and heat maps; DIR "
                          "must be new, empty or a previous report")
    evaluate.add_argument("--sample", type=bounded_int(1, MAX_SAMPLE), default=100,
                          metavar="N", help="boards of 17 to 64 cells: positions per sampling "
                          f"for the optimal-move rate (1 to {MAX_SAMPLE:,}; default: 100)")
    evaluate.add_argument("--walk-nodes", type=bounded_int(1, MAX_WALK), default=WALK_NODES,
                          metavar="N", help="boards of 17 to 64 cells: positions the best-response"
                          f" walk may visit per seat (1 to {MAX_WALK:,}; default: {WALK_NODES:,})")
    evaluate.set_defaults(run=cli_models.evaluate_command)


# One parser builder per subcommand.
SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_play,
    _add_arena,
    _add_facts,
    _add_evaluate,
)
