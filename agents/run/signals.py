"""How a run ends on a signal: Ctrl-C raises KeyboardInterrupt, and within
:func:`sigterm_raises` SIGTERM raises :class:`Terminated`, so that both unwind through the run's
cleanup (``agents.run.training.run`` discards what the run wrote) instead of killing it where
it stands.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class Terminated(BaseException):
    """SIGTERM, raised wherever the run is, so that it ends as on Ctrl-C: temporary files and
    a run folder holding nothing to resume removed (not an Exception: nothing swallows it)."""


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """In the block, a first SIGTERM raises :class:`Terminated` (a second one kills)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread (a test may call main elsewhere)
        return

    def terminate(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
