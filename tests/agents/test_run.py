"""agents.run.training and its run folder: numbered folders never overwritten, written whole or
not at all, one line and exit 3 when outputs cannot be written, checkpoints by games on big boards,
and the learning curve's picture (train.py run as a process: tests/e2e/test_run_processes.py).
"""

from __future__ import annotations

import errno
import json
import os

import pytest
from train_helpers import TINY

from agents.run.folder import (
    LOCK,
    STATE,
    RunFolder,
    latest_run_id,
    remove_stale,
)


def train_main(*args: str) -> int:
    from train import main

    return main([*TINY, *args])


@pytest.mark.slow
def test_two_runs_of_one_name_get_numbered_folders_and_the_first_stays(tmp_path, capsys):
    assert train_main("--out", str(tmp_path)) == 0
    first = {p.name: p.read_bytes() for p in (tmp_path / "q-seed0_1").iterdir()}
    assert train_main("--out", str(tmp_path), "--opponent", "random") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q-seed0_1", "q-seed0_2"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "q-seed0_1").iterdir()} == first
    second = json.loads((tmp_path / "q-seed0_2" / "results.json").read_text())
    assert second["config"]["run_dir"] == str(tmp_path / "q-seed0_2")
    assert second["config"]["opponent"] == "random"
    assert f"wrote {tmp_path / 'q-seed0_2'}: model.npz" in capsys.readouterr().out


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize(("target", "what"), [
    ("matplotlib.figure.Figure.savefig", "learning_curve.png"),
    ("agents.tabular.files.write", "model.npz"),
    ("agents.run.training.write_json", "results.json"),
])
def test_a_full_disk_is_one_line_exit_3_and_leaves_nothing(tmp_path, monkeypatch, capsys,
                                                         target, what):
    if target.startswith("matplotlib"):
        pytest.importorskip("matplotlib")  # the [train] extra
    monkeypatch.setattr(target, _no_space)
    out = tmp_path / "runs"
    assert train_main("--out", str(out)) == 3
    err = capsys.readouterr().err
    assert err.splitlines() == [f"train.py: error: cannot write {what} for the run in {out}: "
                                "No space left on device"]
    assert not out.exists()  # the run made it: nothing of it is left


def test_a_full_disk_before_training_is_exit_3_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("agents.run.folder.tempfile.mkdtemp", _no_space)
    out = tmp_path / "runs"
    assert train_main("--out", str(out)) == 3
    assert capsys.readouterr().err.splitlines() == [
        f"train.py: error: cannot create a run folder in {out}: No space left on device"]
    assert not out.exists()


def test_any_failure_writing_the_plot_leaves_no_partial_folder(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")  # the [train] extra
    import matplotlib.figure

    def broken(*args, **kwargs):
        raise RuntimeError("a backend failure")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    (tmp_path / "q-seed0_1").mkdir()  # an earlier run
    with pytest.raises(RuntimeError, match="a backend failure"):
        train_main("--out", str(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["q-seed0_1"]


def test_numbering_skips_past_every_entry_and_reserves_exclusively(tmp_path):
    (tmp_path / "x_7").write_text("not a run")  # any entry takes its number, as in rl_zoo3
    (tmp_path / "x_y_9").mkdir()  # another stem
    (tmp_path / "x_01b").mkdir()  # not a number
    assert latest_run_id(tmp_path, "x") == 7
    one, two = RunFolder.create(tmp_path, "x"), RunFolder.create(tmp_path, "x")
    assert (one.reserve().name, two.reserve().name) == ("x_8", "x_9")
    (one.file("a")).write_text("a")
    assert one.commit() == tmp_path / "x_8" and (tmp_path / "x_8" / "a").read_text() == "a"
    two.discard()
    assert not (tmp_path / "x_9").exists() and not two.temp.exists()
    assert (tmp_path / "x_7").read_text() == "not a run"


def test_a_later_run_removes_the_temporary_folders_of_dead_writers_only(tmp_path):
    dead = tmp_path / ".q-seed0.999999999.abcdefgh.partial"  # no process has that id
    alive = tmp_path / f".q-seed0.{os.getppid()}.abcdefgh.partial"
    for folder in (dead, alive):
        folder.mkdir()
        (folder / "model.npz").write_text("half")
    assert remove_stale(tmp_path, "q-seed0") == [dead]
    assert not dead.exists() and alive.is_dir()


def test_a_run_folder_stays_locked_when_its_lock_file_is_deleted(tmp_path):
    first = RunFolder.create(tmp_path, "x")
    final = first.reserve()
    first.lock()
    assert (final / LOCK).read_text() == f"{os.getpid()}\n"  # shows who holds it
    os.unlink(final / LOCK)
    with pytest.raises(ValueError, match="is being trained by another process now"):
        RunFolder.reopen(final)
    assert final.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == [first.temp.name, "x_1"]
    (final / STATE).write_bytes(b"a checkpoint")
    first.commit()  # the lock goes with the run
    RunFolder.reopen(final).discard()
    assert [p.name for p in final.iterdir()] == [STATE]


def test_a_reserved_folder_nothing_can_resume_from_goes_once_no_process_holds_it(tmp_path):
    live = RunFolder.create(tmp_path, "x")
    live.reserve()
    live.lock()  # x_1: a run before its first checkpoint, still training
    killed = tmp_path / "x_2"  # SIGKILL in its first save: a lock file and a temporary
    killed.mkdir()
    (killed / LOCK).write_text("999999999\n")
    (killed / ".checkpoint.npz.999999999.abcdefgh.npz").write_bytes(b"")
    resumable = tmp_path / "x_3"  # killed after a checkpoint: --resume continues it
    resumable.mkdir()
    (resumable / LOCK).write_text("999999999\n")
    (resumable / STATE).write_bytes(b"a checkpoint")
    (tmp_path / "x_4").mkdir()  # no lock file: taken by a run that has not locked it yet
    assert remove_stale(tmp_path, "x") == [killed]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "x_1", "x_3", "x_4"]
    live.discard()
    assert not (tmp_path / "x_1").exists()


def test_reopening_or_finishing_a_run_folder_removes_what_killed_saves_left(tmp_path):
    final = tmp_path / "x_1"
    final.mkdir()
    (final / STATE).write_bytes(b"a checkpoint")
    # Killed while saving; its process id lives on (a zombie not yet reaped, or reused).
    left = final / f".{STATE}.{os.getppid()}.abcdefgh.npz"
    left.write_bytes(b"")
    folder = RunFolder.reopen(final)
    assert not left.exists()
    left.write_bytes(b"")  # a save of this sitting, killed as the run ends
    folder.file("results.json").write_text("{}")
    folder.commit()
    assert sorted(p.name for p in final.iterdir()) == [STATE, "results.json"]


@pytest.mark.slow
def test_sb3_says_once_that_it_rounds_the_budget_up_and_checkpoints_once_past_it(tmp_path,
                                                                                 capsys):
    pytest.importorskip("sb3_contrib")
    assert train_main_sb3("maskable-ppo", "--timesteps", "300", "--out", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert out.count("SB3 collects 128 timesteps at a time (2 envs of 64 steps): this run "
                     "trains 384 timesteps, --timesteps 300 rounded up") == 1
    # 3x3 without a progress bar: each checkpoint is a line, the only sign of life
    assert "exact evaluation at 100 timesteps (3x3x3)…" in out
    results = json.loads((tmp_path / "maskable-ppo-seed0_1" / "results.json").read_text())
    assert results["config"]["timesteps_trained"] == 384
    assert [e["timesteps"] for e in results["learning_curve"]] == [100, 200, 384]


def train_main_sb3(algo: str, *args: str) -> int:
    from train import main

    return main(["--algo", algo, "--n-envs", "2", "--eval-every", "100", "--games", "1",
                 "--no-progress", *args])


def test_the_sb3_progress_bar_counts_to_what_is_trained_and_closes(monkeypatch):
    pytest.importorskip("sb3_contrib")
    from stable_baselines3.common import callbacks

    from agents import sb3
    from agents.run.sb3 import ProgressBar, timesteps_trained

    bars = []

    class Bar:  # the rich bar's counting, without a terminal
        def __init__(self, total):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, count):
            self.n += count

        def refresh(self):
            pass

        def close(self):
            self.closed = True

    monkeypatch.setattr(callbacks, "tqdm", Bar)
    model = sb3.build_model("dqn", sb3.make_training_env("dqn", 3, seed=0), seed=0)
    assert timesteps_trained(model, 100) == 102  # whole steps of 3 envs
    bar = ProgressBar(102)
    model.learn(100, callback=bar)
    assert (bars[0].n, bars[0].total, bars[0].closed) == (102, 102, True)
    maskable = sb3.build_model("maskable-ppo", sb3.make_training_env("maskable-ppo", 2, seed=0))
    assert timesteps_trained(maskable, 30_000) == 30_080  # whole rollouts of 2 x 64
    stopped = ProgressBar(384)
    with pytest.raises(KeyboardInterrupt):
        maskable.learn(300, callback=[stopped, _interrupt_after(3)])
    stopped.close()  # as train_sb3 does on any way out: no bar left open at exit
    assert bars[1].closed and bars[1].n == 6


def _interrupt_after(steps: int):
    from stable_baselines3.common.callbacks import BaseCallback

    class Interrupt(BaseCallback):
        def _on_step(self) -> bool:
            if self.n_calls >= steps:
                raise KeyboardInterrupt
            return True

    return Interrupt()


def test_the_curve_names_board_and_algorithm_marks_perfect_play_and_keeps_its_legend_aside():
    matplotlib = pytest.importorskip("matplotlib")  # the [train] extra
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.run.plot import figure
    from train import parse_args

    config = parse_args(["--board", "3x4x3", "--out", "runs"])
    curve = [{"episodes": n, "seconds": 0.1, "rate": rate, "X": x, "O": "loss",
              "perfect": perfect}
             for n, rate, x, perfect in ((1000, 0.9, "draw", False), (2000, 1.0, "win", True))]
    fig = figure(curve, "episodes", config.title, {"X": "win", "O": "loss"})
    top, bottom = fig.axes
    assert top.get_title() == "tabular Q-learning on 3x4x3, seed 0"
    fig.canvas.draw()
    for axis in (top, bottom):  # the legend lies right of the plotting area, over no line
        legend = axis.get_legend().get_window_extent()
        assert legend.x0 >= axis.get_window_extent().x1
        assert any(line.get_xdata()[0] == 2000 and line.get_xdata()[-1] == 2000
                   for line in axis.get_lines())  # the first perfect checkpoint
    labels = [text.get_text() for text in top.get_legend().get_texts()]
    assert "perfect play from 2,000 episodes" in labels
    labels = [text.get_text() for text in bottom.get_legend().get_texts()]
    assert {"perfect as X: win", "perfect as O: loss"} <= set(labels)
    plt.close(fig)
