"""AlphaZero runs that span sittings: the training state file, ``train.py --resume``, checkpoints
every N minutes of training time, AlphaZero's settings as flags, and their bad input."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("torch")

from train_helpers import usage_error

import train
from agents.alphazero import AlphaZeroSettings, PlaySettings, Trainer, files
from agents.alphazero.network import NetworkSettings
from agents.alphazero.state import STATE_FILE, load_state, save_state
from agents.alphazero.training import Schedule
from agents.run import alphazero as az_run
from gym_tictactoe import game

SMALL = AlphaZeroSettings(play=PlaySettings(simulations=4), network=NetworkSettings(8, 1),
                          games_per_round=4, steps_per_round=2, batch_size=16, buffer_size=40)
FLAGS = ["--algo", "alphazero", "--simulations", "4", "--channels", "8", "--blocks", "1",
         "--games-per-round", "4", "--steps-per-round", "2", "--batch-size", "16",
         "--buffer-size", "40", "--eval-every", "4", "--games", "1", "--no-progress"]


def weights(trainer):
    return {k: v.numpy().copy() for k, v in trainer.net.state_dict().items()}


@pytest.mark.slow
def test_a_saved_state_continues_exactly_as_if_uninterrupted(tmp_path):
    from agents.sb3 import torch_threads

    whole, half = Trainer(game.TICTACTOE, SMALL, seed=3), Trainer(game.TICTACTOE, SMALL, seed=3)
    with torch_threads(1):
        whole.train(24, 100)  # 24 games of 4 moves or more: the 40-sample ring wraps
        half.train(12, 100)
    save_state(tmp_path / STATE_FILE, half, {"seed": 3}, 1.5, [{"episodes": 12}])
    saved = load_state(tmp_path / STATE_FILE)
    assert (saved.seconds, saved.curve, saved.run) == (1.5, [{"episodes": 12}], {"seed": 3})
    resumed = saved.trainer
    assert resumed.games == 12 and resumed.seconds == half.seconds
    assert 0 < resumed.cpu_seconds == half.cpu_seconds
    with torch_threads(1):
        resumed.train(24, 100)
    for name, value in weights(whole).items():
        np.testing.assert_array_equal(value, weights(resumed)[name], err_msg=name)
    np.testing.assert_array_equal(whole.buffer.boards, resumed.buffer.boards)


def run_folder(out):
    return out / "alphazero-seed0_1"


@pytest.mark.slow
@pytest.mark.parametrize("aim", [[], ["--focus-share", "0.5", "--back-share", "0.2"]],
                         ids=["uniform", "aimed"])  # aimed: the saved state keeps the aim
def test_train_py_resumes_an_interrupted_run_into_the_same_folder(tmp_path, monkeypatch,
                                                                  capsys, aim):
    flags = [*FLAGS, *aim, "--start", "random", "--start-probability", "0.5"]
    assert train.main([*flags, "--episodes", "16", "--out", str(tmp_path / "whole")]) == 0
    real = az_run.save_state

    def interrupted(path, trainer, *args):
        real(path, trainer, *args)
        if trainer.games == 8:
            raise KeyboardInterrupt  # as Ctrl-C (or a kill) after the second checkpoint

    monkeypatch.setattr(az_run, "save_state", interrupted)
    capsys.readouterr()
    assert train.main([*flags, "--episodes", "16", "--out", str(tmp_path / "cut")]) == 130
    folder = run_folder(tmp_path / "cut")
    assert capsys.readouterr().err.strip().splitlines() == [  # one line, where to go on
        f"Interrupted: {folder} keeps its last checkpoint; train.py --resume {folder} "
        "continues the run."]
    assert [p.name for p in folder.iterdir()] == [STATE_FILE]  # an unfinished run
    monkeypatch.setattr(az_run, "save_state", real)
    assert train.main(["--resume", str(folder), "--no-progress"]) == 0
    assert sorted(p.name for p in (tmp_path / "cut").iterdir()) == ["alphazero-seed0_1"]
    whole, cut = run_folder(tmp_path / "whole"), folder
    a, b = (files.load(f / "model.npz") for f in (whole, cut))
    assert a.games == b.games == 16
    for (name, x), y in zip(a.net.state_dict().items(), b.net.state_dict().values(),
                                strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=name)
    curves = [json.loads((f / "results.json").read_text())["learning_curve"]
              for f in (whole, cut)]
    measured = [[{k: e[k] for k in ("episodes", "rate", "X", "O")} for e in c] for c in curves]
    assert measured[0] == measured[1] and [e["episodes"] for e in curves[1]] == [4, 8, 12, 16]


@pytest.mark.slow
def test_a_run_that_is_training_cannot_be_resumed_by_a_second_process(tmp_path, monkeypatch,
                                                                      capsys):
    from agents.run.folder import LOCK

    real, refused = az_run.save_state, []

    def second_process(path, trainer, *args):
        real(path, trainer, *args)
        if trainer.games == 4:  # the first run, fresh, has saved a checkpoint and trains on
            os.unlink(path.parent / LOCK)  # the lock holds whatever happens to its file
            refused.append(train.main(["--resume", str(path.parent), "--no-progress"]))

    monkeypatch.setattr(az_run, "save_state", second_process)
    assert train.main([*FLAGS, "--episodes", "8", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert refused == [2] and "is being trained by another process now" in err
    assert len(err.strip().splitlines()) == 1
    folder = run_folder(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == [  # the lock file is gone at the end
        STATE_FILE, "learning_curve.png", "model.npz", "results.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alphazero-seed0_1"]


@pytest.mark.parametrize("full_at", [1, 2])
def test_a_full_disk_at_a_checkpoint_is_one_line_exit_3_and_keeps_the_last_one(
        tmp_path, monkeypatch, capsys, full_at):
    import errno

    real, writes = np.savez, []

    def savez(file, *args, **kwargs):
        writes.append(file)
        if len(writes) == full_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(file, *args, **kwargs)

    monkeypatch.setattr("agents.alphazero.state.np.savez", savez)
    out = tmp_path / "runs"
    assert train.main([*FLAGS, "--episodes", "16", "--out", str(out)]) == 3
    assert capsys.readouterr().err.splitlines() == [
        f"train.py: error: cannot write {STATE_FILE} for the run in {out}: "
        "No space left on device"]
    if full_at == 1:  # nothing of the run could be resumed: nothing of it is left
        assert not out.exists()
    else:  # the first checkpoint stays, whole, for --resume
        assert [p.name for p in run_folder(out).iterdir()] == [STATE_FILE]
        assert load_state(run_folder(out) / STATE_FILE).trainer.games == 4


def test_the_bar_of_a_run_that_stops_at_perfect_play_shows_no_total_or_time_left(tmp_path):
    solved = train.parse_args(["--algo", "alphazero", "--out", str(tmp_path)])
    bar = az_run._bar(solved, 768)
    bar.close()
    assert bar.total is None and bar.n == 768
    assert bar.desc == "games (up to 200,000; stops at perfect play)"
    assert "/200000" not in str(bar)  # once: 768/200000 [00:19<1:20:31]
    unsolved = train.parse_args(["--algo", "alphazero", "--board", "6x6x4", "--episodes", "900",
                                 "--out", str(tmp_path)])
    bar = az_run._bar(unsolved, 0)  # no perfect play to stop at: the budget is the end
    bar.close()
    assert bar.total == 900


def test_the_run_folder_knows_the_state_file_by_name():
    from agents.run.folder import STATE

    assert STATE == STATE_FILE


@pytest.mark.slow
def test_a_finished_run_continues_into_a_new_folder_only_with_a_larger_budget(tmp_path,
                                                                               capsys):
    assert train.main([*FLAGS, "--episodes", "4", "--out", str(tmp_path)]) == 0
    folder = run_folder(tmp_path)
    with pytest.raises(SystemExit) as stop:
        train.parse_args(["--resume", str(folder)])
    assert stop.value.code == 2 and "that run is finished (4 games" in capsys.readouterr().err
    assert train.main(["--resume", str(folder), "--episodes", "8", "--no-progress"]) == 0
    results = json.loads((tmp_path / "alphazero-seed0_2" / "results.json").read_text())
    assert [e["episodes"] for e in results["learning_curve"]] == [4, 8]
    assert results["config"]["resumed_from"] == str(folder)


@pytest.mark.slow
def test_a_finished_run_goes_on_at_a_new_learning_rate_and_the_curve_says_which(tmp_path):
    assert train.main([*FLAGS, "--episodes", "4", "--out", str(tmp_path)]) == 0
    folder = run_folder(tmp_path)
    old = load_state(folder / STATE_FILE)  # as a state saved before the curve kept the rate
    save_state(folder / STATE_FILE, old.trainer, old.run, old.seconds,
               [{k: v for k, v in entry.items() if k != "learning_rate"} for entry in old.curve])
    assert train.main(["--resume", str(folder), "--episodes", "8", "--learning-rate", "0.0005",
                       "--no-progress"]) == 0
    results = json.loads((tmp_path / "alphazero-seed0_2" / "results.json").read_text())
    assert [e["learning_rate"] for e in results["learning_curve"]] == [0.002, 0.0005]
    assert results["config"]["hyperparameters"]["learning_rate"] == 0.0005
    saved = load_state(tmp_path / "alphazero-seed0_2" / STATE_FILE).trainer
    assert saved.settings.learning_rate == 0.0005
    assert [group["lr"] for group in saved.optimizer.param_groups] == [0.0005]
    assert saved.optimizer.state  # the moments are kept: it went on, it did not start again


def test_a_run_cut_short_keeps_its_learning_rate(saved_run, tmp_path, capsys):
    cut = tmp_path / "alphazero-seed0_1"
    cut.mkdir()
    (cut / STATE_FILE).write_bytes((saved_run / STATE_FILE).read_bytes())  # no results.json
    line = usage_error(capsys, ["--resume", str(cut), "--episodes", "8", "--learning-rate",
                                "0.001"])
    assert "--learning-rate 0.001 conflicts with the run in" in line
    assert "a new --learning-rate applies when continuing a finished run" in line


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("saved")
    assert train.main([*FLAGS, "--episodes", "4", "--out", str(out)]) == 0
    return run_folder(out)


@pytest.mark.parametrize("flags, message", [
    (["--board", "4x4x3"], "--board 4x4x3 conflicts with the run in .*, whose board is 3x3x3"),
    (["--seed", "2"], "--seed 2 conflicts with the run in .*, whose seed is 0"),
    (["--algo", "q"], "--resume applies to --algo alphazero only"),
    (["--simulations", "8"], "--simulations 8 conflicts with the run in .*, whose simulations"),
    (["--name", "x"], "--name does not apply with --resume"),
])
def test_resume_refuses_flags_that_contradict_the_run(saved_run, capsys, flags, message):
    import re

    line = usage_error(capsys, ["--resume", str(saved_run), "--episodes", "8", *flags])
    assert re.search(message, line)


def test_resume_accepts_the_state_file_for_its_folder_and_no_other_name(saved_run, tmp_path,
                                                                        capsys):
    config = train.parse_args(["--resume", str(saved_run / STATE_FILE), "--episodes", "8"])
    assert config.resume == saved_run and config.name == "alphazero-seed0"
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / STATE_FILE).write_bytes((saved_run / STATE_FILE).read_bytes())
    assert "a run folder is named NAME_N" in usage_error(capsys, ["--resume", str(renamed)])


def test_resume_accepts_the_same_settings_again(saved_run):
    config = train.parse_args(["--resume", str(saved_run), "--episodes", "8", "--seed", "0",
                               "--board", "3x3", "--simulations", "4"])
    assert config.algo == "alphazero" and config.alphazero == {} and config.episodes == 8
    assert config.eval_every == 4 and config.resume == saved_run


def damaged(folder, tmp_path, change):
    """A copy of ``folder``'s state file with ``change(data: bytes) -> bytes`` applied."""
    target = tmp_path / "copy_1"
    target.mkdir()
    (target / STATE_FILE).write_bytes(change((folder / STATE_FILE).read_bytes()))
    return target


def altered(data, header_change=None, drop=()):
    """The state file ``data`` with ``header_change(header)`` applied and members ``drop``
    left out."""
    import io

    with np.load(io.BytesIO(data)) as arrays:
        members = {k: arrays[k] for k in arrays.files if k not in drop}
    header = json.loads(str(members["state"]))
    if header_change is not None:
        header_change(header)
    members["state"] = np.array(json.dumps(header))
    buffer = io.BytesIO()
    np.savez(buffer, **members)
    return buffer.getvalue()


def altered_header(data):
    return altered(data, lambda header: header.update(board={"rows": 4, "cols": 4,
                                                             "win_length": 3}))


def aimed_elsewhere(data):
    return altered(data, lambda header: header.update(aimed_at=7))


def aim_missing(data):
    return altered(data, lambda header: header.update(aimed_at=4520), drop=("aimed_at",))


@pytest.mark.parametrize("change, message", [
    (lambda data: data[: len(data) // 2], "not an AlphaZero training state: .*truncated"),
    (altered_header, "not an AlphaZero training state: 'boards' must be int8 of shape"),
    (aimed_elsewhere, "aimed_at must be null or 4520, a bit per start position of 3x3x3; got 7"),
    (aim_missing, "its header has aimed_at but the file holds no aimed_at array"),
    (lambda data: altered(data, lambda header: header.update(anneal_over={"games": 0,
                                                                          "minutes": None})),
     "its header is wrong: anneal_over.games must be an integer"),
    (lambda data: b"not a zip", "not an AlphaZero training state"),
])
def test_resume_refuses_a_damaged_state_in_one_line(saved_run, tmp_path, capsys, change,
                                                    message):
    import re

    line = usage_error(capsys, ["--resume", str(damaged(saved_run, tmp_path, change))])
    assert re.search(message, line)


def test_a_state_from_before_aims_were_saved_still_loads(saved_run, tmp_path):
    old = damaged(saved_run, tmp_path, lambda data: altered(
        data, lambda header: header.pop("aimed_at"), drop=("aimed_at",)))
    assert load_state(old / STATE_FILE).trainer.aimed_at is None


def test_resume_refuses_a_folder_that_is_no_alphazero_run(tmp_path, capsys):
    assert train.main(["--episodes", "10", "--eval-every", "10", "--games", "1",
                       "--no-progress", "--out", str(tmp_path)]) == 0
    line = usage_error(capsys, ["--resume", str(tmp_path / "q-seed0_1")])
    assert "no checkpoint.npz there, so not the run folder of a train.py --algo alphazero" \
        in line
    (tmp_path / "m_1").mkdir()  # a model file where the state should be
    files.save(tmp_path / "m_1" / STATE_FILE, Trainer(game.TICTACTOE, SMALL).net, game.TICTACTOE)
    assert "not an AlphaZero training state: it holds" in usage_error(
        capsys, ["--resume", str(tmp_path / "m_1")])


@pytest.mark.parametrize("make, what", [
    (os.mkfifo, "a named pipe (FIFO)"),
    (os.mkdir, "a folder"),
    (lambda path: path.symlink_to(path.parent.parent / "elsewhere.npz"), "a symbolic link"),
])
def test_resume_says_what_stands_in_place_of_the_checkpoint(tmp_path, capsys, make, what):
    folder = tmp_path / "alphazero-seed0_1"
    folder.mkdir()
    (tmp_path / "elsewhere.npz").write_bytes(b"")
    make(folder / STATE_FILE)
    line = usage_error(capsys, ["--resume", str(folder)])
    assert line.endswith(f"--resume {folder}: its {STATE_FILE} is {what}, not a regular file: "
                         "train.py saves a regular file there at each checkpoint")


@pytest.mark.parametrize("flags, message", [
    (["--simulations", "0"], "--simulations: value must be an integer >= 1; got 0"),
    (["--simulations", "1.5"], "--simulations: value must be an integer >= 1; got '1.5'"),
    (["--simulations", "20000"], "max_simulations must be an integer from 1 to 10,000"),
    (["--temperature", "-0.5"], "--temperature: value must be a number >= 0; got -0.5"),
    (["--dirichlet-alpha", "0"], "--dirichlet-alpha: value must be a number > 0; got 0.0"),
    (["--noise-fraction", "2"], "noise_fraction must be a number in [0, 1]; got 2.0"),
    (["--eval-minutes", "nan"], "--eval-minutes: value must be a number > 0; got nan"),
])
def test_alphazero_flags_are_checked_in_one_line(capsys, flags, message):
    assert message in usage_error(capsys, ["--algo", "alphazero", *flags])


@pytest.mark.parametrize("flag", ["--simulations 8", "--minutes 5", "--resume x_1",
                                  "--target visits", "--threats"])
def test_alphazero_flags_are_refused_for_other_algorithms(capsys, flag):
    line = usage_error(capsys, ["--algo", "q", *flag.split()])
    assert f"{flag.split()[0]} applies to --algo alphazero only" in line


def test_alphazero_flags_reach_its_settings():
    config = train.parse_args(["--algo", "alphazero", "--dirichlet-alpha", "0.3",
                               "--c-puct", "2", "--channels", "16", "--minutes", "90",
                               "--eval-minutes", "15"])
    settings = az_run.settings_of(config)
    assert (settings.play.dirichlet_alpha, settings.play.c_puct) == (0.3, 2.0)
    assert settings.network.channels == 16 and settings.games_per_round == 64
    assert (config.episodes, config.eval_every, config.minutes, config.eval_minutes) == (
        None, None, 90.0, 15.0)


def test_checkpoints_every_n_minutes_of_training_time(monkeypatch):
    from agents.alphazero import training

    ticks = iter(np.arange(0.0, 10_000.0, 20.0))  # each round takes 20 s of "training"
    monkeypatch.setattr(training.time, "perf_counter", lambda: float(next(ticks)))
    from agents.sb3 import torch_threads

    trainer = Trainer(game.TICTACTOE, SMALL, seed=0)
    seen = []
    with torch_threads(1):
        trainer.train(None, None, lambda policy, games: seen.append(trainer.seconds) or False,
                      minutes=2.5, eval_minutes=1)
    assert seen == [60.0, 120.0, 160.0] and trainer.games == 32  # 8 rounds: 160 s >= 150 s


def test_schedule_needs_a_budget_and_keeps_its_multiples():
    with pytest.raises(ValueError, match="training needs a budget"):
        Schedule(None, 4)
    schedule = Schedule(100, 32, None, 0.5)
    assert schedule.due((30, 0.0), (34, 1.0)) and not schedule.due((34, 1.0), (38, 29.0))
    assert schedule.due((38, 29.0), (42, 31.0)) and schedule.due((96, 40.0), (100, 41.0))


def test_the_long_run_benchmark_starts_resumes_or_only_collects(tmp_path, monkeypatch):
    import argparse

    from benchmarks import alphazero_long as long

    args = argparse.Namespace(board="3x3x3", minutes=1.0, eval_minutes=0.5, resume=True,
                              learning_rate=None)
    fresh = long.command_for(args, 0, tmp_path)
    assert fresh[:2] == ["train.py", "--algo"] and "--minutes" in fresh
    folder = tmp_path / "az-3x3x3-seed0_1"
    folder.mkdir()
    trainer = Trainer(game.TICTACTOE, SMALL)
    trainer.seconds = 30.0
    save_state(folder / STATE_FILE, trainer, {"seed": 0}, 31.0, [])
    assert long.command_for(args, 0, tmp_path)[:3] == ["train.py", "--resume", str(folder)]
    (folder / "results.json").write_text("{}")
    assert long.command_for(args, 0, tmp_path)[:2] == ["train.py", "--resume"]  # 0.5 of 1 min
    args.learning_rate = 0.0002  # a finished run goes on at another rate
    assert long.command_for(args, 0, tmp_path)[-2:] == ["--learning-rate", "0.0002"]
    trainer.seconds = 60.0
    save_state(folder / STATE_FILE, trainer, {"seed": 0}, 61.0, [])
    assert long.command_for(args, 0, tmp_path) is None  # trained its minutes: collected only

    # A resumed benchmark keeps the earlier sittings' commands and starting load in --out.
    out = tmp_path / "out.json"
    out.write_text(json.dumps({"board": "3x3x3", "load_average_at_start": 3.5,
                               "runs": [{"seed": 0, "commands": ["python train.py first"]}]}))
    written = []
    monkeypatch.setattr(long, "watch", lambda command, runs_dir, stem, entry, save:
                        entry["commands"].append("next"))
    monkeypatch.setattr(long.signal, "signal", lambda *handler: None)  # pytest's own, kept
    args = argparse.Namespace(board="3x3x3", minutes=1.0, eval_minutes=0.5, resume=True,
                              seeds=[0], out=out, runs=tmp_path / "runs" / "az",
                              learning_rate=None)
    long.long_runs(args, lambda path, results, quiet=False: written.append(results))
    assert (tmp_path / "runs" / "az").is_dir()  # made for train.py --out, as on a fresh clone
    assert written[-1]["runs"][0]["commands"] == ["python train.py first", "next"]
    assert written[-1]["load_average_at_start"] == 3.5
    assert len(written[-1]["load_averages_at_resume"]) == 1
    # the command the runner knows (alphazero_long is the helper module, not a benchmark)
    assert written[-1]["command"].split()[:4] == ["python", "-m", "benchmarks", "alphazero"]


def test_cpu_seconds_reach_the_curve_and_are_unknown_after_a_state_that_lacked_them(tmp_path):
    from agents.sb3 import torch_threads

    trainer = Trainer(game.TICTACTOE, SMALL, seed=0)
    entries = []
    with torch_threads(1):
        trainer.train(8, 4, lambda policy, games: entries.append(trainer.cpu_seconds))
    assert len(entries) == 2 and 0 < entries[0] < entries[1] == trainer.cpu_seconds
    save_state(tmp_path / STATE_FILE, trainer, {"seed": 0}, 1.0, [])
    # as the states written before it was kept
    old = load_state(_with_header(tmp_path / STATE_FILE, tmp_path / "old.npz",
                                  train_cpu_seconds=None)).trainer
    assert old.cpu_seconds is None
    with torch_threads(1):
        old.train(12, 100)
    assert old.cpu_seconds is None and old.games == 12


def test_samples_count_the_moves_played_and_are_unknown_after_a_state_that_lacked_them(
        tmp_path):
    from agents.sb3 import torch_threads

    trainer = Trainer(game.TICTACTOE, replace(SMALL, buffer_size=200), seed=0)
    with torch_threads(1):
        trainer.train(8, None)
    # a sample a searched move (a random start's stones are not): 1 to 9 a game on 3x3, all
    # still in the buffer
    assert trainer.samples == trainer.buffer.size and 8 < trainer.samples <= 8 * 9
    save_state(tmp_path / STATE_FILE, trainer, {"seed": 0}, 1.0, [])
    assert load_state(tmp_path / STATE_FILE).trainer.samples == trainer.samples
    # as the states written before it was kept
    old = load_state(_with_header(tmp_path / STATE_FILE, tmp_path / "old.npz",
                                  samples=None)).trainer
    with torch_threads(1):
        old.train(12, None)
    assert old.samples is None and old.games == 12
    with pytest.raises(ValueError, match="samples must be an integer >= 0"):
        load_state(_with_header(tmp_path / STATE_FILE, tmp_path / "bad.npz", samples=-1))


def _with_header(state_file, out, **changes):
    """``out``: a copy of ``state_file`` whose header has ``changes`` (None: the key removed)."""
    with np.load(state_file) as state:
        arrays = dict(state)
    header = json.loads(str(arrays["state"]))
    for key, value in changes.items():
        if value is None:
            del header[key]
        else:
            header[key] = value
    arrays["state"] = np.array(json.dumps(header))
    np.savez(out, **arrays)
    return out
