"""The command line as a separate process (moved from tests/cli/test_cli.py): ``python -m
gym_tictactoe``, a missing extra, and a real Ctrl-C typed into ``make play``."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from missing_packages import run_without

from gym_tictactoe import cli

REPO = Path(__file__).resolve().parents[2]


def test_python_dash_m_facts():
    done = subprocess.run(
        [sys.executable, "-m", "gym_tictactoe", "facts"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "255,168" in done.stdout


def test_evaluating_an_sb3_model_without_the_extra_names_it(tmp_path):
    model = tmp_path / "model.zip"
    with zipfile.ZipFile(model, "w") as archive:  # what tells an SB3 model of ours apart
        archive.writestr("gym_tictactoe.json", "{}")
    done = run_without("torch", "evaluate", str(model))
    assert done.returncode == cli.EXIT_MISSING_EXTRA
    assert done.stderr.strip().splitlines() == [
        "gym-tictactoe evaluate: error: loading an SB3 model needs torch, which is not installed: "
        'pip install ".[sb3]" -c constraints.txt (the README says how to get the CPU torch) '
        "in a clone of gym-tictactoe"]


@pytest.mark.skipif(os.name != "posix" or shutil.which("make") is None,
                    reason="needs make and a pseudo-terminal")
def test_ctrl_c_in_make_play_ends_without_makes_error():
    """A real Ctrl-C at the prompt, typed into a terminal: make prints no 'Error 130'."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: make play on the Python running the tests, no venv needed
        os.chdir(REPO)
        for variable in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):  # as if typed, not under make test
            os.environ.pop(variable, None)
        # As a fresh terminal would start it, whatever the test process holds: Ctrl-C neither
        # ignored nor blocked, and none of the test process's files open.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.closerange(3, 1 << 16)
        os.execvp("make", ["make", "play", f"PY={sys.executable}", "-o", ".venv/.installed-core"])
    parent = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []))
    output = _read_until(fd, b"or q to quit: ")
    # The terminal sends SIGINT to make and the game alike. One that lands between the prompt
    # and the game's read is only seen at the next input, as with any Python program, so the
    # key is pressed again until the game answers.
    # A loaded machine may take seconds to answer: wait that long before pressing again, so
    # that a second press does not land in the game's own exit.
    for _ in range(12):
        os.write(fd, b"\x03")
        output += _read_until(fd, b"Interrupted.", wait=5, missing_ok=True)
        if b"Interrupted." in output:
            break
    assert b"Interrupted." in output, (output, parent)
    output += _read_until(fd, None, wait=120)
    os.waitpid(pid, 0)
    text = output.decode(errors="replace")
    assert "Interrupted." in text and "Error" not in text and "***" not in text


def _read_until(fd: int, marker: bytes | None, wait: float = 60,
                missing_ok: bool = False) -> bytes:
    """Output of the pseudo-terminal until ``marker`` appears or the other side closes."""
    data = b""
    while marker is None or marker not in data:
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            if missing_ok:
                break
            raise AssertionError(f"no {marker!r} within {wait} s; got {data!r}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        data += chunk
    return data
