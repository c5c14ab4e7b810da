"""Self-play: many games at once, each move one batched search over all unfinished games.

Games start at the empty board or, for ``start_probability`` of them, at a random unfinished
position (exploring starts, ``gym_tictactoe.starts``): uniform, or on a solvable board drawn from
an ``aim`` (``StartWeights``) that the last exact checkpoint pointed at the positions the raw
network still plays wrong (``agents.run.alphazero``). For the first ``temperature_moves`` moves
of each game the move is drawn from the root visit counts raised to ``1 / temperature`` (a
temperature of 0: the most visited move), then the most visited move is played. Every move
records the board as its mover sees it, the visit distribution and, when the game ends, its
result for that mover. The policy target is AlphaZero's visit distribution (``target=
"visits"``) or, by default, the improved policy of Gumbel MuZero from the search's completed
values (``Result.improved_policy``): with a few dozen simulations the visit counts stay flat
where one move holds and the others lose, and the raw network, greedy on its prior, then
blunders in a few of the 4,520 positions (docs/figures.md, "AlphaZero on 3x3").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agents.alphazero.search import C_PUCT, Evaluator, relative, search
from gym_tictactoe import game
from gym_tictactoe.game import Rules
from gym_tictactoe.game.starts import StartWeights, draw_starts, side_to_move


@dataclass(frozen=True)
class PlaySettings:
    """How self-play games are played (checked by ``AlphaZeroSettings``)."""

    simulations: int = 32
    temperature: float = 1.0
    temperature_moves: int = 4
    c_puct: float = C_PUCT
    dirichlet_alpha: float = 1.0
    noise_fraction: float = 0.25
    start_probability: float = 0.5
    target: str = "completed_q"  # or "visits": AlphaZero's own policy target
    threats: bool = False  # the search reads the immediate threats (``search.search``)


@dataclass
class Samples:
    """Training examples: boards seen by their mover (K, cells), visit distributions (K,
    cells), results for the mover (K,)."""

    boards: npt.NDArray[np.int8]
    policies: npt.NDArray[np.float32]
    outcomes: npt.NDArray[np.float32]


def opening_boards(rules: Rules, games: int, probability: float, rng: np.random.Generator,
                   aim: StartWeights | None = None) -> npt.NDArray[np.int8]:
    """``games`` absolute boards: empty, or for ``probability`` of them a random start (drawn
    from ``aim`` when given, else uniformly)."""
    boards = np.zeros((games, rules.n_cells), dtype=np.int8)
    chosen = np.flatnonzero(rng.random(games) < probability)
    if chosen.size:
        boards[chosen] = (draw_starts(rules, rng, chosen.size)[0] if aim is None
                          else rules.cells_of(aim.draw(rng, chosen.size)))
    return boards


def play_games(rules: Rules, evaluate: Evaluator, games: int, settings: PlaySettings,
               rng: np.random.Generator, aim: StartWeights | None = None) -> Samples:
    """Play ``games`` self-play games together, the random starts drawn from ``aim`` when
    given; their samples in the order they were made."""
    cells = rules.n_cells
    boards = np.full((games, cells + 1), -1, dtype=np.int8)
    boards[:, :cells] = opening_boards(rules, games, settings.start_probability, rng, aim)
    movers, winners = side_to_move(boards[:, :cells]), np.zeros(games, np.int8)
    active, plies = np.ones(games, bool), 0
    seen, targets, who, owner = [], [], [], []
    noise = (rng, settings.dirichlet_alpha, settings.noise_fraction)
    while active.any():
        idx = np.flatnonzero(active)
        found = search(rules, evaluate, boards[idx, :cells], movers[idx],
                       settings.simulations, noise=noise, c_puct=settings.c_puct,
                       threats=settings.threats)
        policies = found.visits / found.visits.sum(axis=1, keepdims=True)
        seen.append(relative(boards[idx, :cells], movers[idx]))
        targets.append(policies.astype(np.float32) if settings.target == "visits"
                       else found.improved_policy(boards[idx, :cells] == game.EMPTY))
        who.append(movers[idx].copy())
        owner.append(idx)
        temperature = settings.temperature if plies < settings.temperature_moves else 0.0
        moves = choose(policies, temperature, rng)
        _play(rules, boards, movers, winners, active, idx, moves)
        plies += 1
    owner_all, who_all = np.concatenate(owner), np.concatenate(who)
    result = np.where(winners[owner_all] == 0, 0.0,
                      np.where(winners[owner_all] == who_all, 1.0, -1.0)).astype(np.float32)
    return Samples(np.concatenate(seen), np.concatenate(targets), result)


def _play(rules: Rules, boards: npt.NDArray, movers: npt.NDArray, winners: npt.NDArray,
          active: npt.NDArray, idx: npt.NDArray, moves: npt.NDArray) -> None:
    """Play ``moves`` in games ``idx``, in place; finished games leave ``active``."""
    marks = movers[idx]
    boards[idx, moves] = marks
    won = rules.wins_at(boards[idx], moves, marks)
    winners[idx[won]] = marks[won]
    full = (boards[idx, :-1] != game.EMPTY).all(axis=1)
    active[idx[won | full]] = False
    movers[idx] = game.SWAP[marks]


def choose(policies: npt.NDArray, temperature: float, rng: np.random.Generator) -> npt.NDArray:
    """Per row, the most likely cell (temperature 0; first of equals) or one drawn from the
    row raised to ``1 / temperature``."""
    if temperature == 0.0:
        return policies.argmax(axis=1)
    # Powers of probabilities <= 1 underflow to 0 for small temperatures: scale by the max first.
    weights = (policies / policies.max(axis=1, keepdims=True)) ** (1.0 / temperature)
    cumulative = weights.cumsum(axis=1)
    # Strictly below each row's total: the first cell reaching the draw has a positive weight.
    draws = rng.random(len(weights))[:, None] * cumulative[:, -1:]
    return (cumulative <= draws).sum(axis=1)
