"""Agents: tabular Q-learning (``tabular``), Stable-Baselines3 (``sb3``) and AlphaZero
(``alphazero``), each with its files; ``models.load_policy`` for any saved model, self-play
pools (``self_play``), and the training run with its command line (``run``: ``train.py``).
This module holds what every agent's training shares: where its episodes begin."""

# Where every agent's training episodes begin by default: three quarters at a uniformly drawn
# reachable unfinished position, the agent playing the side to move (exploring starts), a
# quarter at the empty board. Games from the empty board rarely reach the positions that follow
# mistakes, and a best response steers into exactly those: what they buy each agent is measured
# in docs/figures.md ("What each change buys", "Self-play", the 4x4 and 3x3 tabular runs).
# A quarter still starts empty: with every episode started at random MaskablePPO kept losing as O.
EXPLORING_STARTS = {"start": "random", "start_probability": 0.75}


def start_options(start: str | None = None, probability: float | None = None,
                  defaults: dict | None = None) -> dict:
    """The env's ``start`` (and ``start_probability``) for a --start / --start-probability
    pair, either of which may be None for ``defaults`` (``EXPLORING_STARTS``; a default without
    ``start`` means the empty board, one without a probability means every episode)."""
    defaults = EXPLORING_STARTS if defaults is None else defaults
    options = {"start": start or defaults.get("start", "empty")}
    if options["start"] == "random":
        options["start_probability"] = (probability if probability is not None
                                        else defaults.get("start_probability", 1.0))
    return options


def next_mark(count: int, mark: int, every: int) -> int:
    """The multiple of ``every`` after ``mark`` that lies beyond ``count``: the next time an
    every-N action is due once it was due at ``mark`` and ``count`` has been reached (a chunk of
    episodes or a vector step of n_envs timesteps may pass more than one multiple)."""
    return mark + every * (1 + (count - mark) // every)
