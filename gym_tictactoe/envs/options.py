"""The keywords the single env and the vector env share, declared and checked once.

``EnvOptions`` lists them (order, types, defaults) and checks them; ``takes_options`` gives an
env's ``__init__`` the signature its users see, the env's own parameters with these in between,
and hands the body one checked ``EnvOptions``; ``SharedOptions._set_options`` sets its values
under the attribute names both envs have always had (``env.rules``, ``env.start``, ...).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from gym_tictactoe import checks, game
from gym_tictactoe.game import starts

if TYPE_CHECKING:
    from gym_tictactoe.players.opponents import Opponent

AGENT_MARKS = ("X", "O", "random")
ILLEGAL_ACTIONS = ("lose", "raise")


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
    by ``takes_options``, against the env's own modes."""

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


_SHARED = list(inspect.signature(EnvOptions).parameters.values())


def _public_signature(init: Callable) -> inspect.Signature:
    """``init``'s signature with its ``options`` parameter replaced by EnvOptions' keywords: the
    positional ones after the env's own positional ones, the keyword-only ones before its own."""
    own = inspect.signature(init)
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    mine = [p for p in own.parameters.values() if p.name != "options"]
    ordered = ([p for p in mine if p.kind != keyword_only] + _SHARED
               + [p for p in mine if p.kind == keyword_only])
    return inspect.Signature(ordered, return_annotation=own.return_annotation)


def takes_options(init: Callable[..., None]) -> Callable[..., None]:
    """Decorate an env's ``__init__(self, ..., *, options: EnvOptions, ...)``: it is called with
    EnvOptions' keywords in place of ``options`` (see ``_public_signature``), which arrive checked
    as one ``EnvOptions``, ``render_mode`` against the env's ``metadata["render_modes"]``."""
    public = _public_signature(init)
    names = {parameter.name for parameter in _SHARED}

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            arguments = public.bind(self, *args, **kwargs)
        except TypeError as error:  # as Python words it, naming the env
            raise TypeError(f"{init.__qualname__}() {error}") from None
        arguments.apply_defaults()
        values = dict(arguments.arguments)
        del values["self"]
        options = EnvOptions(**{name: values.pop(name) for name in list(values) if name in names})
        check_choice("render_mode", options.render_mode, (None, *self.metadata["render_modes"]))
        init(self, options=options, **values)

    __init__.__signature__ = public  # what inspect, help() and IDEs at run time show
    return __init__


class SharedOptions:
    """An env's checked options (``self.options``, what it was made with) also under the
    attribute names both envs have always had: plain attributes, which ``reset`` reads on every
    episode and SB3's ``set_attr`` may change (``agent_mark_option``, for a curriculum)."""

    def _set_options(self, options: EnvOptions) -> None:
        self.options, self.rules, self.render_mode = options, options.rules, options.render_mode
        self.agent_mark_option = options.agent_mark  # "random" included: drawn at each reset
        self.illegal_action = options.illegal_action
        self.start, self.start_probability = options.start, options.start_probability


__all__ = ["AGENT_MARKS", "ILLEGAL_ACTIONS", "EnvOptions", "SharedOptions", "check_choice",
           "check_seat", "reset_options", "takes_options"]
