"""train.py end to end on tiny budgets, and `python -m gym_tictactoe evaluate` on its output."""

import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from missing_packages import run_without

from gym_tictactoe import cli

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "train.py"), "--no-progress", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def check_run(run: Path, model: str, clock: str) -> dict:
    assert (run / model).is_file()
    assert (run / "learning_curve.png").read_bytes()[:8] == PNG_MAGIC
    results = json.loads((run / "results.json").read_text())
    assert results["seed"] == 3 and results["versions"]["gymnasium"]
    assert set(results["best_response"]) == {"X", "O"}
    assert 0.0 <= results["optimal_move_rate"] <= 1.0 and results["positions"] == 4520
    assert set(results["results"]) == {"random", "heuristic", "minimax"}
    assert all(r["wins"] + r["draws"] + r["losses"] == 10
               for seats in results["results"].values() for r in seats.values())
    assert results["learning_curve"] and all(clock in e for e in results["learning_curve"])
    # One encoding of results: the curve's seats read like the best response's.
    outcomes = {"win", "draw", "loss"}
    assert all({e["X"], e["O"]} <= outcomes for e in results["learning_curve"])
    assert {r["result"] for r in results["best_response"].values()} <= outcomes
    assert sorted(p.name for p in run.iterdir()) == ["learning_curve.png", model, "results.json"]
    return results


def test_tabular_run_writes_model_results_and_curve(tmp_path):
    done = run_train("--episodes", "600", "--eval-every", "200", "--seed", "3", "--games", "10",
                     "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    results = check_run(tmp_path / "q-seed3_1", "model.npz", "episodes")
    assert [e["episodes"] for e in results["learning_curve"]] == [200, 400, 600]
    assert "optimal-move rate" in done.stdout and "best response, policy as X" in done.stdout
    assert done.stdout.index("evaluating exactly") < done.stdout.index("optimal-move rate:")
    # Without a progress bar each checkpoint says what it found, on 3x3 too.
    assert "exact evaluation at 200 episodes (3x3x3)…\n  optimal-move rate" in done.stdout
    # The opponent actually trained against, and only the settings that applied to Q-learning.
    config = results["config"]
    assert config["opponent"] == "epsilon:epsilon=0.4" and config["episodes"] == 600
    assert config["eval_every"] == 200 and config["hyperparameters"]["seed"] == 3
    assert not {"timesteps", "n_envs", "no_progress"} & set(config)
    # Exploring starts by default, as for every agent; no canonical boards (SB3's option).
    assert config["env_options"] == {"start": "random", "start_probability": 0.75}
    # Uniform starts and a fixed learning-rate floor unless --focus-share or --alpha-end.
    assert config["focus"]["share"] == 0.0 and config["alpha_schedule"] is None
    # Every value of agents/hyperparams/q.yml's entry, the flags' among them; no torch device.
    assert config["hyperparams"]["entry"] == "default" and "device" not in config
    assert config["hyperparams"]["from_flags"] == ["episodes", "eval_every"]
    assert config["hyperparams"]["values"]["opponent"] == "epsilon:epsilon=0.4"

    assert cli.main(["evaluate", str(tmp_path / "q-seed3_1" / "model.npz"), "--games", "5"]) == 0


def test_maskable_ppo_smoke_run(tmp_path, capsys):
    done = run_train("--algo", "maskable-ppo", "--timesteps", "256", "--n-envs", "2",
                     "--eval-every", "128", "--seed", "3", "--games", "10", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    results = check_run(tmp_path / "maskable-ppo-seed3_1", "model.zip", "timesteps")
    config = results["config"]
    assert config["opponent"] == "epsilon:epsilon=0.2" and config["timesteps"] == 256
    assert config["n_envs"] == 2 and config["eval_every"] == 128 and "episodes" not in config
    assert config["device"] == "cpu" and config["hyperparams"]["values"]["n_envs"] == 2
    assert config["hyperparams"]["file"] == "agents/hyperparams/maskable-ppo.yml"
    # The defaults: canonical boards and exploring starts on three quarters of the episodes.
    assert config["env_options"] == {"canonical": True, "start": "random",
                                     "start_probability": 0.75}
    assert "evaluating exactly" in done.stdout
    assert cli.main(["evaluate", str(tmp_path / "maskable-ppo-seed3_1" / "model.zip"),
                     "--games", "5"]) == 0
    assert "maskable-ppo model" in capsys.readouterr().out
    from agents.models import load_policy

    loaded, _ = load_policy(tmp_path / "maskable-ppo-seed3_1" / "model.zip")
    assert loaded.canonical is True  # the model file says how to show it boards


def test_tabular_self_play_run_records_its_pool(tmp_path):
    done = run_train("--opponent", "self", "--episodes", "2000", "--refresh-every", "500",
                     "--mix", "minimax", "--seed", "3", "--games", "10", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["q-self-play-seed3_1"]  # named apart
    results = check_run(tmp_path / "q-self-play-seed3_1", "model.npz", "episodes")
    assert results["config"]["opponent"] == "self"
    assert results["config"]["self_play"] == {
        "pool": 5, "refresh_every": 500, "mix": "minimax", "mix_share": 0.2,
        "snapshot_files": [], "snapshots_taken": 4}
    assert [entry["episodes"] for entry in results["learning_curve"]] == [1000, 2000]


def test_self_play_starts_from_snapshot_files_of_its_own_board_only(tmp_path):
    from agents.tabular.q_learning import QLearningAgent

    small = QLearningAgent(seed=0).save(tmp_path / "small.npz")
    big = QLearningAgent(rows=3, cols=4, win_length=3).save(tmp_path / "big.npz")
    done = run_train("--opponent", "self", "--snapshot", str(big), "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"snapshot {big} plays the 3x4x3 board; this pool is for the 3x3x3 board" in \
        done.stderr
    assert not (tmp_path / "r").exists()
    done = run_train("--opponent", "self", "--snapshot", str(small), "--episodes", "1000",
                     "--refresh-every", "500", "--seed", "3", "--games", "10",
                     "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    run = tmp_path / "r" / "q-self-play-seed3_1"
    config = json.loads((run / "results.json").read_text())["config"]
    assert config["self_play"]["snapshot_files"] == [str(small)]
    assert config["self_play"]["snapshots_taken"] == 3  # the file, then two of its own


def test_env_options_follow_the_flags(tmp_path):
    from agents import EXPLORING_STARTS
    from agents.run.config import env_options
    from train import parse_args

    defaults = {"canonical": True, "start": "random", "start_probability": 0.75}
    cases = {("--no-canonical", "--start", "empty"): {"canonical": False, "start": "empty"},
             ("--start-probability", "1"): {**defaults, "start_probability": 1.0},
             (): defaults}
    for flags, expected in cases.items():
        args = parse_args(["--algo", "dqn", *flags, "--out", str(tmp_path)])
        assert env_options(args, defaults) == expected
    # Q-learning takes --start and --start-probability too, and has no canonical option.
    for flags, expected in {("--start", "empty"): {"start": "empty"},
                            ("--start-probability", "0.5"): {**EXPLORING_STARTS,
                                                             "start_probability": 0.5},
                            (): EXPLORING_STARTS}.items():
        args = parse_args([*flags, "--out", str(tmp_path)])
        assert env_options(args, EXPLORING_STARTS) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--algo", "sarsa"], "invalid choice: 'sarsa'"),
        (["--timesteps", "ten"], "expected a positive integer, got 'ten'"),
        (["--episodes", "0"], "expected a positive integer, got '0'"),
        (["--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["--algo", "dqn", "--episodes", "10"], "--episodes does not apply to --algo dqn"),
        (["--timesteps", "10"], "--timesteps does not apply to --algo q"),
        (["--opponent", "perfect"], "unknown opponent 'perfect'"),
        (["--opponent", "random*inf+minimax"], "bad weight 'inf'"),
        (["--seed", "-1"], "expected a seed, an integer with 0 <= seed < 2**32; got '-1'"),
        (["--algo", "ppo", "--seed", "4294967296"], "0 <= seed < 2**32; got '4294967296'"),
        (["--algo", "alphazero", "--n-envs", "4"], "--n-envs does not apply to --algo alphazero"),
        (["--n-envs", "5478275"], "--n-envs (boards trained at once) must be at most "
         "5,478,274 on 3x3x3 (a 4 GiB memory budget for the boards and the learner); got "
         "5,478,275"),
        (["--no-canonical"], "--canonical does not apply to --algo q"),
        (["--algo", "ppo", "--focus-share", "0.5"],
         "--focus-share applies to --algo q and alphazero"),
        (["--algo", "dqn", "--start", "middle"], "invalid choice: 'middle'"),
        (["--algo", "dqn", "--start-probability", "1.5"], "expected a probability, a number "
         "in [0, 1]; got '1.5'"),
        (["--pool", "3"], "--pool applies to self-play only (--opponent self)"),
        (["--opponent", "minimax", "--mix", "random"], "--mix applies to self-play only"),
        (["--opponent", "self", "--mix-share", "0.3"], "--mix-share needs --mix"),
        (["--opponent", "self", "--mix", "minimax", "--mix-share", "1"],
         "--mix-share must be strictly between 0 and 1; got 1.0"),
        (["--opponent", "self", "--mix", "perfect"], "unknown opponent 'perfect'"),
        (["--opponent", "self", "--refresh-every", "0"], "expected a positive integer, got '0'"),
        (["--algo", "dqn", "--start", "empty", "--start-probability", "0.5"],
         "--start-probability applies to --start random only"),
        (["--name", "n" * 300], "--name is 300 bytes long; a folder name has at most 255, and the "
         "run number and temporary name need 26 of them: at most 229"),
        (["--name", ".."], "--name must be a plain folder name"),
        (["--name", "run\x1b[31mred"], "--name must be printable: no control characters such "
         "as a newline or an escape; got 'run\\x1b[31mred'"),
        (["--name", "two\nlines"], "--name must be printable"),
        (["--out", "/no/such/folder/runs"], "its parent folder /no/such/folder does not exist"),
    ],
)
def test_bad_arguments_exit_with_a_usage_message(args, message, tmp_path):
    out = [] if "--out" in args else ["--out", str(tmp_path / "runs")]
    done = run_train(*args, *out)
    assert done.returncode == 2
    assert "usage: train.py" in done.stderr and message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()  # checked before anything is created


def test_evaluate_refuses_foreign_files_clearly(tmp_path, capsys):
    junk = tmp_path / "model.npz"
    junk.write_bytes(b"not a model at all")
    assert cli.main(["evaluate", str(junk)]) == 2
    assert "is not a model file" in capsys.readouterr().err
    assert cli.main(["evaluate", str(tmp_path / "missing.zip")]) == 2
    assert "no model file at" in capsys.readouterr().err


def test_the_default_run_reaches_perfect_play_where_the_readme_says(tmp_path):
    # README "Measured figures": seed 0 is perfect at 28,000 episodes.
    done = run_train("--seed", "0", "--games", "10", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "perfect play reached at 28,000 episodes" in done.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's virtual file systems")
@pytest.mark.parametrize("out", ["/proc/x", "/sys/kernel"])
def test_an_out_folder_nothing_can_be_written_to_is_one_line(out):
    done = run_train("--episodes", "10", "--out", out)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"train.py: error: cannot create a run folder in {out}: "
        + done.stderr.split(": ")[-1].strip()]


def test_a_numbered_name_taken_by_a_file_is_skipped_and_kept(tmp_path):
    (tmp_path / "taken_1").write_text("mine")
    done = run_train("--episodes", "100", "--games", "2", "--out", str(tmp_path),
                     "--name", "taken")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "taken_1").read_text() == "mine"
    assert (tmp_path / "taken_2" / "results.json").is_file()


def load_train_module(monkeypatch):
    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("failure", [RuntimeError("boom"), KeyboardInterrupt()])
def test_a_failed_run_leaves_no_folder(tmp_path, monkeypatch, failure):
    from agents.run import training as run

    train = load_train_module(monkeypatch)

    def fail(config, checkpoint, pool):
        # Its temporary folder exists, then the run fails.
        assert [p.suffix for p in out.iterdir() if p.name.startswith(".")] == [".partial"]
        raise failure

    monkeypatch.setitem(run.TRAINERS, "q", fail)
    out = tmp_path / "runs"
    for before in ([], ["q-seed0_1"]):  # a folder that was there before stays
        for name in before:
            (out / name).mkdir(parents=True)
        if isinstance(failure, KeyboardInterrupt):  # Ctrl-C: one line, exit 130
            assert train.main(["--no-progress", "--out", str(out)]) == 130
        else:  # a bug keeps its traceback
            with pytest.raises(type(failure)):
                train.main(["--no-progress", "--out", str(out)])
        assert sorted(p.name for p in out.iterdir()) == before if before else not out.exists()


def test_without_tqdm_the_progress_bar_names_the_extra(tmp_path):
    done = run_without("tqdm", "train.py", "--episodes", "10", "--out", str(tmp_path / "runs"))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "train.py: error: the progress bar (hide it with --no-progress) needs tqdm, which is "
        'not installed: pip install ".[train]" in a clone of gym-tictactoe']
    assert not (tmp_path / "runs").exists()


def test_without_matplotlib_the_run_still_writes_and_prints_its_results(tmp_path):
    done = run_without("matplotlib", "train.py", "--no-progress", "--episodes", "200",
                       "--games", "5", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        "train.py: warning: no learning_curve.png: the learning-curve plot needs matplotlib, "
        'which is not installed: pip install ".[train]" in a clone of gym-tictactoe']
    assert "optimal-move rate" in done.stdout and "perfect play" in done.stdout
    assert sorted(p.name for p in (tmp_path / "q-seed0_1").iterdir()) == ["model.npz",
                                                                          "results.json"]


def test_without_torch_an_sb3_algorithm_names_the_extra(tmp_path):
    done = run_without("torch", "train.py", "--algo", "ppo", "--out", str(tmp_path / "runs"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        'train.py: error: --algo ppo needs torch, which is not installed: pip install ".[sb3]"')
    assert not (tmp_path / "runs").exists()


def test_train_on_another_board_names_it_and_refuses_unsolvable_ones(tmp_path):
    from train import parse_args

    args = parse_args(["--algo", "dqn", "--board", "3x4x3", "--out", str(tmp_path)])
    assert args.board.name == "3x4x3" and args.name == "dqn-3x4x3-seed0"
    with pytest.raises(SystemExit):
        parse_args(["--board", "5x5x4", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        parse_args(["--board", "4x4x5", "--out", str(tmp_path)])


def test_on_13_to_16_cells_evaluations_come_every_100000_episodes_or_timesteps(tmp_path):
    from train import parse_args

    # 3x5x3: no entry of its own in agents/hyperparams/q.yml (4x4x3's gives 2,000,000)
    assert parse_args(["--board", "3x5x3", "--out", str(tmp_path)]).eval_every == 100_000
    assert parse_args(["--algo", "dqn", "--board", "4x4x3",
                       "--out", str(tmp_path)]).eval_every == 100_000
    assert parse_args(["--out", str(tmp_path)]).eval_every == 1000
    assert parse_args(["--algo", "dqn", "--out", str(tmp_path)]).eval_every == 10_000


@pytest.mark.parametrize(("algo", "budget", "clock"),
                         [("q", ["--episodes", "200"], "episodes"),
                          ("dqn", ["--timesteps", "256", "--n-envs", "2"], "timesteps")])
def test_evaluations_on_boards_over_12_cells_are_announced(tmp_path, algo, budget, clock):
    """There one takes seconds, and the progress bar stands still meanwhile: a line says why."""
    every = "100" if algo == "q" else "128"
    done = run_train("--algo", algo, "--board", "1x13x4", *budget, "--eval-every", every,
                     "--games", "5", "--seed", "3", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first = lines.index(f"exact evaluation at {int(every):,} {clock} (1x13x4)…")
    assert lines[first + 1].startswith("  optimal-move rate ")
    assert "best response: as X" in lines[first + 1]


def test_the_announcer_writes_above_the_progress_bar_on_big_boards_only(tmp_path, monkeypatch):
    from agents.run.training import announcer
    from train import parse_args

    class Buffered(io.StringIO):  # stdout into a file: nothing shows until a flush
        flushed = ""

        def flush(self) -> None:
            self.flushed = self.getvalue()

    assert announcer(parse_args(["--out", str(tmp_path)])) is None
    say = announcer(parse_args(["--board", "1x13x4", "--out", str(tmp_path)]))
    monkeypatch.setattr(sys, "stdout", Buffered())
    say("exact evaluation at 1,000 episodes")
    assert sys.stdout.flushed == "exact evaluation at 1,000 episodes\n"
    monkeypatch.undo()
    plain = announcer(parse_args(["--board", "1x13x4", "--no-progress", "--out", str(tmp_path)]))
    assert plain.func is print
    # Without a bar, on 3x3 too: a DQN run there was silent for minutes.
    assert announcer(parse_args(["--algo", "dqn", "--no-progress", "--out", str(tmp_path)])
                     ).func is print
