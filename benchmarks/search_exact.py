"""Exact best response against search players: how each seat fares against the best opponent.

A seeded search player (``mcts:seed=S``, ``alphabeta``) plays one move per position, so it is a
deterministic policy; ``best_response(..., reached_only=True)`` asks it only at the positions
where it is to move on some game against it, which keeps this feasible on 16-cell boards where
asking all of their millions of positions would not be::

    python -m benchmarks search_exact        # mcts and alphabeta on 3x3 and 4x4x3
    python -m benchmarks search_exact --boards 3x3x3 --players mcts:max_simulations=1000,seed=0
    python -m benchmarks search_exact --boards 4x4x4 --players model.npz:simulations=50

A player is an opponent spec or a model file (``PATH:simulations=N``: an AlphaZero network
playing through a search of N simulations, deterministic, asked a layer's positions at a time).
Every position is asked once: the walk marks positions, so one reached by several move orders
(a transposition) is asked once, and its answer is read back by the backward pass. A run too
long for one sitting (``mcts`` on 4x4x4: 1,562,095 positions, some 35 minutes of CPU) can keep
the player's moves as it finds them and resume where it stopped::

    timeout 15m python -m benchmarks search_exact --boards 4x4x4 --players mcts:seed=0 \
        --cache runs/benchmarks/moves      # again until it writes its result

Writes ``runs/benchmarks/search_exact.json`` unless ``--out`` says otherwise: per board and
player, each seat's result against a best response, what perfect play gets, how many positions
the player was asked and the CPU seconds that took.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import results_file, writable
from gym_tictactoe import game
from gym_tictactoe.cli import models as cli_models
from gym_tictactoe.cli.arguments import board_arg, player_spec
from gym_tictactoe.evaluation import best_response, perfect_results
from gym_tictactoe.files import atomic_path
from gym_tictactoe.players.opponents import parse_opponent

DEFAULT_OUT = Path("runs/benchmarks/search_exact.json")
PLAYERS = ("mcts:max_simulations=1000,seed=0", "alphabeta")


class MoveCache:
    """A player's moves by position (its view, as bytes) kept in a file, so that a measure too
    long for one sitting (``mcts`` on 4x4x4: some 35 minutes of CPU) resumes where a stopped
    run left off. Legitimate because the player is deterministic given the position: a kept
    move is the one it would play again. Saved atomically every ``every`` seconds and at the
    end, with the CPU seconds spent searching over all sittings."""

    def __init__(self, path: Path, key: str, cells: int, every: float = 60.0) -> None:
        self.path, self.key, self.cells, self.every = path, key, cells, every
        self.moves: dict[bytes, int] = {}
        self.cpu_before, self.began, self.saved = 0.0, time.process_time(), time.monotonic()
        if path.exists():
            with np.load(path, allow_pickle=False) as data:
                if str(data["key"]) != key:
                    raise SystemExit(f"{path} holds the moves of {data['key']}, not of {key}")
                boards = data["boards"].astype(np.int8)
                self.moves = dict(zip((b.tobytes() for b in boards), data["moves"].tolist(),
                                      strict=True))
                self.cpu_before = float(data["cpu_seconds"])

    def cpu_seconds(self) -> float:
        return self.cpu_before + time.process_time() - self.began

    def put(self, board: bytes, move: int) -> None:
        self.moves[board] = move
        if time.monotonic() - self.saved >= self.every:
            self.save()

    def save(self) -> None:
        boards = np.frombuffer(b"".join(self.moves), dtype=np.int8).reshape(-1, self.cells)
        with atomic_path(self.path) as temp, open(temp, "wb") as file:
            np.savez(file, key=np.array(self.key), boards=boards,
                     moves=np.array(list(self.moves.values()), dtype=np.int16),
                     cpu_seconds=np.array(self.cpu_seconds()))
        self.saved = time.monotonic()


class PlayerPolicy:
    """A player as a policy of the agent's view: the board from the side to move (1 own, 2 the
    other's); X is to move when both have as many marks. Counts the positions it is asked;
    with a ``MoveCache``, a position whose move is kept is not searched again."""

    def __init__(self, spec: str, rules: game.Rules, cache: MoveCache | None = None) -> None:
        self.rules, self.player, self.asked = rules, parse_opponent(spec, rules), 0
        self.cache = cache

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        self.asked += 1
        view = observation.astype(np.int8).tobytes()
        if self.cache is not None and view in self.cache.moves:
            return self.cache.moves[view]
        own, other = np.count_nonzero(observation == 1), np.count_nonzero(observation == 2)
        mark = game.X if own == other else game.O
        board = np.where(observation == 0, 0, np.where(observation == 1, mark, 3 - mark))
        # one generator per position: a player drawing tie-breaks answers each position alike,
        # however often and in whatever order the evaluation asks
        digest = hashlib.sha256(view).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        move = int(self.player.act(board.astype(np.int8), mark, rng))
        if self.cache is not None:
            self.cache.put(view, move)
        return move


class ModelPolicy:
    """A saved model (``PATH`` or ``PATH:simulations=N``) on its board, counting the positions
    it is asked (a batch at a time: an AlphaZero search grows their trees side by side)."""

    def __init__(self, spec: str, rules: game.Rules) -> None:
        self.policy = cli_models.model_player(spec, rules, "measure").policy
        self.rules, self.asked = rules, 0

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.asked += len(observations)
        return self.policy.act_batch(observations, masks)

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], mask[None])[0])


def measure(spec: str, rules: game.Rules, cache_dir: Path | None = None) -> dict:
    """One player's best response per seat; ``cache_dir``: keep a built-in player's moves
    there (``MoveCache``), one file per board and player, to resume a stopped run."""
    model = cli_models.is_model_path(spec)
    cache = None
    if cache_dir is not None and not model:
        name = re.sub(r"[^\w.=-]+", "_", f"{rules.name}_{spec}")
        cache = MoveCache(cache_dir / f"{name}.npz", f"{spec} on {rules.name}", rules.n_cells)
    policy = ModelPolicy(spec, rules) if model else PlayerPolicy(spec, rules, cache)
    start = time.process_time()
    found = best_response(policy, reached_only=True, rows=rules.rows, cols=rules.cols,
                          win_length=rules.win_length)
    if cache is not None:
        cache.save()
    cpu = time.process_time() - start if cache is None else cache.cpu_seconds()
    return {"board": rules.name, "player": player_name(spec), "asked": policy.asked,
            "cpu_seconds": round(cpu, 1),
            "best_response": {seat: found[seat].result for seat in ("X", "O")},
            "perfect_play_gets": perfect_results(rules)}


def player_name(spec: str) -> str:
    """A player's spec; a model's by its file's name (where it lay on one machine says nothing
    elsewhere)."""
    if not cli_models.is_model_path(spec):
        return spec
    found = cli_models.model_spec(spec)
    name = Path(found.path).name
    return name if found.simulations is None else f"{name}:simulations={found.simulations}"


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--boards", nargs="+", type=board_arg,
                        default=[game.rules(3, 3, 3), game.rules(4, 4, 3)])
    parser.add_argument("--players", nargs="+", type=player_spec, default=list(PLAYERS))
    parser.add_argument("--out", type=results_file, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=None, metavar="DIR",
                        help="keep a built-in player's moves in DIR as they are found, so a "
                        "stopped run resumes there (the CPU time reported is every sitting's)")
    parser.add_argument("--append", action="store_true",
                        help="keep --out's runs (replacing those of the same board and player)"
                        " and add these, each with its command")
    args = parser.parse_args(argv)
    writable(args.out, "search_exact.py")
    if args.cache is not None:
        args.cache.mkdir(parents=True, exist_ok=True)
    if any(cli_models.is_model_path(spec) for spec in args.players):
        import torch

        torch.set_num_threads(1)  # several times faster for these small networks
    command = command_line(__name__, argv)
    found = json.loads(args.out.read_text()) if args.append and args.out.exists() else None
    rows = []
    for rules in args.boards:
        for spec in args.players:
            print(f"{rules.name} {spec}: searching...", file=sys.stderr, flush=True)
            row = measure(spec, rules, args.cache)
            rows.append(row | ({"command": command} if found else {}))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    if found:  # the runs measured before, those measured again replaced in place, then these
        fresh = {(row["board"], row["player"]): row for row in rows}
        kept = [fresh.pop((row["board"], row["player"]), row) for row in found["runs"]]
        rows = kept + list(fresh.values())
    with atomic_path(args.out) as temp:
        temp.write_text(json.dumps({"command": found["command"] if found else command,
                                    "runs": rows}, indent=1))
    print(f"wrote {args.out}")
    return 0
