"""Players: the protocol every player answers (:mod:`.protocol`), the table players, the built-in
opponents and their spec strings (:mod:`.opponents`), the heuristic and search players
(:mod:`.heuristic`, :mod:`.search`, :mod:`.negamax`, :mod:`.threats`) and the batched opponents of
the vector env (:mod:`.vector_opponents`)."""

from gym_tictactoe.players.protocol import (
    ActPlayer,
    BatchPlayer,
    Boards,
    Cells,
    LoopPlayer,
    Opponent,
    Player,
    as_player,
    checked_moves,
    pick,
    reset_opponent,
)

__all__ = ["ActPlayer", "BatchPlayer", "Boards", "Cells", "LoopPlayer", "Opponent", "Player",
           "as_player", "checked_moves", "pick", "reset_opponent"]
