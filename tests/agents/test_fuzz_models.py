"""Seeded mutation fuzzing of both model formats, a Q-table .npz and an SB3 .zip.

Every mutated file (mostly in the zip's structure: central directory, end record, local
headers; also cuts and repeated chunks; for SB3 half of them in torch's own zip of the weights,
stored again with a valid CRC) must give either a clear error (ValueError or FileNotFoundError,
one line naming the file) or a correct load (the original's values; legal moves from other
weights), never another exception type, a warning, a hang (a 30 s alarm per file) or an
allocation beyond a stated bound: ``PEAK_BYTES`` of Python allocations (tracemalloc), and torch
is only ever handed bytes of the file itself, whose tensors' sizes were checked against the
network before their data is read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from zip_helpers import bounded, mutate, mutate_member

from agents.models import load_policy
from agents.tabular.q_learning import QLearningAgent
from gym_tictactoe import game

T3 = game.TICTACTOE  # tic-tac-toe's rules

# About 3 s (Q) and 2 s per SB3 algorithm, 80 mutations each (the first SB3 case also pays
# torch's one-time imports, 4 s): kept for what it guards, every way a damaged file can fail.
N_MUTATIONS = {"q": 300, "sb3": 240}
PEAK_BYTES = 16 * 2**20  # a 3x3 Q-table is 1.4 MB; the SB3 files here are a few KB
HANG_SECONDS = 30

CODES = T3.reachable[~T3.tables.terminal[T3.reachable]][::40]
BOARDS = np.where((T3.tables.to_move[CODES] == game.O)[:, None], game.SWAP[T3.tables.cells[CODES]],
                  T3.tables.cells[CODES]).astype(np.int8)
MASKS = T3.tables.legal_mask[CODES]


def refused(error: Exception, path: Path) -> bool:
    message = str(error)
    assert "\n" not in message and str(path) in message, message
    return True


def moves(policy) -> list[int]:
    return [policy(board, mask) for board, mask in zip(BOARDS, MASKS, strict=True)]


def fuzz(original: Path, count: int, seed: int, load, inner: str | None = None) -> dict:
    """Mutate ``original`` ``count`` times; ``load(path, exact)`` checks a load. With ``inner``,
    every other mutation is of that member, stored again whole with its CRC: a load of such a
    file need only be legal (its weights are other weights), any other must be the original."""
    rng, data, tally = np.random.default_rng(seed), original.read_bytes(), {"ok": 0, "refused": 0}
    path = original.with_name(f"mutated{original.suffix}")
    for i in range(count):
        exact = inner is None or i % 2 == 0
        path.write_bytes(mutate(data, rng) if exact else mutate_member(data, inner, rng))
        try:
            with bounded(path, PEAK_BYTES, HANG_SECONDS, warnings_fail=True):
                load(path, exact)
            tally["ok"] += 1
        except (ValueError, FileNotFoundError) as error:
            tally["refused"] += refused(error, path)
    return tally


@pytest.mark.slow
def test_mutated_q_files_load_correctly_or_are_refused_clearly(tmp_path):
    agent = QLearningAgent(seed=0)
    agent.q[:] = np.random.default_rng(0).normal(size=agent.q.shape).round(1)  # compressible
    original = agent.save(tmp_path / "agent.npz")
    expected = moves(agent)

    def load(path: Path, exact: bool) -> None:
        policy, kind = load_policy(path)
        assert kind == "q" and np.array_equal(policy.q, agent.q) and moves(policy) == expected

    tally = fuzz(original, N_MUTATIONS["q"], 0, load)
    assert tally["refused"] > N_MUTATIONS["q"] // 2  # most mutations do break the file


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["maskable-ppo", "ppo", "dqn"])
def test_mutated_sb3_files_load_correctly_or_are_refused_clearly(tmp_path, monkeypatch, algo):
    pytest.importorskip("sb3_contrib")
    from agents import sb3
    from agents.sb3 import files as sb3_files
    from agents.sb3 import network as sb3_network

    env = sb3.make_vec_env(algo, n_envs=1, seed=0)
    small = {} if algo == "dqn" else {"n_steps": 64, "batch_size": 64}  # n_envs=1 divides it
    model = sb3.build_model(algo, env, seed=0, policy_kwargs={"net_arch": [8]}, **small)
    original = sb3_files.save_model(model, tmp_path / "model.zip")
    expected = sb3.ModelPolicy(model).preferences(BOARDS)
    handed: list[int] = []
    torch_load = sb3_network._torch_load

    def spy(raw: bytes, device: str):
        handed.append(len(raw))
        return torch_load(raw, device)

    monkeypatch.setattr(sb3_network, "_torch_load", spy)

    def load(path: Path, exact: bool) -> None:
        handed.clear()
        policy, kind = load_policy(path)
        assert max(handed) <= path.stat().st_size  # torch sees only bytes of the file
        assert kind == algo and MASKS[np.arange(len(BOARDS)), policy.act_batch(BOARDS, MASKS)].all()
        assert sb3_files.model_board(path) == game.TICTACTOE
        if exact:  # the original's weights, and the full algorithm loads too
            assert np.array_equal(policy.preferences(BOARDS), expected)
            assert sb3_files.load_model(path).num_timesteps == 0

    tally = fuzz(original, N_MUTATIONS["sb3"] // 3, 1, load, inner="policy.pth")
    assert tally["refused"] > N_MUTATIONS["sb3"] // 6
