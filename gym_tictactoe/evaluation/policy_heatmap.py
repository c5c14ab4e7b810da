"""A policy at one position, as a picture: its action values or probabilities beside the solver's.

``policy_values`` reads what the player offers about each cell, by its capabilities
(``gym_tictactoe.players.protocol``), in this order: its move probabilities
(``GivesProbabilities``: a stochastic policy), its cell values (``GivesCellValues``: a Q-table
agent's Q-values, an SB3 model's action probabilities or Q-values), and else only the move it
plays. ``solver_values`` gives each legal move's
exact value for the side to move (win or loss in so many plies, or a draw). ``policy_heatmap``
draws both over the board picture of ``gym_tictactoe.envs.rendering`` as a matplotlib figure (the
``plot`` extra), the policy's move outlined.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.envs import picture, rendering
from gym_tictactoe.evaluation import answers
from gym_tictactoe.extras import require
from gym_tictactoe.game import Rules, solver
from gym_tictactoe.players import stochastic
from gym_tictactoe.players.protocol import GivesCellValues, gives_probabilities

_NO_MOVE = -128  # solver.Solution.child_scores' entry for a cell that is no legal move
SOLVER_COLOURS = {1: "#3a9d5d", 0: "#b8b8b8", -1: "#d0533f"}  # win, draw, loss
TINT = 0.55  # opacity of a cell's colour over the board picture
KINDS = ("probability", "Q-value")  # what a player's cell values may be


@dataclass(frozen=True)
class PolicyValues:
    """What a policy says about each cell of one position.

    ``values``: float per cell, NaN where the cell is occupied (or, for ``kind == "move"``, 1 at
    the move and 0 elsewhere); ``kind``: ``"probability"``, ``"Q-value"`` or ``"move"``;
    ``move``: the cell the policy plays, or ``answers.NOT_A_CELL`` for an output naming none.
    """

    values: npt.NDArray[np.float64]
    kind: str
    move: int


def position(board: Any, rules: Rules) -> tuple[int, npt.NDArray[np.int8]]:
    """(code, absolute cells) of ``board`` (a position code or ``rules.n_cells`` cells of 0, 1,
    2), which must be a position of a game with a move to make; ValueError otherwise."""
    rules.check_solvable("the solver's values of a position")
    cells = np.array(rendering.board_cells(board, rules.shape))  # a copy: tables are read-only
    code = rules.encode(cells)
    if not solver.solve(rules).reachable[code] or rules.is_terminal(code):
        raise ValueError(f"board {cells.tolist()} is no position with a move to make on "
                         f"{rules.name} (X moves first, the game must still be on)")
    return code, cells


def relative(cells: npt.NDArray[np.int8], rules: Rules) -> tuple[npt.NDArray, npt.NDArray]:
    """The board as the side to move sees it (1 its own marks, 2 the other's), and its mask."""
    mark = rules.to_move(rules.encode(cells))
    observation = cells if mark == game.X else game.SWAP[cells]
    return observation.astype(np.int8), (cells == game.EMPTY).astype(np.int8)


def policy_values(policy: Any, board: Any, rules: Rules | None = None) -> PolicyValues:
    """What ``policy`` offers about each cell at ``board`` (see the module docstring); the board
    is the policy's own (its ``rules``) unless ``rules`` is given."""
    rules = rules or getattr(policy, "rules", None) or game.TICTACTOE
    _, cells = position(board, rules)
    observation, mask = relative(cells, rules)
    move = int(answers.moves_of(policy, observation[None].copy(), mask[None].copy(), rules)[0])
    values, kind = _offered(policy, observation, mask)
    if values is None:
        values, kind = np.zeros(rules.n_cells), "move"
        if 0 <= move < rules.n_cells:
            values[move] = 1.0
    values = np.asarray(values, dtype=np.float64).reshape(rules.n_cells)
    return PolicyValues(np.where(mask == 1, values, np.nan), kind, move)


def _offered(policy: Any, observation: npt.NDArray,
             mask: npt.NDArray) -> tuple[npt.NDArray | None, str]:
    if gives_probabilities(policy):
        return stochastic.probabilities_of(policy, observation[None], mask[None])[0], \
            "probability"
    if not isinstance(policy, GivesCellValues):
        return None, "move"
    kind, values = policy.cell_values(observation[None].copy(), mask[None].copy())
    if kind not in KINDS:
        raise ValueError(f"cell_values must name its kind, one of {list(KINDS)}; got {kind!r}")
    return np.asarray(values, dtype=np.float64)[0], kind


def solver_values(board: Any, rules: Rules) -> npt.NDArray[np.int16]:
    """Per cell, the solver's score of that move for the side to move (``solver``'s module
    docstring: ``+(H - d)`` a win in ``d`` plies, ``-(H - d)`` a loss, 0 a draw, with
    ``H = cells + 1``), ``-128`` where the cell is no legal move."""
    code, _ = position(board, rules)
    return solver.solve(rules).child_scores([code])[0]


def score_text(score: int, rules: Rules) -> str:
    """A move's solver score in words: "win in 3", "draw", "loss in 4"."""
    if score == 0:
        return "draw"
    plies = rules.n_cells + 1 - abs(int(score))
    return f"{'win' if score > 0 else 'loss'} in {plies}"


def policy_heatmap(policy: Any, board: Any, rules: Rules | None = None, *,
                   cell_size: int | None = None) -> Any:
    """A matplotlib ``Figure``: left the policy's values at ``board`` (``policy_values``), right
    the solver's value of each legal move for the side to move, the policy's move outlined on
    both. Save it with ``fig.savefig(path)``; ``np.asarray(fig.canvas.buffer_rgba())`` after
    ``fig.canvas.draw()`` is the image as an array. MissingExtra without matplotlib."""
    require("matplotlib", "plot", "a policy heat map")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    rules = rules or getattr(policy, "rules", None) or game.TICTACTOE
    found = policy_values(policy, board, rules)
    scores = solver_values(board, rules)
    cells = position(board, rules)[1]
    image = rendering.rgb_array(cells, shape=rules.shape, cell_size=cell_size,
                                win_length=rules.win_length)
    height, width = image.shape[:2]
    fig = Figure(figsize=(2 * width / 100 + 0.4, height / 100 + 0.7), dpi=100)
    FigureCanvasAgg(fig)  # draws to memory, whatever backend pyplot uses
    left, right = fig.subplots(1, 2)
    mover = game.MARK_NAMES[rules.to_move(rules.encode(cells))]
    _policy_panel(left, image, found, rules, cell_size)
    _solver_panel(right, image, scores, rules, cell_size)
    if 0 <= found.move < rules.n_cells:  # the same outline on both sides: its move's value
        _outline(left, rules, cell_size, found.move, "black")
        _outline(right, rules, cell_size, found.move, "black")
    left.set_title(f"policy: {_kind_title(found.kind)}", fontsize=9)
    right.set_title(f"solver: each move's value for {mover}", fontsize=9)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.88, wspace=0.04)
    return fig


def _kind_title(kind: str) -> str:
    return {"probability": "action probabilities", "Q-value": "Q-values",
            "move": "its move (it offers no values)"}[kind]


def _policy_panel(ax: Any, image: npt.NDArray, found: PolicyValues, rules: Rules,
                  cell_size: int | None) -> None:
    from matplotlib import colormaps

    ax.imshow(image)
    legal = ~np.isnan(found.values)
    low, high = (0.0, 1.0) if found.kind != "Q-value" else (
        float(np.nanmin(found.values)), float(np.nanmax(found.values)))
    cmap = colormaps["YlGnBu"]
    for cell in np.flatnonzero(legal).tolist():
        value = found.values[cell]
        shade = cmap(0.05 + 0.9 * (value - low) / (high - low)) if high > low else cmap(0.5)
        text = "" if found.kind == "move" else (
            f"{value:.2f}" if found.kind == "probability" else f"{value:+.2f}")
        _cell(ax, rules, cell_size, cell, shade, text)
    ax.set_axis_off()


def _solver_panel(ax: Any, image: npt.NDArray, scores: npt.NDArray, rules: Rules,
                  cell_size: int | None) -> None:
    ax.imshow(image)
    for cell in np.flatnonzero(scores != _NO_MOVE).tolist():
        score = int(scores[cell])
        _cell(ax, rules, cell_size, cell, SOLVER_COLOURS[int(np.sign(score))],
              score_text(score, rules).replace(" in ", "\nin "))
    ax.set_axis_off()


def _box(rules: Rules, cell_size: int | None, cell: int) -> tuple[int, int, int, int]:
    spec = picture.layout(rules.shape, rendering.check_cell_size(cell_size, rules.shape))
    return spec.cell_box(cell)


def _cell(ax: Any, rules: Rules, cell_size: int | None, cell: int, colour: Any,
          text: str) -> None:
    """Tint ``cell`` with ``colour`` and write ``text`` in it, dark or light to stay legible."""
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Rectangle

    y0, y1, x0, x1 = _box(rules, cell_size, cell)
    ax.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, color=colour, alpha=TINT,
                           linewidth=0))
    rgb = np.array(to_rgb(colour)) * TINT + np.array(picture.BACKGROUND) / 255 * (1 - TINT)
    ink = "black" if rgb @ (0.299, 0.587, 0.114) > 0.5 else "white"
    ax.text((x0 + x1) / 2, (y0 + y1) / 2, text, ha="center", va="center", fontsize=8,
            color=ink, linespacing=1.0)


def _outline(ax: Any, rules: Rules, cell_size: int | None, cell: int, colour: str) -> None:
    from matplotlib.patches import Rectangle

    y0, y1, x0, x1 = _box(rules, cell_size, cell)
    ax.add_patch(Rectangle((x0 + 1, y0 + 1), x1 - x0 - 3, y1 - y0 - 3, fill=False,
                           edgecolor=colour, linewidth=2.5))
