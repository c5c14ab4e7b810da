"""Bad board sizes and unsolvable boards rejected with what is allowed, and the disk cache of
solved 13-16-cell boards: written, read back, and rebuilt with a warning when it is damaged."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.game import cache, solver
from gym_tictactoe.players.mcts import MCTSPlayer
from gym_tictactoe.players.opponents import (
    EpsilonOpponent,
    HeuristicOpponent,
    MinimaxOpponent,
    MixtureOpponent,
    MonteCarloOpponent,
    PolicyOpponent,
    RandomOpponent,
    make_opponent,
    parse_opponent,
)


def make_vec(**kwargs: Any) -> gym.vector.VectorEnv:
    return gym.make_vec("TicTacToe-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        **kwargs)


def positional_rules(rows: Any = 3, cols: Any = 3, win_length: Any = 3) -> game.Rules:
    return game.rules(rows, cols, win_length)  # as the env and the opponents call it


MAKERS: dict[str, Callable[..., Any]] = {
    "rules": positional_rules,
    "env": TicTacToeEnv,
    "gym.make": lambda **kw: gym.make("TicTacToe-v0", **kw),
    "vector env": lambda **kw: TicTacToeVectorEnv(2, **kw),
    "gym.make_vec": make_vec,
    "random": RandomOpponent,
    "minimax": MinimaxOpponent,
    "heuristic": HeuristicOpponent,
    "epsilon": lambda **kw: EpsilonOpponent(0.1, "random", **kw),
    "montecarlo": MonteCarloOpponent,
    "mcts": MCTSPlayer,
    "mixture": lambda **kw: MixtureOpponent(["random"], **kw),
    "policy": lambda **kw: PolicyOpponent(lambda obs, mask: 0, **kw),
    "make_opponent": lambda **kw: make_opponent("heuristic", **kw),
}
BAD_SIZES = [
    ({"rows": 0}, r"rows must be an integer from 1 to 15; got 0"),
    ({"cols": 16}, r"cols must be an integer from 1 to 15; got 16"),
    ({"rows": -2, "cols": 4}, r"rows must be an integer from 1 to 15; got -2"),
    # False, not True: True == 1, and game.rules' cache may hold a 1x3x3 board (see below).
    ({"rows": False}, r"rows must be an integer from 1 to 15; got False"),
    ({"rows": None}, r"rows must be an integer from 1 to 15; got None"),
    ({"cols": 4.5}, r"cols must be an integer from 1 to 15; got 4\.5"),
    ({"win_length": "3"}, r"win_length must be an integer from 1 to 3 \(the longer side of a "
                          r"3x3 board\); got '3'"),
    ({"win_length": 4}, r"win_length must be an integer from 1 to 3 \(the longer side of a 3x3 "
                        r"board\); got 4"),
    ({"win_length": 0}, r"win_length must be an integer from 1 to 3 .*; got 0"),
    ({"rows": 2, "cols": 5, "win_length": 6}, r"from 1 to 5 \(the longer side of a 2x5 board\); "
                                              r"got 6"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_SIZES, ids=str)
@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_bad_board_sizes_are_rejected_naming_what_is_allowed(maker, kwargs, message):
    with pytest.raises(ValueError, match=message), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gym.make's own warnings are not the point here
        MAKERS[maker](**kwargs)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"cols": 3.0}, r"cols must be an integer from 1 to 15; got 3\.0"),
    ({"rows": True, "cols": 1, "win_length": 1}, r"rows must be an integer from 1 to 15; got True"),
], ids=str)
def test_sizes_equal_to_those_of_a_board_already_built_are_still_checked(kwargs, message):
    game.rules(1, 1, 1)
    for maker in ("rules", "env", "vector env", "minimax"):
        with pytest.raises(ValueError, match=message):
            MAKERS[maker](**kwargs)


def test_numpy_integer_sizes_give_the_same_board():
    assert game.rules(np.int64(3), np.int8(3), np.uint16(3)) is game.TICTACTOE
    env = TicTacToeEnv("heuristic", rows=np.int64(4), cols=np.int32(4), win_length=np.int8(3))
    assert env.rules is game.rules(4, 4, 3) and env.action_space.n == 16


@pytest.mark.parametrize("text", ["4x4x5", "0x3", "16x16", "3x3x3x3", "axb", "", "3"])
def test_parse_board_rejects_bad_boards(text):
    with pytest.raises(ValueError, match=r"(ROWSxCOLSxK|must be an integer from 1 to)"):
        game.parse_board(text)


def test_parse_board_reads_rows_cols_and_win_length():
    assert game.parse_board("4x4x3") == (4, 4, 3)
    assert game.parse_board("5X6") == (5, 6, 6)
    assert game.parse_board("15\N{MULTIPLICATION SIGN}15\N{MULTIPLICATION SIGN}5") == (15, 15, 5)


UNSOLVED = {"rows": 5, "cols": 5, "win_length": 4}
BEYOND = {"rows": 9, "cols": 9, "win_length": 5}  # minimax proves up to 64 cells, not 81
MINIMAX_MAKERS: dict[str, Callable[[], Any]] = {
    "MinimaxOpponent": lambda: MinimaxOpponent(**BEYOND),
    "make_opponent": lambda: make_opponent("minimax", **BEYOND),
    "epsilon over minimax": lambda: EpsilonOpponent(0.1, **BEYOND),
    "mixture spec": lambda: parse_opponent("random+minimax*2", game.rules(**BEYOND)),
    "env": lambda: TicTacToeEnv("minimax", **BEYOND),
    "gym.make": lambda: gym.make("TicTacToe-v0", opponent="minimax", **BEYOND),
    "vector env": lambda: TicTacToeVectorEnv(2, "epsilon:epsilon=0.2", **BEYOND),
    "gym.make_vec": lambda: make_vec(opponent="minimax", **BEYOND),
    "solver": lambda: solver.solve(game.rules(**UNSOLVED)),
    "solver, 18 cells": lambda: solver.solve(game.rules(3, 6, 3)),
}


@pytest.mark.parametrize("maker", sorted(MINIMAX_MAKERS))
def test_perfect_play_on_an_unsolvable_board_names_alphabeta(maker):
    with pytest.raises(ValueError, match=r"at most (16|64) cells.*'alphabeta'"):
        MINIMAX_MAKERS[maker]()


def test_minimax_is_built_on_a_proved_board_without_proving_anything_yet():
    player = MinimaxOpponent(**UNSOLVED)  # the book and the proofs wait for the first move
    assert player.solution is None and player.proved.fallbacks == 0


def test_what_needs_tables_or_codes_says_how_big_a_board_may_be():
    with pytest.raises(ValueError, match=r"enumerating every position needs a board of at most "
                                         r"16 cells; the 3x6x3 board has 18"):
        game.rules(3, 6, 3).layers  # noqa: B018
    with pytest.raises(ValueError, match="needs a board of at most 16 cells"):
        game.rules(15, 15, 5).cells_of([0])
    with pytest.raises(ValueError, match=r"2x7x3 board has 14 cells: per-code tables exist for "
                                         r"boards of at most 12 cells"):
        game.rules(2, 7, 3).tables  # noqa: B018


def test_an_opponent_built_for_another_board_is_refused():
    with pytest.raises(ValueError, match=r"plays on the 4x4x4 board, not on 4x4x3: build it "
                                         r"with rows=4, cols=4, win_length=3"):
        TicTacToeEnv(RandomOpponent(rows=4, cols=4, win_length=4), rows=4, cols=4)
    with pytest.raises(ValueError, match="plays on the 3x3x3 board, not on 4x4x3"):
        MixtureOpponent([HeuristicOpponent()], rows=4, cols=4)
    with pytest.raises(ValueError, match="plays on the 3x3x3 board, not on 2x7x3"):
        TicTacToeVectorEnv(2, RandomOpponent(), rows=2, cols=7)


# --- the disk cache --------------------------------------------------------------------------

BOARD = (2, 7, 3)  # 14 cells: not tabled, so cached on disk, and solved in about a second


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Any:
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "solutions"))
    return tmp_path / "solutions"


@pytest.fixture(scope="module")
def solution() -> solver.Solution:
    """The board solved once, before any test points the cache at its own folder."""
    return solver.solve(game.rules(*BOARD))


class Builder:
    """Stands in for ``solver.build``: hands out the solution, counting the calls."""

    def __init__(self, solution: solver.Solution) -> None:
        self.solution, self.calls = solution, 0

    def __call__(self, rules: game.Rules) -> solver.Solution:
        assert rules is self.solution.rules
        self.calls += 1
        return self.solution


def load_quietly(builder: Builder) -> solver.Solution:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return cache.load_or_build(game.rules(*BOARD), builder)


def same(a: solver.Solution, b: solver.Solution) -> bool:
    return (a.score == b.score).all() and (a.reachable == b.reachable).all()


def test_a_solution_is_saved_once_and_read_back(cache_dir, solution):
    builder = Builder(solution)
    first = load_quietly(builder)
    path = cache.cache_path(game.rules(*BOARD))
    assert builder.calls == 1 and path == cache_dir / "solution-2x7x3.npz" and path.exists()
    second = load_quietly(builder)
    assert builder.calls == 1 and second is not first and same(first, second)
    assert not second.score.flags.writeable
    assert second.value_of([0]).tolist() == [0] and second.distance_of([0]).tolist() == [14]


def test_solve_writes_the_cache_and_a_later_process_only_reads_it(cache_dir, solution,
                                                                   monkeypatch):
    rules, fresh_solve = game.rules(*BOARD), solver.solve.__wrapped__  # past the process cache
    first = fresh_solve(rules)
    assert cache.cache_path(rules).exists() and same(first, solution)

    def no_build(rules: game.Rules) -> None:
        raise AssertionError("the cached solution was solved again")

    monkeypatch.setattr(solver, "build", no_build)
    assert same(fresh_solve(rules), first)


def other_board_file(path, rules) -> None:
    other = solver.build(game.rules(1, 13, 3))
    cache.save(path, other.rules, other.score, other.reachable)


def bad_checksum(path, rules) -> None:
    solution = solver.solve(rules)
    cache.save(path, rules, solution.score, solution.reachable)
    with np.load(path) as data:
        header, score, packed = data["header"], data["score"].copy(), data["reachable"]
    score[12345] += 1
    np.savez(path, header=header, score=score, reachable=packed)


def wrong_dtype(path, rules) -> None:
    solution = solver.solve(rules)
    score, packed = solution.score.astype(np.int16), np.packbits(solution.reachable)
    digest = cache._digest(score, packed)
    np.savez(path, header=np.array([cache.FORMAT, rules.name, digest]), score=score,
             reachable=packed)


def huge_header(path, rules) -> None:
    """A small file whose score header declares 10**12 bytes: np.load would allocate them."""
    import io
    import zipfile

    solution = solver.solve(rules)
    packed = np.packbits(solution.reachable)
    np.savez(path, header=np.array([cache.FORMAT, rules.name, "0"]), reachable=packed)
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        member, {"descr": "|i1", "fortran_order": False, "shape": (10**12,)})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("score.npy", member.getvalue() + b"\0" * 64)


def pickled(path, rules) -> None:
    np.savez(path, header=np.array([{"a": 1}], dtype=object), score=np.zeros(3), reachable=[])


def damaged(keep: Callable[[bytes], bytes]) -> Callable:
    def write(path, rules) -> None:
        solution = solver.solve(rules)
        cache.save(path, rules, solution.score, solution.reachable)
        path.write_bytes(keep(path.read_bytes()))

    return write


def flip_middle_byte(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


DAMAGE = [
    pytest.param(lambda path, rules: path.write_bytes(b"not a cache" * 100), "", id="garbage"),
    pytest.param(lambda path, rules: path.write_bytes(b""), "not a readable .npz", id="empty"),
    pytest.param(other_board_file, "not a gym-tictactoe solution v1 file for the 2x7x3 board",
                 id="another board renamed"),
    pytest.param(bad_checksum, "checksum does not match", id="checksum"),
    pytest.param(wrong_dtype, "holds 10,165,336 bytes, more than the 5,520,105 a cache file",
                 id="wrong dtype"),
    pytest.param(huge_header, "'score' must be int8 of shape", id="a header asking for 1 TB"),
    pytest.param(pickled, "", id="pickled object"),
    pytest.param(damaged(lambda data: data[: len(data) // 2]), "", id="truncated"),
    pytest.param(damaged(lambda data: data[:-1]), "", id="last byte cut"),
    pytest.param(damaged(flip_middle_byte), "", id="a byte flipped"),
]


@pytest.mark.parametrize(("damage", "reason"), DAMAGE)
def test_an_unusable_cache_file_is_rebuilt_with_a_warning(cache_dir, solution, damage, reason):
    rules, builder = game.rules(*BOARD), Builder(solution)
    path = cache.cache_path(rules)
    path.parent.mkdir(parents=True)
    damage(path, rules)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solution = cache.load_or_build(rules, builder)
    # Not pytest.warns: an exception from inside would surface as "DID NOT WARN".
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    expected = rf"rebuilding the 2x7x3 solution: the cache file {re.escape(str(path))} is "
    assert len(messages) == 1 and re.match(expected + rf"unusable \(.*{reason}", messages[0])
    assert builder.calls == 1 and same(solution, builder.solution)
    assert same(load_quietly(builder), solution) and builder.calls == 1  # rewritten, readable


def test_an_unwritable_cache_folder_warns_and_still_solves(tmp_path, monkeypatch, solution):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(cache.ENV_VAR, str(blocker / "solutions"))
    builder = Builder(solution)
    with pytest.warns(UserWarning, match="could not cache the 2x7x3 solution in"):
        solution = cache.load_or_build(game.rules(*BOARD), builder)
    assert builder.calls == 1 and solution is builder.solution


def test_the_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "mine"))
    assert cache.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(cache.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "gym-tictactoe"
