"""One training run, as ``train.py`` starts it: train, checkpoint, evaluate, write the run folder.

``train.py`` is a thin command line over :func:`run` (as rl_zoo3's ``train.py`` is over
``rl_zoo3.train``). The pieces:

* :class:`~agents.run.config.RunConfig`, frozen: what the run is asked to do;
* one trainer per kind of algorithm, :func:`train_q` (tabular) and :func:`train_sb3`, each with
  its self-play variant;
* one :class:`~agents.run.checkpoint.Checkpointer`, which every trainer calls: it evaluates the
  policy (exactly where the board is solved, else seeded games against the built-in players),
  records the learning-curve entry and says when to stop (perfect play);
* one writer of the run folder, :class:`~agents.run.folder.RunFolder`: whole or not at all.
"""

from __future__ import annotations

import contextlib
import json
import platform
import sys
import time
from dataclasses import asdict
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from agents import EXPLORING_STARTS
from agents.run.checkpoint import Checkpointer, announcer
from agents.run.config import UNSOLVED_OPPONENT, RunConfig, Trained, env_options
from agents.run.folder import RunFolder
from agents.run.numerics import numerics
from gym_tictactoe.evaluation.report import evaluating_message, format_summary, summarize
from gym_tictactoe.extras import MissingExtra
from gym_tictactoe.files import atomic_path


def default_opponent(config: RunConfig, algorithm_default: str) -> str:
    """``--opponent``, else the algorithm's curriculum (on a board too big to solve, one with no
    minimax in it)."""
    if config.opponent is not None:
        return config.opponent
    return algorithm_default if config.exact else UNSOLVED_OPPONENT


def train_q(config: RunConfig, checkpoint: Checkpointer, pool: Any = None) -> Trained:
    """Tabular Q-learning (against ``pool`` in self-play) until perfect play or the budget, on
    a batch of boards at once (``agents.tabular.batched``), its starts aimed and its learning rate
    annealed at each checkpoint as ``config.focus`` says (``agents.tabular.focus``)."""
    from agents.tabular import batched as q_batched
    from agents.tabular.focus import Focus, Steering
    from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent

    opponent, board = default_opponent(config, TRAINING_OPPONENT), config.board.kwargs
    assert config.episodes is not None and config.eval_every is not None  # None: AlphaZero's
    options = env_options(config, EXPLORING_STARTS)
    agent = QLearningAgent(seed=config.seed, **board)
    batch, focus = q_batch(config), config.focus or Focus()
    settings = {"episodes": config.episodes, "env_options": options, "batch": batch,
                "hyperparameters": asdict(agent.config), **focus.settings()}
    envs = q_batched.make_envs(agent, batch, pool.opponent() if pool else opponent,
                               config.seat, **options)
    if config.focus is not None:
        checkpoint.steer = Steering(focus, agent, envs)
    if pool is not None:
        assert config.self_play is not None  # a pool exists for self-play runs only
        q_batched.train_self_play(agent, pool, config.episodes, config.self_play.refresh_every,
                                  batch=batch, seed=config.seed, eval_every=config.eval_every,
                                  on_eval=checkpoint, progress=config.progress, envs=envs)
        settings["self_play"] = config.self_play.settings(pool.added)
    else:
        q_batched.train_batched(agent, envs, config.episodes, seed=config.seed,
                                eval_every=config.eval_every, on_eval=checkpoint,
                                progress=config.progress)
    return Trained(agent, agent.save, "model.npz", opponent, settings)


def q_batch(config: RunConfig) -> int:
    """Boards per step of Q-learning's batched trainer: ``n_envs``, else the board's default
    (``agents.tabular.batched.default_batch``)."""
    from agents.tabular import batched as q_batched

    return config.n_envs or q_batched.default_batch(config.board.n_cells)


def train_sb3(config: RunConfig, checkpoint: Checkpointer, pool: Any = None) -> Trained:
    """An SB3 algorithm (against ``pool`` in self-play), with SB3's progress bar counting to
    the timesteps SB3 trains (``agents.run.sb3.timesteps_trained``: the budget rounded up)."""
    from agents import sb3
    from agents.run.sb3 import ProgressBar, checkpoint_callback, timesteps_trained
    from agents.sb3.files import save_model
    from gym_tictactoe.seeding import check_seed

    algo, opponent = config.algo, default_opponent(config, sb3.CURRICULUM)
    n_envs = config.n_envs or sb3.N_ENVS[algo]
    options = env_options(config, sb3.ENV_OPTIONS[algo])
    canonical = bool(options.get("canonical", False))
    env = sb3.make_training_env(algo, n_envs, pool.opponent() if pool else opponent,
                                config.seat, check_seed(config.seed), config.board, **options)
    model = sb3.build_model(algo, env, config.seed, device=config.device)
    callbacks = [checkpoint_callback(checkpoint, algo, config.board, canonical)]
    if pool is not None:
        from agents.self_play import snapshot_callback

        assert config.self_play is not None  # a pool exists for self-play runs only

        callbacks.append(snapshot_callback(pool, config.self_play.refresh_every, algo,
                                           canonical))
    total = timesteps_trained(model, config.timesteps, announce=print)
    bar = ProgressBar(total) if config.progress else None
    try:
        with sb3.torch_threads(1):
            model.learn(config.timesteps, callback=[*callbacks, *([bar] if bar else [])])
    finally:  # Ctrl-C too: an open rich bar would complain at interpreter exit
        if bar is not None:
            bar.close()
    settings = {"timesteps": config.timesteps, "timesteps_trained": model.num_timesteps,
                "n_envs": n_envs, "env_options": options,
                "hyperparameters": sb3.HYPERPARAMETERS[algo]}
    if pool is not None and config.self_play is not None:  # a pool: a self-play run
        settings["self_play"] = config.self_play.settings(pool.added)
    return Trained(sb3.ModelPolicy(model, algo, config.board, canonical),
                   partial(save_model, model, rules=config.board, canonical=canonical),
                   "model.zip", opponent, settings)


def train_alphazero(config: RunConfig, checkpoint: Checkpointer, pool: Any = None) -> Trained:
    """AlphaZero self-play (``agents.run.alphazero``; torch is imported only here)."""
    from agents.run.alphazero import train

    return train(config, checkpoint, pool)


TRAINERS = {"q": train_q, "sb3": train_sb3, "alphazero": train_alphazero}


def snapshot_pool(config: RunConfig) -> Any:
    """The self-play pool the config describes (None without self-play): FileNotFoundError or
    ValueError for a snapshot file that is no model of ours or plays another board."""
    if config.self_play is None:
        return None
    from agents.self_play import SnapshotPool

    given = config.self_play
    pool = SnapshotPool(config.board, given.pool, given.mix, given.mix_share or 0.0,
                        seed=config.seed)
    for path in given.snapshots:
        pool.add_file(path)
    return pool


def run(config: RunConfig, folder: RunFolder, pool: Any = None) -> Path:
    """Train, evaluate, print the results table and write the run folder; returns it. On any
    failure the folder is discarded (OutputError: its files could not be written)."""
    try:
        return _run(config, folder, pool)
    except BaseException:
        folder.discard()
        raise


def _run(config: RunConfig, folder: RunFolder, pool: Any) -> Path:
    start = time.perf_counter()
    checkpoint = Checkpointer(config, announcer(config))
    if config.kind == "alphazero":
        checkpoint.state_file, checkpoint.folder = _state_file(folder), folder
    trained = TRAINERS[config.kind](config, checkpoint, pool)
    start -= trained.seconds_before  # a resumed run's earlier sittings
    train_seconds = time.perf_counter() - start
    with folder.writing(trained.model_file):
        trained.save(folder.file(trained.model_file))
    print(evaluating_message(config.games, config.board), flush=True)
    with _evaluation_threads(config.algo):  # the torch threads training ran with, too
        summary = summarize(trained.policy, games=config.games, seed=config.seed)
        machine = numerics()
    print(format_summary(summary))
    first = checkpoint.first_perfect
    if config.exact:
        reached = (f"reached at {first:,} {config.clock}" if first
                   else "not reached within the budget")
        print(f"\nperfect play {reached}; training took {train_seconds:.1f} s")
    else:
        print(f"\ntraining took {train_seconds:.1f} s ({config.board.name} is not solved: "
              "perfect play is not measured)")
    final = folder.final or folder.reserve()
    perfect = {f"perfect_at_{config.clock}": first} if config.exact else {}
    results = {"config": run_config(config, trained, final), "seed": config.seed,
               "versions": versions(), "numerics": machine,
               "timings": {"train_seconds": round(train_seconds, 3),
                           "total_seconds": round(time.perf_counter() - start, 3)},
               **perfect, **summary, "learning_curve": checkpoint.curve}
    with folder.writing("results.json"):
        write_json(folder.file("results.json"), results)
    written = [trained.model_file, "results.json"]
    if _plot(config, folder, checkpoint.curve, summary.get("perfect_results")):
        written.append("learning_curve.png")
    folder.commit()
    print(f"wrote {final}: {', '.join(written)}")
    return final


def _state_file(folder: RunFolder) -> Path:
    """Where a run that can resume (AlphaZero) saves its state at each checkpoint: in its run
    folder, reserved now (``agents.run.folder``), so that a killed run keeps it."""
    from agents.alphazero.state import STATE_FILE

    final = folder.final or folder.reserve()
    folder.lock()
    print(f"run folder: {final} (its {STATE_FILE} is saved at each checkpoint; "
          f"train.py --resume {final} continues the run)", flush=True)
    return final / STATE_FILE


def _plot(config: RunConfig, folder: RunFolder, curve: list[dict[str, Any]],
          perfect_results: dict[str, str] | None) -> bool:
    """The learning curve's PNG, or a one-line warning when matplotlib is missing."""
    from agents.run.plot import plot_curve

    try:
        with folder.writing("learning_curve.png"):
            plot_curve(folder.file("learning_curve.png"), curve, config.clock, config.title,
                       perfect_results)
    except MissingExtra as error:
        print(f"train.py: warning: no learning_curve.png: {error}", file=sys.stderr)
        return False
    return True


def _evaluation_threads(algo: str) -> contextlib.AbstractContextManager:
    """One torch thread for an SB3 model's final evaluation, as for its training: torch's
    default (every core) made it several times slower on 2 busy cores (docs/figures.md, "What
    the figures depend on")."""
    if algo == "q":
        return contextlib.nullcontext()
    from agents.sb3 import torch_threads

    return torch_threads(1)


def run_config(config: RunConfig, trained: Trained, run_dir: Path) -> dict[str, Any]:
    """The settings that applied to this run: the opponent actually trained against, the budget
    and evaluation period of this kind of algorithm, never the other kind's."""
    device = {} if config.kind == "q" else {"device": config.device}
    return {"algo": config.algo, "board": config.board.name, "opponent": trained.opponent,
            "seat": config.seat, "seed": config.seed, **trained.settings, **device,
            "eval_every": config.eval_every, "games": config.games, "run_dir": str(run_dir),
            "hyperparams": config.hyperparams}


def versions() -> dict[str, str]:
    names = ("gymnasium-tictactoe", "gymnasium", "numpy", "torch", "stable-baselines3",
             "sb3-contrib")
    found = {"python": platform.python_version()}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically: never a half-written file."""
    with atomic_path(path) as temp, open(temp, "w") as file:
        json.dump(data, file, indent=2)
