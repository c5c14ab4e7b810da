"""The SB3 side of a run's checkpoints: a callback that hands the model to the run's
:class:`~agents.run.checkpoint.Checkpointer` every ``eval_every`` timesteps and once at the end
(SB3 is imported only here: the tabular path needs no torch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stable_baselines3.common import callbacks
from stable_baselines3.common.callbacks import BaseCallback

from agents import next_mark
from agents.sb3.policy import ModelPolicy
from gym_tictactoe import game


def timesteps_trained(model: Any, budget: int, announce: Callable[[str], Any] | None = None
                      ) -> int:
    """The timesteps SB3's ``model.learn(budget)`` trains: ``budget`` rounded up to whole
    collections (a PPO rollout of ``n_steps`` on every env, a DQN step of ``train_freq`` on
    every env), as SB3 never stops one halfway. ``announce``: said once when that is more."""
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
    from stable_baselines3.common.type_aliases import TrainFrequencyUnit

    freq = getattr(model, "train_freq", None)
    if isinstance(model, OnPolicyAlgorithm):
        steps = model.n_steps
    elif freq is not None and freq.unit == TrainFrequencyUnit.STEP:
        steps = freq.frequency
    else:
        steps = 1  # collections of whole episodes: no telling in advance
    unit = steps * model.n_envs
    total = -(-budget // unit) * unit
    if total != budget and announce is not None:
        announce(f"SB3 collects {unit:,} timesteps at a time ({model.n_envs} envs of {steps} "
                 f"steps): this run trains {total:,} timesteps, --timesteps {budget:,} "
                 "rounded up")
    return total


class ProgressBar(callbacks.ProgressBarCallback):
    """SB3's progress bar counting to ``total`` (:func:`timesteps_trained`, not the budget it
    is rounded from); :meth:`close` it when training ends in any way."""

    def __init__(self, total: int) -> None:
        super().__init__()
        self.total = total

    def _on_training_start(self) -> None:
        self.pbar = callbacks.tqdm(total=self.total - self.model.num_timesteps)

    def _on_step(self) -> bool:
        self.pbar.update(min(self.training_env.num_envs, self.pbar.total - self.pbar.n))
        return True

    def close(self) -> None:
        if getattr(self, "pbar", None) is not None:
            self.pbar.close()


def checkpoint_callback(checkpoint: Callable[[Any, int], bool], algo: str, rules: game.Rules,
                        canonical: bool) -> BaseCallback:
    """An SB3 callback calling ``checkpoint(policy, timesteps)`` (True stops training) every
    ``checkpoint.config.eval_every`` timesteps before the budget and for the model that is
    saved at the end (so at most one checkpoint past the budget, SB3's last rollout)."""
    every, budget = checkpoint.config.eval_every, checkpoint.config.timesteps

    class CheckpointCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.next, self.stopped = self.num_timesteps + every, False

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next:
                return True
            self.next = next_mark(self.num_timesteps, self.next, every)
            if self.num_timesteps >= budget:  # the last rollout: the end's checkpoint follows
                return True
            self.stopped = checkpoint(self.policy_now(), self.num_timesteps)
            return not self.stopped

        def _on_training_end(self) -> None:
            # A checkpoint taken while collecting the last rollout is followed by one more
            # gradient update (PPO and DQN both train after collecting), so it would not
            # describe the saved model: checkpoint again in its place, unless training stopped
            # right there.
            curve = checkpoint.curve
            if curve and self.stopped:
                return
            if curve and curve[-1]["timesteps"] == self.num_timesteps:
                curve.pop()
            checkpoint(self.policy_now(), self.num_timesteps)

        def policy_now(self) -> ModelPolicy:
            return ModelPolicy(self.model, algo, rules, canonical)

    return CheckpointCallback()
