"""``play --gui``, headless: SDL's dummy video driver, clicks posted to pygame's event queue,
each screenshot read back and compared with the picture of the board."""

from __future__ import annotations

import numpy as np
import pytest

from gym_tictactoe import cli, game
from gym_tictactoe.cli import gui
from gym_tictactoe.cli import play as cli_play
from gym_tictactoe.envs import picture, rendering
from gym_tictactoe.players.opponents import parse_opponent

T3 = game.TICTACTOE  # tic-tac-toe's rules

pygame = pytest.importorskip("pygame")


@pytest.fixture(autouse=True)
def dummy_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")


def screenshot() -> np.ndarray:
    return pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)


def marks_on_screen(shot: np.ndarray, rules: game.Rules, layout: picture.Layout) -> np.ndarray:
    """The board read off the screen's pixels: X where a cell shows X's red, O where O's blue."""
    cells = np.zeros(rules.n_cells, dtype=np.int8)
    for cell in range(rules.n_cells):
        y0, y1, x0, x1 = layout.cell_box(cell)
        pixels = shot[y0:y1, x0:x1]
        for mark, colour in ((game.X, rendering.X_COLOUR), (game.O, rendering.O_COLOUR)):
            if (pixels == colour).all(axis=-1).any():
                cells[cell] = mark
    return cells


class Person:
    """Clicks the first empty cell it sees on the screen; after a game, the keys of ``after``
    (one a game; a click when it says "click"); Quit when they run out."""

    def __init__(self, rules: game.Rules, after: list[str]) -> None:
        self.rules, self.after = rules, after
        self.clicks: list[int] = []
        self.boards_seen: list[np.ndarray] = []

    def __call__(self, window_game: gui.WindowGame) -> object:
        shot = screenshot()
        assert np.array_equal(shot, window_game.frame())  # the window shows the position
        seen = marks_on_screen(shot, self.rules, window_game.layout)
        assert np.array_equal(seen, self.rules.decode(window_game.code))
        pygame.event.clear()  # the window's own events (shown, exposed) are not the person's
        if self.rules.is_terminal(window_game.code) and window_game.last is not None:
            self.boards_seen.append(seen)
            self._after_game()
        else:
            cell = int(np.flatnonzero(seen == game.EMPTY)[0])
            self.clicks.append(cell)
            y, x = window_game.layout.centre(cell)
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(int(x), int(y)),
                                                 button=1))
        return pygame.event.wait()

    def _after_game(self) -> None:
        if not self.after:
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        elif self.after.pop(0) == "click":
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(1, 1), button=1))
        else:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_s))


def match(opponent: str = "minimax", rules: game.Rules = game.TICTACTOE,
          mark: str = "X") -> cli_play.Match:
    return cli_play.Match(parse_opponent(opponent, rules), opponent, rules,
                          np.random.default_rng(0), mark)


def test_a_person_clicks_through_whole_games_in_both_seats(capsys) -> None:
    person = Person(game.TICTACTOE, ["click", "s"])  # then the window is closed
    the_match = match()
    assert gui.play_in_window(the_match, person) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(person.boards_seen) == 3
    seats = [game.X, game.X, game.O]  # s swapped the seats for the third game
    assert len(person.clicks) == sum(int((board == seat).sum())  # one click a move of ours
                                     for board, seat in zip(person.boards_seen, seats, strict=True))
    for board in person.boards_seen:  # every game was played out to its end
        assert T3.is_terminal(T3.encode(board))
    assert the_match.human == game.O
    assert the_match.score["you"] == 0  # minimax never loses
    assert sum(the_match.score.values()) == 3
    assert out[-1] == f"Bye. {the_match.score_line()}"
    assert all(line.startswith(("You lose: minimax", "Draw:")) for line in out[:3])
    assert not pygame.display.get_init()  # the window was closed


def test_clicks_off_the_board_or_on_a_taken_cell_are_ignored() -> None:
    def click(cell: int | None, button: int = 1):
        def event(window_game: gui.WindowGame):
            if cell is None:
                return pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(1, 1), button=button)
            y, x = window_game.layout.centre(cell(window_game) if callable(cell) else cell)
            return pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(int(x), int(y)), button=button)
        return event

    def replied(window_game: gui.WindowGame) -> int:  # the cell of the opponent's reply
        return window_game.last

    steps = [(0, click(None)), (0, click(4, button=2)), (0, click(4)), (3, click(replied)),
             (3, click(4)), (3, lambda _: pygame.event.Event(pygame.KEYDOWN, key=pygame.K_q))]
    done = []

    def person(window_game: gui.WindowGame) -> object:
        pygame.event.clear()
        marks, make_event = steps[len(done)]
        # Nothing played until the left click on 4; then X on 4 and O's reply: 1 + 2.
        assert T3.decode(window_game.code).sum() == marks
        done.append(make_event)
        pygame.event.post(make_event(window_game))
        return pygame.event.wait()

    assert gui.play_in_window(match("random"), person) == 0
    assert len(done) == len(steps)


def test_the_window_shows_a_big_board_and_its_labels() -> None:
    rules = game.rules(15, 15, 5)
    seen = []

    def person(window_game: gui.WindowGame) -> object:
        seen.append(screenshot())
        pygame.event.post(pygame.event.Event(pygame.QUIT))
        return pygame.event.wait()

    assert gui.play_in_window(match("alphabeta", rules), person) == 0
    empty = rendering.rgb_array(np.zeros(225, dtype=np.int8), shape=(15, 15), win_length=5)
    board = seen[0][:empty.shape[0]]  # the status text is under it
    assert np.array_equal(board, empty)  # 48 pixels a cell, letters and numbers round it


def test_the_result_is_written_in_the_window_under_the_board(capsys) -> None:
    shots = []

    def person(window_game: gui.WindowGame) -> object:
        shots.append((screenshot(), window_game.layout))
        pygame.event.clear()  # the window's own events
        if T3.is_terminal(window_game.code) and window_game.last is not None:
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        else:
            cell = int(np.flatnonzero(T3.decode(window_game.code) == game.EMPTY)[0])
            y, x = window_game.layout.centre(cell)
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(int(x), int(y)),
                                                 button=1))
        return pygame.event.wait()

    assert gui.play_in_window(match(), person) == 0
    result = capsys.readouterr().out.splitlines()[0].split(" Score:")[0]
    assert result.startswith(("You lose", "Draw"))
    (first, layout), (last, _) = shots[0], shots[-1]
    assert first.shape == last.shape and last.shape[0] > layout.height  # one window size
    text = last[layout.height:]  # the strip under the board
    assert not (text == picture.BACKGROUND).all(axis=-1).all()
    pygame.display.init()  # the window is closed: draw the expected strip again
    try:
        expected = gui.status_strip(pygame, [result, gui.AGAIN_HINT], layout.width)
        assert np.array_equal(text, expected)
        assert not np.array_equal(text, first[layout.height:])  # play said something else
    finally:
        pygame.quit()


def test_play_gui_without_pygame_is_one_line(monkeypatch, capsys) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pygame", None)
    assert cli.main(["play", "--gui"]) == cli.EXIT_MISSING_EXTRA
    err = capsys.readouterr().err
    assert err.startswith("gym-tictactoe play: error: pygame is not installed") and \
        err.count("\n") == 1


def test_without_a_display_our_line_is_the_only_one(monkeypatch, capfd) -> None:
    # SDL, started without a display, writes "XDG_RUNTIME_DIR is invalid" to the process's
    # stderr itself (capfd sees it); the check comes before SDL starts.
    for name in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(gui.sys, "platform", "linux")
    assert gui.play_in_window(match(), lambda _: pytest.fail("no event is awaited")) == 1
    err = capfd.readouterr().err
    assert err == ("gym-tictactoe play: error: no display to open a window on (neither DISPLAY "
                   "nor WAYLAND_DISPLAY is set): set DISPLAY, or play in the terminal without "
                   "--gui\n")
    assert not pygame.display.get_init()


def test_without_a_display_the_window_says_so_instead_of_hiding(monkeypatch, capsys) -> None:
    # SDL falls back to its offscreen driver when it finds no display: a window nobody sees.
    monkeypatch.setenv("SDL_VIDEODRIVER", "offscreen")
    monkeypatch.setattr(gui, "_invisible", lambda pygame: pygame.display.get_driver() in
                        gui.HIDDEN_DRIVERS)  # as if SDL had chosen offscreen unasked
    assert gui.play_in_window(match(), lambda _: pytest.fail("no event is awaited")) == 1
    err = capsys.readouterr().err
    assert "no display to open a window on" in err and err.count("\n") == 1
    assert not pygame.display.get_init()
