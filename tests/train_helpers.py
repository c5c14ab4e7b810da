"""What train.py's command line says, for the tests that check its refusals, and the flags of
its smallest run."""

from __future__ import annotations

import pytest

import train

# The smallest tabular run of train.py that still evaluates and checkpoints.
TINY = ["--no-progress", "--episodes", "300", "--eval-every", "100", "--games", "2"]


def usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one line train.py prints for a usage error in ``argv``."""
    with pytest.raises(SystemExit) as stop:
        train.parse_args(argv)
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and ": error: " in lines[-1]
    return lines[-1]
