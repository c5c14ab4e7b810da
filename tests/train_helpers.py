"""What train.py's command line says, for the tests that check its refusals."""

from __future__ import annotations

import pytest

import train


def usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one line train.py prints for a usage error in ``argv``."""
    with pytest.raises(SystemExit) as stop:
        train.parse_args(argv)
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and ": error: " in lines[-1]
    return lines[-1]
