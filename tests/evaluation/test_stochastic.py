"""Exact evaluation of stochastic policies: expected results against a best response and
exploitability, against hand-computed cases, plain-Python expectimax and OpenSpiel's NashConv."""

import json
from functools import cache

import numpy as np
import pytest

from gym_tictactoe import evaluation, game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.evaluation import UniformPolicy, answers
from gym_tictactoe.game import solver

T3 = game.TICTACTOE  # tic-tac-toe's rules

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


class HashedPolicy:
    """Fixed random probabilities per board (a function of the observation alone), with some
    legal cells at probability 0, through the batch method, the single one, or both."""

    def __init__(self, seed: int = 0, batch: bool = True, single: bool = True) -> None:
        self.seed = seed
        if batch:
            self.action_probabilities_batch = self._batch
        if single:
            self.action_probabilities = self._single

    def _single(self, obs, mask) -> np.ndarray:
        code = int(np.asarray(obs, dtype=np.int64) @ 3 ** np.arange(len(obs)))
        rng = np.random.default_rng([self.seed, code])
        weights = rng.random(len(obs)) * (rng.random(len(obs)) < 0.7) * mask
        weights[np.flatnonzero(mask)[0]] += 0.05  # at least one legal cell
        return weights / weights.sum()

    def _batch(self, observations, masks) -> np.ndarray:
        return np.stack([self._single(o, m) for o, m in zip(observations, masks, strict=True)])

    def __call__(self, obs, mask) -> int:
        return int(np.argmax(self._single(obs, mask)))


def plain_expected(probabilities, me: int) -> float:
    """The policy's expected result on 3x3 against the opponent minimising it, by recursion over
    tuples (independent of the package's tables)."""

    def winner(cells):
        return next((cells[a] for a, b, c in LINES if cells[a] and cells[a] == cells[b] ==
                     cells[c]), 0)

    @cache
    def walk(cells: tuple) -> float:
        won = winner(cells)
        if won or 0 not in cells:
            return 0.0 if won == 0 else 1.0 if won == me else -1.0
        mover = 1 if cells.count(1) == cells.count(2) else 2
        empty = [i for i, v in enumerate(cells) if v == 0]
        child = {i: walk(cells[:i] + (mover,) + cells[i + 1 :]) for i in empty}
        if mover != me:
            return min(child.values())
        obs = np.array(cells if me == 1 else [(0, 2, 1)[v] for v in cells], dtype=np.int8)
        probs = probabilities(obs, (obs == 0).astype(np.int8))
        return sum(probs[i] * child[i] for i in empty)

    return walk((0,) * 9)


# --- small cases by hand ------------------------------------------------------------------------


def test_uniform_play_on_1x3x2_by_hand():
    """Cells 0 1 2, two in a row wins. As X the uniform policy wins at once from the middle (1/3)
    and is held to a draw from a corner (O takes the middle): 1/3. As O it loses, X opening in the
    middle. NashConv = -(1/3 - 1) = 2/3."""
    board = {"rows": 1, "cols": 3, "win_length": 2}
    found = evaluation.best_response(UniformPolicy(), **board)
    assert found["X"].expected == pytest.approx(1 / 3) and found["X"].result == "draw"
    assert found["O"].expected == -1.0 and found["O"].result == "loss"
    assert found["O"].losing_line == (0, 2, 1)  # fastest losses are 3 plies; lowest cells first
    assert evaluation.exploitability(UniformPolicy(), **board) == pytest.approx(2 / 3)


def test_every_policy_is_an_equilibrium_of_2x2x2():
    """Any two marks of a 2x2 board are in a row: X always wins on its second move."""
    board = {"rows": 2, "cols": 2, "win_length": 2}
    found = evaluation.best_response(HashedPolicy(), **board)
    assert (found["X"].expected, found["O"].expected) == (1.0, -1.0)
    assert evaluation.exploitability(HashedPolicy(), **board) == 0.0


def test_deterministic_policies_expect_their_result():
    first_legal = lambda obs, mask: int(np.flatnonzero(mask)[0])  # noqa: E731
    found = evaluation.best_response(first_legal)
    assert [found[s].expected for s in "XO"] == [-1.0, -1.0]  # it loses in both seats
    assert evaluation.exploitability(first_legal) == 2.0
    assert evaluation.exploitability(lambda obs, mask: 99) == 2.0  # illegal moves lose too
    assert evaluation.exploitability(evaluation.solver_policy()) == 0.0
    first_wins = {"rows": 3, "cols": 4, "win_length": 3}  # a first-player win
    found = evaluation.best_response(evaluation.solver_policy(**first_wins))
    assert (found["X"].expected, found["O"].expected) == (1.0, -1.0)
    assert evaluation.exploitability(evaluation.solver_policy(**first_wins)) == 0.0


# --- against plain expectimax on 3x3 ------------------------------------------------------------


class BestMoves:
    """The solver's best moves with equal probability: stochastic and perfect."""

    def action_probabilities_batch(self, observations, masks):
        codes = answers.absolute_codes(game.TICTACTOE, observations)
        best = solver.solve().best_of(codes).astype(float)
        return best / best.sum(axis=1, keepdims=True)

    def __call__(self, obs, mask):
        return int(np.argmax(self.action_probabilities_batch(obs[None], mask[None])[0]))


class Epsilon(BestMoves):
    """Best moves, but a uniformly random legal cell with probability 0.1."""

    def action_probabilities_batch(self, observations, masks):
        best = super().action_probabilities_batch(observations, masks)
        return 0.9 * best + 0.1 * masks / masks.sum(axis=1, keepdims=True)


@pytest.mark.slow
@pytest.mark.parametrize("policy", [HashedPolicy(), Epsilon(), UniformPolicy()],
                         ids=["hashed", "epsilon", "uniform"])
def test_expected_results_match_plain_expectimax(policy):
    found = evaluation.best_response(policy)
    single = HashedPolicy() if isinstance(policy, HashedPolicy) else policy
    probs = lambda obs, mask: single.action_probabilities_batch(obs[None], mask[None])[0]  # noqa: E731
    for seat, me in (("X", 1), ("O", 2)):
        assert found[seat].expected == pytest.approx(plain_expected(probs, me), abs=1e-12)
    assert evaluation.exploitability(policy) == pytest.approx(
        -(found["X"].expected + found["O"].expected))


def test_a_stochastic_perfect_policy_is_perfect():
    report = evaluation.evaluate(BestMoves())
    assert [report.best_response[s].result for s in "XO"] == ["draw", "draw"]
    assert report.exploitability == 0.0 and report.perfect


def test_epsilon_policy_can_lose_and_its_losing_line_has_positive_probability():
    policy, found = Epsilon(), evaluation.best_response(Epsilon())
    for seat in "XO":
        response = found[seat]
        assert response.result == "loss" and -1 < response.expected < 0
        me = game.MARKS[seat]
        code = game.EMPTY_BOARD
        for cell in response.losing_line:
            if T3.to_move(code) == me:
                obs = T3.decode(code) if me == game.X else game.SWAP[T3.decode(code)]
                mask = T3.tables.legal_mask[code][None]
                assert policy.action_probabilities_batch(obs[None], mask)[0, cell] > 0
            code = T3.play(code, cell)
        assert T3.is_terminal(code) and T3.winner(code) == game.SWAP[me]


def test_single_and_batch_probabilities_give_the_same_measures():
    measures = [evaluation.best_response(HashedPolicy(batch=b, single=s))
                for b, s in ((True, False), (False, True), (True, True))]
    assert measures[0] == measures[1] == measures[2]


def test_probabilities_flag_chooses_the_measure():
    policy = HashedPolicy()
    drawn = evaluation.best_response(policy, probabilities=False)
    moves = evaluation.policy_moves(policy)
    assert drawn == evaluation.best_response(policy, moves=moves)  # its argmax, deterministic
    assert drawn["X"].expected in (-1.0, 0.0, 1.0)
    assert evaluation.best_response(policy) == evaluation.best_response(policy, probabilities=True)
    with pytest.raises(ValueError, match="probabilities=True needs a policy with"):
        evaluation.best_response(lambda obs, mask: 0, probabilities=True)
    assert evaluation.evaluate(policy, probabilities=False).best_response == drawn


def test_report_json_has_the_expected_results_and_the_exploitability():
    data = json.loads(json.dumps(evaluation.evaluate(Epsilon()).as_dict()))
    assert data["perfect"] is False and 0 < data["exploitability"] < 2
    assert data["exploitability"] == pytest.approx(
        -(data["best_response"]["X"]["expected"] + data["best_response"]["O"]["expected"]))


# --- bad probabilities --------------------------------------------------------------------------


class Broken:
    def __init__(self, fault: str) -> None:
        self.fault = fault

    def action_probabilities(self, obs, mask):
        probs = mask / mask.sum()
        if (obs != 0).sum() < 2:  # only from the second layer: the error names that board
            return probs
        return {"negative": probs - 0.1 * (mask == 0), "sum": probs * 0.9,
                "occupied": np.ones(len(mask)) / len(mask), "nan": probs * np.nan,
                "shape": probs[:-1], "text": ["a"] * len(mask)}[self.fault]

    def __call__(self, obs, mask):
        return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize(("fault", "message"), [
    ("negative", r"are negative or not finite; allowed: non-negative numbers summing to 1"),
    ("nan", "are negative or not finite"),
    ("sum", "do not sum to 1"),
    ("occupied", r"put weight on an occupied cell; .*on the empty cells \[[\d, ]+\] only"),
    ("shape", r"action_probabilities must return shape \(9,\) \(one per cell\); got shape \(8,\)"),
    ("text", "must be numbers, one per cell"),
])
def test_bad_probabilities_name_the_board_and_what_is_allowed(fault, message):
    with pytest.raises(ValueError, match=message) as error:
        evaluation.exploitability(Broken(fault))
    if fault not in ("shape", "text"):
        assert "at the board [" in str(error.value) and "\n" not in str(error.value)


def test_a_batch_of_the_wrong_shape_is_named():
    class Short:
        def action_probabilities_batch(self, observations, masks):
            return masks[:, :-1]

    with pytest.raises(ValueError, match=r"must have shape \(\d+, 9\) \(one per cell of each"):
        evaluation.best_response(Short())


# --- OpenSpiel's NashConv -----------------------------------------------------------------------


def openspiel_nash_conv(game_name: str, params: dict, policy, rules: game.Rules) -> float:
    """NashConv by OpenSpiel of a TabularPolicy filled, history by history, with our policy's
    probabilities at the board of that history (OpenSpiel numbers cells row by row, as we do;
    player 0 is x, who moves first)."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy as openspiel_policy
    from open_spiel.python.algorithms import exploitability

    spiel_game = pyspiel.load_game(game_name, params)
    table = openspiel_policy.TabularPolicy(spiel_game)
    by_board: dict[bytes, np.ndarray] = {}  # many histories share a board
    for state in table.states:
        cells = np.array([".xo".index(c) for c in str(state).replace("\n", "")], dtype=np.int8)
        assert cells.size == rules.n_cells
        assert state.legal_actions() == np.flatnonzero(cells == 0).tolist()
        obs = cells if state.current_player() == 0 else game.SWAP[cells]
        if obs.tobytes() not in by_board:
            by_board[obs.tobytes()] = evaluation.stochastic.probabilities_of(
                policy, obs[None], (obs == 0).astype(np.int8)[None])[0]
        table.action_probability_array[table.state_index(state)] = by_board[obs.tobytes()]
    return exploitability.nash_conv(spiel_game, table)


@pytest.mark.slow
def test_exploitability_is_openspiels_nash_conv_on_tic_tac_toe():
    policy = HashedPolicy(seed=3)
    ours = evaluation.exploitability(policy)
    assert 0 < ours < 2
    theirs = openspiel_nash_conv("tic_tac_toe", {}, policy, game.TICTACTOE)
    assert ours == pytest.approx(theirs, abs=1e-9)


@pytest.mark.slow
def test_exploitability_is_openspiels_nash_conv_on_a_2x4x3_board():
    """OpenSpiel's mnk game: m columns, n rows."""
    policy, board = HashedPolicy(seed=1), {"rows": 2, "cols": 4, "win_length": 3}
    ours = evaluation.exploitability(policy, **board)
    theirs = openspiel_nash_conv("mnk", {"m": 4, "n": 2, "k": 3}, policy, game.rules(2, 4, 3))
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_the_uniform_policy_plays_legal_random_moves():
    env = TicTacToeEnv(opponent="random")
    policy, moves = UniformPolicy(seed=0), set()
    obs, info = env.reset(seed=0)
    for _ in range(200):
        move = policy(obs, info["action_mask"])
        assert info["action_mask"][move] == 1
        moves.add(move)
        obs, _, done, _, info = env.step(move)
        if done:
            obs, info = env.reset()
    assert moves == set(range(9))


@pytest.mark.slow
@pytest.mark.parametrize("policy", [HashedPolicy(batch=False), Epsilon(), UniformPolicy()],
                         ids=["hashed", "epsilon", "uniform"])
def test_reached_only_gives_the_same_measures(policy):
    full = evaluation.best_response(policy)
    assert evaluation.best_response(policy, reached_only=True) == full
    assert evaluation.exploitability(policy, reached_only=True) == evaluation.exploitability(
        policy)


def test_reached_only_asks_only_where_the_policy_can_be():
    """A policy that never plays some legal cells is not asked about what follows them."""
    asked = []
    hashed = HashedPolicy(batch=False)

    class Counting:
        def action_probabilities(self, obs, mask):
            asked.append(bytes(obs))
            return hashed.action_probabilities(obs, mask)

    evaluation.best_response(Counting(), reached_only=True)
    every = len(asked)
    assert every == len(set(asked)) < 4520  # each position once, fewer than all
    asked.clear()
    evaluation.best_response(Counting())
    assert len(set(asked)) == 4520
