"""The compiled core and the proof solver: the same values as the table solver on seeded samples of
small boards, an exhausted budget answers None, bad boards and settings are refused up front,
and nothing of numba is loaded until a proof is asked for."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from bench_helpers import benchmark_module

from gym_tictactoe import game
from gym_tictactoe.game import solver
from gym_tictactoe.game.proofs import BitBoard, CoreUnavailable, Prover, table_entries

SMALL_TABLE = 1 << 20  # bytes: plenty for boards of at most 16 cells


def _stm_values(rules: game.Rules, codes: np.ndarray) -> np.ndarray:
    """The table solver's values for the side to move (it gives them for X)."""
    for_x = solver.solve(rules).value_of(codes).astype(np.int64)
    return np.where(rules.to_move_of(codes) == game.O, -for_x, for_x)


def _sample(rules: game.Rules, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.choice(rules.reachable, min(count, len(rules.reachable)), replace=False)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(3, 3, 3), (3, 4, 3), (3, 4, 4), (2, 6, 3), (4, 3, 3)])
def test_prover_agrees_with_the_table_solver(size):
    rules = game.rules(*size)
    codes = _sample(rules, 400, seed=sum(size))
    prover = Prover(rules, table_bytes=SMALL_TABLE, small=True)
    got = [prover.value(int(code)) for code in codes]
    assert got == _stm_values(rules, codes).tolist()


@pytest.mark.parametrize("sym_stones", [-1, 4, 64])
def test_prover_agrees_with_and_without_symmetric_keys(sym_stones):
    rules = game.rules(3, 4, 3)
    codes = _sample(rules, 300, seed=7)
    prover = Prover(rules, table_bytes=SMALL_TABLE, small=True, sym_stones=sym_stones)
    assert [prover.value(int(code)) for code in codes] == _stm_values(rules, codes).tolist()


def test_move_values_give_the_table_solvers_value_keeping_moves():
    rules = game.rules(3, 4, 3)
    prover = Prover(rules, table_bytes=SMALL_TABLE, small=True)
    codes = [int(c) for c in _sample(rules, 60, seed=3) if not rules.is_terminal(int(c))]
    for code in codes:
        values = prover.move_values(code)
        best = max(values.values())
        keeping = sorted(cell for cell, value in values.items() if value == best)
        assert keeping == solver.value_keeping_moves(code, rules)


def _boards(cells: range) -> list[tuple[int, int, int]]:
    """Every board with a cell count in ``cells`` (both orientations, every win length)."""
    return [(r, c, k) for r in range(1, max(cells) + 1) for c in range(1, max(cells) + 1)
            if r * c in cells for k in range(1, max(r, c) + 1)]


def test_batched_values_agree_on_every_position_of_every_board_of_at_most_6_cells():
    for size in _boards(range(1, 7)):
        rules = game.rules(*size)
        prover = Prover(rules, table_bytes=SMALL_TABLE, small=True)
        assert prover.values(rules.reachable).tolist() == \
            _stm_values(rules, rules.reachable).tolist(), size


def test_batched_values_agree_on_a_seeded_sample_of_boards_of_7_to_10_cells():
    boards = _boards(range(7, 11))
    rng = np.random.default_rng(26)
    for i in rng.choice(len(boards), 8, replace=False):
        rules = game.rules(*boards[i])
        codes = _sample(rules, 2000, seed=int(i))
        prover = Prover(rules, table_bytes=SMALL_TABLE, small=True)
        assert prover.values(codes).tolist() == _stm_values(rules, codes).tolist(), boards[i]


def test_batched_values_are_the_single_answers_and_unknown_past_the_budget():
    rules = game.rules(3, 4, 3)
    codes = _sample(rules, 300, seed=5)
    single, batch = (Prover(rules, table_bytes=SMALL_TABLE, small=True) for _ in range(2))
    assert batch.values(codes).tolist() == [single.value(int(code)) for code in codes]
    # The budget is the batch's: enough for the sample, not for the empty board after it.
    short = Prover(rules, budget=batch.nodes, table_bytes=SMALL_TABLE, small=True)
    got = short.values(np.array([*codes, game.EMPTY_BOARD]))
    assert got[:-1].tolist() == _stm_values(rules, codes).tolist()
    assert got[-1] == 2  # unknown, never a guess


def test_batched_values_refuse_impossible_positions():
    prover = Prover(game.rules(3, 3, 3), table_bytes=SMALL_TABLE, small=True)
    encode = game.TICTACTOE.encode
    with pytest.raises(ValueError, match="no game reaches"):
        prover.values([encode([1, 1, 0, 0, 0, 0, 0, 0, 0])])
    with pytest.raises(ValueError, match="side to move has a line"):
        prover.values([encode([1, 1, 1, 2, 2, 2, 0, 0, 0])])  # X to move, O has a line


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 4])
def test_prover_agrees_on_four_by_four(k):
    rules = game.rules(4, 4, k)
    codes = _sample(rules, 300, seed=k)
    prover = Prover(rules, table_bytes=1 << 24, small=True)
    assert [prover.value(int(code)) for code in codes] == _stm_values(rules, codes).tolist()


def test_four_by_five_by_four_is_a_draw_and_a_short_budget_is_unknown():
    rules = game.rules(4, 5, 4)
    prover = Prover(rules, budget=50, table_bytes=1 << 24)
    assert prover.value(game.EMPTY_BOARD) is None  # unknown, not a guess
    prover.budget = 10**8  # the same table: nothing an unfinished search saw was stored
    assert prover.value(game.EMPTY_BOARD) == 0


def test_boards_outside_17_to_64_cells_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"17 to 64 cells.*9x9x5 board has 81"):
        Prover(game.rules(9, 9, 5))
    with pytest.raises(ValueError, match=r"17 to 64 cells.*solved by tables"):
        Prover(game.rules(3, 3, 3))


def test_the_table_size_is_checked_before_allocating():
    with pytest.raises(ValueError, match="table_bytes"):
        Prover(game.rules(5, 5, 4), table_bytes=1 << 40)
    with pytest.raises(ValueError, match="table_bytes"):
        table_entries(10)
    assert table_entries(1 << 20) == (1 << 20) // 17  # two uint64 keys and a byte an entry


def test_impossible_positions_are_refused():
    prover = Prover(game.rules(3, 3, 3), table_bytes=SMALL_TABLE, small=True)
    with pytest.raises(ValueError, match="no game reaches"):
        prover.value_of_cells([1, 1, 1, 0, 0, 0, 0, 0, 0])


def test_bit_kernels_find_wins_and_threats():
    from gym_tictactoe.game import bitboard

    rules = game.rules(5, 5, 4)
    board = BitBoard.of(rules)
    x = np.uint64(sum(1 << c for c in (6, 7, 8)))  # three in a row on the second row
    o = np.uint64(1 << 5)  # blocks the left end
    assert bitboard.threats(x, o, board.masks) == np.uint64(1 << 9)
    assert bitboard.threats(o, x, board.masks) == 0
    starts = np.cumsum([0] + [len(m) for m in rules.line_masks_through])
    through = np.array([rules.lines.index(line) for cell in range(rules.n_cells)
                        for line in rules.lines if cell in line])
    won = x | np.uint64(1 << 9)
    assert bitboard.wins_through(won, 9, board.masks, starts, through)
    assert not bitboard.wins_through(won, 0, board.masks, starts, through)
    assert bitboard.popcount(np.uint64(2**64 - 1)) == 64


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.e2e
def test_importing_the_package_and_playing_3x3_loads_no_numba():
    result = _run(
        "import sys, gym_tictactoe\n"
        "assert 'numba' not in sys.modules, 'import'\n"
        "import gymnasium as gym\n"
        "env = gym.make('TicTacToe-v0', opponent='minimax')\n"
        "obs, info = env.reset(seed=0)\n"
        "done = False\n"
        "while not done:\n"
        "    move = int(info['action_mask'].nonzero()[0][0])\n"
        "    obs, r, done, t, info = env.step(move)\n"
        "assert 'numba' not in sys.modules, 'game'\n")
    assert result.returncode == 0, result.stderr


@pytest.mark.e2e
def test_a_missing_numba_is_one_line():
    result = _run(
        "import sys\n"
        "sys.modules['numba'] = None  # as if not installed\n"
        "from gym_tictactoe import game\n"
        "from gym_tictactoe.game.proofs import Prover, CoreUnavailable\n"
        "try:\n"
        "    Prover(game.rules(5, 5, 4), table_bytes=1 << 20)\n"
        "except CoreUnavailable as error:\n"
        "    print(error)\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and "needs numba" in result.stdout
    assert CoreUnavailable.__mro__[1] is RuntimeError


def test_pairing_finds_the_5x5x5_pairing_and_none_where_cells_are_too_few():
    from gym_tictactoe.game import bitboard

    def paired(size: tuple[int, int, int]) -> bool:
        rules = game.rules(*size)
        board = BitBoard.of(rules)
        scratch = np.zeros((6, max(2 * len(rules.lines), rules.n_cells)), np.int64)
        empty = np.uint64(rules.full_mask)
        return bitboard.pairing(np.uint64(0), np.uint64(0), empty, board.masks,
                                board.line_cells, scratch)

    assert paired((5, 5, 5))  # 12 lines, 24 of the 25 cells: a classic pairing draw
    assert not paired((5, 5, 4))  # 28 lines would need 56 cells
    assert not paired((3, 3, 3))  # 8 lines, 9 cells
    # Proved without search: each side's lines are paired on the empty board.
    prover = Prover(game.rules(5, 5, 5), table_bytes=SMALL_TABLE)
    assert prover.value(game.EMPTY_BOARD) == 0 and prover.nodes == 2


def test_a_compile_failure_is_one_line(monkeypatch):
    from numba.core.errors import TypingError

    prover = Prover(game.rules(5, 5, 4), table_bytes=SMALL_TABLE)

    class Broken:
        UNKNOWN = 2

        @staticmethod
        def prove(*args):
            raise TypingError("Failed in nopython mode pipeline\nDuring: typing of ...\n...")

    monkeypatch.setattr(prover, "_core", Broken)
    with pytest.raises(CoreUnavailable, match=r"failed to compile: .*nopython mode pipeline$"):
        prover.value(game.EMPTY_BOARD)


def test_the_benchmark_checks_agreement_and_writes_only_to_out(tmp_path, capsys):
    import json

    bench = benchmark_module("proofs")
    out = tmp_path / "agreement.json"
    assert bench.main(["--agreement", "--boards", "3x3x3", "2x6x3", "--sample", "1000",
                       "--out", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [(r["board"], r["all_positions"], r["disagreements"]) for r in runs] == [
        ("3x3x3", False, 0), ("2x6x3", False, 0)]
    assert runs[0]["positions"] == 1000 and runs[0]["reachable"] == 5478
    assert not list(tmp_path.glob("*.tmp*"))


def test_the_agreement_benchmark_checks_every_position_by_default(tmp_path, capsys):
    import json

    bench = benchmark_module("proofs")
    boards = bench.every_board()
    assert len(boards) == len(set(boards)) == len(_boards(range(1, 17))) - 2 * 16  # no 1x16
    assert {"1x1x1", "4x4x4", "2x8x8", "8x2x8", "1x15x15"} <= set(boards)
    out = tmp_path / "agreement.json"
    assert bench.main(["--agreement", "--boards", "1x1x1", "2x3x2", "3x2x3",
                       "--out", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [(r["board"], r["all_positions"], r["disagreements"], r["first_disagreements"])
            for r in runs] == [("1x1x1", True, 0, []), ("2x3x2", True, 0, []),
                               ("3x2x3", True, 0, [])]
    assert [r["positions"] for r in runs] == [r["reachable"] for r in runs]
    assert runs[1]["positions"] == len(game.rules(2, 3, 2).reachable)
    with pytest.raises(SystemExit):
        bench.main(["--agreement", "--boards", "5x5x4"])
    assert "at most 16 cells" in capsys.readouterr().err
