"""One training run, as ``train.py`` (``gym-tictactoe-train``) starts it: the command line
(``cli``: every flag in ``flags``, checked together into a frozen ``config.RunConfig`` by
``arguments``, ``--resume`` in ``resume``), the run itself (``training``: one trainer per kind
of algorithm, one checkpointer, the results), AlphaZero's and SB3's side of it (``alphazero``,
``sb3``), the run folder, written whole or not at all (``folder``), the learning curve's picture
(``plot``), SIGTERM as an exception (``signals``) and the machine's numerics recorded with the
results (``numerics``). It sits above the agents it trains (``agents.tabular``, ``agents.sb3``,
``agents.alphazero``), which never import it.
"""
