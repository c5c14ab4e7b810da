"""train.py's ``--workers`` and ``--ray-address`` refused as a separate process (moved from
tests/agents/alphazero/test_workers.py): bad flags, an address where nothing listens, no ray."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from missing_packages import run_without

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "train.py"), "--no-progress", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "argument --workers: expected a positive integer, got '0'"),
        (["--workers", "two"], "argument --workers: expected a positive integer, got 'two'"),
        (["--algo", "q", "--workers", "2"], "--workers does not apply to --algo q"),
        (["--ray-address", "auto"], "--ray-address needs --workers"),
    ],
)
def test_bad_worker_flags_are_usage_errors(args, message, tmp_path):
    done = run_train(*(["--algo", "alphazero"] if "--algo" not in args else []), *args,
                     "--out", str(tmp_path / "runs"))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()


def test_an_address_where_nothing_listens_is_one_line_within_seconds(tmp_path):
    port = free_port()
    done = run_train("--algo", "alphazero", "--workers", "2", "--ray-address",
                     f"127.0.0.1:{port}", "--out", str(tmp_path / "runs"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"train.py: error: --ray-address 127.0.0.1:{port}: nothing answers there (Connection "
        "refused); start a cluster with `ray start --head` and give the address it prints, or "
        "leave --ray-address out for a local Ray"]
    assert not (tmp_path / "runs").exists()


def test_workers_without_ray_name_the_extra(tmp_path):
    done = run_without("ray", "train.py", "--algo", "alphazero", "--workers", "2",
                       "--no-progress", "--out", str(tmp_path / "runs"))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "train.py: error: --workers needs ray, which is not installed: pip install "
        '".[distributed]" in a clone of gym-tictactoe']
    assert not (tmp_path / "runs").exists()
