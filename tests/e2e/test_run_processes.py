"""train.py's run folders as a separate process (moved from tests/agents/test_run.py): two runs
at once, the help, a usage error, and the one SB3 run past 16 cells."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from train_helpers import TINY

from agents.run.folder import run_folders

ROOT = Path(__file__).resolve().parents[2]


def test_two_runs_at_once_each_keep_their_own_files(tmp_path):
    """Issue 16.6: two runs of one name at once once mixed their results.json and model. About
    6 s: two train.py processes, long enough to overlap."""
    from agents.tabular.q_learning import QLearningAgent
    from gym_tictactoe.evaluation import evaluate

    runs = [subprocess.Popen([sys.executable, str(ROOT / "train.py"), *TINY, "--episodes",
                              "1500", "--opponent", opponent, "--out", str(tmp_path)],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
            for opponent in ("random", "heuristic")]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()
    folders = run_folders(tmp_path, "q-seed0")
    assert [f.name for f in folders] == ["q-seed0_1", "q-seed0_2"]
    opponents = set()
    for folder in folders:
        results = json.loads((folder / "results.json").read_text())
        opponents.add(results["config"]["opponent"])
        assert results["config"]["run_dir"] == str(folder)
        agent = QLearningAgent.load(folder / "model.npz")
        assert evaluate(agent).move_rate.rate == results["optimal_move_rate"]
    assert opponents == {"random", "heuristic"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_help_documents_the_exit_codes_and_numbering():
    done = subprocess.run([sys.executable, str(ROOT / "train.py"), "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    text = " ".join(done.stdout.split())
    assert "OUT/NAME_N" in text and "rl_zoo3" in text
    assert "1 an optional dependency missing, 2 a usage error, 3 the run's files could not " \
           "be written" in text


def test_q_learning_on_a_board_too_big_to_tabulate_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "train.py"), "--board", "6x6x4",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert ("tabular Q-learning (a table of every position) needs a board of at most 16 cells; "
            "6x6x4 has 36: train there with --algo maskable-ppo, ppo, dqn, alphazero"
            in done.stderr)
    assert "alphabeta" not in done.stderr  # once it named an opponent, not a way to train
    assert not list(tmp_path.iterdir())


# About 15 s on a busy 2-core machine (SB3's import, three checkpoints of 80 games): kept as
# the one run of train.py past 16 cells, where nothing is solved.
def test_an_sb3_agent_trains_and_reports_on_6x6x4_by_seeded_games(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--no-progress", "--algo", "maskable-ppo",
         "--board", "6x6x4", "--timesteps", "256", "--n-envs", "2", "--eval-every", "128",
         "--games", "2", "--seed", "3", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "games at 128 timesteps (6x6x4): 20 per seat against each of random, heuristic" \
        in done.stdout
    folder = tmp_path / "maskable-ppo-6x6x4-seed3_1"
    results = json.loads((folder / "results.json").read_text())
    assert results["config"]["opponent"] == "epsilon:epsilon=0.2,inner=heuristic"
    assert set(results["results"]) == {"random", "heuristic"}
    assert "perfect_at_timesteps" not in results and "best_response" not in results
    curve = results["learning_curve"]
    assert [entry["timesteps"] for entry in curve] == [128, 256]
    for entry in curve:
        assert entry["games"] == 20 and set(entry["scores"]) == {"random", "heuristic"}
        assert all(-1 <= score <= 1 for seats in entry["scores"].values()
                   for score in seats.values())
    assert (folder / "learning_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert (folder / "model.zip").is_file()
