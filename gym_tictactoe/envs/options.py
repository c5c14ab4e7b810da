"""The keywords the single env and the vector env share, declared and checked once.

``EnvOptions`` checks them; each env spells out its own signature (for its readers, help() and
type checkers) and hands the values to it; ``SharedOptions._set_options`` sets them under the
attribute names both envs have always had (``env.rules``, ``env.start``, ...).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from gym_tictactoe import checks, game
from gym_tictactoe.game import starts

if TYPE_CHECKING:
    from gym_tictactoe.players.opponents import Opponent

AGENT_MARKS = ("X", "O", "random")
ILLEGAL_ACTIONS = ("lose", "raise")
# Every info key is there on every step with one type, never None: replay buffers (Tianshou's)
# stack infos into arrays and read a missing key or a None as a missing value.
NO_MOVE = -1  # opponent_action where the opponent did not move
WINNER_NAMES = ("", "X", "O")  # info["winner"] by winner code: "" while nobody has won


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


def reset_options(env: Any, options: Any, example: str) -> tuple[dict[str, Any], str]:
    """A reset's ``options`` as a dict (None: none, anything else a ValueError showing
    ``example``) and the seat it asks for: ``options["agent_mark"]``, else the env's own. One
    rule for both envs."""
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"options must be a dict such as {example}; got {options!r}")
    options = options or {}
    return options, check_seat(env.rules, options.get("agent_mark", env.agent_mark_option))


@dataclass(frozen=True)
class EnvOptions:
    """The shared keywords of ``TicTacToeEnv`` and ``TicTacToeVectorEnv``, checked (the envs'
    docstrings say what each means); ``rules`` is the board they name. ``render_mode`` is checked
    by ``SharedOptions._set_options``, against the env's own modes."""

    opponent: Opponent | str = "random"
    agent_mark: str = "X"
    illegal_action: str = "lose"
    render_mode: str | None = None
    _: KW_ONLY
    rows: int = 3
    cols: int = 3
    win_length: int = 3
    start: str = "empty"
    start_probability: float = 1.0
    rules: game.Rules = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rules = game.rules(self.rows, self.cols, self.win_length)
        checked = {"rules": rules, "rows": rules.rows, "cols": rules.cols,
                   "win_length": rules.win_length,
                   "agent_mark": check_seat(rules, self.agent_mark),
                   "illegal_action": check_choice("illegal_action", self.illegal_action,
                                                  ILLEGAL_ACTIONS),
                   "start": starts.check_start(self.start),
                   "start_probability": starts.check_start_probability(self.start_probability)}
        for name, value in checked.items():  # frozen: the dataclass way to set a checked value
            object.__setattr__(self, name, value)


class SharedOptions:
    """An env's checked options (``self.options``, what it was made with) also under the
    attribute names both envs have always had: plain attributes, which ``reset`` reads on every
    episode and SB3's ``set_attr`` may change (``agent_mark_option``, for a curriculum)."""

    metadata: dict[str, Any]

    def _set_options(self, options: EnvOptions) -> None:
        """Take ``options``, with ``render_mode`` checked against the env's own modes."""
        modes = (None, *self.metadata["render_modes"])
        self.render_mode = check_choice("render_mode", options.render_mode, modes)
        self.options, self.rules = options, options.rules
        self.agent_mark_option = options.agent_mark  # "random" included: drawn at each reset
        self.illegal_action = options.illegal_action
        self.start, self.start_probability = options.start, options.start_probability


__all__ = ["AGENT_MARKS", "ILLEGAL_ACTIONS", "EnvOptions", "SharedOptions", "check_choice",
           "check_seat", "reset_options"]
