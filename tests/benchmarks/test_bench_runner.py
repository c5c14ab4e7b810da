"""``python -m benchmarks``: one runner for every benchmark, a list without a name, one line for
an unknown one, and the command a results file records (old ones shown as the runner's)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from bench_helpers import benchmark_module

from benchmarks import BENCHMARKS
from benchmarks.__main__ import main

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks"


def test_every_module_with_a_main_is_listed_and_nothing_else():
    runnable = {path.stem for path in FOLDER.glob("*.py") if not path.stem.startswith("_")
                and any(isinstance(node, ast.FunctionDef) and node.name == "main"
                        for node in ast.parse(path.read_text()).body)}
    assert runnable == set(BENCHMARKS) and len(runnable) > 15


def test_without_a_name_it_lists_each_benchmark_on_one_line(capsys):
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, about in BENCHMARKS.items():
        assert sum(line.split()[:1] == [name] and line.endswith(about) for line in lines) == 1


def test_an_unknown_name_is_one_line_naming_the_allowed_ones(capsys):
    assert main(["sped"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "'sped'" in err and "speed, tables" in err


def test_a_benchmark_s_usage_names_the_runner(capsys):
    with pytest.raises(SystemExit):
        main(["tables", "--no-such-flag"])
    assert capsys.readouterr().err.startswith("usage: python -m benchmarks tables ")


def test_the_recorded_command_is_the_runner_s_and_old_ones_are_shown_so():
    commands = benchmark_module("commands")
    assert (commands.command_line("benchmarks.q_seeds", ["--seeds", "0", "1"])
            == "python -m benchmarks q_seeds --seeds 0 1")
    # a path inside the checkout is recorded from its root, one outside as it was given
    run = commands.ROOT / "runs" / "big" / "model.npz"
    assert (commands.command_line("benchmarks.elo", ["--model", f"{run}:simulations=100",
                                                     f"--out={commands.ROOT}/x.json",
                                                     "--log", "/elsewhere/log.txt"])
            == "python -m benchmarks elo --model runs/big/model.npz:simulations=100 "
               "--out=x.json --log /elsewhere/log.txt")
    old = {"command": "python benchmarks/q_seeds.py --seeds 0 1 --out x.json"}
    assert commands.recorded(old) == "`python -m benchmarks q_seeds --seeds 0 1`"
    assert commands.recorded({"command": "python train.py --seed 1"}) == (
        "`python train.py --seed 1`")


@pytest.mark.e2e
def test_a_child_benchmark_runs_from_any_folder(tmp_path):
    """The workers the fuzz, proof and 4x4 Q benchmarks start find the package from elsewhere."""
    command, env = benchmark_module("commands").child("no_such_benchmark")
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "unknown benchmark 'no_such_benchmark'" in done.stderr
