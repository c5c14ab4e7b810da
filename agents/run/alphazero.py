"""``train.py --algo alphazero``: the trainer ``agents.run.training`` calls, on the run's config
and Checkpointer (exact where the board is solved: training stops once the raw network is perfect).

At every checkpoint the whole training state is saved, atomically, as ``checkpoint.npz`` in the
run's folder (``agents.alphazero.state``; the folder is reserved when the run starts), so a run
that is killed or interrupted loses at most one checkpoint period, and ``train.py --resume``
continues it exactly.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

from agents import EXPLORING_STARTS
from agents.alphazero import files
from agents.alphazero.state import STATE_FILE, load_state, save_state
from agents.alphazero.training import AlphaZeroSettings, Checkpoint, Trainer, check_memory
from agents.run.checkpoint import Checkpointer
from agents.run.config import RunConfig, Trained, env_options
from agents.tabular.focus import Focus

PLAY_FIELDS = tuple(f.name for f in dataclasses.fields(AlphaZeroSettings().play))
NETWORK_FIELDS = tuple(f.name for f in dataclasses.fields(AlphaZeroSettings().network))


def settings_of(config: RunConfig) -> AlphaZeroSettings:
    """The defaults, with the run's exploring starts (--start, --start-probability) and the
    settings given (``config.alphazero``, by field name); a ValueError for a bad one, or for
    settings that need more memory on the run's board than their limits allow."""
    options = env_options(config, EXPLORING_STARTS)
    probability = options.get("start_probability", 0.0) if options["start"] == "random" else 0.0
    given, defaults = dict(config.alphazero), AlphaZeroSettings()
    play = {name: given.pop(name) for name in PLAY_FIELDS if name in given}
    network = {name: given.pop(name) for name in NETWORK_FIELDS if name in given}
    settings = dataclasses.replace(
        defaults, play=dataclasses.replace(defaults.play, start_probability=probability, **play),
        network=dataclasses.replace(defaults.network, **network), **given)
    check_memory(config.board, settings)
    return settings


def flat_settings(settings: AlphaZeroSettings) -> dict[str, Any]:
    """``settings`` by field name, play's and the network's fields at the top."""
    found = settings.as_dict()
    return {**found.pop("play"), **found.pop("network"), **found}


def run_settings(config: RunConfig) -> dict[str, Any]:
    """What a state file keeps of the run besides the trainer, for ``--resume``."""
    return {"seed": config.seed, "name": config.name, "episodes": config.episodes,
            "minutes": config.minutes, "eval_every": config.eval_every,
            "eval_minutes": config.eval_minutes, "games": config.games,
            "focus_share": 0.0 if config.focus is None else config.focus.share,
            "back_share": 0.0 if config.focus is None else config.focus.back_share}


def train(config: RunConfig, checkpoint: Checkpointer, pool: Any = None) -> Trained:
    """Self-play rounds until perfect play or the budget (``config.episodes`` games,
    ``config.minutes`` of training); one torch thread (the network is tiny: more threads only
    wait for each other on 2 cores). It learns from its own games only (``train.py`` refuses
    --opponent for it, so ``pool`` is None). With ``config.resume``, from that run's state."""
    from agents.sb3 import torch_threads

    trainer, before = _trainer(config, checkpoint)
    if config.focus is not None and config.focus.aims:
        checkpoint.steer = partial(aim_starts, trainer, config.focus)
        _aim_again(trainer, config.focus)
    player = trainer.player = _player(config, trainer.settings)
    bar = _bar(config, trainer.games)
    try:
        with torch_threads(1):
            trainer.train(config.episodes, config.eval_every,
                          _saving(trainer, checkpoint, config),
                          None if bar is None else bar.update, minutes=config.minutes,
                          eval_minutes=config.eval_minutes)
    finally:  # Ctrl-C too: the bar's line ends before the message that follows
        if player is not None:
            player.close()
        if bar is not None:
            bar.close()
    settings = {"episodes": config.episodes, "minutes": config.minutes,
                "eval_minutes": config.eval_minutes, "games_played": trainer.games,
                "samples_played": trainer.samples,
                "train_seconds": round(trainer.seconds, 3),
                "train_cpu_seconds": _rounded(trainer.cpu_seconds), "workers": config.workers,
                "resumed_from": None if config.resume is None else str(config.resume),
                **_round_figures(trainer), "hyperparameters": trainer.settings.as_dict(),
                **(config.focus or Focus()).settings()}
    save = partial(_save, trainer)
    return Trained(trainer.policy, save, "model.npz", "self", settings, seconds_before=before)


def _trainer(config: RunConfig, checkpoint: Checkpointer) -> tuple[Trainer, float]:
    """A new trainer, or with ``config.resume`` the saved one (its curve and clock handed to
    ``checkpoint``); the wall seconds of the run's earlier sittings."""
    if config.resume is None:
        return Trainer(config.board, settings_of(config), seed=config.seed,
                       device=config.device), 0.0
    saved = load_state(config.resume / STATE_FILE)
    saved.trainer.to(config.device)  # the file's arrays are read onto the CPU
    rate = config.alphazero.get("learning_rate")  # only a finished run's continuation has one
    if rate is not None:
        # Entries from before checkpoints kept the rate: it was the settings' all along.
        before = saved.trainer.settings.learning_rate
        saved.curve = [{**entry, "learning_rate": entry.get("learning_rate", before)}
                       for entry in saved.curve]
        saved.trainer.set_learning_rate(rate)
    checkpoint.resume(saved.curve, saved.seconds)
    return saved.trainer, saved.seconds


def _saving(trainer: Trainer, checkpoint: Checkpointer, config: RunConfig) -> Checkpoint:
    """The checkpoint call: evaluate and record (``checkpoint``, with the training seconds),
    then save the whole state where the Checkpointer says."""
    run = run_settings(config)

    def on_eval(policy: Any, games: int) -> bool:
        stop = checkpoint(policy, games, train_seconds=trainer.seconds,
                          train_cpu_seconds=trainer.cpu_seconds,
                          setting={"learning_rate": trainer.learning_rate,
                                   "samples": trainer.samples})
        if checkpoint.state_file is not None:
            with checkpoint.writing(STATE_FILE):
                save_state(checkpoint.state_file, trainer, run, checkpoint.seconds,
                           checkpoint.curve)
        return stop

    return on_eval


def aim_starts(trainer: Trainer, focus: Focus, policy: Any, moves: Any,
               games: int) -> dict[str, Any]:
    """At an exact checkpoint (``Checkpointer.steer``): aim ``trainer``'s random starts as
    ``focus`` says, from the raw network's moves in every position (``moves``, the table the
    evaluation read); what the learning-curve entry adds: ``wrong``, the positions played
    wrong."""
    from agents.tabular.starts import aimed_weights

    trainer.aim, wrong = aimed_weights(trainer.rules, moves, focus.share, focus.back_share,
                                       focus.ahead_share)
    trainer.aimed_at = wrong
    return {"wrong": int(wrong.sum())}


def _aim_again(trainer: Trainer, focus: Focus) -> None:
    """A resumed run's aim, rebuilt from the positions its last checkpoint found wrong (the
    saved state's ``aimed_at``), so that its starts do not go uniform until the next one."""
    from agents.tabular.starts import weights_toward

    if trainer.aimed_at is not None:
        trainer.aim = weights_toward(trainer.rules, trainer.aimed_at, focus.share,
                                     focus.back_share, focus.ahead_share)


def _player(config: RunConfig, settings: AlphaZeroSettings) -> Any:
    """Ray actors playing the self-play games (``--workers``), or None: this process. (Their
    generators are not in the saved state: a resumed run with workers plays other games.)"""
    if config.workers is None:
        return None
    from agents.alphazero.workers import RayPlayer

    return RayPlayer(config.board, settings.play, settings.network, config.seed,
                     config.workers, config.ray_address)


def _round_figures(trainer: Trainer) -> dict[str, int]:
    """A round as the run played it: its games and gradient steps (``games_per_round`` and
    ``steps_per_round`` per worker with --workers) and by how many rounds its games' weights
    trailed the network (1 with --workers: learning overlaps self-play)."""
    return {"round_games": trainer.round_games(None, 0),
            "round_steps": trainer.settings.steps_per_round * trainer.workers,
            "round_weights_behind": int(getattr(trainer.player, "overlap", False))}


def _save(trainer: Trainer, path: Any) -> None:
    files.save(path, trainer.net, trainer.rules, trainer.games)


def _bar(config: RunConfig, initial: int) -> Any:
    if not config.progress:
        return None
    from gym_tictactoe.extras import require

    tqdm = require("tqdm.auto", "train", "the progress bar (hide it with --no-progress)").tqdm
    if config.exact and config.episodes is not None:
        # The run stops once the network plays perfectly, often long before the budget: a
        # bar towards the budget would show a share and a time left that mean nothing.
        return tqdm(initial=initial, unit="game", desc=f"games (up to {config.episodes:,}; "
                    "stops at perfect play)")
    return tqdm(total=config.episodes, initial=initial, unit="game")


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)
