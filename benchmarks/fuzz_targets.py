"""The five kinds of file the fuzz mutates, each with its original, its loader and what a load
must give, shared by benchmarks/fuzz.py and tests/files/test_fuzz_files.py.

``q``, ``sb3`` and ``alphazero`` are model files loaded by ``agents.models.load_policy`` (what
``evaluate``, ``play`` and the arena call); ``checkpoint`` is an AlphaZero run's
``checkpoint.npz`` loaded by ``agents.alphazero.state.load_state`` (``train.py --resume``);
``cache`` is a solved board's file read by ``gym_tictactoe.game.cache``. A mutant must be either
refused with the loader's own error (one line; for the model files and the checkpoint it names
the file) or loaded into something usable: every number in it finite, a legal move on a sample
of positions, for the checkpoint a gradient step that runs, for the cache exactly the original
arrays. Anything else, a warning included, escapes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from gym_tictactoe import game

T3 = game.TICTACTOE
# Every 40th position of tic-tac-toe that is not over, as its mover sees it (1: own mark).
_CODES = T3.reachable[~T3.tables.terminal[T3.reachable]][::40]
BOARDS = np.where((T3.tables.to_move[_CODES] == game.O)[:, None],
                  game.SWAP[T3.tables.cells[_CODES]], T3.tables.cells[_CODES]).astype(np.int8)
MASKS = T3.tables.legal_mask[_CODES]


class Target(NamedTuple):
    """A kind of file: ``make(folder)`` writes the original, ``load(path)`` reads a file,
    ``check(loaded, original)`` fails (AssertionError) when what loaded is not usable."""

    name: str
    file_name: str
    make: Callable[[Path], Any]  # the original object, whose file is folder / file_name
    load: Callable[[Path], Any]
    check: Callable[[Any, Any], None]
    refusals: tuple[type[BaseException], ...] = (ValueError,)
    names_file: bool = True


def _legal_moves(policy: Any) -> None:
    cells = np.asarray(policy.act_batch(BOARDS, MASKS))
    assert MASKS[np.arange(len(BOARDS)), cells].all(), "an illegal move"


def _finite_module(module: Any) -> None:
    assert all(bool(p.isfinite().all()) for p in module.state_dict().values()), \
        "a non-finite weight"


def _finite_optimizer(optimizer: Any) -> None:
    for state in optimizer.state.values():
        assert all(bool(value.isfinite().all()) for value in state.values()), \
            "a non-finite optimiser state"


def _finite_fields(value: Any, where: str = "") -> None:
    """Every float in a (nested) dict or list is finite."""
    if isinstance(value, dict):
        for key, item in value.items():
            _finite_fields(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            _finite_fields(item, where)
    elif isinstance(value, float):
        assert math.isfinite(value), f"{where} is {value}"


# --- tabular Q ------------------------------------------------------------------------------


def _make_q(folder: Path) -> Any:
    from agents.tabular.q_learning import QLearningAgent

    agent = QLearningAgent(seed=0)
    agent.q[:] = np.random.default_rng(0).normal(size=agent.q.shape).round(1)  # compressible
    agent.save(folder / "q.npz")
    return agent


def _load_policy(path: Path) -> Any:
    from agents.models import load_policy

    return load_policy(path)


def _check_q(loaded: Any, original: Any) -> None:
    from dataclasses import asdict

    policy, kind = loaded
    assert kind == "q" and np.isfinite(policy.q).all(), "a non-finite Q-value"
    _finite_fields(asdict(policy.config), "config")
    _legal_moves(policy)


# --- SB3 ------------------------------------------------------------------------------------


def _make_sb3(folder: Path) -> Any:
    from agents import sb3
    from agents.sb3 import files as sb3_files

    env = sb3.make_vec_env("maskable-ppo", n_envs=1, seed=0)
    model = sb3.build_model("maskable-ppo", env, seed=0, policy_kwargs={"net_arch": [8]},
                            n_steps=64, batch_size=64)
    return sb3_files.save_model(model, folder / "sb3.zip")


def _load_sb3(path: Path) -> Any:
    from agents.sb3.files import read_model

    # load_policy reads the file with read_model, keeping the network alone: read the rest too
    return (*_load_policy(path), read_model(path))


def _check_sb3(loaded: Any, original: Any) -> None:
    policy, kind, model = loaded
    assert kind == "maskable-ppo", kind
    _finite_fields([model.marker, model.data])  # the settings that playing does not use
    _finite_module(policy.network)
    _legal_moves(policy)


# --- AlphaZero: a model, a training checkpoint ----------------------------------------------


def _small_settings() -> Any:
    from agents.alphazero import AlphaZeroSettings, NetworkSettings, PlaySettings

    return AlphaZeroSettings(play=PlaySettings(simulations=4), network=NetworkSettings(8, 1),
                             games_per_round=4, steps_per_round=2, batch_size=16,
                             buffer_size=40)


@cache  # one small run for the model and the checkpoint: loading never changes it
def _trainer() -> Any:
    from agents.alphazero import Trainer
    from agents.sb3 import torch_threads

    trainer = Trainer(T3, _small_settings(), seed=3)
    with torch_threads(1):
        trainer.train(8, 100)  # a few games: a buffer, moments and step counts to save
    return trainer


def _make_alphazero(folder: Path) -> Any:
    from agents.alphazero import files

    trainer = _trainer()
    files.save(folder / "alphazero.npz", trainer.net, T3, trainer.games)
    return trainer


def _check_alphazero(loaded: Any, original: Any) -> None:
    policy, kind = loaded
    assert kind == "alphazero", kind
    _finite_module(policy.net)
    _legal_moves(policy)


def _make_checkpoint(folder: Path) -> Any:
    from agents.alphazero.state import STATE_FILE, save_state

    trainer = _trainer()
    save_state(folder / STATE_FILE, trainer, {"seed": 3}, 1.5, [{"episodes": 8}])
    return trainer


def _load_checkpoint(path: Path) -> Any:
    from agents.alphazero.state import load_state

    return load_state(path)


def _check_checkpoint(saved: Any, original: Any) -> None:
    from agents.sb3 import torch_threads

    trainer = saved.trainer
    _finite_fields([trainer.settings.as_dict(), saved.run, saved.seconds, saved.curve,
                    trainer.seconds])
    _finite_module(trainer.net)
    _finite_optimizer(trainer.optimizer)
    buffer = trainer.buffer
    assert all(np.isfinite(a[:buffer.size]).all() for a in (buffer.policies, buffer.outcomes))
    _legal_moves(trainer.policy)
    if buffer.size:  # what --resume does next (other finite weights may train to NaN)
        with torch_threads(1):
            trainer.step()


# --- the solution cache ---------------------------------------------------------------------


def _make_cache(folder: Path) -> Any:
    from gym_tictactoe.game import cache, solver

    solution = solver.build(T3)
    cache.save(folder / "solution-3x3x3.npz", T3, solution.score, solution.reachable)
    return solution


def _load_cache(path: Path) -> Any:
    from gym_tictactoe.game import cache

    return cache._read(path, T3)  # what cache.load_or_build reads, before its warning


def _check_cache(loaded: Any, original: Any) -> None:
    score, reachable = loaded
    assert np.array_equal(score, original.score), "other scores"
    assert np.array_equal(reachable, original.reachable), "another reachable mask"


TARGETS = {target.name: target for target in (
    Target("q", "q.npz", _make_q, _load_policy, _check_q),
    Target("sb3", "sb3.zip", _make_sb3, _load_sb3, _check_sb3),
    Target("alphazero", "alphazero.npz", _make_alphazero, _load_policy, _check_alphazero),
    Target("checkpoint", "checkpoint.npz", _make_checkpoint, _load_checkpoint,
           _check_checkpoint),
    # load_or_build turns either into one warning naming the file, and solves the board
    Target("cache", "solution-3x3x3.npz", _make_cache, _load_cache, _check_cache,
           (ValueError, OSError), names_file=False),
)}


def attempt(target: Target, path: Path, original: Any) -> tuple[str, str]:
    """Load ``path``: ``("loaded", "")``, ``("refused", the message)`` or ``("escaped", what
    happened)``; a hang or an allocation is the caller's to bound."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a library's warning is not our one line
            loaded = target.load(path)
    except target.refusals as error:
        message = str(error)
        if "\n" in message or len(message) > 1000 or (
                target.names_file and str(path) not in message):
            return "escaped", f"{type(error).__name__} not one line naming the file: {message}"
        return "refused", message
    except Exception as error:  # every other type is what the fuzz looks for
        return "escaped", f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            target.check(loaded, original)
    except Exception as error:
        return "escaped", (f"loaded but unusable: {type(error).__name__}: "
                           f"{' '.join(str(error).split())[:300]}")
    return "loaded", ""
