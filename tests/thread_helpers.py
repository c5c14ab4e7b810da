"""Running a call that may hang: the test fails instead of hanging with it."""

from __future__ import annotations

import threading
from collections.abc import Callable


def in_thread(function: Callable, seconds: float = 30) -> tuple[threading.Thread, dict]:
    """Runs ``function()`` in a daemon thread for at most ``seconds``; returns the thread (still
    alive when the call hangs) and its outcome: ``{"value": ...}`` or ``{"error": ...}``."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed to the test's thread
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    return worker, outcome
