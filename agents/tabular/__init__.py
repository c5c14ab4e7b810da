"""Tabular Q-learning: the agent and its training loop (``q_learning``), the batched learner on
the vector env (``batched``), the tables' layout on each board (``tables``), the pickle-free
Q-table files (``files``), starts aimed at the positions still played wrong (``starts``) and
the steering that applies them at each checkpoint (``focus``). Needs NumPy only, no torch.
"""

from agents.tabular.q_learning import QLearningAgent, QLearningConfig

__all__ = ["QLearningAgent", "QLearningConfig"]
