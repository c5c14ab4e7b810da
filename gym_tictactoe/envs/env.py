"""The TicTacToe-v0 environment: the agent plays one side, a built-in opponent the other."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from gym_tictactoe import checks, game
from gym_tictactoe.envs import rendering
from gym_tictactoe.envs.options import (
    NO_MOVE,
    WINNER_NAMES,
    EnvOptions,
    SharedOptions,
    reset_options,
)
from gym_tictactoe.game import starts
from gym_tictactoe.game.positions import Position, as_cell, from_board, new_position
from gym_tictactoe.players.opponents import Opponent, resolve_opponent
from gym_tictactoe.players.protocol import as_player
from gym_tictactoe.seeding import check_seed

__all__ = ["TicTacToeEnv"]


class RenderModes(list):
    """The render modes, as a list that says it holds any non-string. ``gym.make`` checks a
    render_mode against the list and calls string methods on one it does not find there
    (``render_mode=0`` is an AttributeError from inside Gymnasium); passed on, it reaches
    ``__init__``, which refuses it with the list of modes."""

    def __contains__(self, mode: object) -> bool:
        return not isinstance(mode, str) or super().__contains__(mode)


class TicTacToeEnv(SharedOptions, gym.Env[npt.NDArray[np.int8], int]):
    """Tic-tac-toe, or any m,n,k-game, against a built-in opponent that moves inside ``reset``
    and ``step``.

    ## Description
    The agent plays one side of a game on a ``rows`` x ``cols`` board where ``win_length`` marks
    in a row (across, down or diagonal) win; X moves first. The default is tic-tac-toe (3, 3, 3);
    free-style gomoku is (15, 15, 5). The opponent named by ``opponent`` plays the other side and
    replies within the same ``step``. Boards of at most 16 cells are solved exactly
    (``gym_tictactoe.game.solver``), so any policy can be measured against perfect play there.

    ## Action Space
    ``Discrete(rows * cols)``: the cell to mark, numbered row by row from 0; on 3x3::

        0 | 1 | 2
        3 | 4 | 5
        6 | 7 | 8

    ## Observation Space
    ``MultiDiscrete([3] * (rows * cols))`` (int8), the board from the agent's point of view:
    0 empty, 1 the agent's mark, 2 the opponent's. The same policy can play either side.
    ``gym_tictactoe.envs.wrappers.GridObservation`` gives the ``(rows, cols)`` grid.

    ## Starting State
    An empty board, or, when the agent plays O, the board after the opponent's first move.
    With ``start="random"`` (exploring starts), an episode starts with probability
    ``start_probability`` at a random unfinished position instead, the agent playing the side to
    move there (whatever ``agent_mark`` says; ``info["agent_mark"]`` tells): on boards of at most
    16 cells drawn uniformly from every reachable unfinished position, on bigger ones the board
    after a random number of random moves (see ``gym_tictactoe.game.starts``).

    ## Rewards
    +1 for a win, -1 for a loss or an illegal move (under ``illegal_action="lose"``), 0 for a
    draw and for every step before the end.

    ## Episode End
    The episode terminates when a side completes a line, the board is full, or the agent makes
    an illegal move under ``illegal_action="lose"``. It is never truncated: a game lasts at most
    ``ceil(rows * cols / 2)`` agent moves, so no time limit is registered.

    ## Information
    Every ``reset`` and ``step`` returns the same keys, each always of one type and never
    ``None`` (replay buffers such as Tianshou's store infos as arrays):

    * ``action_mask``: int8, 1 = legal cell; all zeros once the game is over.
    * ``agent_mark``: ``"X"`` or ``"O"``.
    * ``board``: int8, absolute: 0 empty, 1 X, 2 O.
    * ``opponent_action``: int, the cell the opponent marked in this step; -1 when it did not
      move.
    * ``winner``: ``"X"`` or ``"O"`` once a side has won (an illegal move forfeits); ``""``
      while nobody has, so ``""`` at the end of a game is a draw.
    * ``illegal_action``: bool, True when the agent's move was illegal and lost the game.

    ``action_masks()`` returns the legal cells as bools, for sb3-contrib's MaskablePPO (which
    finds it through SB3's ``env_method``). Gymnasium's wrappers do not forward it: on an env
    made by ``gym.make`` call ``env.get_wrapper_attr("action_masks")()``, which also finds a
    wrapper's own mapped mask (``CanonicalObservation``), or ``env.unwrapped.action_masks()``.

    ## Arguments
    ```python
    >>> import gymnasium as gym
    >>> import gym_tictactoe
    >>> env = gym.make("TicTacToe-v0", opponent="minimax", agent_mark="random")
    >>> env = gym.make("TicTacToe-v0", rows=4, cols=4, win_length=3, opponent="alphabeta")
    ```

    * ``opponent``: a name (``"random"``, ``"minimax"``, ``"alphabeta"``, ``"epsilon"``,
      ``"heuristic"``, ``"montecarlo"``, ``"mixture"``, ``"policy"``; see
      ``gym_tictactoe.players.opponents``),
      a spec such as ``"random+minimax*2"``, or any object with
      ``act(board, mark, rng) -> int``. ``"minimax"`` needs a board of at most 64 cells
      (beyond 16 it plays from proofs: slower, see docs/opponents.md).
      Default ``"random"``.
    * ``agent_mark``: ``"X"``, ``"O"`` or ``"random"`` (drawn at every reset). Default ``"X"``.
    * ``illegal_action``: ``"lose"`` (the episode ends with reward -1) or ``"raise"`` (a
      ``ValueError`` naming the move and the legal moves). Default ``"lose"``.
    * ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"``. Every mode marks
      the last move; images strike through a winning line (``gym_tictactoe.envs.rendering``).
    * ``cell_size``: pixels a cell of ``"rgb_array"`` and ``"human"`` images, 12-256. Default
      ``None``: 80 up to 9x9, less on bigger boards (about 720 pixels across).
    * ``rows``, ``cols``, ``win_length``: the board, 1 <= rows, cols <= 15 and
      1 <= win_length <= max(rows, cols). Default 3, 3, 3.
    * ``start``: ``"empty"`` or ``"random"`` (exploring starts, above). Default ``"empty"``.
      ``reset(options={"start": "random"})`` starts that one episode at a random position
      (``"empty"``: on the empty board), whatever ``start`` and ``start_probability`` say.
    * ``start_probability``: with ``start="random"``, the chance in [0, 1] that an episode
      starts at a random position. Default 1.0.

    ## Version History
    * v0: initial version; ``rows``, ``cols`` and ``win_length`` added without changing 3x3;
      ``start`` and ``start_probability`` added, the default (``"empty"``) unchanged;
      ``cell_size`` added, pictures framed and scaled with the board, the last move marked;
      every info key on every step (``winner`` ``""`` where it was missing or None,
      ``opponent_action`` -1 where it was missing, ``illegal_action`` False).
    """

    metadata = {"render_modes": RenderModes(["human", "ansi", "rgb_array"]), "render_fps": 4}

    def __init__(
        self,
        opponent: Opponent | str = "random",
        agent_mark: str = "X",
        illegal_action: str = "lose",
        render_mode: str | None = None,
        *,
        rows: int = 3,
        cols: int = 3,
        win_length: int = 3,
        start: str = "empty",
        start_probability: float = 1.0,
        cell_size: int | None = None,
    ) -> None:
        # The signature is spelled out for readers and type checkers; the checks are shared.
        self._set_options(EnvOptions(opponent, agent_mark, illegal_action, render_mode,
                                     rows=rows, cols=cols, win_length=win_length, start=start,
                                     start_probability=start_probability))
        self.opponent = opponent
        n = self._n = self.rules.n_cells
        self.observation_space = spaces.MultiDiscrete([3] * n, dtype=np.int8)
        self.action_space = spaces.Discrete(n)
        self.position: Position | None = None  # the game's state (positions.new_position)
        self.agent = game.X
        self.done = False
        self._no_moves = np.zeros(n, dtype=np.int8)
        self._screen = rendering.Screen(self.render_mode, self.metadata["render_fps"],
                                        rendering.check_cell_size(cell_size, self.rules.shape))
        self.last_move: int | None = None  # the cell the pictures mark

    @property
    def agent_mark(self) -> str:
        """The agent's mark in the current episode, ``"X"`` or ``"O"``."""
        return game.MARK_NAMES[self.agent]

    @property
    def opponent(self) -> Opponent:
        """The opponent as given (a name or spec is built for the env's board)."""
        return self._opponent

    @opponent.setter
    def opponent(self, opponent: Opponent | str) -> None:
        self._opponent = resolve_opponent(opponent, self.rules)
        self._player = as_player(self._opponent, self.rules)  # wrapped once, asked every move

    @property
    def code(self) -> game.Code | None:
        """The position's code; None before the first reset and on boards of over 16 cells."""
        return None if self.position is None else self.position.code

    def set_opponent(self, opponent: Opponent | str) -> None:
        """Play the following moves against another opponent (SB3: ``env_method``)."""
        self.opponent = opponent

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.int8], dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        options, mark = reset_options(self, options, "{'agent_mark': 'O'}")
        self.last_move = None
        if self._random_start(options):
            self._start_anywhere()
            self._player.reset(self.np_random)
            observation, _, _, _, info = self._finish_step(0.0, None)
            return observation, info
        if mark == "random":
            mark = "XO"[int(self.np_random.integers(2))]
        self.agent, self.done = game.MARKS[mark], False
        if self.position is None:
            self.position = new_position(self.rules)
        else:
            self.position.clear()
        self._player.reset(self.np_random)
        opponent_action = self._opponent_move() if self.agent == game.O else None
        observation, _, _, _, info = self._finish_step(0.0, opponent_action)
        return observation, info

    def step(
        self, action: int
    ) -> tuple[npt.NDArray[np.int8], float, bool, bool, dict[str, Any]]:
        position = self.position
        if self.done or position is None:
            raise RuntimeError("the episode is over (or never began): call reset() before step()")
        n = self._n  # a plain int in range is a cell as it is: as_cell's first case, inlined
        cell = action if type(action) is int and 0 <= action < n else as_cell(action, n)
        if cell is None or not position.play(cell):
            return self._illegal(action)
        self.last_move = cell
        opponent_action = None if position.terminal else self._opponent_move()
        winner = position.winner
        reward = 0.0 if winner == game.NO_WINNER else (1.0 if winner == self.agent else -1.0)
        return self._finish_step(reward, opponent_action)

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        if self.render_mode is None:
            gym.logger.warn("render() called with render_mode=None; pass render_mode to make()")
            return None
        board = self._no_moves if self.position is None else self.position.cells  # zeros: empty
        return self._screen.render(board, self.rules.shape, self.last_move, self.rules.win_length)

    def close(self) -> None:
        self._screen.close()

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal cells of the current position (for sb3-contrib's MaskablePPO)."""
        if self.done or self.position is None:
            return np.zeros(self.rules.n_cells, dtype=bool)
        return self.position.mask().view(bool)  # a new array of 0 and 1: a bool view of it

    def _random_start(self, options: dict[str, Any]) -> bool:
        """Whether this episode starts at a random position (drawing the coin if need be)."""
        if "start" in options:
            return starts.check_start(options["start"], "options['start']") == "random"
        chosen = starts.random_starts(self.np_random, 1, self.start, self.start_probability)
        return chosen is not None and bool(chosen[0])

    def _start_anywhere(self) -> None:
        """Put the game at a random unfinished position, the agent to move there."""
        cells, _ = starts.draw_starts(self.rules, self.np_random, 1)
        self.agent, self.done = int(starts.side_to_move(cells)[0]), False
        self.position = from_board(self.rules, cells[0])

    def _opponent_move(self) -> int:
        position = self.position
        # reset() made the generator (the np_random property would check on every move).
        move = self._player.move(position, self._np_random)
        n = self._n
        cell = move if type(move) is int and 0 <= move < n else as_cell(move, n)
        if cell is None or not position.play(cell):
            raise RuntimeError(f"opponent {self.opponent!r} played {move!r}; legal moves: "
                               f"{np.flatnonzero(position.mask()).tolist()}")
        self.last_move = cell
        return cell

    def _illegal(self, action: Any) -> tuple[npt.NDArray[np.int8], float, bool, bool, dict]:
        if self.illegal_action == "raise":
            raise ValueError(f"illegal action {checks.shown(action)}: legal moves are "
                             f"{np.flatnonzero(self.position.mask()).tolist()}")
        return self._finish_step(-1.0, None, illegal=True)

    def _finish_step(self, reward: float, opponent_action: int | None, illegal: bool = False):
        """The step's results; ``illegal``: the agent's move was illegal and forfeits the game."""
        position = self.position
        done = self.done = illegal or position.terminal
        # The legal mask is already all zeros at finished positions; an illegal move ends the
        # game at a position that is not finished.
        winner = int(game.SWAP[self.agent]) if illegal else position.winner  # illegal: forfeit
        info = {"action_mask": self._no_moves.copy() if done else position.mask(),
                "agent_mark": game.MARK_NAMES[self.agent], "board": position.cells.copy(),
                "opponent_action": NO_MOVE if opponent_action is None else opponent_action,
                "winner": WINNER_NAMES[winner], "illegal_action": illegal}
        if self.render_mode == "human" and not illegal:
            self.render()
        return position.view(self.agent), reward, done, False, info

    def _observation(self) -> npt.NDArray[np.int8]:
        return self.position.view(self.agent)
