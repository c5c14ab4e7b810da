"""# Tic-tac-toe and every m,n,k-game, two agents (PettingZoo AEC)

Both seats are agents: the environment for self-play and for multi-agent libraries that take
PettingZoo's AEC API (its tutorials, AgileRL, Tianshou, RLlib). It needs the ``multiagent`` extra
(``pip install ".[multiagent]"``); the rest of gym-tictactoe never imports PettingZoo. Importing
this module also registers ``gym_tictactoe/TicTacToe-v0`` in PettingZoo's registry (1.27+), so
``pettingzoo.make("aec", "gym_tictactoe/TicTacToe-v0", rows=4, cols=4, win_length=3)`` works.

| Import             | `from gym_tictactoe.envs.pettingzoo import env`         |
|--------------------|----------------------------------------------------|
| Creation           | `make("aec", "gym_tictactoe/TicTacToe-v0")`        |
| Actions            | Discrete                                           |
| Parallel API       | Yes (`parallel_env`)                               |
| Manual Control     | No                                                 |
| Agents             | `agents= ['player_1', 'player_2']`                 |
| Agents             | 2                                                  |
| Action Shape       | (1)                                                |
| Action Values      | [0, rows * cols - 1]                               |
| Observation Shape  | (rows, cols, 2)                                    |
| Observation Values | [0, 1]                                             |

``player_1`` plays X and moves first, ``player_2`` plays O, as in PettingZoo's ``tictactoe_v3``.
A line of ``win_length`` marks across, down or diagonally wins. The default board is
tic-tac-toe (3, 3, 3); free-style gomoku is (15, 15, 5). Boards of at most 12 cells play by one
table look-up per move; bigger ones on a cell array, checking only the lines through the move.

### Observation Space

A dict: ``observation`` is ``Box(0, 1, (rows, cols, 2), int8)``, two planes of the board seen by
the observing agent, plane 0 its own marks and plane 1 the other agent's (so one policy can play
both seats), as in ``tictactoe_v3``; ``action_mask`` is ``Box(0, 1, (rows * cols,), int8)``, 1 on
the cells the agent may mark: all zeros for the agent not to move and once the game is over
(``tictactoe_v3`` still shows the empty cells to the agent selected after the end).
``env.state()`` gives the absolute board, plane 0 X and plane 1 O.

### Action Space

``Discrete(rows * cols)``: the cell to mark, numbered **row by row** from 0, as everywhere in
gym-tictactoe (and as the observation's planes are laid out)::

    0 | 1 | 2
    3 | 4 | 5
    6 | 7 | 8

PettingZoo's own ``tictactoe_v3`` numbers its cells column by column (0 | 3 | 6 on the top
row): a policy trained there needs its actions transposed to play here.

### Rewards

| Winner | Loser | Draw | Illegal move (``illegal_action="lose"``) |
| :----: | :---: | :--: | :--------------------------------------: |
| +1     | -1    | 0, 0 | -1 for the mover, 0 for the other        |

Rewards come only at the end; every earlier step gives 0 to both.

### Episode End

The game ends when a side completes a line, the board is full, or (under
``illegal_action="lose"``) an agent makes an illegal move: an occupied cell or anything that
is not a cell number. Both agents are then terminated and each must ``step(None)`` once, as the
AEC API has it (``agent_iter`` stops after the second). No truncation: a game lasts at most
``rows * cols`` moves.

### Information

``infos[agent]`` has the same two keys from ``reset`` on, each always a number of one type
(Tianshou's replay buffer stores infos as arrays, TorchRL's ``PettingZooWrapper`` as tensors):
``winner``, an int in the vector env's codes, 1 once X (``player_1``) has won, 2 once O
(``player_2``) has, 0 while nobody has (0 at the end: a draw), and ``illegal_action``, True for
the agent that lost by an illegal move.

### Arguments

``` python
from gym_tictactoe.envs.pettingzoo import env
env(rows=3, cols=3, win_length=3, illegal_action="lose", render_mode=None)
```

* ``rows``, ``cols``, ``win_length``: the board, 1 <= rows, cols <= 15 and
  1 <= win_length <= max(rows, cols). Default 3, 3, 3.
* ``illegal_action``: ``"lose"`` (the game ends: -1 for the mover, 0 for the other, the rewards
  of PettingZoo's ``TerminateIllegalWrapper`` with ``illegal_reward=-1``, which also marks both
  agents truncated; here they are terminated only, the game having ended by its rules) or
  ``"raise"`` (a ``ValueError`` naming the move and the legal ones; nothing changes).
* ``render_mode``: ``None``, ``"ansi"`` (text), ``"rgb_array"`` (a uint8 image) or ``"human"``
  (a pygame window, the ``render`` extra; drawn after every reset and step).

``env()`` wraps ``raw_env`` in PettingZoo's ``OrderEnforcingWrapper`` (an error for stepping,
observing or rendering before ``reset()``). ``tictactoe_v3``'s other two wrappers are not needed:
``raw_env`` applies the illegal-move rule itself, to out-of-range actions too, so neither
``TerminateIllegalWrapper`` nor ``AssertOutOfBoundsWrapper`` (whose assertion would pre-empt the
rule, and vanishes under ``python -O``) has anything to do.

### Version History

* v0: initial version (gym-tictactoe 0.1.0); infos hold ``winner`` (an int code, was ``"X"``,
  ``"O"`` or None at the end only) and ``illegal_action`` from ``reset`` on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import logger, spaces
from gymnasium.utils import EzPickle

from gym_tictactoe import game
from gym_tictactoe.checks import shown
from gym_tictactoe.envs import rendering
from gym_tictactoe.envs.options import ILLEGAL_ACTIONS, check_choice
from gym_tictactoe.extras import MissingExtra
from gym_tictactoe.game.positions import Position, as_cell, new_position
from gym_tictactoe.seeding import check_seed

try:
    import pettingzoo
    from pettingzoo import AECEnv

    from gym_tictactoe.envs.pettingzoo_order import OrderEnforcing
    from gym_tictactoe.envs.pettingzoo_parallel import TurnBasedParallelEnv
except ModuleNotFoundError as error:
    if (error.name or "").partition(".")[0] != "pettingzoo":
        raise
    raise MissingExtra('gym_tictactoe.envs.pettingzoo needs pettingzoo, which is not installed: '
                       'pip install ".[multiagent]" in a clone of gym-tictactoe',
                       name="pettingzoo") from None

__all__ = ["AGENTS", "ENV_ID", "env", "parallel_env", "raw_env"]

AGENTS = ("player_1", "player_2")  # X, O
MARK = {"player_1": game.X, "player_2": game.O}
OTHER = {"player_1": "player_2", "player_2": "player_1"}
WINNER_AGENT = {game.X: "player_1", game.O: "player_2"}
# PLANES[side][cell value] is a cell's two observation planes (own mark, other's mark); side 0
# sees as X (player_1), side 1 as O. Indexing by the cells array builds an observation in one go.
PLANES = np.array([[[0, 0], [1, 0], [0, 1]], [[0, 0], [0, 1], [1, 0]]], dtype=np.int8)
SIDE = {"player_1": PLANES[0], "player_2": PLANES[1]}
RENDER_MODES = ("human", "ansi", "rgb_array")
ENV_ID = "gym_tictactoe/TicTacToe-v0"  # in PettingZoo's registry (1.27 and later)


def _info(winner: int) -> dict[str, Any]:
    """An agent's info: who has won (0: nobody yet, or a draw), no illegal move. Numbers only:
    TorchRL's PettingZooWrapper makes a tensor of every info value."""
    return {"winner": int(winner), "illegal_action": False}


def env(**kwargs: Any) -> AECEnv:
    """The two-agent game (see the module docstring), wrapped in PettingZoo's
    ``OrderEnforcingWrapper`` (a subclass of it that reads the env's attributes directly)."""
    return OrderEnforcing(raw_env(**kwargs))


class raw_env(AECEnv, EzPickle):
    """Tic-tac-toe on a ``rows`` x ``cols`` board, ``win_length`` in a row, for two agents.
    See the module docstring."""

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "name": "gym_tictactoe_v0",
                "is_parallelizable": False, "render_fps": 4}

    def __init__(self, *, rows: int = 3, cols: int = 3, win_length: int = 3,
                 illegal_action: str = "lose", render_mode: str | None = None) -> None:
        EzPickle.__init__(self, rows=rows, cols=cols, win_length=win_length,
                          illegal_action=illegal_action, render_mode=render_mode)
        super().__init__()
        self.rules = game.rules(rows, cols, win_length)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.render_mode = check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        n = self._n = self.rules.n_cells
        self._shape = (*self.rules.shape, 2)
        self.possible_agents = list(AGENTS)
        self.observation_spaces = {agent: spaces.Dict({
            "observation": spaces.Box(0, 1, self._shape, np.int8),
            "action_mask": spaces.Box(0, 1, (n,), np.int8)}) for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(n) for agent in AGENTS}
        self._position: Position | None = None  # the game (positions.new_position)
        self._last: int | None
        self._done, self._last = True, None  # no game until reset()
        self.agents: list[str] = []
        self._screen = rendering.Screen(self.render_mode, self.metadata["render_fps"])

    def observe(self, agent: str) -> dict[str, npt.NDArray[np.int8]]:
        planes = SIDE.get(agent) if isinstance(agent, str) else None  # a list is unhashable
        if planes is None:
            raise ValueError(f"agent must be one of {list(AGENTS)}; got {agent!r}")
        grid = self._grid()
        if agent != self.agent_selection or self._done:
            mask = np.zeros(self._n, dtype=np.int8)
        else:
            assert self._position is not None  # a game is on: reset() made it
            mask = self._position.mask()
        # take() of a (rows, cols) grid gives the (rows, cols, 2) planes at once, several times
        # faster than indexing with the grid (planes[grid]) and reshaping.
        return {"observation": planes.take(grid, axis=0), "action_mask": mask}

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._space(self.observation_spaces, agent)

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._space(self.action_spaces, agent)

    def state(self) -> npt.NDArray[np.int8]:
        """The absolute board as ``(rows, cols, 2)`` planes: X's marks, then O's."""
        return PLANES[0].take(self._grid(), axis=0)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game on the empty board, ``player_1`` (X) to move. Nothing in the game is
        random: ``seed`` is checked and otherwise unused, and ``options`` (a dict) is ignored."""
        check_seed(seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict; got {options!r}")
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {agent: _info(game.NO_WINNER) for agent in AGENTS}
        self.agent_selection, self._skip_agent_selection = AGENTS[0], None
        if self._position is None:
            self._position = new_position(self.rules)
        else:
            self._position.clear()
        self._done, self._last = False, None
        if self.render_mode == "human":
            self.render()

    def step(self, action: int | None) -> None:
        """Mark a cell for ``agent_selection``; after the game, that agent's ``None``."""
        if self._done:
            return self._dead_step(action)
        agent = self.agent_selection
        n = self._n  # a plain int in range is a cell as it is: as_cell's first case, inlined
        cell = action if type(action) is int and 0 <= action < n else as_cell(action, n)
        position = self._position
        assert position is not None  # a game is on: reset() made it
        if cell is None or not position.play(cell):
            return self._illegal(agent, action)
        self._last = cell  # for the picture's mark on the last move
        if position.terminal:
            self._end(position.winner)
        self.agent_selection = OTHER[agent]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        if self.render_mode is None:
            logger.warn("render() called with render_mode=None; pass render_mode to env()")
            return None
        return self._screen.render(self._grid().ravel(), self.rules.shape, self._last,
                                   self.rules.win_length)

    def close(self) -> None:
        self._screen.close()

    # --- internals ----------------------------------------------------------------------------

    def _grid(self) -> npt.NDArray[np.int8]:
        """The absolute cells as a (rows, cols) grid (a view: never handed out as it is)."""
        if self._position is None:
            raise RuntimeError("no game yet: call reset() first")
        return self._position.grid

    def _end(self, winner: int, illegal_by: str | None = None) -> None:
        """Finish the game: both agents terminated, the rewards given."""
        self._done = True
        for agent in AGENTS:
            self.terminations[agent] = True
            self.infos[agent] = _info(winner)
        if illegal_by is not None:
            # Only the mover pays: the other gets 0, as under PettingZoo's TerminateIllegalWrapper.
            self.rewards[illegal_by] = -1.0
            self.infos[illegal_by]["illegal_action"] = True
        elif winner != game.NO_WINNER:
            self.rewards[WINNER_AGENT[winner]] = 1.0
            self.rewards[OTHER[WINNER_AGENT[winner]]] = -1.0
        self._accumulate_rewards()

    def _illegal(self, agent: str, action: Any) -> None:
        legal = np.flatnonzero(self.observe(agent)["action_mask"]).tolist()
        if self.illegal_action == "raise":
            raise ValueError(f"illegal action {shown(action)} by {agent}: legal moves are {legal}")
        self._end(MARK[OTHER[agent]], illegal_by=agent)
        self.agent_selection = OTHER[agent]
        if self.render_mode == "human":
            self.render()

    def _dead_step(self, action: Any) -> None:
        if not self.agents:
            raise RuntimeError("no game in progress (every agent has left, or reset() was never "
                               "called): call reset()")
        if action is not None:
            raise ValueError(f"the game is over: {self.agent_selection} is terminated and its "
                             f"only action is None (step(None) removes it); got {action!r}. "
                             "Call reset() for a new game")
        self._was_dead_step(None)

    def _space(self, table: dict, agent: str) -> Any:
        try:
            return table[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable agent, such as a list
            raise ValueError(f"agent must be one of {list(AGENTS)}; got {agent!r}") from None


if hasattr(pettingzoo, "register") and ENV_ID not in pettingzoo.aec_registry:
    pettingzoo.register("aec", ENV_ID, entry_point="gym_tictactoe.envs.pettingzoo:env")


def parallel_env(**kwargs: Any) -> TurnBasedParallelEnv:
    """The two-agent game under PettingZoo's Parallel API (turn-based: see
    :mod:`gym_tictactoe.envs.pettingzoo_parallel`); the keyword arguments are those of ``env``."""
    return TurnBasedParallelEnv(env(**kwargs))
