"""TicTacToeVectorEnv as a Stable-Baselines3 ``VecEnv``: SB3 trains on thousands of boards without
one Python env (and one Monitor) per board.

:class:`TicTacToeSB3VecEnv` steps all boards with the vector env's NumPy look-ups and presents the
result the way SB3's ``DummyVecEnv`` of monitored ``TicTacToeEnv`` s does:

* **Same-step reset.** The vector env autoresets in Gymnasium's ``NEXT_STEP`` mode (a finished
  board waits one step, ignoring its action); SB3 expects the reset within the step that ends the
  episode. So after every step the adapter calls the vector env's
  ``reset(options={"reset_mask": done})``, which restarts just the finished boards (drawing their
  seats and letting the opponent open where it plays X), and returns the new episodes' first
  observations. The final observation of board ``i`` goes to ``infos[i]["terminal_observation"]``
  with ``infos[i]["TimeLimit.truncated"] = False`` (games end by themselves).
* **Episode statistics** as Monitor records them, ``infos[i]["episode"] = {"r", "l", "t"}``, so
  SB3 logs ``ep_rew_mean`` and ``ep_len_mean``; ``env_is_wrapped(Monitor)`` is therefore True.
  ``infos[i]["winner"]`` is ``"X"``, ``"O"`` or ``""`` (a draw) there too. Boards whose episode
  goes on get an empty info dict: building the single env's full info per board would cost more
  than the step.
* **Masks.** ``env_method("action_masks")`` (what sb3-contrib's MaskablePPO calls) returns one
  bool row per board, and :meth:`action_masks` the whole ``(num_envs, 9)`` array.
* **Seeding.** One generator drives every board: ``seed(s)`` seeds the next ``reset`` with ``s``.

Example::

    from sb3_contrib import MaskablePPO
    from agents.sb3.vec_env import TicTacToeSB3VecEnv

    env = TicTacToeSB3VecEnv(256, opponent="random+minimax", agent_mark="random", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, seed=0).learn(50_000)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from agents.sb3.policy import board_space
from gym_tictactoe.checks import check_flag
from gym_tictactoe.envs.options import WINNER_NAMES
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.envs.wrappers import one_hot, one_hot_space
from gym_tictactoe.game.symmetry import canonicalize, transform_cells, uncanonical_actions
from gym_tictactoe.players.opponents import Opponent
from gym_tictactoe.seeding import check_seed

__all__ = ["TicTacToeSB3VecEnv"]

# Methods whose vector-env result has one entry per board; env_method hands out entry i to board i.
PER_BOARD_METHODS = ("action_masks", "render")


class TicTacToeSB3VecEnv(VecEnv):
    """``num_envs`` boards of TicTacToe-v0 as an SB3 ``VecEnv`` (see the module docstring).

    Args:
        num_envs: the number of boards.
        opponent: what the vector env accepts: a table opponent's name, a ``parse_opponent`` spec
            such as ``"random+heuristic+minimax"``, or an opponent object.
        agent_mark: ``"X"``, ``"O"`` or ``"random"`` (drawn per board per episode).
        one_hot: observe ``Box(0, 1, (27,), float32)`` planes (empty, own, opponent's, as
            ``OneHotObservation``) instead of the ``MultiDiscrete([3] * 9)`` board.
        seed: seeds the first reset.
        rows, cols, win_length: the board, as in ``TicTacToeEnv`` (3, 3, 3 by default).
        canonical: show each board in its canonical orientation (as ``CanonicalObservation``):
            observations and masks mapped to the lowest-code image, actions mapped back.
        start, start_probability: exploring starts, as in ``TicTacToeVectorEnv``.

    An illegal move loses the game (reward -1), so plain PPO and DQN can learn legality.
    ``get_attr``, ``set_attr`` and ``env_method`` reach the one vector env shared by all boards:
    attributes read the same for every index, and setting an attribute or calling a method that
    is not per board (``set_opponent``) must address every board at once.
    """

    def __init__(self, num_envs: int = 8, opponent: Opponent | str = "random",
                 agent_mark: str = "random", one_hot: bool = False,
                 seed: int | None = None, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3, canonical: bool = False, start: str = "empty",
                 start_probability: float = 1.0) -> None:
        self.venv = TicTacToeVectorEnv(num_envs, opponent=opponent, agent_mark=agent_mark,
                                       rows=rows, cols=cols, win_length=win_length, start=start,
                                       start_probability=start_probability)
        self.rules = self.venv.rules
        self.one_hot = check_flag(one_hot, "one_hot")
        self.canonical = check_flag(canonical, "canonical")
        self._symmetry = np.zeros(num_envs, dtype=np.intp)  # of each board's last observation
        # MaskablePPO's board (agents.sb3.policy.board_space: int16 past 42 cells, where SB3's
        # int8 sum of the space's sizes wraps around); the env's int8 boards fit either.
        space: spaces.Space = (one_hot_space(self.rules.n_cells) if self.one_hot
                               else board_space(self.rules.n_cells))
        super().__init__(self.venv.num_envs, space, self.venv.single_action_space)
        self._actions = np.zeros(self.num_envs, dtype=np.int64)
        self._returns = np.zeros(self.num_envs, dtype=np.float64)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._t_start = time.time()
        if seed is not None:
            self.seed(seed)

    def reset(self) -> npt.NDArray:
        """Reset every board (with the pending seed and options; options must be alike)."""
        options = self._options[0]
        if any(o != options for o in self._options):
            raise ValueError("the boards share one vector env: options must be the same for all")
        obs, _ = self.venv.reset(seed=self._seeds[0], options=options or None)
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._encode(obs)

    def step_async(self, actions: npt.ArrayLike) -> None:
        actions = np.asarray(actions)
        if actions.size != self.num_envs or actions.ndim > 2:
            raise ValueError(f"actions must be one cell per board, shape ({self.num_envs},) or "
                             f"({self.num_envs}, 1); got shape {actions.shape}")
        self._actions = actions.reshape(self.num_envs)
        if self.canonical and self._actions.dtype.kind in "iu":
            self._actions = uncanonical_actions(self.rules, self._actions, self._symmetry)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            obs = self._restart(obs, dones, info["winner"], infos)
        return self._encode(obs), rewards, dones, infos

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal cells of every board, bool ``(num_envs, cells)`` (in each board's canonical
        orientation when ``canonical``)."""
        masks = self.venv.action_masks()
        return transform_cells(self.rules, masks, self._symmetry) if self.canonical else masks

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next reset's generator, which drives every board, with ``seed``
        (0 <= seed < 2**32, or None)."""
        self._seeds = [check_seed(seed)] * self.num_envs
        return self._seeds

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self.venv, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._require_all(indices, f"set_attr({attr_name!r})")
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        boards = self._get_indices(indices)
        if method_name not in PER_BOARD_METHODS:
            self._require_all(indices, f"env_method({method_name!r})")
        # The adapter's own masks: in the canonical orientation when the boards are shown so.
        owner = self if method_name == "action_masks" else self.venv
        result = getattr(owner, method_name)(*method_args, **method_kwargs)
        if method_name in PER_BOARD_METHODS and result is not None:
            return [result[i] for i in boards]
        return [result] * len(boards)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: VecEnvIndices = None) -> list[bool]:
        # The adapter writes Monitor's episode statistics itself, and is wrapped in nothing else.
        return [wrapper_class is Monitor] * len(self._get_indices(indices))

    def _restart(self, obs: npt.NDArray[np.int8], dones: npt.NDArray[np.bool_],
                 winner: npt.NDArray[np.int8], infos: list[dict[str, Any]]) -> npt.NDArray:
        """Reset the finished boards now; their final step goes into ``infos``."""
        ended = np.flatnonzero(dones)
        # Whole arrays turned into Python numbers at once: a third of the boards may end per step.
        columns = (ended.tolist(), self._encode(obs[ended], keep=False), winner[ended].tolist(),
                   np.round(self._returns[ended], 6).tolist(), self._lengths[ended].tolist())
        elapsed = round(time.time() - self._t_start, 6)
        for board, final, mark, ep_return, length in zip(*columns, strict=True):
            infos[board] = {"terminal_observation": final, "TimeLimit.truncated": False,
                            "winner": WINNER_NAMES[mark],
                            "episode": {"r": ep_return, "l": length, "t": elapsed}}
        self._returns[ended] = 0.0
        self._lengths[ended] = 0
        return self.venv.reset(options={"reset_mask": dones})[0]

    def _encode(self, obs: npt.NDArray[np.int8], keep: bool = True) -> npt.NDArray:
        """The observations SB3 sees: canonical images (``keep``: remember their symmetries
        for the next actions and masks), one-hot planes."""
        if self.canonical:
            obs, symmetry = canonicalize(self.rules, obs)
            if keep:
                self._symmetry = symmetry
        return one_hot(obs) if self.one_hot else obs

    def _require_all(self, indices: VecEnvIndices, what: str) -> None:
        if sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(f"{what} acts on the vector env that all boards share: "
                             "call it for every board (indices=None)")
