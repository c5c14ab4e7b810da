"""What the two make commands install: `make train` the core and the `train` extra, never torch;
`make test` everything, with PyTorch's CPU index only when TORCH_INDEX names it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(target: str, *variables: str) -> list[str]:
    """The commands ``make TARGET`` would run from a fresh clone (``-n``: printed, not run)."""
    done = subprocess.run(["make", "--no-print-directory", "-n", "-B", target, *variables],
                          cwd=ROOT, env=outside_make(), capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout.splitlines()


def outside_make() -> dict[str, str]:
    """The environment without what a calling make passes down (as under `make test`)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def installs(commands: list[str]) -> list[str]:
    return [line for line in commands if "pip install" in line and "--upgrade pip" not in line]


def extras() -> dict[str, list[str]]:
    import tomllib  # Python 3.11+

    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["project"]["optional-dependencies"]


def test_make_train_installs_the_core_and_the_train_extra_only():
    [install] = installs(planned("train"))
    assert '-e ".[train]"' in install and "[all" not in install and "sb3" not in install
    assert "train.py" in planned("train")[-1]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_train_extra_brings_no_torch():
    names = {requirement.split(">")[0].split("=")[0].strip() for requirement in extras()["train"]}
    assert names == {"tqdm", "matplotlib"}
    assert not any("torch" in r or "stable-baselines3" in r for r in extras()["train"])


def test_make_test_installs_everything_with_the_torch_pin():
    [install] = installs(planned("test"))
    assert '-e ".[all,dev,docs,examples,distributed]"' in install
    assert "-c constraints.txt" in install
    assert "--extra-index-url" not in install  # the default: what works on the dev machine
    assert (ROOT / "constraints.txt").read_text().count("torch==2.13.0") == 1


def test_make_test_runs_the_docs_code_blocks_and_builds_the_site_strictly():
    import tomllib

    commands = planned("test")
    assert any("mkdocs build --strict" in line for line in commands)
    with open(ROOT / "pyproject.toml", "rb") as file:
        pytest_options = tomllib.load(file)["tool"]["pytest"]["ini_options"]
    assert "--markdown-docs" in pytest_options["addopts"]
    assert {"README.md", "docs"} <= set(pytest_options["testpaths"])


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_make_test_checks_the_types_with_a_pinned_mypy_strict_about_none():
    import tomllib

    assert ".venv/bin/python -m mypy" in planned("test")  # fails make test on any error
    assert "mypy==2.4.1" in extras()["dev"]
    with open(ROOT / "pyproject.toml", "rb") as file:
        config = tomllib.load(file)["tool"]["mypy"]
    assert {"gym_tictactoe", "agents", "train.py", "benchmarks"} <= set(config["files"])
    assert config["check_untyped_defs"] and config["warn_unused_ignores"]
    assert config.get("strict_optional", True) and config["no_implicit_optional"]
    assert "ignore_missing_imports" not in config  # only per module, for packages without types


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_packages_ship_py_typed():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as file:
        package_data = tomllib.load(file)["tool"]["setuptools"]["package-data"]
    for package in ("gym_tictactoe", "agents"):
        assert package_data[package] == ["py.typed"]
        assert (ROOT / package / "py.typed").is_file()


def test_torch_index_adds_pytorchs_cpu_index():
    [install] = installs(planned("test", f"TORCH_INDEX={CPU_INDEX}"))
    assert f"--extra-index-url {CPU_INDEX}" in install and "-c constraints.txt" in install


def test_make_play_needs_no_torch_either():
    [install] = installs(planned("play"))
    assert '-e ".[train]"' in install


@pytest.mark.parametrize(("target", "size"), [("train", "about 0.4 GB"), ("test", "about 2.2 GB")])
def test_each_quiet_install_is_announced_with_what_and_how_much(target, size):
    # pip -q was silent for minutes on a fresh `make test`: a line first says what comes.
    commands = planned(target)
    first = commands.index(installs(commands)[0])
    announced = " ".join(commands[:first])
    assert "Installing gym-tictactoe" in announced and size in announced
    assert "quiet" in announced


@pytest.mark.parametrize("target", ["train", "test", "play", "bench"])
def test_every_install_is_quiet(target):
    # Without -q a fresh `make train` printed about 150 lines of pip's progress.
    commands = installs(planned(target))
    assert commands and all(" -q " in command for command in commands)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_license_is_an_spdx_string_which_the_required_setuptools_reads():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as file:
        pyproject = tomllib.load(file)
    # A TOML table here makes setuptools 77+ print a deprecation warning on every install;
    # a plain SPDX string needs 77 or later (PEP 639).
    assert pyproject["project"]["license"] == "MIT"
    assert pyproject["build-system"]["requires"] == ["setuptools>=77"]
