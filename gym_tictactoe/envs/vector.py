"""TicTacToe-v0 for many boards at once: arrays of position codes, opponents as table look-ups.

Every board is one int (its base-3 code), so a batch of boards is one int array and each rule of
the game is one look-up in a ``game`` table over the whole array. The opponent's reply is drawn
the same way (``gym_tictactoe.players.vector_opponents``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gym_tictactoe import game
from gym_tictactoe.checks import check_int, shown
from gym_tictactoe.envs import rendering
from gym_tictactoe.envs.options import NO_MOVE, EnvOptions, SharedOptions, reset_options
from gym_tictactoe.game import starts
from gym_tictactoe.game.batch import Boards, new_batch
from gym_tictactoe.game.positions import as_cell
from gym_tictactoe.players.opponents import Opponent, resolve_player
from gym_tictactoe.players.protocol import BatchPlayer, Cells
from gym_tictactoe.seeding import check_seed

__all__ = ["TicTacToeVectorEnv", "vectorize_opponent"]

# REWARDS[agent, winner]: the agent's reward when the game ends with ``winner`` (0 = nobody).
REWARDS = np.array([[0, 0, 0], [0, 1, -1], [0, -1, 1]], dtype=np.float32)
_REWARDS = REWARDS.ravel()  # row-major: REWARDS[agent, winner] is _REWARDS[agent * 3 + winner]
MAX_NUM_ENVS = 2**24  # 16.7 M boards already take gigabytes; beyond, arrays fail to allocate
# What a batch may take: a step holds a few (boards, cells) arrays at once (positions,
# observations, masks, the info's boards), measured at 14 to 16 bytes a cell a board on 3x3 and
# 15x15 (tracemalloc); BYTES_PER_CELL and BYTES_PER_BOARD overestimate that a little.
MEMORY_BUDGET = 4 * 2**30
BYTES_PER_CELL, BYTES_PER_BOARD = 16, 64


def memory_needed(num_envs: int, rules: game.Rules) -> int:
    """About the most bytes ``num_envs`` boards of ``rules`` hold at once while stepping."""
    return num_envs * (BYTES_PER_CELL * rules.n_cells + BYTES_PER_BOARD)


def _check_memory(num_envs: int, rules: game.Rules) -> None:
    """Refuse, before allocating anything, a batch beyond MEMORY_BUDGET."""
    needed = memory_needed(num_envs, rules)
    if needed > MEMORY_BUDGET:
        most = MEMORY_BUDGET // memory_needed(1, rules)
        raise ValueError(f"num_envs={num_envs:,} boards of {rules.name} would take about "
                         f"{needed / 1e9:.1f} GB ({memory_needed(1, rules):,} bytes a board); "
                         f"the limit is {MEMORY_BUDGET / 2**30:g} GiB: at most {most:,} boards "
                         f"of this size")


def vectorize_opponent(opponent: Opponent | str, num_envs: int, rules: game.Rules,
                       agents: npt.NDArray[np.int8] | None = None) -> BatchPlayer:
    """The batch form of an opponent for ``num_envs`` boards of ``rules``: its player's own
    ``batch`` (``players.Player``; table players by look-ups or masks, epsilon and mixtures
    combined, a policy with ``act_batch`` once per batch, anything else board by board). A name
    or ``parse_opponent`` spec is parsed first. ``agents`` is the env's array of the agent's
    mark per board (the opponent has the other)."""
    if agents is None:
        agents = np.full(num_envs, game.X, dtype=np.int8)
    return resolve_player(opponent, rules).batch(num_envs, rules, agents)


class TicTacToeVectorEnv(SharedOptions,
                         VectorEnv[npt.NDArray[np.int8], npt.NDArray[np.int64], npt.NDArray]):
    """``num_envs`` games of TicTacToe-v0 stepped together with NumPy, no Python env per board.

    ## Description
    The rules, rewards, observations and opponents of ``TicTacToeEnv`` (see its docstring), on any
    board it supports, for a batch of boards: one array of position codes on boards of at most 12
    cells (every rule a table look-up over the batch), one array of cells elsewhere (wins checked
    on the lines through each move). Table opponents (``"random"``, ``"minimax"``,
    ``"heuristic"``), ``"epsilon"`` over one and mixtures of those (drawn per board per episode)
    reply on all boards at once; any other opponent (``"alphabeta"``, ``"montecarlo"``, a policy)
    is asked board by board.

    ## Action Space
    ``MultiDiscrete([rows * cols] * num_envs)``: one cell (row by row from 0) per board.

    ## Observation Space
    ``Box(0, 2, (num_envs, rows * cols), int8)``, Gymnasium's ``batch_space`` of the single env's
    ``MultiDiscrete([3] * (rows * cols))`` (as ``SyncVectorEnv`` has it): each board from its
    agent's point of view, 0 empty, 1 the agent's mark, 2 the opponent's.

    ## Starting State
    Empty boards, or, where the agent plays O, the board after the opponent's first move. With
    ``start="random"`` each new episode starts with probability ``start_probability`` at a random
    unfinished position, its agent playing the side to move there, as in ``TicTacToeEnv``.

    ## Rewards
    float32 ``(num_envs,)``: +1 win, -1 loss or illegal move, 0 draw and every other step.

    ## Episode End
    A board terminates as in ``TicTacToeEnv`` and is never truncated. Boards autoreset in
    Gymnasium's ``NEXT_STEP`` mode: the step after a board's episode ends resets that board,
    ignores its action and returns reward 0, ``terminated=False``.

    ## Information
    Arrays over boards: ``action_mask`` (int8, ``(num_envs, cells)``, zeros once a board has
    ended), ``agent_mark`` (int8, 1 = X, 2 = O), ``board`` (absolute cells, int8),
    ``opponent_action`` (int8, int16 on boards of over 127 cells; -1 where the opponent did not
    move), ``winner`` (int8: 1 X, 2 O, 0 while nobody has won, so 0 on an ended board is a draw)
    and ``illegal_action`` (bool), the last three with Gymnasium's ``_key`` masks saying on which
    boards they happened. Every key is there on every step, as in ``TicTacToeEnv``.
    ``action_masks()`` returns the cells each board accepts now, bool ``(num_envs, cells)``, for
    MaskablePPO-style use.

    ## Arguments
    ```python
    >>> import gymnasium as gym
    >>> import gym_tictactoe
    >>> envs = gym.make_vec("TicTacToe-v0", num_envs=1024, opponent="minimax",
    ...                     vectorization_mode="vector_entry_point")
    >>> envs = gym.make_vec("TicTacToe-v0", num_envs=256, vectorization_mode="vector_entry_point",
    ...                     rows=6, cols=6, win_length=4, opponent="heuristic")
    ```

    * ``num_envs``: the number of boards, at most 16,777,216 and at most what fits in 4 GiB at
      about 16 bytes a cell a board (``memory_needed``): 1,172,207 boards of 15x15, all 2**24 of
      3x3.
    * ``opponent``: a name, a ``parse_opponent`` spec such as ``"random+minimax*2"``, or an
      opponent object (see above). Default ``"random"``.
    * ``agent_mark``: ``"X"``, ``"O"`` or ``"random"`` (drawn per board at each of its resets).
    * ``illegal_action``: ``"lose"`` or ``"raise"`` (a ``ValueError``, before any board moves).
    * ``render_mode``: ``None`` or ``"ansi"`` (one text board per env).
    * ``rows``, ``cols``, ``win_length``: the board, as in ``TicTacToeEnv``. Default 3, 3, 3.
    * ``start``, ``start_probability``: exploring starts, as in ``TicTacToeEnv`` (a coin per
      board per episode). ``reset(options={"start": "random"})`` starts the boards reset by that
      call at random positions (``"empty"``: on empty boards); autoresets follow ``start``.
    * ``start_weights``: on boards of at most 16 cells, where random starts are drawn from:
      ``None`` (uniform over every reachable unfinished position), a ``StartWeights``, or weights
      over ``starts.start_codes(rules)`` in its order. ``set_start_weights(weights, codes)``
      changes it between steps (a learner moving its starts to where it still plays wrong);
      weights on finished or unreachable positions, of the wrong shape, negative or NaN are a
      one-line ValueError.

    ## Version History
    * v0: initial version; ``start`` and ``start_probability`` added, the default unchanged.
    """

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
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
        start_weights: starts.StartWeights | npt.ArrayLike | None = None,
    ) -> None:
        self.num_envs = check_int(num_envs, "num_envs", 1, MAX_NUM_ENVS)
        # The signature is spelled out for readers and type checkers; the checks are shared.
        self._set_options(EnvOptions(opponent, agent_mark, illegal_action, render_mode,
                                     rows=rows, cols=cols, win_length=win_length, start=start,
                                     start_probability=start_probability))
        _check_memory(self.num_envs, self.rules)
        self.agents = np.full(self.num_envs, game.X, dtype=np.int8)
        self.opponent = vectorize_opponent(opponent, self.num_envs, self.rules,
                                           self.agents)
        self.set_start_weights(start_weights)
        n = self.rules.n_cells
        self.single_observation_space = spaces.MultiDiscrete([3] * n, dtype=np.int8)
        self.single_action_space = spaces.Discrete(n)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.positions = new_batch(self.rules, self.num_envs, self.agents)
        self._cell_dtype = np.int8 if n <= np.iinfo(np.int8).max else np.int16
        self.ended = np.zeros(self.num_envs, dtype=bool)  # to be reset at the next step
        self._started = False

    @property
    def codes(self) -> npt.NDArray[np.int64] | None:
        """Each board's position code (None on boards of over 16 cells)."""
        return self.positions.codes

    def set_opponent(self, opponent: Opponent | str) -> None:
        """Play the following moves on every board against another opponent (curricula)."""
        self.opponent = vectorize_opponent(opponent, self.num_envs, self.rules, self.agents)

    def set_start_weights(self, weights: starts.StartWeights | npt.ArrayLike | None,
                          codes: npt.ArrayLike | None = None) -> None:
        """Draw the following random starts with ``weights`` over ``codes`` (reachable unfinished
        positions; None: ``starts.start_codes(rules)``), or uniformly when ``weights`` is None.
        Boards already playing go on; only new episodes see it."""
        if weights is None or isinstance(weights, starts.StartWeights):
            if weights is not None and weights.rules != self.rules:
                raise ValueError(f"start weights for {weights.rules.name} given to a vector env "
                                 f"of {self.rules.name}")
            self.start_weights = weights
        else:
            self.start_weights = starts.StartWeights(self.rules, weights, codes)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.int8], dict[str, Any]]:
        """Reset every board, or only ``options["reset_mask"]``'s; ``options["agent_mark"]``
        overrides the seat and ``options["start"]`` the start (``"empty"`` or ``"random"``) for
        this reset."""
        super().reset(seed=check_seed(seed))
        options, mark = reset_options(self, options, "{'agent_mark': 'O'} or {'reset_mask': mask}")
        start = options.get("start")
        if start is not None:
            starts.check_start(start, "options['start']")
        boards = self._reset_boards(options.get("reset_mask"))
        opponent_action = self._no_moves()
        self._restart(boards, mark, opponent_action, start)
        self._started = True
        return self._observations(), self._infos(opponent_action, np.zeros_like(self.ended))

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.bool_],
               npt.NDArray[np.bool_], dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        cells, legal = self._legal(actions)
        illegal = ~legal & ~self.ended
        if self.illegal_action == "raise" and illegal.any():
            self._raise_illegal(actions, illegal)
        opponent_action = self._no_moves()
        self._restart(np.flatnonzero(self.ended), self.agent_mark_option, opponent_action)
        positions = self.positions
        moved = np.flatnonzero(legal)
        positions.play(moved, cells[moved])
        replying = moved[~positions.terminal(moved)]
        opponent_action[replying] = self._reply(replying)
        winner = positions.winner()
        rewards = _REWARDS.take(self.agents * 3 + winner)
        rewards[illegal] = -1.0
        self.ended = positions.terminal() | illegal
        truncated = np.zeros(self.num_envs, dtype=bool)  # a game ends by itself
        infos = self._infos(opponent_action, illegal, winner)
        return self._observations(), rewards, self.ended.copy(), truncated, infos

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The cells each board accepts now, ``(num_envs, cells)`` bool. A board waiting for its
        autoreset ignores its action, so every cell is allowed there (not an all-False row)."""
        masks = self.positions.mask_bool()
        masks[self.ended] = True
        return masks

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode is None:
            gym.logger.warn("render() called with render_mode=None; pass render_mode='ansi'")
            return None
        return tuple(rendering.ansi(cells, self.rules.shape) for cells in self.positions.cells())

    def _no_moves(self) -> Cells:
        return np.full(self.num_envs, NO_MOVE, dtype=self._cell_dtype)

    def _reset_boards(self, reset_mask: npt.NDArray[np.bool_] | None) -> Boards:
        if reset_mask is None:
            return np.arange(self.num_envs)
        reset_mask = np.asarray(reset_mask)
        if reset_mask.shape != (self.num_envs,) or reset_mask.dtype != np.bool_:
            raise ValueError(f"options['reset_mask'] must be a bool array of shape "
                             f"({self.num_envs},); got {reset_mask!r}")
        return np.flatnonzero(reset_mask)

    def _restart(self, boards: Boards, mark: str, opponent_action: Cells,
                 start: str | None = None) -> None:
        """New episodes on ``boards``: draw seats (or random starts, ``start`` overriding the
        env's), reset the opponent, let it open as X where the game starts empty."""
        if boards.size == 0:  # most steps: no board waits for its reset
            return
        rng = self.np_random
        anywhere = self._random_starts(boards, start)
        empty = boards if anywhere is None else boards[~anywhere]
        if mark == "random":
            self.agents[empty] = rng.integers(game.X, game.O + 1, size=empty.size)
        else:
            self.agents[empty] = game.MARKS[mark]
        self.positions.clear(boards)
        if anywhere is not None:
            self._start_anywhere(boards[anywhere])
        self.ended[boards] = False
        self.opponent.reset(boards, rng)
        first = empty[self.agents[empty] == game.O]
        opponent_action[first] = self._reply(first)

    def _random_starts(self, boards: Boards, start: str | None) -> npt.NDArray[np.bool_] | None:
        """Which of ``boards`` start at a random position; None for none (no draw at all)."""
        if start is not None:
            return np.full(boards.size, True) if start == "random" else None
        return starts.random_starts(self.np_random, boards.size, self.start,
                                    self.start_probability)

    def _start_anywhere(self, boards: Boards) -> None:
        """Random unfinished positions on ``boards``, each agent to move there."""
        if self.start_weights is None:
            cells, codes = starts.draw_starts(self.rules, self.np_random, boards.size)
        else:
            codes = self.start_weights.draw(self.np_random, boards.size)
            cells = self.rules.cells_of(codes)
        self.agents[boards] = starts.side_to_move(cells)
        self.positions.place(boards, cells, codes)

    def _reply(self, boards: Boards) -> Cells:
        if boards.size == 0:
            return np.zeros(0, dtype=self._cell_dtype)
        positions = self.positions
        cells = self.opponent.reply(positions, boards, self.np_random)
        positions.play(boards, cells)
        return cells

    def _legal(self, actions: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """Each action as a cell index (0 where invalid) and whether it is a legal move now.

        As in ``TicTacToeEnv``, an action that is not an integer cell is an illegal move."""
        shown = ~np.ma.getmaskarray(actions) if np.ma.is_masked(actions) else True
        actions = np.asarray(actions)  # drops a mask: a masked entry names no cell (``shown``)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), one cell per board; "
                             f"got shape {actions.shape}")
        if actions.dtype == object:  # each entry judged alone, as the single env judges one
            cells = [as_cell(action, self.rules.n_cells) for action in actions]
            actions = np.array([-1 if cell is None else cell for cell in cells], dtype=np.int64)
        if actions.dtype.kind not in "iu":
            return np.zeros(self.num_envs, dtype=np.int64), np.zeros(self.num_envs, dtype=bool)
        in_range = (actions >= 0) & (actions < self.rules.n_cells)
        cells = np.where(in_range, actions, 0).astype(np.int64)
        legal = in_range & ~self.ended & self.positions.legal(cells) & shown
        return cells, legal

    def _raise_illegal(self, actions: npt.ArrayLike, illegal: npt.NDArray[np.bool_]) -> None:
        board = int(np.flatnonzero(illegal)[0])
        action = np.ma.asanyarray(actions)[board]  # a masked entry shows as masked, not its value
        action = action.item() if isinstance(action, np.generic) else action
        legal = self.positions.moves(board)
        raise ValueError(f"illegal action {shown(action)} on board {board} (and "
                         f"{illegal.sum() - 1} more): legal moves there are {legal}")

    def _observations(self) -> npt.NDArray[np.int8]:
        return self.positions.view(self.agents)

    def _infos(self, opponent_action: Cells, illegal: npt.NDArray[np.bool_],
               winner: npt.NDArray[np.int8] | None = None) -> dict[str, Any]:
        masks = self.positions.mask()  # all zeros at finished positions
        masks[illegal] = 0
        winner = self.positions.winner() if winner is None else winner.copy()
        winner[illegal] = game.SWAP.take(self.agents[illegal])  # an illegal move forfeits
        return {
            "action_mask": masks,
            "agent_mark": self.agents.copy(),
            "board": self.positions.cells(),
            "opponent_action": opponent_action,
            "_opponent_action": opponent_action != NO_MOVE,
            "winner": winner,
            "_winner": self.ended.copy(),
            "illegal_action": illegal,
            "_illegal_action": illegal.copy(),
        }
