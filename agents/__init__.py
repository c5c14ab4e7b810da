"""Agents: tabular Q-learning (``q_learning``), Stable-Baselines3 (``sb3``), self-play
(``self_play``), and ``models.load_policy`` for any saved model."""

# Where every agent's training episodes begin by default: three quarters at a uniformly drawn
# reachable unfinished position, the agent playing the side to move (exploring starts), a
# quarter at the empty board. Games from the empty board rarely reach the positions that follow
# mistakes, and a best response steers into exactly those. Measured (README "Measured
# figures"): SB3 DQN, MaskablePPO and PPO perfect on 5 of 5 seeds with them, none of 3 without;
# tabular self-play perfect at 30-40k episodes (seeds 0-4), never within 200k without; tabular
# Q-learning on 4x4x3 keeps the value in 86% of the positions after 2M episodes, 56% without;
# on 3x3 against its curriculum the same either way (median 31.5k and 30.5k episodes, 20 seeds).
# A quarter still starts empty: with every episode started at random MaskablePPO kept losing as O.
EXPLORING_STARTS = {"start": "random", "start_probability": 0.75}
