"""Tic-tac-toe for reinforcement learning."""
