"""Trained SB3 models as Policies: the algorithms, their encodings and :class:`ModelPolicy`.

:class:`ModelPolicy` plays the masked argmax of a model's preferences (a deterministic policy),
or, with ``stochastic=True``, draws from (Maskable)PPO's own action distribution restricted to
the legal cells and offers those probabilities to ``gym_tictactoe.evaluation``, which then
measures the policy exactly as a stochastic one (``best_response``'s ``expected``,
``exploitability``).
"""

from __future__ import annotations

import copy

import numpy as np
import numpy.typing as npt
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.policies import BasePolicy

from gym_tictactoe import game
from gym_tictactoe.checks import check_choice, check_flag
from gym_tictactoe.envs import wrappers
from gym_tictactoe.game.symmetry import (
    canonicalize,
    transform_cells,
    uncanonical_actions,
    untransform_cells,
)
from gym_tictactoe.seeding import check_seed

ALGOS = ("maskable-ppo", "ppo", "dqn")
# Boards per forward pass: an exact evaluation asks about a whole layer of positions at once
# (up to 2.3 M on 4x4x4), and one pass over all of them held several GB of activations (15 GB
# for 512-wide layers on 4x4x3); 16,384 boards of a 512-wide layer are 32 MB.
PREFERENCE_CHUNK = 16_384
ALGO_CLASSES: dict[str, type[BaseAlgorithm]] = {
    "maskable-ppo": MaskablePPO, "ppo": PPO, "dqn": DQN,
}
POLICY_CLASSES: dict[str, type[BasePolicy]] = {
    algo: cls.policy_aliases["MlpPolicy"] for algo, cls in ALGO_CLASSES.items()
}


def check_algo(algo: str) -> str:
    """``algo`` itself when it is one of ``ALGOS``, else a ValueError listing them."""
    return check_choice(algo, "algo", ALGOS)


def _algo_of(model: BaseAlgorithm | BasePolicy) -> str:
    if isinstance(model, BaseAlgorithm):
        return algo_of(model)
    for algo, cls in POLICY_CLASSES.items():  # the actor-critic policies are not DQN's
        if type(model) is cls:
            return algo
    raise ValueError(f"{type(model).__name__} is not the policy of one of {list(ALGOS)}")


def algo_of(model: BaseAlgorithm) -> str:
    """The ``ALGOS`` name of a model's class (MaskablePPO is not a PPO subclass, so exact)."""
    for algo, cls in ALGO_CLASSES.items():
        if type(model) is cls:
            return algo
    raise ValueError(f"{type(model).__name__} is not one of {list(ALGOS)}")


def uses_one_hot(algo: str) -> bool:
    """Whether ``algo`` sees OneHotObservation (27 floats) rather than the int8 board."""
    return check_algo(algo) != "maskable-ppo"


def observation_space(algo: str, n_cells: int) -> spaces.Space:
    """The observation space the algorithm's models are built on, for a board of ``n_cells``."""
    if uses_one_hot(algo):
        return wrappers.one_hot_space(n_cells)
    return board_space(n_cells)


def board_space(n_cells: int) -> spaces.MultiDiscrete:
    """The board as MaskablePPO sees it: 3 values a cell, int8 where SB3 can use it. SB3 sizes
    its one-hot input as ``sum(nvec)`` in the space's own dtype, which wraps around in int8 past
    42 cells (on 15x15x5: -93, an AssertionError deep in SB3): int16 there."""
    dtype = np.int8 if 3 * n_cells <= np.iinfo(np.int8).max else np.int16
    return spaces.MultiDiscrete([3] * n_cells, dtype=dtype)


def one_hot(obs: npt.ArrayLike, n_cells: int) -> npt.NDArray[np.float32]:
    """Boards (N, cells) as OneHotObservation encodes them: (N, 3 * cells), planes first."""
    return wrappers.one_hot(np.asarray(obs).reshape(-1, n_cells))



class ModelPolicy:
    """A trained model (or its policy alone) as a Policy ``(obs int8[9], mask int8[9]) -> cell``,
    always legal.

    Observations are the env's board (1 own mark, 2 the opponent's); the adapter one-hot
    encodes them for ``"ppo"`` and ``"dqn"``. Moves are the masked argmax of the network's
    preferences: the action logits for (Maskable)PPO, the Q-values for DQN. A model trained on
    canonical boards (``canonical=True``, as the adapter's ``canonical`` option shows them) is
    asked about each board's canonical image, and its move mapped back.

    ``stochastic=True`` ((Maskable)PPO only: DQN's policy is its greedy move) plays a draw from
    the model's own action distribution restricted to the legal cells, a softmax of the logits
    over them (a generator seeded with ``seed``), and offers those probabilities as
    ``action_probabilities(_batch)``, so ``gym_tictactoe.evaluation`` measures the policy as
    the stochastic one it is. For MaskablePPO that is exactly its masked distribution; plain PPO
    also gives illegal cells weight, which the env would punish with a loss: here it is
    renormalised over the legal cells, the policy that never plays an illegal move.
    """

    def __init__(self, model: BaseAlgorithm | BasePolicy, algo: str | None = None,
                 rules: game.Rules | None = None, canonical: bool = False, *,
                 stochastic: bool = False, seed: int | None = 0) -> None:
        network = model.policy if isinstance(model, BaseAlgorithm) else model
        self.algo = _algo_of(model) if algo is None else check_algo(algo)
        if not isinstance(network, POLICY_CLASSES[self.algo]) or (
                isinstance(model, BaseAlgorithm) and type(model) is not ALGO_CLASSES[self.algo]):
            raise ValueError(f"algo {self.algo!r} needs a {ALGO_CLASSES[self.algo].__name__} or "
                             f"its policy; got {type(model).__name__}")
        if stochastic and self.algo == "dqn":
            raise ValueError("stochastic=True needs an action distribution: (maskable-)ppo has "
                             "one, dqn plays its greedy move (use stochastic=False)")
        # The model (None when only its policy was loaded, to play) and the network that plays:
        # the model's own, or a frozen copy (``frozen``).
        self.model = model if isinstance(model, BaseAlgorithm) else None
        self.network, self.canonical = network, check_flag(canonical, "canonical")
        self.n_cells = int(network.action_space.n)
        self.rules = _board_with(self.n_cells) if rules is None else rules
        if self.rules.n_cells != self.n_cells:
            raise ValueError(f"the model plays {self.n_cells} cells; the {self.rules.name} board "
                             f"has {self.rules.n_cells}")
        self.stochastic = check_flag(stochastic, "stochastic")
        self.rng = np.random.default_rng(check_seed(seed))
        if self.stochastic:  # only then is it a stochastic policy for evaluation
            self.action_probabilities_batch = self.probabilities
            self.action_probabilities = self._probabilities_one

    def __call__(self, obs: npt.ArrayLike, mask: npt.ArrayLike) -> int:
        boards, masks = _batch(obs, mask, self.n_cells)
        own = self.model is None or self.network is self.model.policy
        if self.algo == "maskable-ppo" and own and not (self.canonical or self.stochastic):
            # SB3's own prediction (MaskablePPO.predict is its policy's) is the reference the
            # batched path is tested against.
            action, _ = self.network.predict(boards[0], action_masks=masks[0],
                                             deterministic=True)
            return int(action)
        return int(self.act_batch(boards, masks)[0])

    def act_batch(self, obs: npt.ArrayLike, masks: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """The moves for N boards (N, 9) under their masks (N, 9), in one forward pass."""
        if self.stochastic:
            probs = self.probabilities(obs, masks)
            cumulative = np.cumsum(probs, axis=1)
            draws = self.rng.random((len(probs), 1)) * cumulative[:, -1:]
            return (cumulative > draws).argmax(axis=1)  # never a cell of probability 0
        images, legal, symmetry = self._images(obs, masks)
        moves = np.where(legal, self.preferences(images), -np.inf).argmax(axis=1)
        return moves if symmetry is None else uncanonical_actions(self.rules, moves, symmetry)

    def probabilities(self, obs: npt.ArrayLike, masks: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``(N, cells)``: the model's action distribution at N boards over their legal cells,
        the softmax of the masked logits (0 on occupied cells). (Maskable)PPO only."""
        if self.algo == "dqn":
            raise ValueError("dqn has no action distribution, only Q-values (preferences)")
        images, legal, symmetry = self._images(obs, masks)
        logits = np.where(legal, self.preferences(images).astype(np.float64), -np.inf)
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = weights / weights.sum(axis=1, keepdims=True)
        return probs if symmetry is None else untransform_cells(self.rules, probs, symmetry)

    def cell_values(self, obs: npt.ArrayLike,
                    masks: npt.ArrayLike) -> tuple[str, npt.NDArray[np.float64]]:
        """What the model thinks of each cell of N boards, for pictures
        (``players.protocol.GivesCellValues``): (Maskable)PPO's ``probabilities``, DQN's
        Q-values (its ``preferences``, asked on canonical images for a canonical model)."""
        if self.algo != "dqn":
            return "probability", self.probabilities(obs, masks)
        images, _, symmetry = self._images(obs, masks)
        values = self.preferences(images).astype(np.float64)
        return "Q-value", values if symmetry is None else untransform_cells(self.rules, values,
                                                                            symmetry)

    def frozen(self) -> ModelPolicy:
        """A copy that keeps playing as the model plays now, however it trains on: a self-play
        snapshot (the network copied, with its own generator for stochastic play)."""
        snapshot = copy.copy(self)
        snapshot.network = copy.deepcopy(self.network)
        snapshot.rng = copy.deepcopy(self.rng)
        return snapshot

    def _probabilities_one(self, obs: npt.ArrayLike,
                           mask: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return self.probabilities(obs, mask)[0]

    def _images(self, obs: npt.ArrayLike, masks: npt.ArrayLike
                ) -> tuple[npt.NDArray, npt.NDArray, npt.NDArray | None]:
        """The boards and masks the network is asked about (canonical images for a canonical
        model, with the symmetry of each, else the boards themselves and None)."""
        boards, legal = _batch(obs, masks, self.n_cells)
        if not self.canonical:
            return boards, legal, None
        images, symmetry = canonicalize(self.rules, boards)
        return images, transform_cells(self.rules, legal, symmetry), symmetry

    def preferences(self, obs: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """(N, 9) unmasked action logits (PPO) or Q-values (DQN) for N boards, asked
        ``PREFERENCE_CHUNK`` boards at a time."""
        policy = self.network
        policy.set_training_mode(False)
        boards = np.asarray(obs, dtype=np.int8).reshape(-1, self.n_cells)
        out = np.empty(boards.shape, np.float32)
        for first in range(0, len(boards), PREFERENCE_CHUNK):
            part = boards[first:first + PREFERENCE_CHUNK]
            inputs = one_hot(part, self.n_cells) if uses_one_hot(self.algo) else part
            with th.no_grad():
                tensor = th.as_tensor(inputs, device=policy.device)
                if self.algo == "dqn":
                    values = policy.q_net(tensor)
                else:
                    values = policy.get_distribution(tensor).distribution.logits
            out[first:first + PREFERENCE_CHUNK] = values.cpu().numpy()
        return out


def _board_with(n_cells: int) -> game.Rules:
    """3x3 for 9 cells; any other size needs the board named (4x3 and 2x6 have 12 cells)."""
    if n_cells == game.TICTACTOE.n_cells:
        return game.TICTACTOE
    raise ValueError(f"a model of {n_cells} cells: name its board (rules=game.rules(rows, cols, "
                     "win_length)); only 9 cells means 3x3x3")


def _batch(obs: npt.ArrayLike, masks: npt.ArrayLike,
           n_cells: int) -> tuple[npt.NDArray, npt.NDArray]:
    boards = np.asarray(obs, dtype=np.int8).reshape(-1, n_cells)
    legal = np.asarray(masks).reshape(-1, n_cells).astype(bool)
    if len(boards) != len(legal) or not legal.any(axis=1).all():
        raise ValueError("need one mask per board, each with a legal move (a game still on)")
    return boards, legal


