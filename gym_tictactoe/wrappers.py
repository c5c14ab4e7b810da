"""Other encodings of the board for ``TicTacToe-v0``'s observation.

The environment observes the board from the agent's side (0 empty, 1 own mark, 2 opponent's),
so one policy can play either seat. These wrappers change only the observation; rewards,
actions and ``info`` (with its ``action_mask``) pass through unchanged.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from gym_tictactoe import game

__all__ = ["AbsoluteBoard", "GridObservation", "OneHotObservation"]

# Row v is the one-hot code of cell value v; indexing it with a board gives (cells, planes).
_ONE_HOT = np.eye(3, dtype=np.float32)
_ONE_HOT.setflags(write=False)


def one_hot_space(n_cells: int = game.N_CELLS) -> spaces.Box:
    """``Box(0, 1, (3 * n_cells,), float32)``: what ``OneHotObservation`` observes."""
    return spaces.Box(0.0, 1.0, (3 * n_cells,), dtype=np.float32)


ONE_HOT_SPACE = one_hot_space()  # 3x3's


def one_hot(boards: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Boards ``(..., n)`` of 0/1/2 as ``(..., 3n)`` one-hot planes, planes first (new array)."""
    cells = np.asarray(boards, dtype=np.intp)
    return _ONE_HOT[cells].swapaxes(-1, -2).reshape(*cells.shape[:-1], 3 * cells.shape[-1])


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

    Example:
        >>> from gym_tictactoe.env import TicTacToeEnv
        >>> from gym_tictactoe.wrappers import OneHotObservation
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

    Example:
        >>> from gym_tictactoe.env import TicTacToeEnv
        >>> from gym_tictactoe.wrappers import AbsoluteBoard
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
        if self.env.unwrapped.agent_mark == "O":
            return game.SWAP[observation]
        return np.array(observation, dtype=np.int8)



class GridObservation(
    gym.ObservationWrapper[npt.NDArray[np.int8], int, npt.NDArray[np.int8]],
    gym.utils.RecordConstructorArgs,
):
    """The board as a ``(rows, cols)`` grid instead of a flat row of cells (for convolutions).

    The observation becomes ``MultiDiscrete`` of shape ``(rows, cols)``, values as before (0 empty,
    1 own, 2 opponent's, or X/O over :class:`AbsoluteBoard`); actions stay flat cell numbers.

    Example:
        >>> from gym_tictactoe.env import TicTacToeEnv
        >>> from gym_tictactoe.wrappers import GridObservation
        >>> env = GridObservation(TicTacToeEnv(rows=4, cols=5, win_length=4))
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (4, 5)
    """

    def __init__(self, env: gym.Env[npt.NDArray[np.int8], int]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        n = _require_board_space(env)
        rules = getattr(env.unwrapped, "rules", None)
        if not isinstance(rules, game.Rules) or rules.n_cells != n:
            raise TypeError(f"{env.unwrapped!r} has no board of {n} cells; wrap a TicTacToeEnv")
        self.shape = rules.shape
        self.observation_space = spaces.MultiDiscrete(np.full(self.shape, 3), dtype=np.int8)

    def observation(self, observation: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        return np.asarray(observation, dtype=np.int8).reshape(self.shape)
