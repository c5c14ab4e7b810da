"""The TicTacToe-v0 environment: the agent plays one side, a built-in opponent the other."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from gym_tictactoe import game, rendering
from gym_tictactoe.opponents import Opponent, act_on_code, reset_opponent, resolve_opponent

AGENT_MARKS = ("X", "O", "random")
ILLEGAL_ACTIONS = ("lose", "raise")
# The board from each side's point of view (1 = own mark, 2 = the other's), for every code.
VIEWS = np.stack([game.CELLS, game.SWAP[game.CELLS]])
VIEWS.setflags(write=False)
# Python-list copies of the tables ``step`` reads: a list look-up returns a plain int or bool in
# a fraction of the time of a NumPy scalar look-up and its conversion. _NEXT[code][cell] is -1
# when the move is illegal; only reachable codes get a row (the env never holds another), which
# keeps the import cost to about a millisecond.
_NEXT: list[list[int] | None] = [None] * game.N_CODES
for _code, _row in zip(game.REACHABLE.tolist(), game.NEXT[game.REACHABLE].tolist(), strict=True):
    _NEXT[_code] = _row
_TERMINAL: list[bool] = game.TERMINAL.tolist()
_WINNER: list[int] = game.WINNER.tolist()
_NO_MOVES = np.zeros(game.N_CELLS, dtype=np.int8)
_NO_MOVES.setflags(write=False)


def check_choice(name: str, value: Any, allowed: tuple) -> Any:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}; got {value!r}")
    return value


def as_cell(action: Any) -> int | None:
    """The cell an action names, or None when it is not an integer 0..8."""
    if type(action) is int:  # the common case first; bool is not an int action
        return action if 0 <= action < game.N_CELLS else None
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
        action = action.reshape(())[()]
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        return None
    return int(action) if 0 <= action < game.N_CELLS else None


class TicTacToeEnv(gym.Env[npt.NDArray[np.int8], int]):
    """Tic-tac-toe against a built-in opponent, which moves inside ``reset`` and ``step``.

    ## Description
    The agent plays one side of a 3x3 game of tic-tac-toe (X moves first); the opponent named
    by ``opponent`` plays the other side and replies within the same ``step``. The game is solved
    exactly (``gym_tictactoe.solver``), so any policy can be measured against perfect play.

    ## Action Space
    ``Discrete(9)``: the cell to mark, numbered row by row::

        0 | 1 | 2
        3 | 4 | 5
        6 | 7 | 8

    ## Observation Space
    ``MultiDiscrete([3] * 9)`` (int8), the board from the agent's point of view: 0 empty,
    1 the agent's mark, 2 the opponent's. The same policy can play either side.

    ## Starting State
    An empty board, or, when the agent plays O, the board after the opponent's first move.

    ## Rewards
    +1 for a win, -1 for a loss or an illegal move (under ``illegal_action="lose"``), 0 for a
    draw and for every step before the end.

    ## Episode End
    The episode terminates when a side completes a line, the board is full, or the agent makes
    an illegal move under ``illegal_action="lose"``. It is never truncated: a game lasts at most
    five agent moves, so no time limit is registered.

    ## Information
    Every ``reset`` and ``step`` returns ``action_mask`` (int8, 1 = legal cell), ``agent_mark``
    (``"X"`` or ``"O"``) and ``board`` (absolute: 0 empty, 1 X, 2 O); ``opponent_action`` when the
    opponent moved; at the end ``winner`` (``"X"``, ``"O"`` or ``None``) and, after an illegal move,
    ``illegal_action=True``. ``env.action_masks()`` returns the mask for sb3-contrib's MaskablePPO.

    ## Arguments
    ```python
    >>> import gymnasium as gym
    >>> import gym_tictactoe
    >>> env = gym.make("TicTacToe-v0", opponent="minimax", agent_mark="random")
    ```
    * ``opponent``: a name (``"random"``, ``"minimax"``, ``"epsilon"``, ``"heuristic"``,
      ``"montecarlo"``, ``"mixture"``, ``"policy"``; see ``gym_tictactoe.opponents``) or any object
      with ``act(board, mark, rng) -> int``. Default ``"random"``.
    * ``agent_mark``: ``"X"``, ``"O"`` or ``"random"`` (drawn at every reset). Default ``"X"``.
    * ``illegal_action``: ``"lose"`` (the episode ends with reward -1) or ``"raise"`` (a
      ``ValueError`` naming the move and the legal moves). Default ``"lose"``.
    * ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"``.

    ## Version History
    * v0: initial version.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        opponent: Opponent | str = "random",
        agent_mark: str = "X",
        illegal_action: str = "lose",
        render_mode: str | None = None,
    ) -> None:
        self.opponent = resolve_opponent(opponent)
        self.agent_mark_option = check_choice("agent_mark", agent_mark, AGENT_MARKS)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        modes = (None, *self.metadata["render_modes"])
        self.render_mode = check_choice("render_mode", render_mode, modes)
        self.observation_space = spaces.MultiDiscrete([3] * game.N_CELLS, dtype=np.int8)
        self.action_space = spaces.Discrete(game.N_CELLS)
        self.code: game.Position | None = None
        self.agent = game.X
        self.done = False
        self._window: rendering.Window | None = None

    @property
    def agent_mark(self) -> str:
        """The agent's mark in the current episode, ``"X"`` or ``"O"``."""
        return game.MARK_NAMES[self.agent]

    def set_opponent(self, opponent: Opponent | str) -> None:
        """Play the following moves against another opponent (SB3: ``env_method``)."""
        self.opponent = resolve_opponent(opponent)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.int8], dict[str, Any]]:
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict such as {{'agent_mark': 'O'}}; "
                             f"got {options!r}")
        mark = check_choice("agent_mark", (options or {}).get("agent_mark", self.agent_mark_option),
                       AGENT_MARKS)
        if mark == "random":
            mark = "XO"[int(self.np_random.integers(2))]
        self.agent, self.code, self.done = game.MARKS[mark], game.EMPTY_BOARD, False
        reset_opponent(self.opponent, self.np_random)
        opponent_action = self._opponent_move() if self.agent == game.O else None
        observation, _, _, _, info = self._finish_step(0.0, opponent_action)
        return observation, info

    def step(
        self, action: int
    ) -> tuple[npt.NDArray[np.int8], float, bool, bool, dict[str, Any]]:
        if self.code is None or self.done:
            raise RuntimeError("the episode is over (or never began): call reset() before step()")
        cell = as_cell(action)
        code = -1 if cell is None else _NEXT[self.code][cell]
        if code < 0:
            return self._illegal(action)
        self.code = code
        opponent_action = None if _TERMINAL[code] else self._opponent_move()
        winner = _WINNER[self.code]
        reward = 0.0 if winner == game.NO_WINNER else (1.0 if winner == self.agent else -1.0)
        return self._finish_step(reward, opponent_action)

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        if self.render_mode is None:
            gym.logger.warn("render() called with render_mode=None; pass render_mode to make()")
            return None
        code = game.EMPTY_BOARD if self.code is None else self.code
        if self.render_mode == "ansi":
            return rendering.ansi(code)
        frame = rendering.rgb_array(code)
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = rendering.Window(fps=self.metadata["render_fps"])
        self._window.show(frame)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal cells of the current position (for sb3-contrib's MaskablePPO)."""
        if self.code is None or self.done:
            return np.zeros(game.N_CELLS, dtype=bool)
        return game.LEGAL_MASK[self.code].astype(bool)

    def _opponent_move(self) -> int:
        mark = game.X + game.O - self.agent
        move = act_on_code(self.opponent, self.code, mark, self.np_random)
        cell = as_cell(move)
        code = -1 if cell is None else _NEXT[self.code][cell]
        if code < 0:
            raise RuntimeError(
                f"opponent {self.opponent!r} played {move!r}; legal moves: "
                f"{game.legal_moves(self.code)}"
            )
        self.code = code
        return cell

    def _illegal(self, action: Any) -> tuple[npt.NDArray[np.int8], float, bool, bool, dict]:
        legal = game.legal_moves(self.code)
        if self.illegal_action == "raise":
            raise ValueError(f"illegal action {action!r}: legal moves are {legal}")
        self.done = True
        info = self._info()
        info["illegal_action"] = True
        # The illegal move forfeits the game: the opponent is the winner.
        info["winner"] = game.MARK_NAMES[int(game.SWAP[self.agent])]
        return self._observation(), -1.0, True, False, info

    def _finish_step(self, reward: float, opponent_action: int | None):
        self.done = _TERMINAL[self.code]
        info = self._info()
        if opponent_action is not None:
            info["opponent_action"] = opponent_action
        if self.done:
            info["winner"] = game.MARK_NAMES.get(_WINNER[self.code])
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self.done, False, info

    def _observation(self) -> npt.NDArray[np.int8]:
        return VIEWS[self.agent - 1, self.code].copy()

    def _info(self) -> dict[str, Any]:
        """The keys of every info; the caller adds the step's own (opponent_action, winner)."""
        # LEGAL_MASK is already all zeros at finished positions; an illegal move ends the game
        # at a position that is not finished.
        mask = _NO_MOVES if self.done else game.LEGAL_MASK[self.code]
        return {"action_mask": mask.copy(), "agent_mark": game.MARK_NAMES[self.agent],
                "board": game.CELLS[self.code].copy()}
