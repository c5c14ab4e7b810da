"""Exact evaluation against independent brute force, and losing lines replayed through the env."""

import json
from functools import cache

import numpy as np
import pytest

from gym_tictactoe import evaluation, game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.evaluation import Record
from gym_tictactoe.game import basics

T3 = game.TICTACTOE  # tic-tac-toe's rules

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
OTHER = {"X": "O", "O": "X"}


# --- plain Python over tuples, independent of the game tables ----------------------------------


def plain_winner(cells: tuple) -> int:
    for a, b, c in LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return 0


def plain_over(cells: tuple) -> bool:
    return bool(plain_winner(cells)) or 0 not in cells


def plain_mover(cells: tuple) -> int:
    return 1 if cells.count(1) == cells.count(2) else 2


def plain_play(cells: tuple, cell: int) -> tuple:
    return cells[:cell] + (plain_mover(cells),) + cells[cell + 1 :]


@cache
def plain_value(cells: tuple) -> int:
    """Game value for X by textbook minimax."""
    if plain_over(cells):
        return {0: 0, 1: 1, 2: -1}[plain_winner(cells)]
    values = [plain_value(plain_play(cells, i)) for i, v in enumerate(cells) if v == 0]
    return max(values) if plain_mover(cells) == 1 else min(values)


def plain_walk(moves) -> set:
    """Every unfinished position of the games from the empty board where ``moves(cells)`` are
    the moves played at each."""
    seen, frontier = set(), [(0,) * 9]
    while frontier:
        cells = frontier.pop()
        if cells in seen or plain_over(cells):
            continue
        seen.add(cells)
        frontier += [plain_play(cells, i) for i in moves(cells)]
    return seen


def plain_empty(cells: tuple) -> list:
    return [i for i, v in enumerate(cells) if v == 0]


@cache
def plain_positions() -> tuple:
    """Every position with a move to make, found by playing every game from the empty board."""
    return tuple(sorted(plain_walk(plain_empty)))


def absolute(obs) -> tuple:
    """The absolute board behind a relative observation (the side to move sees itself as 1)."""
    cells = tuple(int(v) for v in obs)
    return cells if cells.count(1) == cells.count(2) else tuple((0, 2, 1)[v] for v in cells)


def table_policy(table: dict):
    return lambda obs, mask: table[absolute(obs)]


def plain_best_response(table: dict, me: int) -> tuple[int, int]:
    """(result for the policy: 1 / 0 / -1, plies of the shortest loss when -1) by recursion."""

    @cache
    def walk(cells: tuple) -> tuple[int, int]:
        if plain_over(cells):
            won = plain_winner(cells)
            return (0 if won == 0 else 1 if won == me else -1), 0
        if plain_mover(cells) == me:
            move = table[cells]
            if not (isinstance(move, int) and 0 <= move < 9 and cells[move] == 0):
                return -1, 1
            result, plies = walk(plain_play(cells, move))
            return result, plies + 1
        result, plies = min(walk(plain_play(cells, i)) for i, v in enumerate(cells) if v == 0)
        return result, plies + 1

    return walk((0,) * 9)


def plain_blunders(table: dict) -> dict[tuple, tuple]:
    """{board: value-keeping moves} where the table's move is illegal or gives the value away."""
    blunders = {}
    for cells in plain_positions():
        keeping = tuple(i for i, v in enumerate(cells)
                        if v == 0 and plain_value(plain_play(cells, i)) == plain_value(cells))
        if table[cells] not in keeping:
            blunders[cells] = keeping
    return blunders


# --- policies -----------------------------------------------------------------------------------


def first_legal(obs, mask) -> int:
    return int(np.flatnonzero(mask)[0])


@cache
def random_table() -> dict:
    rng = np.random.default_rng(0)
    return {cells: int(rng.choice([i for i, v in enumerate(cells) if v == 0]))
            for cells in plain_positions()}


class ScriptedOpponent:
    """Plays the given cells in order, episode after episode."""

    def __init__(self, cells) -> None:
        self.cells = list(cells)

    def reset(self, rng) -> None:
        self.queue = iter(self.cells)

    def act(self, board, mark, rng) -> int:
        return next(self.queue)


class CountingPolicy:
    """First legal cell, counting single and batch calls."""

    def __init__(self, batch: bool) -> None:
        self.calls = self.batch_calls = 0
        if batch:
            self.act_batch = self._act_batch

    def __call__(self, obs, mask) -> int:
        self.calls += 1
        return first_legal(obs, mask)

    def _act_batch(self, observations, masks):
        self.batch_calls += 1
        return np.argmax(masks, axis=1)


def replay(policy, seat: str, line: tuple) -> tuple[float, bool, dict]:
    """Play a line through the env: the opponent scripted, the agent checked against the policy."""
    agent_plies = line[0::2] if seat == "X" else line[1::2]
    opponent_plies = line[1::2] if seat == "X" else line[0::2]
    env = TicTacToeEnv(opponent=ScriptedOpponent(opponent_plies), agent_mark=seat)
    obs, info = env.reset(seed=0)
    for i, move in enumerate(agent_plies):
        assert policy(obs, info["action_mask"]) == move
        obs, reward, terminated, truncated, info = env.step(move)
        assert terminated == (i == len(agent_plies) - 1) and not truncated
    return reward, terminated, info


# --- the perfect reference ---------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [False, True], ids=["act_batch", "per_call"])
def test_solver_policy_is_perfect(wrap):
    policy = evaluation.solver_policy()
    if wrap:  # a plain callable: exercises the one-position-at-a-time path
        policy = (lambda inner: lambda obs, mask: inner(obs, mask))(policy)
    report = evaluation.evaluate(policy)
    for seat in ("X", "O"):
        assert report.best_response[seat] == evaluation.SeatResponse(seat, "draw", None)
    assert report.move_rate.rate == 1.0
    assert report.move_rate.positions == len(plain_positions()) == 4520
    assert report.move_rate.blunders == () and report.move_rate.optimal == 4520
    assert report.perfect


def test_random_solver_policy_is_perfect_and_varies_with_seed():
    moves = [evaluation.policy_moves(evaluation.solver_policy(False, seed)) for seed in (1, 2)]
    assert (moves[0] != moves[1]).any()
    assert evaluation.evaluate(evaluation.solver_policy(deterministic=False, seed=1)).perfect


def test_policy_moves_cover_exactly_the_positions_with_a_move():
    moves = evaluation.policy_moves(first_legal)
    playing = np.zeros(T3.n_codes, dtype=bool)
    playing[[T3.encode(cells) for cells in plain_positions()]] = True
    assert (moves[~playing] == evaluation.NO_MOVE).all()
    for cells in plain_positions():
        assert moves[T3.encode(cells)] == cells.index(0)


# --- a weak deterministic policy and its losing lines ------------------------------------------


@pytest.mark.parametrize("seat", ["X", "O"])
def test_first_legal_cell_loses_and_its_line_replays_in_the_env(seat):
    response = evaluation.best_response(first_legal)[seat]
    assert response.seat == seat and response.result == "loss"
    table = {cells: cells.index(0) for cells in plain_positions()}
    assert len(response.losing_line) == plain_best_response(table, game.MARKS[seat])[1]
    reward, terminated, info = replay(first_legal, seat, response.losing_line)
    assert reward == -1.0 and terminated
    assert info["winner"] == OTHER[seat] and info["illegal_action"] is False


# --- a fixed random policy against brute force -------------------------------------------------


def test_random_table_move_rate_matches_brute_force():
    table = random_table()
    rate = evaluation.optimal_move_rate(table_policy(table))
    expected = plain_blunders(table)
    assert rate.positions == 4520 and len(rate.blunders) == len(expected) > 0
    assert rate.rate == pytest.approx(1 - len(expected) / 4520)
    assert rate.optimal == 4520 - len(expected)
    found = {blunder.board: blunder for blunder in rate.blunders}
    assert set(found) == set(expected)
    for board, blunder in found.items():
        assert blunder.move == table[board] and blunder.optimal_moves == expected[board]
        assert blunder.code == T3.encode(board)


@pytest.mark.parametrize("seat", ["X", "O"])
def test_random_table_best_response_matches_brute_force(seat):
    table = random_table()
    response = evaluation.best_response(table_policy(table))[seat]
    result, plies = plain_best_response(table, game.MARKS[seat])
    assert response.result == {1: "win", 0: "draw", -1: "loss"}[result]
    assert response.result == "loss"  # a random table is beatable from both seats
    assert len(response.losing_line) == plies
    reward, _, info = replay(table_policy(table), seat, response.losing_line)
    assert reward == -1.0 and info["winner"] == OTHER[seat]


# --- illegal moves ------------------------------------------------------------------------------


def always_zero(obs, mask) -> int:
    return 0


def test_illegal_moves_lose_games_and_are_counted():
    for seat in ("X", "O"):
        record = evaluation.play_games(always_zero, "random", 20, seat, seed=3)
        assert record == Record(wins=0, draws=0, losses=20, illegal=20)


def test_illegal_move_ends_the_losing_line():
    responses = evaluation.best_response(always_zero)
    # X: 0, the opponent's lowest reply, 0 again. O: the opponent takes 0 first.
    assert responses["X"].losing_line == (0, 1, 0)
    assert responses["O"].losing_line == (0, 0)
    table = dict.fromkeys(plain_positions(), 0)
    for seat, response in responses.items():
        assert response.result == "loss"
        assert len(response.losing_line) == plain_best_response(table, game.MARKS[seat])[1]


def test_illegal_moves_are_blunders():
    table = dict.fromkeys(plain_positions(), 0)
    rate = evaluation.optimal_move_rate(always_zero)
    expected = plain_blunders(table)
    assert {b.board for b in rate.blunders} == set(expected)
    occupied = [cells for cells in plain_positions() if cells[0] != 0]
    assert set(occupied) <= set(expected)
    assert rate.rate == pytest.approx(1 - len(expected) / 4520)


@pytest.mark.parametrize("output", [None, 2.0, "4", -1, 9, True])
def test_outputs_that_name_no_cell_are_illegal(output):
    moves = evaluation.policy_moves(lambda obs, mask: output)
    assert set(moves.tolist()) == {evaluation.NO_MOVE, evaluation.NOT_A_CELL}
    report = evaluation.evaluate(lambda obs, mask: output)
    assert report.best_response["X"].losing_line == (evaluation.NOT_A_CELL,)
    assert report.best_response["O"].losing_line == (0, evaluation.NOT_A_CELL)
    assert report.move_rate.rate == 0.0 and not report.perfect


def test_batch_outputs_that_name_no_cell_are_illegal():
    class FloatBatch:
        def __call__(self, obs, mask):
            raise AssertionError("act_batch should be used")

        def act_batch(self, observations, masks):
            return np.argmax(masks, axis=1).astype(float)

    assert evaluation.optimal_move_rate(FloatBatch()).rate == 0.0
    wrong_size = type("WrongSize", (FloatBatch,), {"act_batch": lambda self, o, m: [0, 1]})
    with pytest.raises(ValueError, match="4520 actions"):
        evaluation.policy_moves(wrong_size())


# --- act_batch -----------------------------------------------------------------------------------


def test_act_batch_is_used_once_when_present():
    batched, single = CountingPolicy(batch=True), CountingPolicy(batch=False)
    assert (evaluation.policy_moves(batched) == evaluation.policy_moves(single)).all()
    assert (batched.batch_calls, batched.calls) == (1, 0)
    assert single.calls == 4520
    evaluation.evaluate(batched)
    assert (batched.batch_calls, batched.calls) == (2, 0)


def test_evaluate_asks_each_position_once():
    policy = CountingPolicy(batch=False)
    report = evaluation.evaluate(policy)
    assert policy.calls == 4520
    assert report.best_response == evaluation.best_response(first_legal)
    assert report.move_rate == evaluation.optimal_move_rate(first_legal)


def test_precomputed_moves_are_used_without_calling_the_policy():
    moves = evaluation.policy_moves(first_legal)
    policy = CountingPolicy(batch=False)
    assert evaluation.best_response(policy, moves=moves) == evaluation.best_response(first_legal)
    assert evaluation.optimal_move_rate(policy, moves=moves).rate < 1.0
    assert policy.calls == 0
    with pytest.raises(ValueError, match="table"):
        evaluation.optimal_move_rate(policy, moves=moves[:9])


def test_report_as_dict_is_json():
    data = json.loads(json.dumps(evaluation.evaluate(first_legal).as_dict(max_blunders=3)))
    assert data["perfect"] is False
    assert data["best_response"]["X"]["result"] == "loss"
    assert data["best_response"]["X"]["losing_line"] == list(
        evaluation.best_response(first_legal)["X"].losing_line)
    assert data["positions"] == 4520 and 0 < data["optimal_move_rate"] < 1
    assert data["blunders"] > 3 and len(data["first_blunders"]) == 3
    assert set(data["first_blunders"][0]) == {"board", "code", "move", "optimal_moves"}


# --- games ----------------------------------------------------------------------------------------


def test_record_counts_and_score():
    record = Record(wins=3, draws=1, losses=1, illegal=1)
    assert record.games == 5 and record.score == pytest.approx(0.4)
    assert record.as_dict() == {"wins": 3, "draws": 1, "losses": 1, "illegal": 1,
                                "games": 5, "score": pytest.approx(0.4)}
    assert Record(0, 0, 0).score == 0.0


@pytest.mark.parametrize("seat", ["X", "O", "random"])
def test_play_games_is_reproducible_by_seed(seat):
    records = [evaluation.play_games(first_legal, "random", 30, seat, seed=s) for s in range(4)]
    assert records[1] == evaluation.play_games(first_legal, "random", 30, seat, seed=1)
    assert len(set(records)) > 1
    for record in records:
        assert record.games == 30 and record.illegal == 0


def test_play_games_seeds_the_first_reset_only():
    # The same games driven by hand: one seeded reset, then the stream continues.
    env = TicTacToeEnv(opponent="random", agent_mark="random")
    outcomes = []
    for episode in range(40):
        obs, info = env.reset(seed=11 if episode == 0 else None)
        done = False
        while not done:
            obs, reward, done, _, info = env.step(first_legal(obs, info["action_mask"]))
        outcomes.append(reward)
    record = evaluation.play_games(first_legal, "random", 40, "random", seed=11)
    assert record == Record(outcomes.count(1.0), outcomes.count(0.0), outcomes.count(-1.0), 0)
    assert max(record.wins, record.draws, record.losses) < 40  # the games are not all alike


@pytest.mark.parametrize("opponent", ["random", "heuristic", "minimax"])
@pytest.mark.parametrize("seat", ["X", "O"])
def test_solver_policy_never_loses_games(opponent, seat):
    record = evaluation.play_games(evaluation.solver_policy(), opponent, 50, seat, seed=7)
    assert record.losses == 0 and record.illegal == 0
    assert record.wins + record.draws == record.games == 50
    if opponent == "minimax":
        assert record.draws == 50
    if opponent == "random":
        assert record.wins > 25


def test_play_games_takes_specs_and_opponent_objects():
    for spec in ("epsilon:epsilon=0.5,inner=heuristic", "random+minimax*2"):
        record = evaluation.play_games(first_legal, spec, 10, seed=0)
        assert record.games == 10 and record == evaluation.play_games(first_legal, spec, 10)
    # The scripted opponent replays the first-legal policy's losing line as X every game.
    line = evaluation.best_response(first_legal)["X"].losing_line
    scripted = evaluation.play_games(first_legal, ScriptedOpponent(line[1::2]), 5, "X")
    assert scripted == Record(wins=0, draws=0, losses=5, illegal=0)


def test_play_games_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"n must be an integer >= 0; got -1"):
        evaluation.play_games(first_legal, "random", -1)
    with pytest.raises(ValueError, match="agent_mark"):
        evaluation.play_games(first_legal, "random", 1, agent_mark="Z")
    assert evaluation.play_games(first_legal, "random", 0) == Record(0, 0, 0)


def test_results_table_matches_play_games():
    table = evaluation.results_table(first_legal, ("random", "minimax"), n=20, seed=5)
    assert list(table) == ["random", "minimax"]
    for name, seats in table.items():
        assert list(seats) == ["X", "O"]
        for seat, record in seats.items():
            assert record == evaluation.play_games(first_legal, name, 20, seat, seed=5)
    # Perfect play beats this policy on every one of its lines, so no game escapes.
    assert table["minimax"]["X"].losses == table["minimax"]["O"].losses == 20


# --- one marker for outputs naming no cell, on every board ------------------------------------


def test_not_a_cell_is_the_same_marker_on_a_3x4_board():
    board = {"rows": 3, "cols": 4, "win_length": 3}
    assert evaluation.NOT_A_CELL not in range(12)  # no cell of any board
    moves = evaluation.policy_moves(lambda obs, mask: 12, **board)  # one past the last cell
    assert set(moves.tolist()) == {evaluation.NO_MOVE, evaluation.NOT_A_CELL}
    found = evaluation.best_response(lambda obs, mask: None, **board)
    assert found["X"].losing_line == (evaluation.NOT_A_CELL,)
    assert found["O"].losing_line == (0, evaluation.NOT_A_CELL)
    blunder = evaluation.optimal_move_rate(lambda obs, mask: 99, **board).blunders[0]
    assert blunder.move == evaluation.NOT_A_CELL


# --- asking only where the policy can be ---------------------------------------------------------


def plain_reached(table: dict, me: int) -> set:
    """Positions where the policy (mark ``me``, playing ``table``) is to move on some game."""
    seen = plain_walk(lambda cells: [table[cells]] if plain_mover(cells) == me else
                      plain_empty(cells))
    return {cells for cells in seen if plain_mover(cells) == me}


@pytest.mark.parametrize("name", ["first_legal", "random_table", "solver"])
def test_reached_only_asks_only_where_the_policy_can_be_and_agrees(name):
    if name == "solver":
        moves = evaluation.policy_moves(evaluation.solver_policy())
        table = {cells: int(moves[T3.encode(cells)]) for cells in plain_positions()}
    else:
        table = {cells: cells.index(0) for cells in plain_positions()} if name == "first_legal" \
            else random_table()
    asked = []
    policy = lambda obs, mask: asked.append(absolute(obs)) or table[absolute(obs)]  # noqa: E731
    found = evaluation.best_response(policy, reached_only=True)
    assert found == evaluation.best_response(table_policy(table))
    expected = plain_reached(table, 1) | plain_reached(table, 2)
    assert sorted(asked) == sorted(expected) and len(expected) < 4520


def test_reached_only_asks_a_batch_per_layer():
    policy = CountingPolicy(batch=True)
    assert evaluation.best_response(policy, reached_only=True) == evaluation.best_response(
        first_legal)
    assert policy.calls == 0 and policy.batch_calls == 9  # one per layer where someone moves
    assert evaluation.exploitability(policy, reached_only=True) == 2.0
    with pytest.raises(ValueError, match="reached_only must be True or False; got 1"):
        evaluation.best_response(policy, reached_only=1)


def test_reached_only_on_a_first_player_win():
    board = {"rows": 3, "cols": 4, "win_length": 3}
    perfect = evaluation.solver_policy(**board)
    found = evaluation.best_response(perfect, reached_only=True, **board)
    assert (found["X"].result, found["O"].result) == ("win", "loss")
    assert found == evaluation.best_response(perfect, **board)


# --- the solver's policy, a chunk at a time ------------------------------------------------------


def test_solver_policy_answers_a_chunk_at_a_time(monkeypatch):
    """Its temporaries are bounded by the chunk, not by the number of boards asked about (it took
    3.2 GB for 4x4x4's 9.7 million positions)."""
    tracemalloc = pytest.importorskip("tracemalloc")
    board = {"rows": 3, "cols": 4, "win_length": 3}
    _, observations, masks = evaluation._positions(game.rules(**board))  # 79,563 boards
    policy = evaluation.solver_policy(**board)
    whole = policy.act_batch(observations, masks)
    monkeypatch.setattr(basics, "_CHUNK", 1024)
    tracemalloc.start()
    try:
        moves = policy.act_batch(observations, masks)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (moves == whole).all()
    assert peak < 3 * moves.nbytes  # all at once: 26 times
