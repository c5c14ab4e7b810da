"""PettingZoo's order enforcement, made cheap for ``gym_tictactoe.envs.pettingzoo`` (which needs the
``multiagent`` extra and says so; this module is imported only from there)."""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper


def _after_reset(name: str) -> property:
    def get(self: OrderEnforcingWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)
    return property(get, doc=f"The env's ``{name}`` (an AttributeError before reset()).")


class OrderEnforcing(OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with the same checks and errors, its hot paths
    direct. The base class answers every attribute through ``__getattr__``, which Python calls
    only after a failed look-up; that costs more than a whole move of ``raw_env``. Here the
    attributes a game loop reads are properties, and ``last()`` and ``step()`` go straight to the
    env once the base class's checks pass."""

    agent_selection = _after_reset("agent_selection")
    agents = _after_reset("agents")
    rewards = _after_reset("rewards")
    terminations = _after_reset("terminations")
    truncations = _after_reset("truncations")
    infos = _after_reset("infos")
    num_agents = _after_reset("num_agents")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:  # where the base class's first read fails, with its message
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:  # else the base class errors or warns
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)
