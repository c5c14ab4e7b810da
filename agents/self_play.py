"""Self-play: a learner trains against frozen snapshots of itself.

A :class:`SnapshotPool` holds the last ``size`` snapshots of the learner (``policy.frozen()``: a
copy that keeps playing as the learner played when it was taken). Its :meth:`~SnapshotPool.opponent`
is an ordinary opponent for ``TicTacToeEnv`` and the vector env, a ``MixtureOpponent`` that draws,
per episode, one snapshot uniformly (or, with ``mix``, a built-in opponent for a ``share`` of the
episodes). The learner's trainer refreshes the pool every so often with :meth:`~SnapshotPool.add`,
which replaces the oldest snapshot; the envs see the change at once, because the mixture's members
are :class:`Slot` policies whose contents the pool swaps.

Before the first snapshot every slot holds the uniformly random player, what an untrained learner
amounts to. :func:`train_q` and :class:`SnapshotCallback` (SB3) are the two trainers' refreshes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import EXPLORING_STARTS, next_mark
from gym_tictactoe import game
from gym_tictactoe.checks import check_int, check_number
from gym_tictactoe.players.opponents import (
    MixtureOpponent,
    Opponent,
    PolicyOpponent,
    parse_opponent,
)
from gym_tictactoe.players.stochastic import UniformPolicy
from gym_tictactoe.seeding import check_seed

EvalHook = Callable[[Any, int], bool]


class Slot:
    """A place in the pool: plays whichever policy it holds now (a Policy with ``act_batch``)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def __call__(self, observation: npt.ArrayLike, mask: npt.ArrayLike) -> int:
        return int(self.policy(observation, mask))

    def act_batch(self, observations: npt.ArrayLike,
                  masks: npt.ArrayLike) -> npt.NDArray[np.int64]:
        return np.asarray(self.policy.act_batch(observations, masks)).reshape(-1)

    def __repr__(self) -> str:
        return f"Slot({self.policy!r})"


class SnapshotPool:
    """The last ``size`` snapshots of a learner on the board ``rules``, as one opponent.

    ``mix``: a built-in opponent spec (``"minimax"``, ``"epsilon:epsilon=0.4"``) played in a
    ``share`` of the episodes, the snapshots in the rest; without it, self-play alone.
    """

    def __init__(self, rules: game.Rules = game.TICTACTOE, size: int = 5,
                 mix: str | None = None, share: float = 0.0, seed: int | None = 0) -> None:
        size = check_int(size, "size", 1, note=" (snapshots)")
        if mix is None and share != 0.0:
            raise ValueError(f"share {share!r} of the episodes needs a mix opponent to play them")
        if mix is not None:
            check_number(share, "share", 0.0, 1.0, low_open=True, high_open=True,
                         note=f" (the episodes against {mix!r})")
        self.rules, self.size, self.mix, self.share = rules, size, mix, float(share)
        self.slots = [Slot(UniformPolicy(seed=seed)) for _ in range(size)]
        self.added = 0  # snapshots taken so far; the next replaces slot added % size

    def add(self, policy: Any) -> None:
        """Put a frozen copy of ``policy`` (``policy.frozen()``) in place of the oldest."""
        own = getattr(policy, "rules", None)
        if isinstance(own, game.Rules) and own != self.rules:
            raise ValueError(f"a snapshot of a {own.name} policy cannot join a pool of the "
                             f"{self.rules.name} board")
        frozen = getattr(policy, "frozen", None)
        if not callable(frozen):
            raise ValueError(f"a snapshot needs policy.frozen() (QLearningAgent, ModelPolicy); "
                             f"got {policy!r}")
        self.slots[self.added % self.size].policy = frozen()
        self.added += 1

    def add_file(self, path: str | os.PathLike) -> None:
        """Add the model saved at ``path`` (``train.py``'s ``model.npz`` or ``model.zip``) as a
        snapshot: FileNotFoundError, or a ValueError for a file that is no model of ours or
        plays another board."""
        from agents.models import load_policy

        policy, _ = load_policy(path)
        own = getattr(policy, "rules", game.TICTACTOE)
        if own != self.rules:
            raise ValueError(f"snapshot {path} plays the {own.name} board; this pool is for the "
                             f"{self.rules.name} board")
        self.add(policy)

    def opponent(self) -> Opponent:
        """The opponent to train against: one snapshot (or the mix) per episode."""
        players: list[Opponent] = [PolicyOpponent(slot, **self.rules.kwargs)
                                   for slot in self.slots]
        weights = [(1.0 - self.share) / self.size] * self.size
        if self.mix is not None:
            players.append(parse_opponent(self.mix, self.rules))
            weights.append(self.share)
        return MixtureOpponent(players, weights, **self.rules.kwargs)

    def __repr__(self) -> str:
        mix = f", mix={self.mix!r}, share={self.share}" if self.mix else ""
        return f"SnapshotPool({self.rules.name}, size={self.size}{mix}, added={self.added})"


def train_q(agent: Any, pool: SnapshotPool, episodes: int, refresh_every: int, *,
            seed: int | None = None, agent_mark: str = "random", eval_every: int = 1000,
            on_eval: EvalHook | None = None, progress: bool = False,
            env_options: dict[str, Any] | None = None) -> int:
    """Tabular self-play: ``agent`` trains against ``pool`` (in both seats by default), a
    snapshot of it joins the pool every ``refresh_every`` episodes, and
    ``on_eval(agent, episodes)`` runs at the first refresh at or after every ``eval_every``
    episodes and at the end (True stops training). ``seed`` seeds the env's first reset (else
    the agent's generator draws it). ``env_options``: the env's ``start`` and
    ``start_probability`` (default ``agents.EXPLORING_STARTS``; ``{}`` for empty boards only).
    Returns the episodes trained."""
    import gymnasium as gym

    from agents.tabular.q_learning import _progress_bar  # the one bar of tabular training

    episodes, refresh_every, eval_every = (
        check_int(value, name, 1) for name, value in (
            ("episodes", episodes), ("refresh_every", refresh_every), ("eval_every", eval_every)))
    seed = check_seed(seed)
    options = EXPLORING_STARTS if env_options is None else env_options
    env = gym.make("TicTacToe-v0", opponent=pool.opponent(), agent_mark=agent_mark,
                   **pool.rules.kwargs, **options)
    bar = _progress_bar(episodes) if progress else None
    done, mark = 0, eval_every
    while done < episodes:
        chunk = min(refresh_every, episodes - done)
        # Later chunks reseed the env from the agent's generator: the two seeds fix the run.
        agent.train(env, chunk, seed=seed if done == 0 else None, eval_every=chunk)
        done += chunk
        pool.add(agent)
        if bar is not None:
            bar.update(chunk)
        if on_eval is not None and (done >= mark or done == episodes):
            mark = next_mark(done, mark, eval_every)
            if on_eval(agent, agent.episodes):
                break
    if bar is not None:
        bar.close()
    return done


def snapshot_callback(pool: SnapshotPool, every: int, algo: str, canonical: bool) -> Any:
    """An SB3 callback that adds a snapshot of the model being trained to ``pool`` every
    ``every`` timesteps (SB3 imported only here: the tabular path needs no torch)."""
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.sb3.policy import ModelPolicy

    every = check_int(every, "every", 1, note=" (timesteps)")

    class SnapshotCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.next = self.num_timesteps + every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.next = next_mark(self.num_timesteps, self.next, every)
                pool.add(ModelPolicy(self.model, algo, pool.rules, canonical))
            return True

    return SnapshotCallback()
