"""Other encodings of the board for ``TicTacToe-v0``'s observation.

The environment observes the board from the agent's side (0 empty, 1 own mark, 2 opponent's),
so one policy can play either seat. ``OneHotObservation``, ``AbsoluteBoard`` and
``GridObservation`` change only the observation; rewards, actions and ``info`` (with its
``action_mask``) pass through unchanged. ``CanonicalObservation`` shows every position in one
orientation of the board's symmetry group, and so maps the action and the mask too.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from gym_tictactoe import game
from gym_tictactoe.game import symmetry
from gym_tictactoe.game.positions import as_cell

__all__ = ["AbsoluteBoard", "CanonicalObservation", "GridObservation", "OneHotObservation"]

# Row v is the one-hot code of cell value v; indexing it with a board gives (cells, planes).
_ONE_HOT = np.eye(3, dtype=np.float32)
_ONE_HOT.setflags(write=False)


def one_hot_space(n_cells: int) -> spaces.Box[np.float32]:
    """``Box(0, 1, (3 * n_cells,), float32)``: what ``OneHotObservation`` observes."""
    return spaces.Box(0.0, 1.0, (3 * n_cells,), dtype=np.float32)


def one_hot(boards: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Boards ``(..., n)`` of 0/1/2 as ``(..., 3n)`` one-hot planes, planes first (new array)."""
    cells = np.asarray(boards, dtype=np.intp)
    return _ONE_HOT[cells].swapaxes(-1, -2).reshape(*cells.shape[:-1], 3 * cells.shape[-1])


def _require_rules(env: gym.Env) -> game.Rules:
    """The rules of the board under the env's ``MultiDiscrete([3] * cells)`` observation."""
    n = _require_board_space(env)
    rules = getattr(env.unwrapped, "rules", None)
    if not isinstance(rules, game.Rules) or rules.n_cells != n:
        raise TypeError(f"{env.unwrapped!r} has no board of {n} cells; wrap a TicTacToeEnv")
    return rules


def _require_board_space(env: gym.Env) -> int:
    """The number of cells of the env's ``MultiDiscrete([3] * n)`` board observation."""
    space = env.observation_space
    if not (isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1
            and (space.nvec == 3).all()):
        raise ValueError(f"expected a MultiDiscrete([3] * cells) board; got {space}")
    return int(space.nvec.size)


class OneHotObservation(
    gym.ObservationWrapper[npt.NDArray[np.float32], int, npt.NDArray[np.int8]],
    gym.utils.RecordConstructorArgs,
):
    """One-hot planes of the board, flat, for neural networks.

    The observation becomes ``Box(0, 1, (3 * cells,), float32)`` (27 on 3x3): three planes of
    the board's cells, planes first, cells row by row inside each plane. Over the environment's
    own observation the planes are empty cells (``obs[0:9]`` on 3x3), the agent's marks
    (``obs[9:18]``) and the opponent's marks (``obs[18:27]``); over :class:`AbsoluteBoard` they
    are empty, X and O. Exactly one plane is 1 in every cell.

    Examples:
        >>> from gym_tictactoe.envs.env import TicTacToeEnv
        >>> from gym_tictactoe.envs.wrappers import OneHotObservation
        >>> env = OneHotObservation(TicTacToeEnv(agent_mark="X"))
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((27,), dtype('float32'))
        >>> obs.reshape(3, 9)[0].tolist()  # the empty plane: every cell is empty
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
        >>> obs, *_ = env.step(4)
        >>> obs.reshape(3, 9)[1].tolist()  # the agent's plane: its X in the centre
        [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, env: gym.Env[npt.NDArray[np.int8], int]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self.observation_space = one_hot_space(_require_board_space(env))

    def observation(self, observation: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
        return one_hot(observation)


class AbsoluteBoard(
    gym.ObservationWrapper[npt.NDArray[np.int8], int, npt.NDArray[np.int8]],
    gym.utils.RecordConstructorArgs,
):
    """The absolute board, 0 empty, 1 X, 2 O, whichever side the agent plays.

    The observation space stays ``MultiDiscrete([3] * cells)`` (int8), but the values name marks
    rather than sides: the observation equals ``info["board"]``. A policy must then tell from
    ``info["agent_mark"]`` (or by counting marks) which side it plays.

    Examples:
        >>> from gym_tictactoe.envs.env import TicTacToeEnv
        >>> from gym_tictactoe.envs.wrappers import AbsoluteBoard
        >>> env = AbsoluteBoard(TicTacToeEnv(agent_mark="O"))
        >>> obs, info = env.reset(seed=0)
        >>> bool((obs == info["board"]).all()), int((obs == 1).sum())  # X has moved
        (True, 1)
    """

    def __init__(self, env: gym.Env[npt.NDArray[np.int8], int]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        n = _require_board_space(env)
        if not hasattr(env.unwrapped, "agent_mark"):
            raise TypeError(f"{env.unwrapped!r} has no agent_mark; wrap a TicTacToeEnv")
        self.observation_space = spaces.MultiDiscrete([3] * n, dtype=np.int8)

    def observation(self, observation: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        # The env sees its own mark as 1, so only an O agent's view needs the marks exchanged.
        unwrapped: Any = self.env.unwrapped  # a TicTacToeEnv (checked in __init__)
        if unwrapped.agent_mark == "O":
            return game.SWAP[observation]
        return np.array(observation, dtype=np.int8)


class GridObservation(
    gym.ObservationWrapper[npt.NDArray[np.int8], int, npt.NDArray[np.int8]],
    gym.utils.RecordConstructorArgs,
):
    """The board as a ``(rows, cols)`` grid instead of a flat row of cells (for convolutions).

    The observation becomes ``MultiDiscrete`` of shape ``(rows, cols)``, values as before (0 empty,
    1 own, 2 opponent's, or X/O over :class:`AbsoluteBoard`); actions stay flat cell numbers.

    Examples:
        >>> from gym_tictactoe.envs.env import TicTacToeEnv
        >>> from gym_tictactoe.envs.wrappers import GridObservation
        >>> env = GridObservation(TicTacToeEnv(rows=4, cols=5, win_length=4))
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (4, 5)
    """

    def __init__(self, env: gym.Env[npt.NDArray[np.int8], int]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self.shape = _require_rules(env).shape
        self.observation_space = spaces.MultiDiscrete(np.full(self.shape, 3), dtype=np.int8)

    def observation(self, observation: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        return np.asarray(observation, dtype=np.int8).reshape(self.shape)


class CanonicalObservation(
    gym.Wrapper[npt.NDArray[np.int8], int, npt.NDArray[np.int8], int],
    gym.utils.RecordConstructorArgs,
):
    """Every position seen in one orientation: the canonical image among the board's symmetric
    images (the lowest code, as ``Rules.canonical``), so a network meets the 8 rotations and
    reflections of a square board's position (4 on a rectangle) as one input.

    The observation is the canonical image of the env's; the action names a cell of that image
    and is mapped back through the symmetry before the env sees it; the mask
    (``info["action_mask"]`` and ``action_masks()``, which sb3-contrib's MaskablePPO reads) is
    mapped with the observation. ``info["symmetry"]`` is the index into ``rules.symmetries`` of
    the symmetry applied (``image = board[rules.symmetries[s]]``); the other info keys stay as
    the env gives them (``board`` absolute and unrotated, ``opponent_action`` an env cell). An
    action that names no cell passes through unchanged, and the env judges it.

    Wrap it inside the encodings: ``OneHotObservation(CanonicalObservation(env))``. Works on
    every board (per-code tables up to 12 cells, computed images beyond;
    ``gym_tictactoe.game.symmetry.canonicalize`` does the same for batches).

    Examples:
        >>> from gym_tictactoe.envs.env import TicTacToeEnv
        >>> from gym_tictactoe.envs.wrappers import CanonicalObservation
        >>> env = CanonicalObservation(TicTacToeEnv(agent_mark="O", opponent="minimax"))
        >>> obs, info = env.reset(seed=0)  # X opened on the side cell 5; the image has it on 1
        >>> info["board"].tolist(), obs.tolist(), info["action_mask"].tolist()
        ([0, 0, 0, 0, 0, 1, 0, 0, 0], [0, 2, 0, 0, 0, 0, 0, 0, 0], [1, 0, 1, 1, 1, 1, 1, 1, 1])
        >>> obs, reward, terminated, truncated, info = env.step(0)  # the image's cell 0
        >>> int(info["board"][2]), info["symmetry"]  # is the board's cell 2, where O now is
        (2, 2)
    """

    def __init__(self, env: gym.Env[npt.NDArray[np.int8], int]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self.rules = _require_rules(env)
        self.symmetry = 0  # of the last observation

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[npt.NDArray[np.int8], dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        return self._canonical(observation, info)

    def step(self, action: int
             ) -> tuple[npt.NDArray[np.int8], SupportsFloat, bool, bool, dict[str, Any]]:
        cell = as_cell(action, self.rules.n_cells)
        if cell is not None:
            action = int(self.rules.symmetries[self.symmetry, cell])
        observation, reward, terminated, truncated, info = self.env.step(action)
        observation, info = self._canonical(observation, info)
        return observation, reward, terminated, truncated, info

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The env's ``action_masks()`` on the canonical image of the last observation."""
        mask = np.asarray(self.env.get_wrapper_attr("action_masks")())
        return mask[self.rules.symmetries[self.symmetry]]

    def _canonical(self, observation: npt.NDArray[np.int8], info: dict[str, Any]
                   ) -> tuple[npt.NDArray[np.int8], dict[str, Any]]:
        images, chosen = symmetry.canonicalize(self.rules, np.asarray(observation)[None])
        self.symmetry = int(chosen[0])
        info = dict(info)
        if "action_mask" in info:
            info["action_mask"] = np.asarray(info["action_mask"])[
                self.rules.symmetries[self.symmetry]]
        info["symmetry"] = self.symmetry
        return images[0], info
