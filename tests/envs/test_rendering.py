"""gym_tictactoe.envs.rendering: text, images, the pygame window, and the env's render()."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

from gym_tictactoe import game
from gym_tictactoe.envs import picture, rendering
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.game import notation

T3 = game.TICTACTOE  # tic-tac-toe's rules

CELL = 80  # the default cell size of 3x3
LAYOUT = picture.layout((3, 3), CELL)
REPO = Path(__file__).resolve().parents[2]


def position(*moves: int) -> int:
    code = game.EMPTY_BOARD
    for cell in moves:
        code = T3.play(code, cell)
    return code


def ansi_cells(text: str) -> list[str]:
    """The nine cell labels of an ansi board, row-major."""
    rows = [line for line in text.splitlines() if "|" in line and "-" not in line]
    return [label.strip(" ()") for row in rows for label in row.split("|")]


def cell_pixels(frame: np.ndarray, cell: int, layout: picture.Layout = LAYOUT) -> np.ndarray:
    y0, y1, x0, x1 = layout.cell_box(cell)
    return frame[y0:y1, x0:x1]


def has_colour(pixels: np.ndarray, colour: tuple[int, int, int]) -> bool:
    return bool((pixels == colour).all(axis=-1).any())


def greenish(pixels: np.ndarray) -> np.ndarray:
    """Where the winning line's green dominates (no mark, tint or grid colour is so green)."""
    r, g, b = (pixels[..., i].astype(int) for i in range(3))
    return (g > r + 30) & (g > b + 30)


def runs(values: np.ndarray) -> list[tuple[bool, int]]:
    """Run-length encoding of a 1-d boolean array: (value, length) pairs."""
    edges = np.flatnonzero(np.diff(values.astype(np.int8))) + 1
    return [(bool(part[0]), part.size) for part in np.split(values, edges)]


def test_ansi_of_empty_board_numbers_every_cell() -> None:
    text = rendering.ansi(game.EMPTY_BOARD)
    assert ansi_cells(text) == [str(cell) for cell in range(9)]
    assert text.count("---+---+---") == 2
    assert text.endswith("\n")


def test_ansi_shows_marks_in_their_cells() -> None:
    text = rendering.ansi(position(4, 0, 8))
    assert ansi_cells(text) == ["O", "1", "2", "3", "X", "5", "6", "7", "X"]


@pytest.mark.parametrize("code", [-1, T3.n_codes])
def test_codes_out_of_range_are_rejected(code: int) -> None:
    with pytest.raises(ValueError, match="position code"):
        rendering.ansi(code)
    with pytest.raises(ValueError, match="position code"):
        rendering.rgb_array(code)


def test_ansi_marks_the_last_move_in_parentheses() -> None:
    text = rendering.ansi(position(4, 0, 8), last=8)
    assert text.splitlines()[-1] == " 6 | 7 |(X)"
    assert text.splitlines()[0] == " O | 1 | 2"
    assert rendering.ansi(position(4, 0), last=0).splitlines()[0] == "(O)| 1 | 2"


def test_big_boards_print_compactly_with_letters_and_row_numbers() -> None:
    cells = np.zeros(225, dtype=np.int8)
    h8, i9 = notation.parse_cell("h8", (15, 15)), notation.parse_cell("i9", (15, 15))
    cells[h8], cells[i9] = game.X, game.O
    lines = rendering.ansi(cells, (15, 15), last=i9, win_length=5).splitlines()
    assert len(lines) == 17 and max(map(len, lines)) <= 40  # was 29 lines of 89 characters
    assert lines[0] == lines[-1] == "    a b c d e f g h i j k l m n o"
    assert lines[1] == "15  . . . . . . . . . . . . . . .  15"
    assert lines[15] == " 1  . . . . . . . . . . . . . . .  1"
    assert lines[8] == " 8  . . . . . . . X . . . . . . .  8"  # h8: row 8 from the bottom
    assert lines[7] == " 9  . . . . . . . .(O). . . . . .  9"  # the last move
    assert lines[0].index("h") == lines[8].index("X")  # the letter stands above its column
    assert "." not in rendering.ansi(position(4), (3, 3))  # small boards keep their numbers


def test_every_cell_name_reads_back_as_the_cell() -> None:
    for shape in ((15, 15), (6, 6), (2, 7), (3, 3)):
        for cell in range(shape[0] * shape[1]):
            assert notation.parse_cell(notation.cell_name_any(cell, shape), shape) == cell
            row, col = divmod(cell, shape[1])
            assert notation.parse_cell(f"{row} {col}", shape) == cell
            assert notation.parse_cell(str(cell), shape) == cell
    assert notation.parse_cell(" H8 ", (15, 15)) == 112 and notation.parse_cell("a1", (3, 3)) == 6


@pytest.mark.parametrize(("text", "message"), [
    ("p1", "p1 is not on the board"), ("h16", "h16 is not on the board"),
    ("225", "225 is not a cell"), ("3\x1b[", "is not a cell"), ("1 2 3", "1 2 3 is not a cell"),
])
def test_a_cell_that_is_not_on_the_board_says_what_is(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        notation.parse_cell(text, (15, 15))
    assert "a letter a-o and a row 1-15 (as h8)" in str(error.value)


def test_colour_shows_the_winning_line_reversed_and_the_last_move_bold() -> None:
    code = position(0, 3, 1, 4, 2)  # X: 0 1 2
    text = rendering.ansi(code, colour=True, last=2)
    assert text.count("\x1b[7m") == 3 and "\x1b[1m\x1b[7mX" in text  # the last move is on it
    assert "\x1b" not in rendering.ansi(code, last=2)  # no colour unless asked


@pytest.mark.parametrize("size", [60, 90, 240, 301])
def test_rgb_array_fits_the_size_asked(size: int) -> None:
    frame = rendering.rgb_array(position(4, 0), size=size)
    assert frame.dtype == np.uint8 and frame.shape[0] == frame.shape[1] and frame.shape[2] == 3
    bigger = picture.layout((3, 3), rendering.cell_size_for(size, (3, 3)) + 1)
    assert frame.shape[0] <= size < bigger.height  # the largest that fits


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"size": 10}, ValueError, r"size must be an integer from 45 to 4,096 pixels .*; got 10"),
    ({"size": 10**9}, ValueError, "size must be an integer from 45 to 4,096 pixels"),
    ({"cell_size": 5}, ValueError, "cell_size must be an integer from 12 to 256 pixels a cell"),
    ({"cell_size": 10**9}, ValueError, "cell_size must be an integer from 12 to 256"),
    ({"cell_size": True}, ValueError, r"cell_size must be an integer from 12 to 256 .*; got True"),
    ({"cell_size": 2.5}, ValueError, "cell_size must be an integer from 12 to 256"),
    ({"size": 240, "cell_size": 40}, ValueError, "not both"),
    ({"last": 9}, ValueError, r"last must be an integer from 0 to 8 or None .*; got 9"),
])
def test_bad_sizes_are_refused(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        rendering.rgb_array(game.EMPTY_BOARD, **kwargs)


@pytest.mark.parametrize(("shape", "cell"), [((3, 3), 80), ((6, 6), 80), ((15, 15), 48)])
def test_images_scale_with_the_board(shape: tuple[int, int], cell: int) -> None:
    assert picture.default_cell_size(shape) == cell
    frame = rendering.rgb_array(np.zeros(shape[0] * shape[1], dtype=np.int8), shape=shape)
    layout = picture.layout(shape, cell)
    assert frame.shape == (layout.height, layout.width, 3)
    assert frame.shape[0] >= shape[0] * cell  # 16 pixels a cell on 15x15 before
    small = rendering.rgb_array(np.zeros(shape[0] * shape[1], dtype=np.int8), shape=shape,
                                cell_size=20)
    assert small.shape[0] < frame.shape[0]


@pytest.mark.parametrize(("shape", "cell"), [((3, 3), 80), ((6, 6), 80), ((15, 15), 48),
                                             ((2, 7), 33)])
def test_grid_lines_are_even_inside_a_frame_twice_as_thick(shape, cell) -> None:
    layout = picture.layout(shape, cell)
    frame = rendering.rgb_array(np.zeros(shape[0] * shape[1], dtype=np.int8), shape=shape,
                                cell_size=cell)
    grid = (frame == rendering.GRID_COLOUR).all(axis=-1)
    y, x = layout.centre(0)
    outside = layout.frame - layout.line
    for line, count in ((grid[int(y), layout.left - outside :], shape[1]),
                        (grid[layout.top - outside :, int(x)], shape[0])):
        widths = [length for value, length in runs(line) if value][: count + 1]
        assert widths == [layout.frame] + [layout.line] * (count - 1) + [layout.frame]
        gaps = [length for value, length in runs(line) if not value][:count]
        assert gaps == [cell - layout.line] * count  # every cell as wide as every other


def test_same_board_gives_equal_independent_writable_images() -> None:
    code = position(4, 0)
    first, second = rendering.rgb_array(code), rendering.rgb_array(code)
    assert np.array_equal(first, second)
    assert first.flags.writeable and not np.shares_memory(first, second)
    first[:] = 0  # a caller scribbling on its copy must not reach a cache
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
    assert tuple(frame[LAYOUT.top + CELL, LAYOUT.left + CELL // 2]) == rendering.GRID_COLOUR
    assert tuple(frame[LAYOUT.top - 1, LAYOUT.left]) == rendering.GRID_COLOUR  # the frame
    assert tuple(frame[0, 0]) == rendering.BACKGROUND  # a margin round the frame


def test_x_and_o_cells_are_drawn_differently() -> None:
    frame = rendering.rgb_array(position(0, 8))  # X in the top left, O in the bottom right
    x_cell, o_cell, empty = cell_pixels(frame, 0), cell_pixels(frame, 8), cell_pixels(frame, 4)
    assert not np.array_equal(x_cell, o_cell)
    assert has_colour(x_cell, rendering.X_COLOUR) and not has_colour(x_cell, rendering.O_COLOUR)
    assert has_colour(o_cell, rendering.O_COLOUR) and not has_colour(o_cell, rendering.X_COLOUR)
    assert (empty == rendering.BACKGROUND).all()


def test_x_is_two_diagonals_and_o_a_ring() -> None:
    frame = rendering.rgb_array(position(0, 8))
    x_cell, o_cell = cell_pixels(frame, 0), cell_pixels(frame, 8)
    inside = x_cell.shape[0]
    centre, corner = inside // 2, inside // 4 + 1  # a quarter in: on a diagonal, inside the margin
    assert tuple(x_cell[centre, centre]) == rendering.X_COLOUR
    for y, x in [(corner, corner), (corner, -corner - 1), (-corner - 1, corner),
                 (-corner - 1, -corner - 1)]:
        assert tuple(x_cell[y, x]) == rendering.X_COLOUR
    assert tuple(x_cell[centre, corner]) == rendering.BACKGROUND  # between the strokes
    assert tuple(o_cell[centre, centre]) == rendering.BACKGROUND  # the hole of the ring
    ring = (o_cell == rendering.O_COLOUR).all(axis=-1)
    assert ring[centre].any() and ring[:, centre].any()
    assert np.array_equal(ring, ring[::-1]) and np.array_equal(ring, ring.T)  # round


def test_the_last_move_is_tinted() -> None:
    frame = rendering.rgb_array(position(4, 0), last=0)
    for cell in range(9):
        corner = tuple(cell_pixels(frame, cell)[1, 1])
        assert corner == (rendering.LAST_COLOUR if cell == 0 else rendering.BACKGROUND)
    assert not has_colour(rendering.rgb_array(position(4, 0)), rendering.LAST_COLOUR)


def test_the_winning_line_is_struck_through() -> None:
    won = rendering.rgb_array(position(0, 3, 1, 4, 2))  # X: the top row
    centres = [tuple(map(int, LAYOUT.centre(cell))) for cell in range(9)]
    assert all(greenish(won[y, x]) for y, x in centres[:3])
    assert not any(greenish(won[y, x]) for y, x in centres[3:])
    assert not greenish(rendering.rgb_array(position(0, 3, 1, 4))).any()  # nobody has won
    # On a big board the line is found with the board's own win length.
    cells = np.zeros(225, dtype=np.int8)
    cells[[112, 98, 84, 70]] = game.X
    four = rendering.rgb_array(cells, shape=(15, 15), win_length=5)
    cells[56] = game.X
    five = rendering.rgb_array(cells, shape=(15, 15), win_length=5)
    assert not greenish(four).any() and greenish(five).sum() > 1000
    # Without the win length no line is marked: four in a row wins on 15x15x4, not on x5.
    assert not greenish(rendering.rgb_array(cells, shape=(15, 15))).any()


def test_big_boards_have_letters_and_numbers_round_them() -> None:
    layout = picture.layout((15, 15), 48)
    frame = rendering.rgb_array(np.zeros(225, dtype=np.int8), shape=(15, 15))
    label = (frame == picture.LABEL_COLOUR).all(axis=-1)
    x0 = layout.left + 7 * layout.cell  # above column h
    above = label[: layout.top - layout.frame, x0 : x0 + layout.cell]
    ys, xs = np.nonzero(above)
    glyph = above[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    assert np.array_equal(glyph, np.kron(picture.FONT["h"], np.ones((3, 3), dtype=bool)))
    assert label[layout.top + layout.cell // 2, : layout.left].any()  # 15 left of the top row
    small = rendering.rgb_array(game.EMPTY_BOARD)
    assert not (small == picture.LABEL_COLOUR).all(axis=-1).any()


def test_a_pixel_maps_back_to_its_cell() -> None:
    for shape in ((3, 3), (15, 15), (2, 7)):
        layout = picture.layout(shape, picture.default_cell_size(shape))
        for cell in range(shape[0] * shape[1]):
            y, x = layout.centre(cell)
            assert layout.cell_at(int(x), int(y)) == cell
        assert layout.cell_at(0, 0) is None and layout.cell_at(layout.width - 1, 5) is None


@pytest.mark.parametrize("board", ["3x3x3", "6x6x4", "15x15x5"])
def test_the_docs_pictures_are_what_the_code_draws(board: str) -> None:
    pygame = pytest.importorskip("pygame")
    spec = importlib.util.spec_from_file_location("board_pictures",
                                                  REPO / "scripts" / "board_pictures.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    committed = pygame.surfarray.array3d(
        pygame.image.load(str(REPO / "docs" / "img" / f"board-{board}.png"))).swapaxes(0, 1)
    assert np.array_equal(committed, script.picture(board)), \
        "rerun python scripts/board_pictures.py and commit docs/img"


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
    code, last = T3.encode(boards[0]), info["opponent_action"]
    assert text_env.last_move == image_env.last_move == last
    assert text_env.render() == rendering.ansi(code, last=last)
    assert np.array_equal(image_env.render(), rendering.rgb_array(code, last=last))
    marks = sum(label in "XO" for label in ansi_cells(text_env.render()))
    assert marks == (2 if agent_mark == "X" else 3)  # the opponent's replies are shown too


def test_the_env_tracks_the_last_move_of_either_side() -> None:
    env = TicTacToeEnv(opponent="random", agent_mark="O")
    _, info = env.reset(seed=0)
    assert env.last_move == int(np.flatnonzero(info["board"])[0])  # the opponent's opening
    env = TicTacToeEnv(opponent="random")
    env.reset(seed=0)
    assert env.last_move is None
    for action in (0, 1, 2, 3, 4, 5, 6, 7, 8):  # the agent's own last move ends some game
        if env.done:
            break
        if env.action_masks()[action]:
            info = env.step(action)[4]
            reply = info["opponent_action"]  # -1: the opponent did not move
            assert env.last_move == (action if reply == -1 else reply)


@pytest.mark.parametrize("size", [(3, 3, 3), (15, 15, 5)])
def test_cell_size_through_gym_make(size: tuple[int, int, int]) -> None:
    rows, cols, k = size
    env = gym.make("TicTacToe-v0", rows=rows, cols=cols, win_length=k, render_mode="rgb_array",
                   cell_size=20)
    env.reset(seed=0)
    assert env.render().shape == (picture.layout((rows, cols), 20).height,
                                  picture.layout((rows, cols), 20).width, 3)
    with pytest.raises(ValueError, match=r"cell_size must be an integer from 12 to 256 .*; got 4"):
        gym.make("TicTacToe-v0", render_mode="rgb_array", cell_size=4)


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
