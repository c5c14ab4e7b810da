"""train.py stopped from outside, as a user or a scheduler stops it: Ctrl-C (SIGINT), SIGTERM
and SIGKILL, each sent to a real process once it has printed that it trains (no sleeping: the
test waits for the line). Nothing of the run is left that cannot be resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agents.run.folder import LOCK, RunFolder

ROOT = Path(__file__).resolve().parents[2]
# SIGINT as a terminal's Ctrl-C, even where the test runner was started with SIGINT ignored
# (a background job), which a child would inherit.
CHILD = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "import train; sys.exit(train.main(sys.argv[1:]))")
# A run that would train for hours and checkpoints only at its end: stopped before that.
ALPHAZERO = ["--algo", "alphazero", "--simulations", "4", "--channels", "8", "--blocks", "1",
             "--games-per-round", "4", "--steps-per-round", "2", "--batch-size", "16",
             "--buffer-size", "40", "--episodes", "1000000", "--eval-every", "1000000",
             "--games", "1", "--no-progress"]


def stopped(tmp_path: Path, args: list[str], after: str, how: signal.Signals
            ) -> tuple[int, str]:
    """Run train.py with ``args``, send ``how`` once a line of its output holds ``after``;
    its exit status and stderr."""
    err = tmp_path / "stderr.txt"
    with open(err, "w") as stderr:
        child = subprocess.Popen([sys.executable, "-u", "-c", CHILD, *args], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            for line in child.stdout:
                if after in line:
                    break
            else:
                pytest.fail(f"train.py ended before printing {after!r}: {err.read_text()}")
            child.send_signal(how)
            child.stdout.read()
            status = child.wait(timeout=120)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    return status, err.read_text()


@pytest.mark.parametrize(("how", "status", "said"), [(signal.SIGINT, 130, "Interrupted."),
                                                     (signal.SIGTERM, 143, "Terminated.")])
def test_an_alphazero_run_stopped_before_its_first_checkpoint_leaves_nothing(
        tmp_path, how, status, said):
    pytest.importorskip("torch")
    out = tmp_path / "runs"
    code, err = stopped(tmp_path, [*ALPHAZERO, "--out", str(out)], "run folder:", how)
    assert (code, err.strip().splitlines()) == (status, [said])  # one line, no traceback
    assert not out.exists()  # the run made it: the folder held nothing to resume from


def test_a_run_killed_outright_before_its_first_checkpoint_is_cleared_by_the_next(tmp_path,
                                                                                 capsys):
    pytest.importorskip("torch")
    import train

    out = tmp_path / "runs"
    code, _ = stopped(tmp_path, [*ALPHAZERO, "--out", str(out)], "run folder:", signal.SIGKILL)
    assert code == -signal.SIGKILL
    left = out / "alphazero-seed0_1"
    assert [p.name for p in left.iterdir()] == [LOCK]
    with pytest.raises(SystemExit):  # --resume refuses it, saying why
        train.parse_args(["--resume", str(left)])
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"--resume {left}: no checkpoint.npz there: its run was stopped before its first "
        "checkpoint, so nothing can be resumed (the next run of the same name in its folder "
        "removes it)")
    assert len(os.listdir(out)) == 2  # and the temporary folder beside it
    folder = RunFolder.create(out, "alphazero-seed0")  # the next run of the same name
    assert os.listdir(out) == [folder.temp.name]
    folder.discard()


def test_ctrl_c_during_sb3_training_with_its_progress_bar_is_one_line(tmp_path):
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "runs"
    # On 13 cells a checkpoint line is written above the bar, so the bar is up by then.
    code, err = stopped(tmp_path, ["--algo", "maskable-ppo", "--board", "1x13x4", "--n-envs",
                                   "2", "--eval-every", "128", "--timesteps", "1000000",
                                   "--games", "1", "--out", str(out)],
                        "exact evaluation at 128 timesteps", signal.SIGINT)
    assert code == 130 and err.strip().splitlines()[-1] == "Interrupted."
    assert "Traceback" not in err and "Exception ignored" not in err  # tqdm's __del__ at exit
    assert not out.exists()
