"""# Tic-tac-toe and every m,n,k-game, two agents (PettingZoo Parallel API)

The two-agent game of ``gym_tictactoe.envs.pettingzoo`` for libraries that take PettingZoo's
Parallel API (Sample Factory, AgileRL's multi-agent algorithms; TorchRL's ``PettingZooWrapper``
takes the AEC env instead, as it makes tensors of the infos and ``active_agent`` is a string):
every ``step`` takes a dict of actions, one per live agent, and returns dicts of observations,
rewards, terminations, truncations and infos. It needs the ``multiagent`` extra.

| Import             | `from gym_tictactoe.envs.pettingzoo import parallel_env`      |
|--------------------|----------------------------------------------------------|
| Creation           | `make("parallel", "gym_tictactoe/TicTacToe-v0")`         |
| Actions            | Discrete                                                 |
| Agents             | `agents= ['player_1', 'player_2']`                       |
| Observation, action spaces, rewards, arguments | as the AEC env's                  |

The game is turn-based: each step, only the agent to move acts, and the action given for the
other agent is ignored (it may be anything, or missing). Whose turn it is shows in three places:
``infos[agent]["active_agent"]`` (after ``reset`` and every step; ``""`` once the game is
over), the ``action_mask`` (all zeros for the agent not to move) and the alternation itself
(``player_1``, X, moves first). Built with PettingZoo's own ``turn_based_aec_to_parallel``
conversion of the AEC env, which ``parallel_env`` adds three things to: a clear error for a
missing action or a step after the game, ``active_agent`` after ``reset`` and at the end as
well, and infos that are fresh dicts each step.

### Episode End

The step that ends the game (a line, a full board, or an illegal move under
``illegal_action="lose"``) returns both agents terminated with their rewards (+1 / -1, 0 / 0, or
-1 for the illegal mover and 0 for the other) and ``infos[agent]["winner"]`` (1 X, 2 O, 0
a draw, as in the AEC env); ``agents`` is then empty, and the next ``step`` is a
``RuntimeError`` saying to call ``reset()``. No truncation. Every info has the same keys on
every step: ``active_agent``, ``winner`` and ``illegal_action``.

### Arguments

``parallel_env(rows=3, cols=3, win_length=3, illegal_action="lose", render_mode=None)``: those of
``gym_tictactoe.envs.pettingzoo.env``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    import pettingzoo
    from pettingzoo import AECEnv
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper
except ModuleNotFoundError as error:
    if (error.name or "").partition(".")[0] != "pettingzoo":
        raise
    from gym_tictactoe.extras import MissingExtra
    raise MissingExtra('gym_tictactoe.envs.pettingzoo_parallel needs pettingzoo, which is not '
                       'installed: pip install ".[multiagent]" in a clone of gym-tictactoe',
                       name="pettingzoo") from None

__all__ = ["ENV_ID", "TurnBasedParallelEnv"]

ENV_ID = "gym_tictactoe/TicTacToe-v0"  # the AEC env's id too, in the other registry


class TurnBasedParallelEnv(turn_based_aec_to_parallel_wrapper):
    """PettingZoo's ``turn_based_aec_to_parallel_wrapper`` with clear errors for a missing
    action and a step after the game, and ``active_agent`` in the infos from ``reset`` on."""

    def __init__(self, aec_env: AECEnv) -> None:
        super().__init__(aec_env)
        self.agents: list[str] = []  # no game until reset()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = super().reset(seed=seed, options=options)
        active = self.aec_env.agent_selection
        return observations, {agent: {**info, "active_agent": active}
                              for agent, info in infos.items()}

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Play the action of the agent to move (``infos[agent]["active_agent"]``); the other
        agent's action is ignored."""
        if not self.agents:
            # The base class returns four empty dicts here, which a caller unpacking five
            # values meets as a confusing ValueError of its own.
            raise RuntimeError("no game in progress (the last one ended, or reset() was never "
                               "called): call reset()")
        if not isinstance(actions, Mapping):
            raise TypeError("actions must be a dict of agent -> action; got "
                            f"{type(actions).__name__} {actions!r}")
        active = self.aec_env.agent_selection
        if active not in actions:
            raise ValueError(f"actions has no entry for {active}, the agent to move "
                             f"(the other agent's action is ignored); got keys {list(actions)}")
        observations, rewards, terminations, truncations, infos = super().step(actions)
        # The base class hands out the AEC env's own info dicts, which later steps change, and
        # sets active_agent only while the game goes on: "" keeps the key there at the end.
        return (observations, rewards, terminations, truncations,
                {agent: {"active_agent": "", **info} for agent, info in infos.items()})


if hasattr(pettingzoo, "register") and ENV_ID not in pettingzoo.parallel_registry:
    pettingzoo.register("parallel", ENV_ID,
                        entry_point="gym_tictactoe.envs.pettingzoo:parallel_env")
