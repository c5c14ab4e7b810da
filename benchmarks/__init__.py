"""The benchmarks: each measures one thing and writes its figures to a results file
(``runs/benchmarks/`` unless ``--out`` says otherwise; the committed ones are in
``benchmarks/results/``). One runner starts them all from the repository's root:

    python -m benchmarks                 # the list, one line each
    python -m benchmarks NAME [--help]   # one benchmark, with its own flags

Each benchmark is a module here with ``main(argv)``; the others (``progress``, ``timing``,
``commands``, the table makers...) are the library they share. Nothing in the package or the
agents imports this one.
"""

from __future__ import annotations

# The benchmarks ``python -m benchmarks NAME`` runs, with what each measures (its module's
# docstring says how).
BENCHMARKS = {
    "alphabeta": "alpha-beta player: reply time on big boards and games against random",
    "alphazero": "AlphaZero: self-play games to perfect play per seed, or self-play speed",
    "elo": "AlphaZero among the built-in players on a board too big to solve, as Elo ratings",
    "fuzz": "seeded mutation fuzz of the five kinds of file the project reads",
    "grading": "exact grading of the search players on a 17-64 cell board (5x5x4)",
    "mcts": "the mcts player against OpenSpiel's MCTSBot, same simulations, both seats",
    "openings": "every opening of the Elo tables' random plies, proved: what perfect play gets",
    "pettingzoo_speed": "the two-agent AEC env against PettingZoo's tic-tac-toe, moves/s",
    "proofs": "the published m,n,k results proved from the empty board",
    "q_batched": "tabular Q-learning batched on the vector env against one board at a time",
    "q_boards": "the default tabular Q-learning run on 4x4 boards: how far, how fast",
    "q_margins": "the exact action values tabular Q-learning converges to, and their margins",
    "q_perfect": "episodes and wall time batched tabular Q needs for perfect play on 16 cells",
    "q_seeds": "episodes the default run (make train) needs to play perfectly, per seed",
    "sb3_boards": "DQN and MaskablePPO on the 16-cell boards with train.py's defaults",
    "sb3_variants": "DQN and MaskablePPO on the 16-cell boards, one change at a time",
    "search_exact": "exact best response against the search players, per seat",
    "search_speed": "the compiled search players against the Python ones they replaced",
    "self_play": "how close self-play alone gets to perfect play, by train.py runs",
    "speed": "the envs against PettingZoo, OpenSpiel and pgx (make bench)",
    "tables": "the docs' measured tables, regenerated from the committed results (--check)",
    "training": "timesteps SB3 agents need for perfect tic-tac-toe, and each change's share",
}
