"""An AlphaZero run's training state, saved at each checkpoint so that ``train.py --resume``
continues the run exactly where it stopped: one ``.npz`` file, written atomically, read without
pickle.

``state`` holds a JSON header: the format marker, the run's settings (board, seed, budget,
evaluation periods, AlphaZero's settings), the network's layers, the games played, the training
and wall seconds so far, the learning curve so far, the NumPy generator's state, the replay
buffer's fill and ring position, the optimiser's step counts and the budget the learning
rate is annealed over (``Trainer.anneal_over``). The arrays: ``weights`` (every
layer's float32 values in the header's order), ``moments`` (AdamW's two moment estimates per
layer, same order), the replay buffer's filled rows (``boards``, ``policies``, ``outcomes``),
torch's generator state (``torch_rng``) and ``aimed_at``: the positions the random starts are
aimed at (``Trainer.aimed_at``, a bit per position of ``start_codes``; empty without an aim,
absent from states written before aims were saved). As for model files
(``agents.alphazero.files``), every array's dtype and shape is checked against what the header's
settings imply before it is read.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.alphazero.files import check_header, read_header
from agents.alphazero.network import NetworkSettings, build, state_arrays
from agents.alphazero.self_play import PlaySettings
from agents.alphazero.training import AlphaZeroSettings, Schedule, Trainer, check_memory
from agents.archives import open_zip
from gym_tictactoe import game
from gym_tictactoe.checks import check_int, check_number
from gym_tictactoe.files import atomic_path
from gym_tictactoe.files.npz import Entry, array_entry, check_finite, read_entry

FORMAT = "gym_tictactoe.alphazero-state/1"
STATE_FILE = "checkpoint.npz"
HEADER = "state"
ARRAYS = ("weights", "moments", "boards", "policies", "outcomes", "torch_rng", "aimed_at")
MEMBERS = {f"{name}.npy" for name in (HEADER, *ARRAYS)}
EARLIER_MEMBERS = MEMBERS - {"aimed_at.npy"}  # states from before aims were saved
# The header grows with the learning curve: about 150 bytes an entry, so 16 MB is 100,000.
_HEADER_ENTRY = Entry("U", None, (), 16 * 2**20)
TORCH_RNG_BYTES = 5056  # torch's CPU Mersenne Twister state


@dataclass
class Saved:
    """A state file read back: the trainer as it was (network, optimiser, buffer, generators,
    games, training seconds) and the header's ``run`` settings, wall ``seconds`` and
    ``curve``."""

    trainer: Trainer
    run: dict[str, Any]
    seconds: float
    curve: list[dict[str, Any]]


def save_state(path: str | os.PathLike, trainer: Trainer, run: dict[str, Any], seconds: float,
               curve: list[dict[str, Any]]) -> Path:
    """Write ``trainer``'s whole state, the ``run`` settings, the wall ``seconds`` and the
    ``curve`` so far to ``path`` atomically."""
    weights = state_arrays(trainer.net)
    steps, moments = _optimizer_arrays(trainer, weights)
    buffer = trainer.buffer
    rows = slice(0, buffer.size)  # the ring as it lies, so that draws pick the same rows
    header = {"format": FORMAT, "algo": "alphazero", "board": trainer.rules.kwargs,
              "network": trainer.settings.network.as_dict(),
              "layers": [[name, list(a.shape)] for name, a in weights.items()],
              "games": int(trainer.games), "samples": trainer.samples,
              "settings": trainer.settings.as_dict(), "run": run,
              "train_seconds": float(trainer.seconds), "seconds": float(seconds),
              "train_cpu_seconds": trainer.cpu_seconds,
              "curve": curve, "numpy_rng": trainer.rng.bit_generator.state,
              "buffer": {"size": buffer.size, "next": buffer.next}, "optimizer_steps": steps,
              "aimed_at": None if trainer.aimed_at is None else int(trainer.aimed_at.size),
              "anneal_over": _span(trainer.anneal_over)}
    aimed = np.zeros(0, np.uint8) if trainer.aimed_at is None else np.packbits(trainer.aimed_at)
    arrays = {"aimed_at": aimed, "weights": np.concatenate([a.ravel() for a in weights.values()]),
              "moments": moments, "boards": buffer.boards[rows],
              "policies": buffer.policies[rows], "outcomes": buffer.outcomes[rows],
              "torch_rng": torch.get_rng_state().numpy()}
    path = Path(path)
    with atomic_path(path) as temp, open(temp, "wb") as file:
        # mypy matches the ** arrays to savez's allow_pickle (a bool) as well
        np.savez(file, **{HEADER: np.array(json.dumps(header))}, **arrays)  # type: ignore[arg-type]
    return path


def _optimizer_arrays(trainer: Trainer, weights: dict[str, np.ndarray]
                      ) -> tuple[list[int], np.ndarray]:
    """AdamW's step count per parameter and its two moments, flat, in ``weights``' order (zeros
    before the first step)."""
    state, steps, flat = trainer.optimizer.state_dict()["state"], [], []
    for index, array in enumerate(weights.values()):
        entry = state.get(index)
        steps.append(int(entry["step"]) if entry else 0)
        for key in ("exp_avg", "exp_avg_sq"):
            flat.append(entry[key].numpy().ravel() if entry else np.zeros(array.size))
    return steps, np.concatenate(flat).astype(np.float32)


class _BadState(ValueError):
    pass


def _bad(path: Path, problem: str) -> ValueError:
    return _BadState(f"{path} is not an AlphaZero training state: {problem}; expected the "
                     f"{STATE_FILE} that train.py --algo alphazero writes in its run folder")


def load_state(path: str | os.PathLike) -> Saved:
    """The state at ``path``, each part checked: FileNotFoundError, or a ValueError of one line
    (another kind of file, a truncated or altered one)."""
    path = Path(path)
    bad = partial(_bad, path)
    with open_zip(path, bad, "AlphaZero training state") as archive:
        _check_members(archive, bad)
        header = read_header(read_entry(archive, HEADER, _HEADER_ENTRY, bad), bad, FORMAT)
        rules, network, shapes = check_header(header, bad)
        settings = _settings(header, network, bad)
        _check_memory(rules, settings, bad)
        arrays = _arrays(archive, header, rules, settings, shapes, bad)
    trainer = Trainer(rules, settings, seed=header["run"]["seed"])
    try:
        _restore(trainer, header, arrays, shapes)
    except (TypeError, ValueError, KeyError, RuntimeError, OverflowError) as error:
        raise bad(f"its state does not restore ({str(error).splitlines()[0][:120]})") from None
    return Saved(trainer, header["run"], header["seconds"], header["curve"])


def read_progress(path: str | os.PathLike) -> dict[str, Any]:
    """The header of the state at ``path`` (its games, seconds, learning curve...), checked as
    :func:`load_state` checks it, without reading the arrays: what a watcher of a long run
    reads at each checkpoint."""
    path = Path(path)
    bad = partial(_bad, path)
    with open_zip(path, bad, "AlphaZero training state") as archive:
        _check_members(archive, bad)
        header = read_header(read_entry(archive, HEADER, _HEADER_ENTRY, bad), bad, FORMAT)
    _settings(header, check_header(header, bad)[1], bad)
    return header


def _span(schedule: Schedule | None) -> dict[str, Any] | None:
    return None if schedule is None else {"games": schedule.games, "minutes": schedule.minutes}


def _check_members(archive: Any, bad: Any) -> None:
    names = set(archive.namelist())
    if names not in (MEMBERS, EARLIER_MEMBERS):
        raise bad(f"it holds {sorted(names)[:8]}, not {sorted(MEMBERS)}")


def _settings(header: dict[str, Any], network: NetworkSettings, bad: Any) -> AlphaZeroSettings:
    """The header's AlphaZero settings and the rest of its fields, checked."""
    try:  # the learning curve, for one, is copied into results.json as it stands
        json.dumps(header, allow_nan=False)
    except ValueError:
        raise bad("its header holds a number that is not finite (NaN or infinity)") from None
    try:
        given = dict(header["settings"])
        play = PlaySettings(**given.pop("play"))
        if given.pop("network") != network.as_dict():
            raise ValueError("settings.network differs from network")
        settings = AlphaZeroSettings(play=play, network=network, **given)
        run = header["run"]
        check_int(run["seed"], "run.seed", 0, 2**32 - 1)
        size = check_int(header["buffer"]["size"], "buffer.size", 0, settings.buffer_size)
        ring = check_int(header["buffer"]["next"], "buffer.next", 0, settings.buffer_size - 1)
        if size < settings.buffer_size and ring != size:
            raise ValueError(f"buffer.next must be {size} in a buffer not yet full")
        for name in ("seconds", "train_seconds"):
            check_number(header[name], name, 0.0)
        if header.get("train_cpu_seconds") is not None:  # absent from the first states
            check_number(header["train_cpu_seconds"], "train_cpu_seconds", 0.0)
        check_int(header.get("samples"), "samples", 0, none=True)  # absent from older states
        _anneal_over(header)
        if header["algo"] != "alphazero" or not isinstance(header["curve"], list):
            raise ValueError("algo must be alphazero and curve a list")
    except (TypeError, ValueError, KeyError) as error:
        raise bad(f"its header is wrong: {str(error)[:160]}") from None
    return settings


def _anneal_over(header: dict[str, Any]) -> Schedule | None:
    """The header's ``anneal_over`` (absent from states before it: None), checked."""
    span = header.get("anneal_over")
    if span is None:
        return None
    if not isinstance(span, dict) or set(span) != {"games", "minutes"}:
        raise ValueError("anneal_over must be null or {games, minutes}")
    check_int(span["games"], "anneal_over.games", 1, none=True)
    check_number(span["minutes"], "anneal_over.minutes", 0.0, low_open=True, none=True)
    return Schedule(span["games"], minutes=span["minutes"])  # refuses neither budget


def _check_memory(rules: game.Rules, settings: AlphaZeroSettings, bad: Any) -> None:
    """The settings' buffer, rounds and batches within their limits, before anything is read
    or allocated (``training.check_memory``)."""
    try:
        check_memory(rules, settings)
    except ValueError as error:
        raise bad(f"its settings ask for too much memory: {error}") from None


def _arrays(archive: Any, header: dict[str, Any], rules: game.Rules,
            settings: AlphaZeroSettings, shapes: dict[str, tuple[int, ...]],
            bad: Any) -> dict[str, np.ndarray]:
    """Every array, its dtype and shape checked against what the header implies first."""
    total = sum(int(np.prod(shape)) for shape in shapes.values())
    rows, cells = header["buffer"]["size"], rules.n_cells
    expected = {"weights": array_entry("f", 4, (total,)),
                "moments": array_entry("f", 4, (2 * total,)),
                "boards": array_entry("i", 1, (rows, cells)),
                "policies": array_entry("f", 4, (rows, cells)),
                "outcomes": array_entry("f", 4, (rows,)),
                "torch_rng": array_entry("u", 1, (TORCH_RNG_BYTES,))}
    bits = _aimed_bits(header, rules, bad)
    if "aimed_at.npy" in archive.namelist():
        expected["aimed_at"] = array_entry("u", 1, ((bits + 7) // 8,))
    elif bits:
        raise bad("its header has aimed_at but the file holds no aimed_at array")
    arrays = {name: read_entry(archive, name, entry, bad) for name, entry in expected.items()}
    if not np.isin(arrays["boards"], (0, 1, 2)).all():
        raise bad("its replay buffer holds a cell that is not 0, 1 or 2")
    for name in ("weights", "moments", "policies", "outcomes"):
        check_finite(arrays[name], name, bad)
    _check_samples(arrays["policies"], arrays["outcomes"], bad)
    return arrays


def _aimed_bits(header: dict[str, Any], rules: game.Rules, bad: Any) -> int:
    """The bits of the header's ``aimed_at``: 0 without an aim, else one per start position."""
    bits = header.get("aimed_at")
    if bits is None:
        return 0
    from gym_tictactoe.evaluation.report import unfinished_positions

    expected = unfinished_positions(rules) if rules.solvable else 0
    if isinstance(bits, bool) or bits != expected:
        raise bad(f"its aimed_at must be null or {expected}, a bit per start position of "
                  f"{rules.name}; got {bits!r}")
    return expected


def _check_samples(policies: np.ndarray, outcomes: np.ndarray, bad: Any) -> None:
    """Training targets: finite but wild ones would make every later loss NaN."""
    if (policies < 0).any() or not np.allclose(policies.sum(axis=1), 1.0, atol=1e-3):
        raise bad("its replay buffer holds a policy that is not a probability distribution")
    if (np.abs(outcomes) > 1).any():
        raise bad("its replay buffer holds an outcome outside [-1, 1]")


def _restore(trainer: Trainer, header: dict[str, Any], arrays: dict[str, np.ndarray],
             shapes: dict[str, tuple[int, ...]]) -> None:
    """Put the saved network, optimiser, buffer, generators and counters into ``trainer``."""
    weights, at = {}, 0
    for name, shape in shapes.items():
        size = int(np.prod(shape))
        weights[name] = arrays["weights"][at:at + size].reshape(shape)
        at += size
    trainer.net.load_state_dict(build(trainer.settings.network, weights).state_dict())
    _restore_optimizer(trainer, header["optimizer_steps"], arrays["moments"], shapes)
    buffer, rows = trainer.buffer, len(arrays["outcomes"])
    buffer.boards[:rows], buffer.policies[:rows] = arrays["boards"], arrays["policies"]
    buffer.outcomes[:rows] = arrays["outcomes"]
    buffer.size, buffer.next = rows, header["buffer"]["next"]
    trainer.rng.bit_generator.state = header["numpy_rng"]
    torch.set_rng_state(torch.from_numpy(arrays["torch_rng"].copy()))
    trainer.games = check_int(header["games"], "games", 0)
    trainer.samples = header.get("samples")
    trainer.seconds = float(header["train_seconds"])
    cpu = header.get("train_cpu_seconds")
    trainer.cpu_seconds = None if cpu is None else float(cpu)
    trainer.anneal_over = _anneal_over(header)
    if header.get("aimed_at"):
        bits = np.unpackbits(arrays["aimed_at"], count=header["aimed_at"])
        trainer.aimed_at = bits.astype(bool)


def _restore_optimizer(trainer: Trainer, steps: list[int], moments: np.ndarray,
                       shapes: dict[str, tuple[int, ...]]) -> None:
    if len(steps) != len(shapes):
        raise ValueError(f"{len(steps)} optimizer steps for {len(shapes)} layers")
    state, at = {}, 0
    for index, shape in enumerate(shapes.values()):
        size = int(np.prod(shape))
        pair = [torch.from_numpy(moments[at + k * size:at + (k + 1) * size].reshape(shape)
                                 .copy()) for k in (0, 1)]
        at += 2 * size
        if check_int(steps[index], "optimizer step", 0) > 0:
            state[index] = {"step": torch.tensor(float(steps[index])), "exp_avg": pair[0],
                            "exp_avg_sq": pair[1]}
    groups = trainer.optimizer.state_dict()["param_groups"]
    trainer.optimizer.load_state_dict({"state": state, "param_groups": groups})
