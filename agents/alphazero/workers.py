"""Self-play in Ray actors: ``train.py --algo alphazero --workers N [--ray-address ADDR]``.

Each of N actors (one CPU, one torch thread) holds a copy of the network and plays its share of
a round's games on its own random stream, the N-th child of the run's seed (``numpy``'s
``SeedSequence(seed).spawn``), so a run reproduces for a given seed and worker count (not
across counts: the games are split differently). A round has ``games_per_round`` games per
actor (``Trainer.round_games``), so each plays as many at once as one process would, and its
network calls stay as full. Each round the driver puts the network's weights into Ray's object
store once, as numpy arrays (never a pickled torch module); the actors load them, play, and
return their samples as numpy arrays, which the trainer learns from in the driver, in worker
order.

Learning overlaps self-play: when the driver collects round r's samples it has already sent the
actors round r + 1, with the weights it has then (those after round r - 1's gradient steps), and
it learns from round r while they play. The games are one round staler than the network, as
AlphaZero's actors play with the latest weights they fetched while the learner goes on; in
exchange neither side waits for the other. Ray runs an actor's calls in the order they were
sent, so the samples and the run still reproduce for a seed and worker count. The random
starts' aim (``Trainer.aim``, set at exact checkpoints) goes to the actors the same way, once
each time it changes, and applies to the rounds sent after it.

Ray runs locally by default (started with at least N logical CPUs), or is the cluster at
``--ray-address`` (its head's ``HOST:PORT``, or ``auto`` on one of its nodes), whose nodes need
this package and the same Ray installed. Importing this module needs no Ray; using it needs the
``distributed`` extra.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.alphazero.network import NetworkSettings, PolicyValueNet, infer, state_arrays
from agents.alphazero.self_play import PlaySettings, Samples, play_games
from gym_tictactoe.extras import require
from gym_tictactoe.game import Rules
from gym_tictactoe.game.starts import StartWeights

PROBE_SECONDS = 5.0  # a TCP connection to --ray-address, before Ray's own minutes of retries
# Ray's own connection retries, bounded (env variables Ray reads; a user's own values win):
# one attempt of 3 + 3 + 5 s instead of 20 of 5 + 5 + 30 s. Ray reads the last two when it is
# first imported, the first at ray.init.
BOUNDED_CONNECT = {"RAY_gcs_server_port_wait_time_s": "1",
                   "RAY_gcs_rpc_server_connect_timeout_s": "3",
                   "RAY_py_gcs_connect_timeout_s": "5"}
# No dashboard (plain `ray` has none), actors' output kept out of the progress bar, Ray's INFO
# lines off: errors still come back with ray.get.
QUIET = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
_started_here: list[bool] = []  # whether connect() started (and so shuts down) Ray


def worker_rng(seed: int, index: int) -> np.random.Generator:
    """Worker ``index``'s stream: child ``index`` of ``SeedSequence(seed).spawn``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def shares(games: int, workers: int) -> list[int]:
    """``games`` split over ``workers`` as evenly as can be, the first ones taking the rest."""
    base, rest = divmod(games, workers)
    return [base + (index < rest) for index in range(workers)]


class SelfPlayWorker:
    """What one actor runs: a network copy playing self-play games on its own stream."""

    def __init__(self, rules: Rules, play: PlaySettings, network: NetworkSettings, seed: int,
                 index: int) -> None:
        import torch

        torch.set_num_threads(1)  # one CPU per actor: more threads only wait for each other
        self.rules, self.play_settings = rules, play
        self.net = PolicyValueNet(network)
        self.rng = worker_rng(seed, index)
        self.aim: StartWeights | None = None
        self.calls = self.leaves = 0
        self.cpu_seconds = 0.0

    def evaluate(self, boards: npt.NDArray[np.int8]) -> tuple[npt.NDArray, npt.NDArray]:
        self.calls, self.leaves = self.calls + 1, self.leaves + len(boards)
        return infer(self.net, boards, self.rules.shape)

    def play(self, weights: dict[str, npt.NDArray[np.float32]], games: int
             ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """``games`` self-play games with ``weights``: boards, policies, outcomes."""
        import torch

        start = time.process_time()
        # Copies: Ray hands over read-only views of its object store.
        self.net.load_state_dict({name: torch.tensor(array) for name, array in weights.items()})
        found = play_games(self.rules, self.evaluate, games, self.play_settings, self.rng,
                           self.aim)
        self.cpu_seconds += time.process_time() - start
        return found.boards, found.policies, found.outcomes

    def set_aim(self, aim: StartWeights | None) -> None:
        """Draw the random starts of the rounds sent after this call from ``aim`` (None:
        uniformly). Read-only: Ray hands it over as views of its object store."""
        self.aim = aim

    def counts(self) -> tuple[int, int, float]:
        """Network calls, boards evaluated and CPU seconds spent playing, so far."""
        return self.calls, self.leaves, self.cpu_seconds


class WorkerLost(ConnectionError):
    """A self-play actor died during the run, with its node or its process: Ray restarts
    neither, so the run cannot go on (the command line says so in one line, exit 4)."""


def lost(error: Exception) -> WorkerLost:
    """Ray's error of a dead actor (several lines) as one line: the reason Ray gives."""
    reasons = [line.strip() for line in str(error).splitlines()
               if line.strip().startswith("The actor died because")]
    reason = reasons[-1] if reasons else type(error).__name__
    return WorkerLost(f"--workers: a self-play actor died ({reason}); Ray does not restart it")


class RayPlayer:
    """A game player for ``Trainer`` (``training.GamePlayer``): each round's games shared among
    ``workers`` actors; with ``overlap``, the next round played while the driver learns."""

    def __init__(self, rules: Rules, play: PlaySettings, network: NetworkSettings, seed: int,
                 workers: int, address: str | None = None, overlap: bool = True) -> None:
        self.ray = connect(address, workers)
        remote = self.ray.remote(num_cpus=1)(SelfPlayWorker)
        self.actors = [remote.remote(rules, play, network, seed, index)
                       for index in range(workers)]
        self.workers, self.overlap = workers, overlap
        self.pending: tuple[int, list[Any]] | None = None  # a round sent ahead: games, calls
        self.aim: StartWeights | None = None  # the aim the actors were last sent

    def __call__(self, net: PolicyValueNet, games: int, upcoming: int = 0,
                 aim: StartWeights | None = None) -> Samples:
        """The samples of ``games`` games, in worker order: those of the round sent ahead
        (with older weights and aim) or else played now with ``net``'s weights and ``aim``;
        with ``overlap``, the ``upcoming`` games of the next round are sent first, with
        ``net``'s weights and ``aim``."""
        self._aim_at(aim)
        weights = None
        if self.pending is None or self.pending[0] != games:
            # Nothing sent ahead for this round (the first, or a caller that changed its mind:
            # what was sent is dropped, played all the same).
            weights = self.ray.put(state_arrays(net))  # once per round, shared by every actor
            self.pending = (games, self._send(weights, games))
        calls, self.pending = self.pending[1], None
        if self.overlap and upcoming > 0:
            ahead = self.ray.put(state_arrays(net)) if weights is None else weights
            self.pending = (upcoming, self._send(ahead, upcoming))
        parts = self._get(calls)
        return Samples(*(np.concatenate(arrays) for arrays in zip(*parts, strict=True)))

    def _aim_at(self, aim: StartWeights | None) -> None:
        """``aim`` sent to every actor once, when it changes (at exact checkpoints): an actor
        runs its calls in order, so it applies to the rounds sent after it."""
        if aim is not self.aim:
            found = self.ray.put(aim)  # once, shared by the actors of each node
            for actor in self.actors:
                actor.set_aim.remote(found)
            self.aim = aim

    def _send(self, weights: Any, games: int) -> list[Any]:
        """Each actor's share of ``games`` games with ``weights``: their Ray futures."""
        return [actor.play.remote(weights, share)
                for actor, share in zip(self.actors, shares(games, len(self.actors)), strict=True)
                if share > 0]

    def counts(self) -> tuple[int, int, float]:
        """Network calls, boards evaluated and CPU seconds playing so far, over every actor."""
        found = self._get([actor.counts.remote() for actor in self.actors])
        calls, leaves, cpu = zip(*found, strict=True)
        return sum(calls), sum(leaves), sum(cpu)

    def _get(self, calls: list[Any]) -> list[Any]:
        try:
            return self.ray.get(calls)
        except self.ray.exceptions.RayActorError as error:
            raise lost(error) from None

    def close(self) -> None:
        """End the actors, and Ray itself if ``connect`` started it."""
        for actor in self.actors:
            self.ray.kill(actor)  # a round sent ahead and never collected goes with them
        self.actors, self.pending = [], None
        disconnect()


def local_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def check_workers(workers: int, address: str | None) -> None:
    """On a local Ray (``address`` None), at most one actor per CPU here: more would only wait
    for each other, each holding its own copy of torch and the network. A ValueError of one
    line; a cluster's CPUs are counted once connected (:func:`connect`), and so are those of a
    Ray this process started itself."""
    cpus = local_cpus()
    if address is None and workers > cpus:
        raise ValueError(f"--workers {workers:,}: a local Ray runs one actor per CPU, and this "
                         f"machine has {cpus} CPUs to run on: give at most {cpus} (more on a Ray "
                         "cluster, with --ray-address)")


def connect(address: str | None, workers: int) -> ModuleType:
    """Ray, initialised: a new local instance (``address`` None) or the cluster at ``address``
    (unless this process is connected already); ValueError or ConnectionError in one line for
    more ``workers`` than local CPUs, an unusable address or a cluster with fewer than
    ``workers`` CPUs, MissingExtra without Ray."""
    if address is not None:
        check_address(address)
        for name, value in BOUNDED_CONNECT.items():
            os.environ.setdefault(name, value)
    ray = require("ray", "distributed", "--workers")
    if not ray.is_initialized():
        if address is None:  # "local": never a cluster that RAY_ADDRESS may name
            check_workers(workers, address)
            ray.init(address="local", num_cpus=local_cpus(), **QUIET)
        else:
            _init_at(ray, address)
        _started_here.append(True)
    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < workers:
        disconnect()
        raise ValueError(f"--workers {workers} needs {workers} CPUs (one per actor); the Ray "
                         f"cluster has {cpus:g}")
    return ray


def _init_at(ray: ModuleType, address: str) -> None:
    try:
        ray.init(address=address, **QUIET)
    except ConnectionError as error:
        # Something listens there but Ray could not join it: no Ray, another Ray version, or a
        # cluster whose auth token this machine lacks; Ray's own log lines above say which.
        raise ConnectionError(f"--ray-address {address}: could not join a Ray cluster there "
                              f"({error}); Ray's log lines above say why") from None


def check_address(address: str, probe: Callable[..., Any] = socket.create_connection) -> None:
    """``auto`` or a ``HOST:PORT`` where something accepts a TCP connection within
    ``PROBE_SECONDS``: else ValueError (the form) or ConnectionError (nothing there)."""
    if address == "auto":
        return
    if address.startswith("ray://"):
        raise ValueError(f"--ray-address {address}: Ray Client addresses (ray://) are not "
                         "supported; run train.py on a node of the cluster with --ray-address "
                         "HOST:PORT (the head's GCS port) or auto")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--ray-address must be HOST:PORT (the Ray head's GCS port, e.g. "
                         f"10.0.0.5:6379) or auto; got {address!r}")
    try:
        probe((host.strip("[]"), int(port)), timeout=PROBE_SECONDS).close()
    except OSError as error:
        reason = "timed out" if isinstance(error, TimeoutError) else (
            error.strerror or str(error))
        raise ConnectionError(f"--ray-address {address}: nothing answers there ({reason}); "
                              "start a cluster with `ray start --head` and give the address it "
                              "prints, or leave --ray-address out for a local Ray") from None


def disconnect() -> None:
    """Shut Ray down if ``connect`` started it (a Ray started by the caller is left running)."""
    if _started_here:
        _started_here.clear()
        import ray

        ray.shutdown()
