"""Tests of gym_tictactoe.rendering: text, images, the pygame window, and the env's render()."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

from gym_tictactoe import game, rendering
from gym_tictactoe.env import TicTacToeEnv

SIZE = 240
CELL = SIZE // 3


def position(*moves: int) -> int:
    code = game.EMPTY_BOARD
    for cell in moves:
        code = game.play(code, cell)
    return code


def ansi_cells(text: str) -> list[str]:
    """The nine cell labels of an ansi board, row-major."""
    rows = [line for line in text.splitlines() if "|" in line and "-" not in line]
    return [label.strip() for row in rows for label in row.split("|")]


def cell_pixels(frame: np.ndarray, cell: int) -> np.ndarray:
    row, col = divmod(cell, 3)
    return frame[row * CELL : (row + 1) * CELL, col * CELL : (col + 1) * CELL]


def has_colour(pixels: np.ndarray, colour: tuple[int, int, int]) -> bool:
    return bool((pixels == colour).all(axis=-1).any())


def test_ansi_of_empty_board_numbers_every_cell() -> None:
    text = rendering.ansi(game.EMPTY_BOARD)
    assert ansi_cells(text) == [str(cell) for cell in range(9)]
    assert text.count("---+---+---") == 2
    assert text.endswith("\n")


def test_ansi_shows_marks_in_their_cells() -> None:
    text = rendering.ansi(position(4, 0, 8))
    assert ansi_cells(text) == ["O", "1", "2", "3", "X", "5", "6", "7", "X"]


@pytest.mark.parametrize("code", [-1, game.N_CODES])
def test_codes_out_of_range_are_rejected(code: int) -> None:
    with pytest.raises(ValueError, match="position code"):
        rendering.ansi(code)
    with pytest.raises(ValueError, match="position code"):
        rendering.rgb_array(code)


@pytest.mark.parametrize("size", [24, 90, 240, 301])
def test_rgb_array_is_a_square_uint8_image(size: int) -> None:
    frame = rendering.rgb_array(position(4, 0), size=size)
    assert frame.shape == (size, size, 3)
    assert frame.dtype == np.uint8


def test_rgb_array_rejects_tiny_sizes() -> None:
    with pytest.raises(ValueError, match="size"):
        rendering.rgb_array(game.EMPTY_BOARD, size=10)


def test_same_board_gives_equal_independent_writable_images() -> None:
    code = position(4, 0)
    first, second = rendering.rgb_array(code), rendering.rgb_array(code)
    assert np.array_equal(first, second)
    assert first.flags.writeable and not np.shares_memory(first, second)
    first[:] = 0  # a caller scribbling on its copy must not reach the cache
    assert np.array_equal(rendering.rgb_array(code), second)


def test_different_boards_give_different_images() -> None:
    codes = [position(), position(4), position(0), position(4, 0), position(0, 4)]
    frames = [rendering.rgb_array(code) for code in codes]
    for i, a in enumerate(frames):
        for b in frames[i + 1 :]:
            assert not np.array_equal(a, b)


def test_empty_board_is_background_and_grid_only() -> None:
    frame = rendering.rgb_array(game.EMPTY_BOARD)
    colours = {tuple(pixel) for pixel in frame.reshape(-1, 3).tolist()}
    assert colours == {rendering.BACKGROUND, rendering.GRID_COLOUR}
    assert tuple(frame[CELL, CELL // 2]) == rendering.GRID_COLOUR  # a horizontal line
    assert tuple(frame[CELL // 2, 2 * CELL]) == rendering.GRID_COLOUR  # a vertical line
    assert tuple(frame[0, 0]) == rendering.BACKGROUND  # no outer border


def test_x_and_o_cells_are_drawn_differently() -> None:
    frame = rendering.rgb_array(position(0, 8))  # X in the top left, O in the bottom right
    x_cell, o_cell, empty = cell_pixels(frame, 0), cell_pixels(frame, 8), cell_pixels(frame, 4)
    assert not np.array_equal(x_cell, o_cell)
    assert has_colour(x_cell, rendering.X_COLOUR) and not has_colour(x_cell, rendering.O_COLOUR)
    assert has_colour(o_cell, rendering.O_COLOUR) and not has_colour(o_cell, rendering.X_COLOUR)
    assert not has_colour(empty, rendering.X_COLOUR) and not has_colour(empty, rendering.O_COLOUR)


def test_x_is_two_diagonals_and_o_a_ring() -> None:
    frame = rendering.rgb_array(position(0, 8))
    x_cell, o_cell = cell_pixels(frame, 0), cell_pixels(frame, 8)
    centre, corner = CELL // 2, CELL // 4 + 1  # a quarter in: on a diagonal, inside the margin
    assert tuple(x_cell[centre, centre]) == rendering.X_COLOUR
    for y, x in [(corner, corner), (corner, -corner), (-corner, corner), (-corner, -corner)]:
        assert tuple(x_cell[y, x]) == rendering.X_COLOUR
    assert tuple(x_cell[centre, corner]) == rendering.BACKGROUND  # between the strokes
    assert tuple(o_cell[centre, centre]) == rendering.BACKGROUND  # the hole of the ring
    ring = (o_cell == rendering.O_COLOUR).all(axis=-1)
    assert ring[centre].any() and ring[:, centre].any()
    assert np.array_equal(ring, ring[::-1]) and np.array_equal(ring, ring.T)  # round


@pytest.mark.parametrize("agent_mark", ["X", "O"])
def test_env_render_returns_text_and_images_of_the_current_board(agent_mark: str) -> None:
    text_env = TicTacToeEnv(opponent="random", agent_mark=agent_mark, render_mode="ansi")
    image_env = TicTacToeEnv(opponent="random", agent_mark=agent_mark, render_mode="rgb_array")
    boards = []
    for env in (text_env, image_env):
        _, info = env.reset(seed=3)
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        boards.append(info["board"])
    assert np.array_equal(*boards)  # same seed, same moves
    code = game.encode(boards[0])
    assert text_env.render() == rendering.ansi(code)
    assert np.array_equal(image_env.render(), rendering.rgb_array(code))
    marks = sum(label in "XO" for label in ansi_cells(text_env.render()))
    assert marks == (2 if agent_mark == "X" else 3)  # the opponent's replies are shown too


def test_env_renders_the_empty_board_before_reset() -> None:
    env = TicTacToeEnv(render_mode="rgb_array")
    assert np.array_equal(env.render(), rendering.rgb_array(game.EMPTY_BOARD))


def test_rendering_consumes_no_randomness() -> None:
    env = TicTacToeEnv(opponent="random", agent_mark="O", render_mode="rgb_array")
    env.reset(seed=7)
    state = env.np_random.bit_generator.state
    env.render()
    assert env.np_random.bit_generator.state == state


def test_window_shows_the_frame_upright(monkeypatch: pytest.MonkeyPatch) -> None:
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    frame = rendering.rgb_array(position(0, 5), size=90)
    window = rendering.Window(fps=0)  # 0: no frame-rate limit, so no sleeping
    try:
        window.show(frame)
        shown = pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)
        assert np.array_equal(shown, frame)
    finally:
        window.close()
    assert not pygame.display.get_init()
    window.close()  # a second close is harmless


def test_human_mode_plays_a_game_with_a_dummy_display(monkeypatch: pytest.MonkeyPatch) -> None:
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = TicTacToeEnv(opponent="random", agent_mark="O", render_mode="human")
    env.metadata = {**env.metadata, "render_fps": 1000}  # the game, not the frame rate, is tested
    _, info = env.reset(seed=0)
    assert pygame.display.get_init()  # reset drew the opponent's opening move
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.render() is None
    env.close()
    assert not pygame.display.get_init()
    env.close()


def test_window_without_pygame_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    with pytest.raises(DependencyNotInstalled, match=r'render extra, pip install "\.\[render\]"'):
        rendering.Window()


def test_text_and_image_modes_need_no_pygame(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygame", None)
    for mode in ("ansi", "rgb_array"):
        env = TicTacToeEnv(render_mode=mode)
        env.reset(seed=0)
        assert env.render() is not None
        env.close()
