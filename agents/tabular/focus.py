"""Steering a tabular Q run at each exact checkpoint: exploring starts aimed at the positions it
still plays wrong (``agents.tabular.starts``) and the learning-rate floor annealed.

One rule for ``train.py --algo q`` (``--focus-share``, ``--back-share``, ``--forget``,
``--alpha-end``, ``--alpha-episodes``) and ``benchmarks/q_perfect.py``, which measured it (on
4x4x3 the batched learner plays perfectly with half the random starts on the wrong positions, a
fifth on their predecessors and the floor annealed from 0.05 to 0.01, where uniform starts and a
fixed floor climb slowly: docs/figures.md, "Batched tabular Q-learning"). :class:`Focus` holds
the settings, :class:`Steering` applies them at a checkpoint, from the moves table the exact
evaluation reads anyway (:func:`evaluate`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy.typing as npt

from agents.schedules import geometric
from gym_tictactoe.checks import check_flag, check_int, check_number

ALPHA_EPISODES = 50_000_000  # --alpha-episodes' default: the span of the annealing


@dataclass(frozen=True)
class Focus:
    """Where the random starts go and how the learning-rate floor falls.

    Attributes:
        share, back_share, ahead_share: shares of the random starts spread evenly over the
            positions played wrong at the last checkpoint, their predecessors and their
            successors (``q_starts.focus``); at most 1 in all, the rest stays uniform.
        forget: zero the visit counts of the wrong positions' rows at each checkpoint
            (``q_starts.forget``): they learn at ``1 / n`` again.
        alpha_end, alpha_episodes: the learning-rate floor falls geometrically from the agent's
            ``alpha`` to ``alpha_end`` over ``alpha_episodes`` episodes (None: fixed).
    """

    share: float = 0.0
    back_share: float = 0.0
    ahead_share: float = 0.0
    forget: bool = False
    alpha_end: float | None = None
    alpha_episodes: int = ALPHA_EPISODES

    def __post_init__(self) -> None:
        for name in ("share", "back_share", "ahead_share"):
            check_number(getattr(self, name), name, 0.0, 1.0)
        check_number(self.share + self.back_share + self.ahead_share,
                     "share + back_share + ahead_share", 0.0, 1.0,
                     note=" (the rest of the random starts stays uniform)")
        check_flag(self.forget, "forget")
        check_number(self.alpha_end, "alpha_end", 0.0, 1.0, low_open=True, none=True,
                     note=" (a learning rate of 0 learns nothing)")
        check_int(self.alpha_episodes, "alpha_episodes", 1)

    @property
    def aims(self) -> bool:
        """Whether any random starts are aimed (else the starts stay uniform)."""
        return self.share + self.back_share + self.ahead_share > 0

    def settings(self) -> dict[str, Any]:
        """As results.json's config records them (``alpha_schedule`` None: a fixed floor)."""
        schedule = None if self.alpha_end is None else {"end": self.alpha_end,
                                                         "episodes": self.alpha_episodes}
        return {"focus": {"share": self.share, "back_share": self.back_share,
                          "ahead_share": self.ahead_share, "forget": self.forget},
                "alpha_schedule": schedule}


def annealed_alpha(start: float, end: float, span: int, trained: int) -> float:
    """The learning-rate floor after ``trained`` episodes: from ``start`` to ``end``
    geometrically over ``span`` episodes, then ``end``."""
    return geometric(start, end, trained / span)


class Steering:
    """At each exact checkpoint of ``agent`` training on the vector env ``envs``: aim the
    random starts at the positions its greedy moves get wrong, forget them if asked, and set
    the learning-rate floor for the next stretch."""

    def __init__(self, focus: Focus, agent: Any, envs: Any) -> None:
        self.focus, self.envs = focus, envs
        self.alpha = agent.config.alpha  # what the floor is annealed from

    def __call__(self, agent: Any, moves: npt.NDArray, trained: int) -> dict[str, Any]:
        """Steer after ``trained`` episodes from ``moves`` (``evaluation.policy_moves(agent)``);
        returns what to add to the learning-curve entry: ``wrong``, the positions played wrong
        (over ``starts.start_codes``, both sides), and ``alpha``, the floor from now on."""
        from agents.tabular import starts as q_starts

        found: dict[str, Any]
        focus, found = self.focus, {}
        if focus.aims:
            wrong = q_starts.focus(self.envs, moves, focus.share, focus.back_share,
                                   focus.ahead_share)
            if focus.forget:
                q_starts.forget(agent, wrong)
            found["wrong"] = int(wrong.sum())
        if focus.alpha_end is not None:
            alpha = annealed_alpha(self.alpha, focus.alpha_end, focus.alpha_episodes, trained)
            agent.config = dataclasses.replace(agent.config, alpha=alpha)
            found["alpha"] = alpha
        return found


def evaluate(agent: Any) -> tuple[Any, npt.NDArray]:
    """``evaluation.evaluate`` of a tabular agent (a deterministic policy) from one moves
    table, returned too (the starts' focus reads it): each position is asked about once."""
    from gym_tictactoe import evaluation

    moves = evaluation.policy_moves(agent)
    board = agent.rules.kwargs
    report = evaluation.Report(evaluation.best_response(agent, moves=moves, **board),
                               evaluation.optimal_move_rate(agent, moves=moves, **board),
                               evaluation.perfect_results(agent.rules))
    return report, moves
