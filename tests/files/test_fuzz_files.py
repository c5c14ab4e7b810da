"""The seeded mutation fuzz of ``benchmarks/fuzz.py`` at a test's size: mutants of each of the
five kinds of file the project reads (the Q-table, SB3 and AlphaZero models, an AlphaZero
``checkpoint.npz``, a solved board's cache file), from one library (``benchmarks/mutants.py``:
damaged bytes and members, .npy headers of other shapes and dtypes, NaN, inf and 1e308 in float
arrays and JSON fields). Each must be refused in one line by its loader or load into something
usable (``benchmarks/fuzz_targets.py``), without a warning, a hang (an alarm) or Python
allocations beyond ``PEAK_BYTES`` (tracemalloc); the benchmark runs 1,000 of each under a
memory cap. Two kinds of mutant that escaped until issue 29 have tests of their own (items 1
and 10), as have the escapes the fuzz itself found.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from zip_helpers import bounded

SEED = 29  # not the benchmark's 0: the tests and the benchmark cover different mutants
COUNTS = {"q": 30, "sb3": 30, "alphazero": 40, "checkpoint": 40, "cache": 60}
PEAK_BYTES = 64 * 2**20  # the originals: a 1.4 MB Q-table twice, a few KB for the others
HANG_SECONDS = 30


@pytest.fixture(scope="module")
def fuzz() -> SimpleNamespace:
    """benchmarks/mutants.py and fuzz_targets.py, imported as the benchmark imports them."""
    from benchmarks import fuzz as benchmark
    from benchmarks import fuzz_targets, mutants

    return SimpleNamespace(benchmark=benchmark, targets=fuzz_targets, mutants=mutants, made={})


def original(fuzz: SimpleNamespace, name: str, folder: Path) -> tuple:
    """The target, its original object and the original file's bytes (made once a module)."""
    if name not in fuzz.made:
        if name == "sb3":
            pytest.importorskip("sb3_contrib")
        elif name in ("alphazero", "checkpoint"):
            pytest.importorskip("torch")
        target = fuzz.targets.TARGETS[name]
        made = target.make(folder)
        fuzz.made[name] = (target, made, (folder / target.file_name).read_bytes())
    return fuzz.made[name]


def attempt(fuzz: SimpleNamespace, name: str, mutant: bytes, folder: Path) -> tuple[str, str]:
    target, made, _ = original(fuzz, name, folder)
    path = folder / "mutant" / target.file_name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(mutant)
    with bounded(path, PEAK_BYTES, HANG_SECONDS):
        return fuzz.targets.attempt(target, path, made)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COUNTS))
def test_every_mutant_is_refused_in_one_line_or_loads_usable(fuzz, tmp_path, name):
    data = original(fuzz, name, tmp_path)[2]
    seen: Counter[str] = Counter()
    escapes = []
    for index, (mutator, mutant) in enumerate(fuzz.mutants.mutants(data, COUNTS[name], SEED)):
        outcome, detail = attempt(fuzz, name, mutant, tmp_path)
        seen[outcome] += 1
        seen[mutator] += 1
        if outcome == "escaped":
            escapes.append(f"#{index} ({mutator}): {detail}")
    assert escapes == []
    # The mutants reach both answers, and the values: non-finite payloads are among them.
    assert seen["refused"] >= COUNTS[name] // 2 and seen["loaded"] >= 1, seen
    assert seen["non_finite"] + seen["json_non_finite"] >= 3 or name == "alphazero", seen


def test_the_benchmark_loads_each_mutant_in_a_worker_and_writes_only_where_told(fuzz, tmp_path,
                                                                              capsys):
    out = tmp_path / "fuzz.json"
    assert fuzz.benchmark.main(["--targets", "cache", "--count", "12", "--out", str(out)]) == 0
    found = json.loads(out.read_text())["targets"]["cache"]
    assert found["mutants"] == sum(found["outcomes"].values()) == 12 and found["escapes"] == []
    assert capsys.readouterr().out.splitlines()[-2:] == ["0 of 12 mutants escaped",
                                                         f"results written to {out}"]
    with pytest.raises(SystemExit):
        fuzz.benchmark.main(["--count", "0"])


def test_an_alphazero_model_with_non_finite_weights_is_refused(fuzz, tmp_path):
    data, rng = original(fuzz, "alphazero", tmp_path)[2], np.random.default_rng(SEED)
    outcomes = [attempt(fuzz, "alphazero", fuzz.mutants.non_finite(data, rng), tmp_path)
                for _ in range(6)]
    assert [outcome for outcome, _ in outcomes] == ["refused"] * 6, outcomes


@pytest.mark.parametrize("name", ["q", "alphazero", "checkpoint", "cache"])
def test_a_string_of_dtype_u0_is_refused_in_one_line(fuzz, tmp_path, name):
    """For the models and checkpoint the line names the file (the cache's caller names it)."""
    data, rng = original(fuzz, name, tmp_path)[2], np.random.default_rng(SEED)
    outcomes = [attempt(fuzz, name, fuzz.mutants.empty_string(data, rng), tmp_path)
                for _ in range(3)]
    assert [outcome for outcome, _ in outcomes] == ["refused"] * 3, outcomes


# --- what the fuzz found, fixed -------------------------------------------------------------


def with_json(fuzz: SimpleNamespace, data: bytes, member: str, edit) -> bytes:
    """``data`` with the JSON string array ``member`` changed by ``edit(document)``."""
    members = fuzz.mutants.read_members(data)
    index = next(i for i, (info, _) in enumerate(members) if info.filename == member)
    fields, body = fuzz.mutants.npy_parts(members[index][1])
    document = json.loads(str(np.frombuffer(body, fields["descr"], count=1)[0]))
    edit(document)
    array = np.array(json.dumps(document))
    fields = {"descr": array.dtype.str, "fortran_order": False, "shape": ()}
    members[index] = (members[index][0], fuzz.mutants.npy(fields, array.tobytes()))
    return fuzz.mutants.write_members(members)


@pytest.mark.parametrize("value", [1e308, 2**200])
def test_a_q_file_whose_generator_state_overflows_is_refused_in_one_line(fuzz, tmp_path, value):
    data = original(fuzz, "q", tmp_path)[2]
    mutant = with_json(fuzz, data, "rng.npy", lambda state: state.update(uinteger=value))
    outcome, detail = attempt(fuzz, "q", mutant, tmp_path)
    assert outcome == "refused" and "bad generator state" in detail, detail


def test_a_checkpoint_whose_generator_state_overflows_is_refused_in_one_line(fuzz, tmp_path):
    pytest.importorskip("torch")
    data = original(fuzz, "checkpoint", tmp_path)[2]
    mutant = with_json(fuzz, data, "state.npy",
                       lambda header: header["numpy_rng"].update(has_uint32=1e308))
    outcome, detail = attempt(fuzz, "checkpoint", mutant, tmp_path)
    assert outcome == "refused" and "does not restore" in detail, detail


@pytest.mark.parametrize(("member", "value", "problem"), [
    ("policies", -3.0, "a policy that is not a probability distribution"),
    ("policies", 1e30, "a policy that is not a probability distribution"),
    ("outcomes", 2.0, "an outcome outside [-1, 1]")])
def test_a_checkpoint_with_wild_training_targets_is_refused(fuzz, tmp_path, member, value,
                                                           problem):
    """Finite, but neither probabilities nor outcomes (1e30 makes every loss after --resume
    NaN): refused as a cell other than 0, 1 or 2 is."""
    pytest.importorskip("torch")
    data = original(fuzz, "checkpoint", tmp_path)[2]
    members = fuzz.mutants.read_members(data)
    index = next(i for i, (info, _) in enumerate(members) if info.filename == f"{member}.npy")
    fields, body = fuzz.mutants.npy_parts(members[index][1])
    array = np.frombuffer(body, fields["descr"]).copy()
    array.flat[0] = value
    members[index] = (members[index][0], fuzz.mutants.npy(fields, array.tobytes()))
    outcome, detail = attempt(fuzz, "checkpoint", fuzz.mutants.write_members(members), tmp_path)
    assert outcome == "refused" and problem in detail, detail


def test_a_checkpoint_whose_header_holds_nan_is_refused(fuzz, tmp_path):
    """The learning curve went unchecked, and into results.json, as NaN."""
    pytest.importorskip("torch")
    data = original(fuzz, "checkpoint", tmp_path)[2]
    mutant = with_json(fuzz, data, "state.npy",
                       lambda header: header["curve"][0].update(episodes=float("nan")))
    outcome, detail = attempt(fuzz, "checkpoint", mutant, tmp_path)
    assert outcome == "refused" and "a number that is not finite" in detail, detail


@pytest.mark.parametrize(("member", "key", "value"), [
    ("data", "num_timesteps", float("nan")), ("data", "gamma", float("-inf")),
    ("gym_tictactoe.json", "clip_range", float("inf"))])
def test_an_sb3_file_with_a_non_finite_setting_is_refused(fuzz, tmp_path, member, key, value):
    """Playing never reads most settings, but a model file holds finite numbers only."""
    data = original(fuzz, "sb3", tmp_path)[2]
    members = fuzz.mutants.read_members(data)
    index = next(i for i, (info, _) in enumerate(members) if info.filename == member)
    document = json.loads(members[index][1])
    assert key in document
    document[key] = value
    members[index] = (members[index][0], json.dumps(document).encode())
    outcome, detail = attempt(fuzz, "sb3", fuzz.mutants.write_members(members), tmp_path)
    assert outcome == "refused" and "is not a finite number" in detail, detail
