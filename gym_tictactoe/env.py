"""The TicTacToe-v0 environment: the agent plays one side, a built-in opponent the other."""

from __future__ import annotations

from functools import cache
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from gym_tictactoe import checks, game, rendering, starts
from gym_tictactoe.opponents import (
    Opponent,
    act_on_code,
    act_on_stones,
    reset_opponent,
    resolve_opponent,
)
from gym_tictactoe.seeding import check_seed

AGENT_MARKS = ("X", "O", "random")
ILLEGAL_ACTIONS = ("lose", "raise")


@cache
def views(rules: game.Rules = game.TICTACTOE) -> npt.NDArray[np.int8]:
    """(2, codes, cells): every code from each side's point of view (1 = own mark, 2 = the
    other's); tabled boards only."""
    cells = rules.tables.cells
    table = np.stack([cells, game.SWAP[cells]])
    table.setflags(write=False)
    return table


VIEWS = views()


@cache
def step_lists(rules: game.Rules) -> tuple[list, list[bool], list[int]]:
    """Python-list copies of the tables ``step`` reads on a tabled board: a list look-up returns
    a plain int or bool in a fraction of the time of a NumPy scalar look-up and its conversion.
    ``next[code][cell]`` is -1 when the move is illegal; only reachable codes get a row (the env
    never holds another), which keeps the cost for 3x3 to about a millisecond."""
    tables = rules.tables
    nxt: list[list[int] | None] = [None] * rules.n_codes
    rows = tables.next[rules.reachable].tolist()
    for code, row in zip(rules.reachable.tolist(), rows, strict=True):
        nxt[code] = row
    return nxt, tables.terminal.tolist(), tables.winner.tolist()


class RenderModes(list):
    """The render modes, as a list that says it holds any non-string. ``gym.make`` checks a
    render_mode against the list and calls string methods on one it does not find there
    (``render_mode=0`` is an AttributeError from inside Gymnasium); passed on, it reaches
    ``__init__``, which refuses it with the list of modes."""

    def __contains__(self, mode: object) -> bool:
        return not isinstance(mode, str) or super().__contains__(mode)


def check_choice(name: str, value: Any, allowed: tuple) -> Any:
    """``value`` if it is one of ``allowed``, else a ValueError listing them
    (``checks.check_choice``, under the argument order the env modules use)."""
    return checks.check_choice(value, name, allowed)


def check_seat(rules: game.Rules, agent_mark: Any) -> str:
    """``agent_mark`` if the agent can play that seat on this board, else a ValueError."""
    check_choice("agent_mark", agent_mark, AGENT_MARKS)
    if rules.win_length == 1 and agent_mark != "X":
        raise ValueError(f"with win_length 1 the first move wins, so O never moves: the agent "
                         f"must play X (agent_mark='X'); got agent_mark={agent_mark!r}")
    return agent_mark


def as_cell(action: Any, n_cells: int = game.N_CELLS) -> int | None:
    """The cell an action names, or None when it is not an integer 0..n_cells-1."""
    if type(action) is int:  # the common case first; bool is not an int action
        return action if 0 <= action < n_cells else None
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
        action = action.reshape(())[()]
    if not checks.is_integer(action):  # also a masked element: np.ma.masked is no integer
        return None
    return int(action) if 0 <= action < n_cells else None


class Stones:
    """A position on a board too big for tables: its cells, and a bit mask of each side's marks
    so that a move is checked only against the lines through it. Mutable: the env's own state."""

    def __init__(self, rules: game.Rules) -> None:
        self.rules = rules
        self.cells = np.zeros(rules.n_cells, dtype=np.int8)
        self.bits = [0, 0, 0]  # by mark; index 0 unused
        # Kept where the solver can use it (at most 16 cells): a code of 225 cells is a 357-bit
        # int whose update would cost more than the rest of the move.
        self.code: int | None = game.EMPTY_BOARD if rules.solvable else None
        self.winner = game.NO_WINNER
        self.terminal = False

    @classmethod
    def at(cls, rules: game.Rules, cells: npt.NDArray[np.int8]) -> Stones:
        """The unfinished position with these absolute cells (a random start)."""
        stones = cls(rules)
        stones.cells[:] = cells
        stones.bits = [0, *(sum(1 << int(c) for c in np.flatnonzero(cells == mark))
                            for mark in (game.X, game.O))]
        if stones.code is not None:
            stones.code = rules.encode(cells)
        return stones

    def play(self, cell: int, mark: int) -> None:
        """Put ``mark`` on the empty ``cell`` of an unfinished game."""
        self.cells[cell] = mark
        bits = self.bits[mark] = self.bits[mark] | (1 << cell)
        if self.code is not None:
            self.code += mark * self.rules.pow3_int[cell]
        for line in self.rules.line_masks_through[cell]:
            if bits & line == line:
                self.winner, self.terminal = mark, True
                return
        if self.bits[1] | self.bits[2] == self.rules.full_mask:
            self.terminal = True


class TicTacToeEnv(gym.Env[npt.NDArray[np.int8], int]):
    """Tic-tac-toe, or any m,n,k-game, against a built-in opponent that moves inside ``reset``
    and ``step``.

    ## Description
    The agent plays one side of a game on a ``rows`` x ``cols`` board where ``win_length`` marks
    in a row (across, down or diagonal) win; X moves first. The default is tic-tac-toe (3, 3, 3);
    free-style gomoku is (15, 15, 5). The opponent named by ``opponent`` plays the other side and
    replies within the same ``step``. Boards of at most 16 cells are solved exactly
    (``gym_tictactoe.solver``), so any policy can be measured against perfect play there.

    ## Action Space
    ``Discrete(rows * cols)``: the cell to mark, numbered row by row from 0; on 3x3::

        0 | 1 | 2
        3 | 4 | 5
        6 | 7 | 8

    ## Observation Space
    ``MultiDiscrete([3] * (rows * cols))`` (int8), the board from the agent's point of view:
    0 empty, 1 the agent's mark, 2 the opponent's. The same policy can play either side.
    ``gym_tictactoe.wrappers.GridObservation`` gives the ``(rows, cols)`` grid.

    ## Starting State
    An empty board, or, when the agent plays O, the board after the opponent's first move.
    With ``start="random"`` (exploring starts), an episode starts with probability
    ``start_probability`` at a random unfinished position instead, the agent playing the side to
    move there (whatever ``agent_mark`` says; ``info["agent_mark"]`` tells): on boards of at most
    16 cells drawn uniformly from every reachable unfinished position, on bigger ones the board
    after a random number of random moves (see ``gym_tictactoe.starts``).

    ## Rewards
    +1 for a win, -1 for a loss or an illegal move (under ``illegal_action="lose"``), 0 for a
    draw and for every step before the end.

    ## Episode End
    The episode terminates when a side completes a line, the board is full, or the agent makes
    an illegal move under ``illegal_action="lose"``. It is never truncated: a game lasts at most
    ``ceil(rows * cols / 2)`` agent moves, so no time limit is registered.

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
    >>> env = gym.make("TicTacToe-v0", rows=4, cols=4, win_length=3, opponent="alphabeta")
    ```
    * ``opponent``: a name (``"random"``, ``"minimax"``, ``"alphabeta"``, ``"epsilon"``,
      ``"heuristic"``, ``"montecarlo"``, ``"mixture"``, ``"policy"``; see
      ``gym_tictactoe.opponents``), a spec such as ``"random+minimax*2"``, or any object with
      ``act(board, mark, rng) -> int``. ``"minimax"`` needs a board of at most 16 cells.
      Default ``"random"``.
    * ``agent_mark``: ``"X"``, ``"O"`` or ``"random"`` (drawn at every reset). Default ``"X"``.
    * ``illegal_action``: ``"lose"`` (the episode ends with reward -1) or ``"raise"`` (a
      ``ValueError`` naming the move and the legal moves). Default ``"lose"``.
    * ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"``.
    * ``rows``, ``cols``, ``win_length``: the board, 1 <= rows, cols <= 15 and
      1 <= win_length <= max(rows, cols). Default 3, 3, 3.
    * ``start``: ``"empty"`` or ``"random"`` (exploring starts, above). Default ``"empty"``.
      ``reset(options={"start": "random"})`` starts that one episode at a random position
      (``"empty"``: on the empty board), whatever ``start`` and ``start_probability`` say.
    * ``start_probability``: with ``start="random"``, the chance in [0, 1] that an episode
      starts at a random position. Default 1.0.

    ## Version History
    * v0: initial version; ``rows``, ``cols`` and ``win_length`` added without changing 3x3;
      ``start`` and ``start_probability`` added, the default (``"empty"``) unchanged.
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
    ) -> None:
        self.rules = game.rules(rows, cols, win_length)
        self.opponent = resolve_opponent(opponent, self.rules)
        self.agent_mark_option = check_seat(self.rules, agent_mark)
        self.start = starts.check_start(start)
        self.start_probability = starts.check_start_probability(start_probability)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        modes = (None, *self.metadata["render_modes"])
        self.render_mode = check_choice("render_mode", render_mode, modes)
        n = self._n = self.rules.n_cells
        self.observation_space = spaces.MultiDiscrete([3] * n, dtype=np.int8)
        self.action_space = spaces.Discrete(n)
        if self.rules.tabled:
            self._next, self._terminal, self._winner = step_lists(self.rules)
            self._views, self._cells = views(self.rules), self.rules.tables.cells
            self._legal = self.rules.tables.legal_mask
        self.stones: Stones | None = None  # the position on boards without tables
        self.code: game.Position | None = None
        self.agent = game.X
        self.done = False
        self._no_moves = np.zeros(n, dtype=np.int8)
        self._screen = rendering.Screen(self.render_mode, self.metadata["render_fps"])

    @property
    def agent_mark(self) -> str:
        """The agent's mark in the current episode, ``"X"`` or ``"O"``."""
        return game.MARK_NAMES[self.agent]

    def set_opponent(self, opponent: Opponent | str) -> None:
        """Play the following moves against another opponent (SB3: ``env_method``)."""
        self.opponent = resolve_opponent(opponent, self.rules)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.int8], dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict such as {{'agent_mark': 'O'}}; "
                             f"got {options!r}")
        options = options or {}
        mark = check_seat(self.rules, options.get("agent_mark", self.agent_mark_option))
        if self._random_start(options):
            self._start_anywhere()
            reset_opponent(self.opponent, self.np_random)
            observation, _, _, _, info = self._finish_step(0.0, None)
            return observation, info
        if mark == "random":
            mark = "XO"[int(self.np_random.integers(2))]
        self.agent, self.code, self.done = game.MARKS[mark], game.EMPTY_BOARD, False
        if not self.rules.tabled:
            self.stones = Stones(self.rules)
            self.code = self.stones.code
        reset_opponent(self.opponent, self.np_random)
        opponent_action = self._opponent_move() if self.agent == game.O else None
        observation, _, _, _, info = self._finish_step(0.0, opponent_action)
        return observation, info

    def step(
        self, action: int
    ) -> tuple[npt.NDArray[np.int8], float, bool, bool, dict[str, Any]]:
        if self.done or (self.code is None and self.stones is None):
            raise RuntimeError("the episode is over (or never began): call reset() before step()")
        if self.stones is not None:
            return self._step_stones(action)
        cell = as_cell(action, self._n)
        code = -1 if cell is None else self._next[self.code][cell]
        if code < 0:
            return self._illegal(action)
        self.code = code
        opponent_action = None if self._terminal[code] else self._opponent_move()
        winner = self._winner[self.code]
        reward = 0.0 if winner == game.NO_WINNER else (1.0 if winner == self.agent else -1.0)
        return self._finish_step(reward, opponent_action)

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        if self.render_mode is None:
            gym.logger.warn("render() called with render_mode=None; pass render_mode to make()")
            return None
        return self._screen.render(self._board(), self.rules.shape)

    def close(self) -> None:
        self._screen.close()

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal cells of the current position (for sb3-contrib's MaskablePPO)."""
        if self.done or (self.code is None and self.stones is None):
            return np.zeros(self.rules.n_cells, dtype=bool)
        return self._legal_mask().astype(bool)

    def _random_start(self, options: dict[str, Any]) -> bool:
        """Whether this episode starts at a random position (drawing the coin if need be)."""
        if "start" in options:
            return starts.check_start(options["start"], "options['start']") == "random"
        chosen = starts.random_starts(self.np_random, 1, self.start, self.start_probability)
        return chosen is not None and bool(chosen[0])

    def _start_anywhere(self) -> None:
        """Put the game at a random unfinished position, the agent to move there."""
        cells, codes = starts.draw_starts(self.rules, self.np_random, 1)
        self.agent, self.done = int(starts.side_to_move(cells)[0]), False
        if self.rules.tabled:
            self.code = int(codes[0])
        else:
            self.stones = Stones.at(self.rules, cells[0])
            self.code = self.stones.code

    def _step_stones(self, action: Any):
        stones = self.stones
        cell = as_cell(action, self._n)
        if cell is None or stones.cells[cell] != game.EMPTY:
            return self._illegal(action)
        stones.play(cell, self.agent)
        self.code = stones.code
        opponent_action = None if stones.terminal else self._opponent_move()
        winner = stones.winner
        reward = 0.0 if winner == game.NO_WINNER else (1.0 if winner == self.agent else -1.0)
        return self._finish_step(reward, opponent_action)

    def _opponent_move(self) -> int:
        mark = game.X + game.O - self.agent
        if self.stones is not None:
            return self._opponent_move_stones(mark)
        move = act_on_code(self.opponent, self.code, mark, self.np_random, self.rules)
        cell = as_cell(move, self._n)
        code = -1 if cell is None else self._next[self.code][cell]
        if code < 0:
            self._bad_opponent_move(move)
        self.code = code
        return cell

    def _opponent_move_stones(self, mark: int) -> int:
        stones = self.stones
        move = act_on_stones(self.opponent, stones, mark, self.np_random)
        cell = as_cell(move, self._n)
        if cell is None or stones.cells[cell] != game.EMPTY:
            self._bad_opponent_move(move)
        stones.play(cell, mark)
        self.code = stones.code
        return cell

    def _bad_opponent_move(self, move: Any) -> None:
        raise RuntimeError(f"opponent {self.opponent!r} played {move!r}; legal moves: "
                           f"{np.flatnonzero(self._legal_mask()).tolist()}")

    def _illegal(self, action: Any) -> tuple[npt.NDArray[np.int8], float, bool, bool, dict]:
        legal = np.flatnonzero(self._legal_mask()).tolist()
        if self.illegal_action == "raise":
            raise ValueError(f"illegal action {checks.shown(action)}: legal moves are {legal}")
        self.done = True
        info = self._info()
        info["illegal_action"] = True
        # The illegal move forfeits the game: the opponent is the winner.
        info["winner"] = game.MARK_NAMES[int(game.SWAP[self.agent])]
        return self._observation(), -1.0, True, False, info

    def _finish_step(self, reward: float, opponent_action: int | None):
        stones = self.stones
        self.done = stones.terminal if stones is not None else self._terminal[self.code]
        info = self._info()
        if opponent_action is not None:
            info["opponent_action"] = opponent_action
        if self.done:
            winner = stones.winner if stones is not None else self._winner[self.code]
            info["winner"] = game.MARK_NAMES.get(winner)
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self.done, False, info

    def _board(self) -> npt.NDArray[np.int8]:
        """The absolute cells now (a view: copy before handing it out)."""
        if self.stones is not None:
            return self.stones.cells
        return self._cells[game.EMPTY_BOARD if self.code is None else self.code]  # tabled

    def _legal_mask(self) -> npt.NDArray[np.int8]:
        """The legal cells now (a new array on big boards, a read-only row on tabled ones)."""
        if self.stones is None:
            return self._legal[self.code]
        if self.stones.terminal:
            return self._no_moves
        return (self.stones.cells == game.EMPTY).view(np.int8)

    def _observation(self) -> npt.NDArray[np.int8]:
        if self.stones is None:
            return self._views[self.agent - 1, self.code].copy()
        cells = self.stones.cells
        return cells.copy() if self.agent == game.X else game.SWAP[cells]

    def _info(self) -> dict[str, Any]:
        """The keys of every info; the caller adds the step's own (opponent_action, winner)."""
        # The legal mask is already all zeros at finished positions; an illegal move ends the
        # game at a position that is not finished.
        if self.stones is None:  # the hot path of tabled boards: two look-ups
            mask = (self._no_moves if self.done else self._legal[self.code]).copy()
            board = self._cells[self.code]
        else:
            mask = self._no_moves.copy() if self.done else self._legal_mask()
            board = self.stones.cells
        return {"action_mask": mask, "agent_mark": game.MARK_NAMES[self.agent],
                "board": board.copy()}
