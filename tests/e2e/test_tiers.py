"""The test tiers: every test under tests/e2e/ carries the e2e marker without saying so (conftest
gives it by folder), `make test` runs every tier and `make test-fast` the unit tier only; and the
test folders named like a package (tests/agents/) never hide it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_test_under_e2e_is_marked_e2e():
    here = Path(__file__).parent
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "-m", "not e2e", str(here)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 5, done.stdout + done.stderr  # 5: every test deselected
    assert " deselected" in done.stdout and "::" not in done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_runs_every_tier_and_make_test_fast_the_unit_tier_only():
    def pytest_lines(target: str) -> list[str]:
        environment = {k: v for k, v in os.environ.items()
                       if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        done = subprocess.run(["make", "--no-print-directory", "-n", "-B", target], cwd=ROOT,
                              env=environment, capture_output=True, text=True, timeout=60,
                              check=True)
        return [line for line in done.stdout.splitlines() if " -m pytest" in line]

    assert [line.split(" -m pytest", 1)[1] for line in pytest_lines("test")] == [""]
    assert [line.split(" -m pytest", 1)[1] for line in pytest_lines("test-fast")] == [
        ' -m "not slow and not e2e"']


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P")
def test_test_folders_named_like_a_package_never_hide_it():
    """tests/agents/ beside agents/: run as the pytest script runs, with no checkout folder on
    sys.path (python -P, no PYTHONPATH), a test there still imports the real package."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(ROOT / "tests" / "agents" / "test_hyperparams.py")], cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:]
