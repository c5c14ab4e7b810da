"""gym_tictactoe.game.symmetry: canonical images of batches, actions mapped back, averaging."""

import numpy as np
import pytest

from gym_tictactoe import evaluation, game
from gym_tictactoe.game import symmetry
from gym_tictactoe.players.symmetrized import SymmetrizedPolicy

# Tabled (3x3, 3x4, 1x5), code arrays (1x13, 4x4), digit by digit (7x7: 49 cells > 39).
BOARDS = [(3, 3, 3), (3, 4, 3), (1, 5, 3), (1, 13, 3), (4, 4, 3), (7, 7, 4)]


def random_boards(rules: game.Rules, n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 3, (n, rules.n_cells)).astype(np.int8)


def brute_symmetry(rules: game.Rules, board: np.ndarray) -> int:
    """The first symmetry whose image has the lowest code, by Python ints."""
    codes = [rules.encode(board[perm]) for perm in rules.symmetries]
    return codes.index(min(codes))


@pytest.mark.parametrize("size", BOARDS)
def test_canonical_images_are_the_lowest_codes_with_the_first_symmetry(size):
    rules = game.rules(*size)
    boards = random_boards(rules, 60)
    boards[:4] = 0  # the empty board: every symmetry gives it, the identity is chosen
    images, chosen = symmetry.canonicalize(rules, boards)
    assert images.dtype == np.int8 and chosen.shape == (60,)
    for board, image, s in zip(boards, images, chosen, strict=True):
        assert rules.encode(image) == rules.canonical(rules.encode(board))
        assert s == brute_symmetry(rules, board)
        assert np.array_equal(image, board[rules.symmetries[s]])
    assert (chosen[:4] == 0).all()


def test_the_table_and_the_computed_images_agree_on_every_3x3_code():
    rules = game.TICTACTOE
    table = symmetry.symmetry_table(rules)
    computed = symmetry._lowest_image(rules, rules.tables.cells[:, rules.symmetries])
    assert np.array_equal(table, computed)
    images = symmetry.transform_cells(rules, rules.tables.cells, table)
    assert np.array_equal(images.astype(np.int64) @ rules.pow3, rules.tables.canonical)


@pytest.mark.parametrize("size", BOARDS)
def test_actions_on_the_image_map_back_to_the_same_cell_of_the_board(size):
    rules = game.rules(*size)
    boards = random_boards(rules, 40, seed=1)
    images, chosen = symmetry.canonicalize(rules, boards)
    actions = np.random.default_rng(2).integers(0, rules.n_cells, 40)
    back = symmetry.uncanonical_actions(rules, actions, chosen)
    rows = np.arange(40)
    assert np.array_equal(images[rows, actions], boards[rows, back])
    masks = (boards == 0).astype(np.int8)
    image_masks = symmetry.transform_cells(rules, masks, chosen)
    assert np.array_equal(image_masks, (images == 0).astype(np.int8))
    assert np.array_equal(symmetry.untransform_cells(rules, images, chosen), boards)


def test_actions_that_name_no_cell_pass_through_unchanged():
    rules = game.TICTACTOE
    back = symmetry.uncanonical_actions(rules, np.array([-1, 9, 100, 0]), np.array([3, 3, 3, 3]))
    assert back.tolist() == [-1, 9, 100, int(rules.symmetries[3, 0])]


@pytest.mark.parametrize(("call", "message"), [
    (lambda r: symmetry.canonicalize(r, np.zeros((2, 8), np.int8)), r"\(N, 9\) integer boards"),
    (lambda r: symmetry.canonicalize(r, np.full((2, 9), 3)), "of 0, 1, 2"),
    (lambda r: symmetry.canonicalize(r, np.zeros((2, 9))), "integer boards"),
    (lambda r: symmetry.uncanonical_actions(r, [0, 1], [0, 8]), "0..7"),
    (lambda r: symmetry.uncanonical_actions(r, [0.5], [0]), "integer cells"),
    (lambda r: symmetry.transform_cells(r, np.zeros((3, 9)), [0, 1]), r"\(2, 9\) per-cell"),
])
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(game.TICTACTOE)


# --- SymmetrizedPolicy ----------------------------------------------------------------------------


def first_legal(obs, mask) -> int:
    return int(np.flatnonzero(mask)[0])


def live_boards(rules: game.Rules, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Relative boards of ``n`` reachable unfinished positions, and their masks."""
    codes, observations, masks = evaluation._positions(rules)
    rows = np.random.default_rng(3).choice(codes.size, n, replace=False)
    return observations[rows], masks[rows]


@pytest.mark.parametrize("size", [(3, 3, 3), (3, 4, 3)])
def test_averages_are_the_mean_vote_and_follow_the_board_round(size):
    rules = game.rules(*size)
    policy = SymmetrizedPolicy(first_legal, rules)
    observations, masks = live_boards(rules, 30)
    average = policy.average_batch(observations, masks)
    for obs, mask, row in zip(observations, masks, average, strict=True):
        votes = np.zeros(rules.n_cells)
        for perm in rules.symmetries:  # the policy's cell on the image is perm[cell] here
            votes[perm[first_legal(obs[perm], mask[perm])]] += 1
        assert np.allclose(row, votes / len(rules.symmetries))
    for s, perm in enumerate(rules.symmetries):  # equivariant: an image's average is the image
        turned = policy.average_batch(observations[:, perm], masks[:, perm])
        assert np.allclose(turned, average[:, perm]), s


def test_an_equivariant_policy_is_left_as_it_is():
    policy = SymmetrizedPolicy(evaluation.UniformPolicy(), stochastic=True)
    observations, masks = live_boards(game.TICTACTOE, 50)
    assert np.allclose(policy.action_probabilities_batch(observations, masks),
                       masks / masks.sum(axis=1, keepdims=True))


def test_deterministic_play_is_the_most_voted_cell_and_offers_no_probabilities():
    policy = SymmetrizedPolicy(first_legal)
    assert not hasattr(policy, "action_probabilities")
    observations, masks = live_boards(game.TICTACTOE, 50)
    moves = policy.act_batch(observations, masks)
    assert np.array_equal(moves, policy.average_batch(observations, masks).argmax(axis=1))
    assert [policy(o, m) for o, m in zip(observations, masks, strict=True)] == moves.tolist()
    assert (masks[np.arange(50), moves] == 1).all()


def test_stochastic_play_draws_from_the_average_and_is_seeded():
    board, mask = np.zeros((1, 9), np.int8), np.ones((1, 9), np.int8)
    draws = [SymmetrizedPolicy(first_legal, stochastic=True, seed=4)(board[0], mask[0])
             for _ in range(3)]
    assert len(set(draws)) == 1  # one seed, one draw
    policy = SymmetrizedPolicy(first_legal, stochastic=True, seed=5)
    many = policy.act_batch(np.repeat(board, 8000, axis=0), np.repeat(mask, 8000, axis=0))
    # first_legal picks cell 0 of every image: the corners, each from two of the 8 symmetries.
    assert set(np.unique(many).tolist()) == {0, 2, 6, 8}
    assert np.allclose(np.bincount(many, minlength=9)[[0, 2, 6, 8]] / 8000, 0.25, atol=0.03)


def test_symmetrizing_improves_a_lopsided_policy_and_keeps_a_perfect_one():
    plain = evaluation.evaluate(first_legal).move_rate.rate
    assert evaluation.evaluate(SymmetrizedPolicy(first_legal)).move_rate.rate > plain
    perfect = SymmetrizedPolicy(evaluation.solver_policy())
    assert evaluation.evaluate(perfect).perfect


def test_a_policy_answer_that_names_no_cell_is_an_error():
    policy = SymmetrizedPolicy(lambda obs, mask: None)
    with pytest.raises(ValueError, match=r"one cell 0\.\.8 per board"):
        policy(np.zeros(9, np.int8), np.ones(9, np.int8))
    with pytest.raises(ValueError, match="callable"):
        SymmetrizedPolicy(42)
