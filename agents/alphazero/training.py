"""AlphaZero training: rounds of batched self-play, each followed by gradient steps on batches
from the replay buffer (policy cross-entropy to the visit distribution, squared error of the
value to the game's result, weight decay), with a checkpoint call every ``eval_every`` games
and/or every ``eval_minutes`` of training time (:class:`Schedule`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import torch

from agents.alphazero.network import (
    NetworkSettings,
    PolicyValueNet,
    activation_bytes,
    device_of,
    infer,
    planes_of,
)
from agents.alphazero.policy import MAX_SIMULATIONS, AlphaZeroPolicy
from agents.alphazero.replay import ReplayBuffer
from agents.alphazero.search import tree_bytes
from agents.alphazero.self_play import PlaySettings, Samples, play_games
from agents.limits import MAX_BUFFER_BYTES, MAX_WORK_BYTES, check_bytes
from agents.schedules import geometric
from gym_tictactoe.checks import check_choice, check_flag, check_int, check_number
from gym_tictactoe.game import Rules
from gym_tictactoe.game.starts import StartWeights

ILLEGAL_LOGIT = -1e9  # not -inf: 0 * -inf would make the cross-entropy NaN


@dataclass(frozen=True)
class AlphaZeroSettings:
    """Everything a training run sets: self-play, buffer, optimiser and network."""

    play: PlaySettings = field(default_factory=PlaySettings)
    network: NetworkSettings = field(default_factory=NetworkSettings)
    games_per_round: int = 64
    steps_per_round: int = 16
    batch_size: int = 128
    buffer_size: int = 20_000
    learning_rate: float = 2e-3
    weight_decay: float = 1e-4
    # Annealed geometrically from learning_rate to this over the run's budget (None: fixed).
    learning_rate_end: float | None = None

    def __post_init__(self) -> None:
        play = self.play
        check_int(play.simulations, "max_simulations", 1, MAX_SIMULATIONS)
        check_number(play.temperature, "temperature", 0.0)
        check_int(play.temperature_moves, "temperature_moves", 0)
        check_number(play.c_puct, "c_puct", 0.0, low_open=True)
        check_number(play.dirichlet_alpha, "dirichlet_alpha", 0.0, low_open=True)
        check_number(play.noise_fraction, "noise_fraction", 0.0, 1.0)
        check_number(play.start_probability, "start_probability", 0.0, 1.0)
        check_choice(play.target, "target", ("completed_q", "visits"))
        check_flag(play.threats, "threats")
        for name in ("games_per_round", "steps_per_round", "batch_size", "buffer_size"):
            check_int(getattr(self, name), name, 1, 10**7)
        # AdamW's steps multiply by lr / (1 - beta1) and 1 - lr * weight_decay in float32:
        # far beyond 1 they overflow (and no run learns there).
        check_number(self.learning_rate, "learning_rate", 0.0, 1.0, low_open=True)
        check_number(self.weight_decay, "weight_decay", 0.0, 1.0)
        check_number(self.learning_rate_end, "learning_rate_end", 0.0, 1.0, low_open=True,
                     none=True)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_memory(rules: Rules, settings: AlphaZeroSettings) -> None:
    """Refuse, before anything is allocated, ``settings`` whose replay buffer, self-play round
    (every game's search tree, network call and samples at once) or gradient step passes its
    limit on ``rules``' board: a ValueError of one line (``agents.limits.check_bytes``)."""
    cells, board, play = rules.n_cells, rules.name, settings.play
    check_bytes("buffer_size", settings.buffer_size, ReplayBuffer.sample_bytes(cells),
                MAX_BUFFER_BYTES, board, "the replay buffer's samples")
    # Each move's samples are kept until the round ends, then joined: twice over.
    per_game = (tree_bytes(cells, play.simulations) + 2 * cells * (
        ReplayBuffer.sample_bytes(cells) + 16) + activation_bytes(cells, settings.network, False))
    check_bytes("games_per_round", settings.games_per_round, per_game, MAX_WORK_BYTES, board,
                "the games searched at once", f" at {play.simulations:,} simulations")
    sample = activation_bytes(cells, settings.network, True) + 3 * ReplayBuffer.sample_bytes(cells)
    check_bytes("batch_size", settings.batch_size, sample, MAX_WORK_BYTES, board,
                f"a gradient step of a network of {settings.network.channels} channels and "
                f"{settings.network.blocks} blocks")


Checkpoint = Callable[[Any, int], bool]  # (policy, games so far) -> stop


class GamePlayer(Protocol):
    """Self-play elsewhere (``workers.RayPlayer``): ``workers`` players, each playing
    ``games_per_round`` games a round (so a round has that many times the games and the gradient
    steps); called with the network, a round's games and the random starts' ``aim``, it returns
    their samples, and may start the ``upcoming`` games of the next round with the network and
    the aim as they are now."""

    workers: int

    def __call__(self, net: PolicyValueNet, games: int, upcoming: int,
                 aim: StartWeights | None) -> Samples: ...


class Trainer:
    """One network learning one board by self-play; ``games`` counts the games played.
    ``player`` plays each round's games (default: here, on ``self.rng``)."""

    def __init__(self, rules: Rules, settings: AlphaZeroSettings = AlphaZeroSettings(),
                 seed: int = 0, player: GamePlayer | None = None, device: str = "cpu") -> None:
        check_memory(rules, settings)
        self.rules, self.settings, self.player = rules, settings, player
        torch.manual_seed(seed)
        # Built on the CPU, then moved: the same seed gives the same weights on any device.
        self.net = PolicyValueNet(settings.network).to(device)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=settings.learning_rate,
                                           weight_decay=settings.weight_decay)
        self.buffer = ReplayBuffer(rules, settings.buffer_size)
        self.rng = np.random.default_rng(seed)
        self.games = 0
        # The positions those games searched and learn from (a move each; a random start's
        # stones are not searched): games get longer or shorter as the network learns, so games
        # a second alone do not compare across runs. None once resumed from a state without it.
        self.samples: int | None = 0
        # Where the random starts go (``self_play.opening_boards``; None: uniform), set at the
        # exact checkpoints from ``aimed_at``, the positions found wrong (a mask over
        # ``start_codes``), which the saved state keeps so that a resumed run aims again.
        self.aim: StartWeights | None = None
        self.aimed_at: npt.NDArray[np.bool_] | None = None
        # The budget the learning rate is annealed over: the first sitting's (``train``), kept
        # by the saved state, so that a finished run continued to a larger budget goes on at
        # the end rate instead of stretching the schedule back up.
        self.anneal_over: Schedule | None = None
        self.seconds = 0.0  # of self-play and gradient steps: checkpoints are not counted
        # The same rounds' CPU time in this process (what a shared machine's wall clock hides;
        # Ray workers count theirs apart); None once resumed from a state that did not keep it.
        self.cpu_seconds: float | None = 0.0

    def to(self, device: str) -> Trainer:
        """The network and the optimiser's moments moved to ``device`` (a resumed run's,
        loaded on the CPU); self."""
        self.net.to(device)
        for state in self.optimizer.state.values():
            for key, value in state.items():
                if torch.is_tensor(value) and key != "step":  # Adam keeps its step on the CPU
                    state[key] = value.to(device)
        return self

    def set_learning_rate(self, rate: float) -> None:
        """Train on at ``rate``, fixed (the settings and the optimiser; its moments are kept):
        a schedule the run had (``learning_rate_end``) ends here."""
        self.settings = replace(self.settings, learning_rate=rate,  # checked there
                                learning_rate_end=None)
        self.anneal_over = None
        self._use_rate(rate)

    @property
    def learning_rate(self) -> float:
        """The rate the optimiser steps at now (the schedule's, where there is one)."""
        return float(self.optimizer.param_groups[0]["lr"])

    def _use_rate(self, rate: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = rate

    def anneal(self, schedule: Schedule) -> None:
        """With ``learning_rate_end``, the optimiser's rate for the share spent so far of the
        budget it is annealed over (``anneal_over``; else ``schedule``'s, which becomes it):
        from ``learning_rate`` to the end geometrically, then the end."""
        end = self.settings.learning_rate_end
        if end is not None:
            self.anneal_over = self.anneal_over or Schedule(schedule.games,
                                                            minutes=schedule.minutes)
            self._use_rate(geometric(self.settings.learning_rate, end,
                                     self.anneal_over.spent(self.games, self.seconds)))

    @property
    def policy(self) -> AlphaZeroPolicy:
        """The raw network as a policy (greedy on its prior)."""
        return AlphaZeroPolicy(self.net, self.rules)

    def evaluate(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return infer(self.net, boards, self.rules.shape)

    @property
    def workers(self) -> int:
        """What a round's games and gradient steps are scaled by: the player's workers."""
        return 1 if self.player is None else self.player.workers

    def round_games(self, budget: int | None, games: int) -> int:
        """The games of a round that starts at ``games``: a full round, or what is left of
        ``budget`` (0: none)."""
        full = self.settings.games_per_round * self.workers
        return full if budget is None else max(0, min(full, budget - games))

    def round(self, games: int, upcoming: int = 0) -> float:
        """Play ``games`` self-play games, then the round's gradient steps; the mean loss.
        ``upcoming``: the next round's games, which a player may start now."""
        if self.player is None:
            samples = play_games(self.rules, self.evaluate, games, self.settings.play, self.rng,
                                 self.aim)
        else:
            samples = self.player(self.net, games, upcoming, self.aim)
        self.buffer.add(samples)
        self.games += games
        if self.samples is not None:
            self.samples += len(samples.outcomes)
        losses = [self.step() for _ in range(self.settings.steps_per_round * self.workers)]
        return float(np.mean(losses))

    def step(self) -> float:
        """One gradient step on a batch of the buffer (each sample under a random symmetry)."""
        boards, policies, outcomes = self.buffer.sample(self.settings.batch_size, self.rng)
        self.net.train()
        device = device_of(self.net)
        logits, values = self.net(planes_of(boards, self.rules.shape).to(device))
        logits = logits.masked_fill(torch.from_numpy(boards != 0).to(device), ILLEGAL_LOGIT)
        targets = torch.from_numpy(policies).to(device)
        policy_loss = -(targets * torch.log_softmax(logits, 1)).sum(1).mean()
        value_loss = torch.mean((values - torch.from_numpy(outcomes).to(device)) ** 2)
        loss = policy_loss + value_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())

    def train(self, budget: int | None, eval_every: int | None,
              checkpoint: Checkpoint | None = None, progress: Callable[[int], Any] | None = None,
              *, minutes: float | None = None, eval_minutes: float | None = None) -> bool:
        """Rounds until ``budget`` games or ``minutes`` of training time (None: no limit on that
        clock; checkpoints are not training time), or until ``checkpoint`` says stop (True
        then). A checkpoint at the end of the round that reaches each multiple of
        ``eval_every`` games or of ``eval_minutes`` of training time (counted from the run's
        start, so a resumed run keeps the schedule), and at the end."""
        schedule = Schedule(budget, eval_every, minutes, eval_minutes)
        stopped = False
        while not stopped and not schedule.finished(self.games, self.seconds):
            before = (self.games, self.seconds)
            played = self.round_games(budget, self.games)
            self.anneal(schedule)
            began, began_cpu = time.perf_counter(), time.process_time()
            self.round(played, self.round_games(budget, self.games + played))
            self.seconds += time.perf_counter() - began
            if self.cpu_seconds is not None:
                self.cpu_seconds += time.process_time() - began_cpu
            if progress is not None:
                progress(played)
            if checkpoint is not None and schedule.due(before, (self.games, self.seconds)):
                stopped = bool(checkpoint(self.policy, self.games))
        return stopped


@dataclass(frozen=True)
class Schedule:
    """When training stops (``games`` or ``minutes`` of training time, either None: no limit)
    and checkpoints (every ``eval_every`` games, every ``eval_minutes``, either None: not on
    that clock)."""

    games: int | None = None
    eval_every: int | None = None
    minutes: float | None = None
    eval_minutes: float | None = None

    def __post_init__(self) -> None:
        if self.games is None and self.minutes is None:
            raise ValueError("training needs a budget: a number of games or of minutes")

    def finished(self, games: int, seconds: float) -> bool:
        return ((self.games is not None and games >= self.games)
                or (self.minutes is not None and seconds >= 60 * self.minutes))

    def spent(self, games: int, seconds: float) -> float:
        """The share of the budget spent, in [0, 1]: the larger of the games' and the
        minutes'."""
        shares = [0.0]
        if self.games is not None:
            shares.append(games / self.games)
        if self.minutes is not None:
            shares.append(seconds / (60 * self.minutes))
        return min(1.0, max(shares))

    def due(self, before: tuple[int, float], now: tuple[int, float]) -> bool:
        """Whether the round from ``before`` to ``now`` (games, seconds) ends at a checkpoint."""
        periods = (self.eval_every, None if self.eval_minutes is None else 60 * self.eval_minutes)
        crossed = any(period is not None and now[k] // period > before[k] // period
                      for k, period in enumerate(periods))
        return crossed or self.finished(*now)
