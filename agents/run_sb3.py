"""The SB3 side of a run's checkpoints: a callback that hands the model to the run's
:class:`~agents.run.Checkpointer` every ``eval_every`` timesteps and once at the end (SB3 is
imported only here: the tabular path needs no torch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from agents import next_mark
from agents.sb3_policy import ModelPolicy
from gym_tictactoe import game


def checkpoint_callback(checkpoint: Callable[[Any, int], bool], algo: str, rules: game.Rules,
                        canonical: bool) -> BaseCallback:
    """An SB3 callback calling ``checkpoint(policy, timesteps)`` (True stops training) every
    ``checkpoint.config.eval_every`` timesteps and for the model that is saved at the end."""
    every = checkpoint.config.eval_every

    class CheckpointCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.next, self.stopped = self.num_timesteps + every, False

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next:
                return True
            self.next = next_mark(self.num_timesteps, self.next, every)
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
