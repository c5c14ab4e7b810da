"""The scripts in examples/ (issue 19), each run as a user runs it, on a tiny budget (``--tiny``),
seeded: they must train without error and end with the exact evaluation's line. Each takes a few
seconds (most of it importing torch and TorchRL); kept because nothing else notices when a
library's API moves under an example."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from missing_packages import run_without

REPO = Path(__file__).resolve().parents[2]
LINE = re.compile(r"best response as X: (win|draw|loss), as O: (win|draw|loss); "
                  r"optimal-move rate (\d+\.\d\d)%; perfect: (True|False)$")
EXAMPLES = {  # script: (the modules it needs, in the order it imports them, what its last line
    # says it trained for)
    "dqn_vector.py": (("torch", "tyro"), "after 2,000 timesteps"),
    "torchrl_aec.py": (("torch", "tyro", "tensordict", "torchrl", "pettingzoo"),
                       "after 1,000 moves"),
}


def run_example(script: str, *argv: str) -> subprocess.CompletedProcess:
    # PYTHONPATH: this checkout's package, whatever copy the environment has installed.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, str(REPO / "examples" / script), *argv], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_each_example_trains_on_a_tiny_budget_and_evaluates_exactly(script):
    modules, budget = EXAMPLES[script]
    for module in modules:
        pytest.importorskip(module, reason='the examples extra: pip install ".[examples]"')
    done = run_example(script, "--tiny", "--seed", "0")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(budget), last
    match = LINE.search(last)
    assert match, last
    assert 0 < float(match[3]) <= 100
    assert done.stderr == ""  # no library warning or log line leaks into a user's terminal


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["--num-envs", "0"], 1, "--num-envs must be at least 1; got 0"),
    (["--opponent", "grandmaster"], 1, "bad setting: "),
])
def test_a_bad_setting_is_one_clear_error(argv, code, message):
    pytest.importorskip("tyro", reason='the examples extra: pip install ".[examples]"')
    pytest.importorskip("torch", reason='the examples extra: pip install ".[examples]"')
    done = run_example("dqn_vector.py", *argv)
    assert done.returncode == code and "Traceback" not in done.stderr
    assert message in done.stderr


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_examples_extra_has_what_they_import_and_make_test_installs_it():
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as file:
        extras = tomllib.load(file)["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[;]", requirement)[0].strip() for requirement in extras["examples"]}
    assert {"torch", "torchrl", "tyro"} <= names
    assert "multiagent" in next(r for r in extras["examples"] if r.startswith("gymnasium-"))
    installs = re.findall(r'-e "\.\[([a-z,]+)\]"', (REPO / "Makefile").read_text())
    assert any({"all", "dev", "examples"} <= set(extras.split(",")) for extras in installs)


@pytest.mark.parametrize(("script", "package"), [
    ("dqn_vector.py", "tyro"), ("torchrl_aec.py", "torchrl"), ("torchrl_aec.py", "pettingzoo"),
])
def test_without_the_extra_an_example_says_what_to_install(script, package):
    modules = EXAMPLES[script][0]
    for module in modules[:modules.index(package)]:  # missing, it would be named instead
        pytest.importorskip(module, reason='the examples extra: pip install ".[examples]"')
    done = run_without(package, f"examples/{script}", "--tiny")
    assert done.returncode == 1
    assert done.stderr.strip() == (f'{package} is not installed: pip install ".[examples]" '
                                   "-c constraints.txt in a clone of gym-tictactoe")
