"""train.py end to end on tiny budgets, and `python -m gym_tictactoe evaluate` on its output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gym_tictactoe import cli

ROOT = Path(__file__).resolve().parents[1]
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
    assert sorted(p.name for p in run.iterdir()) == ["learning_curve.png", model, "results.json"]
    return results


def test_tabular_run_writes_model_results_and_curve(tmp_path):
    done = run_train("--episodes", "600", "--eval-every", "200", "--seed", "3", "--games", "10",
                     "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    results = check_run(tmp_path / "q-seed3", "model.npz", "episodes")
    assert [e["episodes"] for e in results["learning_curve"]] == [200, 400, 600]
    assert "optimal-move rate" in done.stdout and "best response, policy as X" in done.stdout

    assert cli.main(["evaluate", str(tmp_path / "q-seed3" / "model.npz"), "--games", "5"]) == 0


def test_maskable_ppo_smoke_run(tmp_path, capsys):
    done = run_train("--algo", "maskable-ppo", "--timesteps", "256", "--n-envs", "2",
                     "--eval-every", "128", "--seed", "3", "--games", "10", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    check_run(tmp_path / "maskable-ppo-seed3", "model.zip", "timesteps")
    assert cli.main(["evaluate", str(tmp_path / "maskable-ppo-seed3" / "model.zip"),
                     "--games", "5"]) == 0
    assert "maskable-ppo model" in capsys.readouterr().out


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
        (["--seed", "-1"], "expected a non-negative integer, got '-1'"),
        (["--name", ".."], "--name must be a plain folder name"),
        (["--out", "/no/such/folder/runs"], "its parent folder /no/such/folder does not exist"),
    ],
)
def test_bad_arguments_exit_with_a_usage_message(args, message):
    done = run_train(*args)
    assert done.returncode == 2
    assert "usage: train.py" in done.stderr and message in done.stderr
    assert "Traceback" not in done.stderr


def test_evaluate_refuses_foreign_files_clearly(tmp_path, capsys):
    junk = tmp_path / "model.npz"
    junk.write_bytes(b"not a model at all")
    assert cli.main(["evaluate", str(junk)]) == 2
    assert "is not a model file" in capsys.readouterr().err
    assert cli.main(["evaluate", str(tmp_path / "missing.zip")]) == 2
    assert "no model file at" in capsys.readouterr().err


def test_the_default_run_reaches_perfect_play_where_the_readme_says(tmp_path):
    # README "Measured figures": seed 0 is perfect at 34,000 episodes.
    done = run_train("--seed", "0", "--games", "10", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "perfect play reached at 34,000 episodes" in done.stdout
