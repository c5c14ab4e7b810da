"""The run's checkpoints: :class:`Checkpointer` measures the policy (exactly where the board is
solved, else seeded games against the built-in players), records the learning-curve entry and
says when to stop (perfect play); :func:`announcer` says how a checkpoint is announced. Every
trainer calls it (``agents.run.training``'s and AlphaZero's, ``agents.run.alphazero``).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from agents.run.config import CHECKPOINT_GAMES, CHECKPOINT_OPPONENTS, RunConfig
from agents.run.folder import RunFolder
from gym_tictactoe.evaluation.report import (
    checkpoint_message,
    checkpoint_result,
    curve_entry,
    games_entry,
)

Announce = Callable[[str], Any]


class Checkpointer:
    """At each checkpoint: measure the policy, record the learning-curve entry, say whether to
    stop. Exact where ``config.board`` is solved (stop once play is perfect), else
    ``CHECKPOINT_GAMES`` seeded games per seat against each of ``CHECKPOINT_OPPONENTS`` (never
    stops: no game count proves perfect play)."""

    def __init__(self, config: RunConfig, announce: Announce | None = None) -> None:
        self.config, self.announce = config, announce
        self.curve: list[dict[str, Any]] = []
        self.start = time.perf_counter()
        self.state_file: Path | None = None  # where a trainer that can resume saves its state
        self.folder: RunFolder | None = None  # the run folder state_file is in
        # Tabular Q with --focus-share or --alpha-end: an ``agents.tabular.focus.Steering``, given
        # each exact checkpoint's moves table (set by train_q once its vector env exists).
        self.steer: Callable[[Any, Any, int], dict[str, Any]] | None = None

    def resume(self, curve: list[dict[str, Any]], seconds: float) -> None:
        """Continue a resumed run's ``curve`` and its clock from the ``seconds`` it had run."""
        self.curve = list(curve)
        self.start = time.perf_counter() - seconds

    def writing(self, what: str) -> contextlib.AbstractContextManager:
        """Where the trainer saves its state: an OSError (a full disk) as the run folder's
        one-line OutputError, as for the run's other files."""
        return contextlib.nullcontext() if self.folder is None else self.folder.writing(what)

    @property
    def seconds(self) -> float:
        """Seconds since the run started (earlier sittings of a resumed run included)."""
        return time.perf_counter() - self.start

    def __call__(self, policy: Any, count: int, *, setting: dict[str, Any] | None = None,
                 **clocks: float) -> bool:
        """Checkpoint ``policy`` after ``count`` episodes or timesteps (``clocks``: other
        measures of the run so far to record, such as AlphaZero's ``train_seconds``, rounded
        to milliseconds; ``setting``: what it trains with now, recorded as it is, such as
        AlphaZero's learning rate); True: stop training."""
        config, say = self.config, self.announce
        games = None if config.exact else (CHECKPOINT_GAMES, CHECKPOINT_OPPONENTS)
        if say is not None:
            say(checkpoint_message(count, config.clock, config.board, games))
        clock = {config.clock: int(count), **clocks, "seconds": self.seconds}
        if config.exact:
            entry = self._exact(policy, int(count), clock)
        else:
            entry = games_entry(policy, CHECKPOINT_GAMES, CHECKPOINT_OPPONENTS, config.seed,
                                **clock)
        self.curve.append({**entry, **(setting or {})})
        if say is not None:
            say(checkpoint_result(entry))
        return bool(entry.get("perfect", False))

    def _exact(self, policy: Any, count: int, clock: dict[str, float]) -> dict[str, Any]:
        """The exact curve entry; with ``steer``, steered from the same moves table."""
        if self.steer is None:
            from gym_tictactoe.evaluation import evaluate

            return curve_entry(evaluate(policy), **clock)
        from agents.tabular.focus import evaluate as evaluate_moves

        report, moves = evaluate_moves(policy)
        return {**curve_entry(report, **clock), **self.steer(policy, moves, count)}

    @property
    def first_perfect(self) -> int | None:
        return next((e[self.config.clock] for e in self.curve if e.get("perfect")), None)


def announcer(config: RunConfig) -> Announce | None:
    """How to say that a checkpoint runs and what it found: without a progress bar, printed
    lines (on every board: the only sign of life of a run that takes minutes); with one, on
    boards over 12 cells (seconds each, the bar standing still meanwhile), a line above the bar
    (tqdm's, or SB3's rich one, which passes printed lines through); else None, the bar alone
    (checkpoints take milliseconds)."""
    if not config.progress:
        return partial(print, flush=True)
    return None if config.board.tabled else write_above_bar


def write_above_bar(text: str) -> None:
    """``tqdm.write``, flushed: into a file or a pipe, stdout is block-buffered, and a long run's
    checkpoint lines would otherwise show only at its end."""
    from tqdm import tqdm

    tqdm.write(text, file=sys.stdout)
    sys.stdout.flush()
