"""Stable-Baselines3 / sb3-contrib agents (DQN, PPO, MaskablePPO): envs, models and exact
evaluation during training (``training``, whose names this package exports: ``agents.sb3`` is
the module users import), trained models as policies (``policy``), the vector env as an SB3
``VecEnv`` (``vec_env``), and the models' files written and read without pickle (``files``,
``network``). Importing this package needs torch, stable-baselines3 and sb3-contrib.
"""

from agents.sb3.training import (
    ALGO_CLASSES,
    ALGOS,
    CURRICULUM,
    ENV_OPTIONS,
    HYPERPARAMETERS,
    N_ENVS,
    OLD_CURRICULUM,
    ExactEvalCallback,
    ModelPolicy,
    algo_of,
    build_model,
    check_algo,
    make_env,
    make_training_env,
    make_vec_env,
    observation_space,
    one_hot,
    torch_threads,
    train,
    uses_one_hot,
)

__all__ = [
    "ALGOS", "ALGO_CLASSES", "CURRICULUM", "ENV_OPTIONS", "HYPERPARAMETERS", "N_ENVS",
    "OLD_CURRICULUM", "ExactEvalCallback", "ModelPolicy", "algo_of", "build_model",
    "check_algo", "make_env", "make_training_env", "make_vec_env", "observation_space",
    "one_hot", "torch_threads", "train", "uses_one_hot",
]
