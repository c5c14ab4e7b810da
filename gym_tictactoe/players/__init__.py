"""Players: the protocol every player answers, with its optional capabilities (:mod:`.protocol`),
the table players, the built-in opponents and their spec strings (:mod:`.opponents`), the
heuristic and search players (:mod:`.heuristic`, :mod:`.search`, :mod:`.negamax`,
:mod:`.threats`), the batched opponents of the vector env (:mod:`.vector_opponents`) and the
registry of saved-model loaders (:mod:`.loaders`)."""

from gym_tictactoe.players.protocol import (
    CAPABILITIES,
    ActPlayer,
    AnswersBatch,
    BatchPlayer,
    Boards,
    Cells,
    Costly,
    GivesCellValues,
    GivesProbabilities,
    LoopPlayer,
    Opponent,
    Player,
    Policy,
    as_player,
    capabilities,
    checked_moves,
    cost_of,
    gives_probabilities,
    pick,
    reset_opponent,
)

__all__ = ["CAPABILITIES", "ActPlayer", "AnswersBatch", "BatchPlayer", "Boards", "Cells",
           "Costly", "GivesCellValues", "GivesProbabilities", "LoopPlayer", "Opponent", "Player",
           "Policy", "as_player", "capabilities", "checked_moves", "cost_of",
           "gives_probabilities", "pick", "reset_opponent"]
