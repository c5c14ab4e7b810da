"""A policy's report as a web page a teacher or student can open: ``write_report(policy, DIR)``,
``python -m gym_tictactoe evaluate MODEL --report DIR``.

``DIR/index.html`` shows the summary of the exact evaluation (and the games, when given), each
seat's losing line drawn move by move, the first blunders drawn as boards with the policy's
move and the value-keeping moves marked, and heat maps (``policy_heatmap``) of the policy's
values beside the solver's at the empty board, at the policy's positions on the losing lines
and at the blunders drawn. The PNGs lie beside it, linked relatively; no script, no network.
``DIR/report.json`` holds the evaluation's summary and marks the folder as a report.

The folder is written whole or not at all: into a temporary sibling ``.DIR.PID.XXXXXXXX.partial``
that is renamed to ``DIR`` at the end. ``DIR`` may be new, an empty folder or a previous report
(which is then replaced); anything else is refused.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.envs import picture, rendering
from gym_tictactoe.evaluation import Blunder, Report, SeatResponse, board_of, evaluate
from gym_tictactoe.evaluation.policy_heatmap import (
    PolicyValues,
    policy_heatmap,
    policy_values,
    score_text,
    solver_values,
)
from gym_tictactoe.extras import require
from gym_tictactoe.game import Rules, notation

__all__ = ["PolicyValues", "check_destination", "is_report", "marked_board", "policy_heatmap",
           "policy_values", "solver_values", "write_report"]

FORMAT = "gym-tictactoe policy report"
INDEX, DATA = "index.html", "report.json"
MAX_BLUNDER_BOARDS = 12  # drawn, each with its heat map; the page says how many were left out
LINE_CELL = 48  # pixels a cell on the losing lines' small boards
HEAT_CELL = 60  # and on the heat maps: two or three to a row of the page
MOVE_COLOUR = (205, 45, 40)  # the policy's move at a blunder
KEEP_COLOUR = (30, 150, 70)  # the moves that keep the game value
_OUR_FILES = re.compile(r"index\.html|report\.json|[a-z0-9-]+\.png")

STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em;
       color: #222; background: white; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; } td, th { padding: 0.2em 0.8em; text-align: left; }
tr:nth-child(even) { background: #f1efe8; }
.strip, .cards { display: flex; flex-wrap: wrap; gap: 0.8em; align-items: flex-start; }
figure { margin: 0; } figcaption { font-size: 0.85em; max-width: 40em; }
.card { border: 1px solid #ddd; padding: 0.5em; background: white; display: flex;
        gap: 0.5em; align-items: flex-start; }
.card figcaption { max-width: 16em; }
.move { color: rgb(205, 45, 40); font-weight: bold; } .keep { color: rgb(30, 150, 70);
font-weight: bold; } .note { color: #555; font-size: 0.9em; }
"""


def is_report(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder this module wrote: its ``report.json`` says so and it holds
    nothing else than a report's files (so replacing it loses nothing of anyone's)."""
    path = Path(path)
    try:
        names = [entry.name for entry in os.scandir(path)]
        marker = json.loads((path / DATA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(marker, dict) and marker.get("format") == FORMAT
            and all(_OUR_FILES.fullmatch(name) for name in names))


def check_destination(directory: str | os.PathLike) -> Path:
    """``directory`` as a Path if a report may be written there (new, empty, or a previous
    report); else a ValueError in one line."""
    path = Path(directory)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise ValueError(f"{path} exists and is not a folder; give a new folder for the report")
    if path.is_dir() and any(path.iterdir()) and not is_report(path):
        raise ValueError(f"{path} exists and is not a report written by evaluate --report; "
                         "give a new or empty folder (a previous report is replaced)")
    return path


def write_report(policy: Any, directory: str | os.PathLike, *, report: Report | None = None,
                 summary: dict[str, Any] | None = None, title: str = "policy",
                 max_blunders: int = MAX_BLUNDER_BOARDS) -> Path:
    """Write the report of ``policy`` (on its own board, which must be solved) to
    ``directory``; returns the path of its ``index.html``.

    ``report``: the policy's ``evaluation.evaluate`` result, if already computed (else it is).
    ``summary``: ``gym_tictactoe.evaluation.report.summarize``'s dict, for its games table.
    ``title``: what
    the page calls the policy (a model's path). ``max_blunders``: blunders drawn (0-1000).
    ValueError for a board that is not solved or a destination in use (``check_destination``),
    MissingExtra without matplotlib, OSError when the folder cannot be written.
    """
    rules = board_of(policy)
    rules.check_solvable("a policy report")
    max_blunders = check_int(max_blunders, "max_blunders", 0, 1000)
    target = check_destination(directory)
    require("matplotlib", "plot", "a policy report")
    report = evaluate(policy) if report is None else report
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".partial",
                                 dir=target.parent))
    try:
        page = _Page(policy, rules, temp)
        body = page.build(report, summary, title, max_blunders)
        (temp / INDEX).write_text(_document(title, body), encoding="utf-8")
        data = {"format": FORMAT, "version": 1, "title": title, "board": rules.name,
                "evaluation": report.as_dict(max_blunders),
                "games": (summary or {}).get("results")}
        (temp / DATA).write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.chmod(temp, 0o755)  # mkdtemp makes it private; a report is for reading
        _put_in_place(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return target / INDEX


def _put_in_place(temp: Path, target: Path) -> None:
    """Rename ``temp`` to ``target``; a previous report there is moved aside first and removed
    after, so ``target`` is always one whole report."""
    if target.is_dir() and any(target.iterdir()):
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".old",
                                    dir=target.parent))
        os.replace(target, old / "report")
        os.replace(temp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(temp, target)  # onto a missing or empty folder: atomic


def _document(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>Policy report: {html.escape(title)}</title>\n<style>{STYLE}</style>\n"
            f"</head>\n<body>\n{body}\n</body>\n</html>\n")


def marked_board(cells: npt.ArrayLike, rules: Rules, move: int, keeping: tuple[int, ...],
                 cell_size: int | None = None) -> npt.NDArray[np.uint8]:
    """The board picture (``rendering.rgb_array``) with the value-keeping cells ``keeping``
    framed and tinted green and ``move`` (the policy's, perhaps illegal) framed in red."""
    cells = np.asarray(cells, dtype=np.int8)
    image = rendering.rgb_array(cells, shape=rules.shape,
                                cell_size=cell_size, win_length=rules.win_length).copy()
    spec = picture.layout(rules.shape, rendering.check_cell_size(cell_size, rules.shape))
    width = max(3, spec.cell // 16)
    for cell, colour in [*((c, KEEP_COLOUR) for c in keeping), (move, MOVE_COLOUR)]:
        if 0 <= cell < rules.n_cells:
            y0, y1, x0, x1 = spec.cell_box(cell)
            region = image[y0:y1, x0:x1]
            if cells[cell] == game.EMPTY:  # a tint would hide nothing there
                region[:] = (0.75 * region + 0.25 * np.array(colour)).astype(np.uint8)
            region[:width], region[-width:] = colour, colour
            region[:, :width], region[:, -width:] = colour, colour
    return image


class _Page:
    """The page's sections, each writing its PNGs into ``folder`` and returning its HTML."""

    def __init__(self, policy: Any, rules: Rules, folder: Path) -> None:
        self.policy, self.rules, self.folder = policy, rules, folder

    def build(self, report: Report, summary: dict[str, Any] | None, title: str,
              max_blunders: int) -> str:
        parts = [f"<h1>Policy report: {html.escape(title)}</h1>",
                 _summary(report, summary, self.rules),
                 "<h2>The opening</h2>", self.heatmap(game.EMPTY_BOARD, "opening-heat",
                                                      "The empty board, X to move."),
                 _HEATMAP_NOTE]
        for seat, response in report.best_response.items():
            parts.append(self.losing_line(seat, response))
        parts.append(self.blunders(report, max_blunders))
        return "\n".join(parts)

    def image(self, name: str, array: npt.NDArray[np.uint8]) -> str:
        from matplotlib.image import imsave

        imsave(self.folder / f"{name}.png", array)
        return f"{name}.png"

    def heatmap(self, board: Any, name: str, caption: str) -> str:
        fig = policy_heatmap(self.policy, board, self.rules, cell_size=HEAT_CELL)
        fig.savefig(self.folder / f"{name}.png")
        return (f'<figure><img src="{name}.png" alt="heat map: {html.escape(caption)}">'
                f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def losing_line(self, seat: str, response: SeatResponse) -> str:
        head = f"<h2>The policy as {seat}: {response.result} against a best response</h2>"
        if response.losing_line is None:
            return head + (f"<p>No opponent can beat it as {seat}: the best response gets "
                           f"a {_opposite(response.result)}.</p>")
        boards, heatmaps = [], []
        code, me = game.EMPTY_BOARD, game.MARKS[seat]
        for ply, cell in enumerate(response.losing_line, 1):
            mover = self.rules.to_move(code)
            who = "policy" if mover == me else "opponent"
            name = notation.cell_name(cell, self.rules.shape) if cell >= 0 else "no cell"
            caption = f"{ply}. {game.MARK_NAMES[mover]} {name} ({who})"
            if mover == me:
                heatmaps.append(self.heatmap(code, f"line-{seat.lower()}-heat-{ply:02d}",
                                             f"Before move {ply}: the policy ({seat}) plays "
                                             f"{name}."))
            if cell not in self.rules.legal_moves(code):  # a forfeit ends the line
                boards.append(f"<figure><figcaption>{caption}: not a legal move, the policy "
                              "loses</figcaption></figure>")
                break
            code = self.rules.play(code, cell)
            image = rendering.rgb_array(self.rules.decode(code),
                                        shape=self.rules.shape, cell_size=LINE_CELL, last=cell,
                                        win_length=self.rules.win_length)
            src = self.image(f"line-{seat.lower()}-{ply:02d}", image)
            boards.append(f'<figure><img src="{src}" alt="{caption}">'
                          f"<figcaption>{caption}</figcaption></figure>")
        return (head + "<p>The shortest losing line, move by move (the last move tinted; "
                "cells are numbered from 0, row by row from the top left):</p>\n"
                f"<div class=\"strip\">{''.join(boards)}</div>\n"
                f"<p>The policy's positions on it:</p>\n"
                f"<div class=\"cards\">{''.join(heatmaps)}</div>")

    def blunders(self, report: Report, max_blunders: int) -> str:
        rate = report.move_rate
        shown = rate.blunders[:max_blunders]
        head = "<h2>Blunders</h2>"
        if not rate.n_blunders:
            return head + "<p>None: the policy keeps the game value everywhere.</p>"
        left = rate.n_blunders - len(shown)
        note = (f"<p>{rate.n_blunders:,} positions where the policy's move gives away the game "
                f"value; {'all' if not left else f'the first {len(shown)}'} drawn, fewest "
                f"marks first{f' ({left:,} not drawn)' if left else ''}. "
                '<span class="move">Red</span>: the policy\'s move; '
                '<span class="keep">green</span>: the moves that keep the value.</p>')
        cards = [self.blunder(number, blunder) for number, blunder in enumerate(shown, 1)]
        return head + note + f"\n<div class=\"cards\">{''.join(cards)}</div>"

    def blunder(self, number: int, blunder: Blunder) -> str:
        rules, move = self.rules, blunder.move
        mover = game.MARK_NAMES[rules.to_move(blunder.code)]
        keep = ", ".join(notation.cell_name(c, rules.shape) for c in blunder.optimal_moves)
        scores = solver_values(blunder.code, rules)
        if 0 <= move < rules.n_cells and scores[move] != -128:
            played = (f"{notation.cell_name(move, rules.shape)}: "
                      f"{score_text(int(scores[move]), rules)}")
        else:
            played = f"{move}, not a legal move: a loss at once"
        src = self.image(f"blunder-{number:02d}",
                         marked_board(blunder.board, rules, move, blunder.optimal_moves,
                                      HEAT_CELL))
        caption = (f"{number}. {mover} to move. The policy plays "
                   f'<span class="move">{played}</span>; the value is kept by '
                   f'<span class="keep">{keep}</span>.')
        heat = self.heatmap(blunder.code, f"blunder-{number:02d}-heat",
                            f"Blunder {number}: the policy's values and the solver's.")
        return (f'<div class="card"><figure><img src="{src}" alt="blunder {number}">'
                f"<figcaption>{caption}</figcaption></figure>{heat}</div>")


_HEATMAP_NOTE = ('<p class="note">In each heat map the left board shows what the policy says '
                 "about each empty cell (its action probabilities or Q-values; only its move "
                 "when it offers neither), the right one the solver's value of each move for "
                 "the side to move (win or loss in so many plies, or a draw). The policy's "
                 "move is outlined on both.</p>")


def _opposite(result: str) -> str:
    return {"win": "loss", "draw": "draw", "loss": "win"}[result]


def _summary(report: Report, summary: dict[str, Any] | None, rules: Rules) -> str:
    rate = report.move_rate
    rows = [("Board", f"{rules.name} ({rules.rows} rows, {rules.cols} columns, "
                      f"{rules.win_length} in a row wins)"),
            ("Perfect play", "yes" if report.perfect else "no")]
    for seat, response in report.best_response.items():
        expected = "" if response.expected == {"win": 1, "draw": 0, "loss": -1}[
            response.result] else f" (expected result {response.expected:+.3f})"
        rows.append((f"Against a best response, as {seat}",
                     f"{response.result}{expected}; perfect play gets a "
                     f"{report.perfect_results[seat]}"))
    rows += [("Optimal-move rate", f"{rate.rate:.2%} of {rate.positions:,} positions"),
             ("Blunders", f"{rate.n_blunders:,}"),
             ("Exploitability (NashConv, 0 to 2)", f"{report.exploitability:.3f}")]
    table = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                    for k, v in rows)
    return f"<h2>Summary</h2>\n<table>{table}</table>\n" + _games(summary)


def _games(summary: dict[str, Any] | None) -> str:
    if not summary or "results" not in summary:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{seat}</td><td>{r['wins']}</td><td>{r['draws']}"
        f"</td><td>{r['losses']}</td><td>{r['illegal']}</td></tr>"
        for name, seats in summary["results"].items() for seat, r in seats.items())
    return (f"<h2>Games</h2>\n<p>{summary['games_per_seat']} seeded games per opponent and "
            "seat.</p>\n<table><tr><th>opponent</th><th>seat</th><th>wins</th><th>draws</th>"
            f"<th>losses</th><th>illegal</th></tr>{rows}</table>")



def write_graded_report(directory: str | os.PathLike, title: str, board: str, text: str,
                        graded: dict[str, Any], summary: dict[str, Any] | None = None) -> Path:
    """The report of a board of 17 to 64 cells, where no table of every position exists: its
    sampled grade (``evaluation.grading``) as ``report.json`` and a page of ``text``, the
    printed summary; written whole or not at all, as ``write_report``. Returns the page's path."""
    target = check_destination(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".partial",
                                 dir=target.parent))
    try:
        body = f"<h1>{html.escape(title)}</h1>\n<pre>{html.escape(text)}</pre>\n"
        (temp / INDEX).write_text(_document(title, body), encoding="utf-8")
        data = {"format": FORMAT, "version": 1, "title": title, "board": board,
                "grading": graded, "games": (summary or {}).get("results")}
        (temp / DATA).write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.chmod(temp, 0o755)
        _put_in_place(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return target / INDEX
