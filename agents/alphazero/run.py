"""``train.py --algo alphazero``: the trainer ``agents.run`` calls, on the run's config and
Checkpointer (exact where the board is solved: training stops once the raw network is perfect).
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import TYPE_CHECKING, Any

from agents import EXPLORING_STARTS
from agents.alphazero import files
from agents.alphazero.training import AlphaZeroSettings, Trainer
from agents.run_config import RunConfig, Trained, env_options

if TYPE_CHECKING:  # agents.run imports this module lazily: no cycle at run time
    from agents.run import Checkpointer


def settings_of(config: RunConfig) -> AlphaZeroSettings:
    """The defaults, with the run's exploring starts (--start, --start-probability)."""
    options = env_options(config, EXPLORING_STARTS)
    probability = options.get("start_probability", 0.0) if options["start"] == "random" else 0.0
    defaults = AlphaZeroSettings()
    play = dataclasses.replace(defaults.play, start_probability=probability)
    return dataclasses.replace(defaults, play=play)


def train(config: RunConfig, checkpoint: Checkpointer, pool: Any = None) -> Trained:
    """Self-play rounds until perfect play or ``config.episodes`` games; one torch thread (the
    network is tiny: more threads only wait for each other on 2 cores). It learns from its own
    games only (``train.py`` refuses --opponent for it, so ``pool`` is None)."""
    from agents.sb3 import torch_threads

    player = _player(config)
    trainer = Trainer(config.board, settings_of(config), seed=config.seed, player=player)
    bar = _bar(config)
    try:
        with torch_threads(1):
            trainer.train(config.episodes, config.eval_every, checkpoint,
                          None if bar is None else bar.update)
    finally:
        if player is not None:
            player.close()
    if bar is not None:
        bar.close()
    settings = {"episodes": config.episodes, "games_played": trainer.games,
                "workers": config.workers, "hyperparameters": trainer.settings.as_dict()}
    save = partial(_save, trainer)
    return Trained(trainer.policy, save, "model.npz", "self", settings)


def _player(config: RunConfig) -> Any:
    """Ray actors playing the self-play games (``--workers``), or None: this process."""
    if config.workers is None:
        return None
    from agents.alphazero.workers import RayPlayer

    settings = settings_of(config)
    return RayPlayer(config.board, settings.play, settings.network, config.seed,
                     config.workers, config.ray_address)


def _save(trainer: Trainer, path: Any) -> None:
    files.save(path, trainer.net, trainer.rules, trainer.games)


def _bar(config: RunConfig) -> Any:
    if not config.progress:
        return None
    from gym_tictactoe.extras import require

    tqdm = require("tqdm.auto", "train", "the progress bar (hide it with --no-progress)").tqdm
    return tqdm(total=config.episodes, unit="game")
