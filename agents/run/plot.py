"""The learning curve's picture: what a checkpoint measured against training time.

On a solved board: the optimal-move rate (top) and the best response's result per seat
(bottom), with what perfect play gets in each seat and the first checkpoint of perfect play
marked. On a bigger board: the score of the seeded checkpoint games per opponent and seat.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gym_tictactoe.evaluation import RESULT_SCORES
from gym_tictactoe.extras import require
from gym_tictactoe.files import atomic_path

SEAT_STYLES = (("X", "-"), ("O", "--"))


def plot_curve(path: Path, curve: list[dict[str, Any]], clock: str, title: str,
               perfect_results: dict[str, str] | None = None) -> None:
    """Write the PNG of :func:`figure` to ``path`` atomically. MissingExtra without
    matplotlib."""
    matplotlib = require("matplotlib", "train", "the learning-curve plot")
    matplotlib.use("Agg")  # files only: CI has no screen
    import matplotlib.pyplot as plt

    fig = figure(curve, clock, title, perfect_results)
    try:
        with atomic_path(path) as temp:
            fig.savefig(temp, format="png", dpi=100)
    finally:
        plt.close(fig)


def figure(curve: list[dict[str, Any]], clock: str, title: str,
           perfect_results: dict[str, str] | None = None) -> Any:
    """The matplotlib figure of ``curve`` (entries of
    ``gym_tictactoe.evaluation.report.curve_entry`` or
    ``games_entry``); ``perfect_results``: what perfect play gets per seat, on a solved board
    (default: a draw in each)."""
    import matplotlib.pyplot as plt

    if curve and "scores" in curve[0]:
        fig, axis = plt.subplots(figsize=(8, 4.5))
        _plot_scores(axis, curve, clock, title)
    else:
        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 5.5),
                                          gridspec_kw={"height_ratios": [2, 1]})
        _plot_exact(top, bottom, curve, clock, title,
                    perfect_results or {"X": "draw", "O": "draw"})
    fig.tight_layout()
    return fig


def _plot_exact(top: Any, bottom: Any, curve: list[dict[str, Any]], clock: str, title: str,
                perfect: dict[str, str]) -> None:
    x = [entry[clock] for entry in curve]
    top.plot(x, [entry["rate"] for entry in curve], marker=".", color="tab:blue",
             label="optimal-move rate")
    top.axhline(1.0, color="tab:green", lw=0.8, ls=":", label="perfect play: 100%")
    top.set(ylabel="optimal-move rate", title=title, ylim=(min(0.5, *top.get_ylim()), 1.04))
    first = next((entry[clock] for entry in curve if entry["perfect"]), None)
    for axis in (top, bottom):
        if first is not None:
            axis.axvline(first, color="tab:green", lw=1.2,
                         label=f"perfect play from {first:,} {clock}" if axis is top else None)
        axis.grid(alpha=0.3)
    for (seat, style), color in zip(SEAT_STYLES, ("tab:orange", "tab:purple"), strict=True):
        scores = [RESULT_SCORES[entry[seat]] for entry in curve]
        bottom.step(x, scores, style, where="post", color=color, label=f"as {seat}")
        bottom.axhline(RESULT_SCORES[perfect[seat]], color=color, lw=0.8, ls=":",
                       label=f"perfect as {seat}: {perfect[seat]}")
    bottom.set(xlabel=clock, ylabel="best response", yticks=[-1, 0, 1], ylim=(-1.3, 1.3))
    bottom.set_yticklabels(["loss", "draw", "win"])
    # Beside the axes, never over a line.
    for axis in (top, bottom):
        axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
                    borderaxespad=0)


def _plot_scores(axis: Any, curve: list[dict[str, Any]], clock: str, title: str) -> None:
    x = [entry[clock] for entry in curve]
    games = curve[0]["games"]
    for name in curve[0]["scores"]:
        for seat, style in SEAT_STYLES:
            axis.plot(x, [entry["scores"][name][seat] for entry in curve], style, marker=".",
                      label=f"{name}, as {seat}")
    axis.axhline(1.0, color="tab:green", lw=0.8, ls=":", label="every game won")
    axis.set(xlabel=clock, ylabel=f"score over {games} games per seat\n(wins - losses) / games",
             ylim=(-1.05, 1.05), title=f"{title} (not solved: seeded games)")
    axis.grid(alpha=0.3)
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
