"""The keywords both envs share are checked once (envs.options), each env's signature is the one
its users have always seen, spelled out, and both check them alike."""

import inspect

import numpy as np
import pytest

from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.options import EnvOptions
from gym_tictactoe.envs.vector import TicTacToeVectorEnv

SHARED = ("opponent: 'Opponent | str' = 'random', agent_mark: 'str' = 'X', "
          "illegal_action: 'str' = 'lose', render_mode: 'str | None' = None, *, rows: 'int' = 3, "
          "cols: 'int' = 3, win_length: 'int' = 3, start: 'str' = 'empty', "
          "start_probability: 'float' = 1.0")


def test_signatures_are_the_documented_ones():
    assert str(inspect.signature(TicTacToeEnv)) == \
        f"({SHARED}, cell_size: 'int | None' = None) -> 'None'"
    assert str(inspect.signature(TicTacToeVectorEnv)) == (
        f"(num_envs: 'int' = 1, {SHARED}, start_weights: 'starts.StartWeights | "
        "npt.ArrayLike | None' = None) -> 'None'")


@pytest.mark.parametrize("make", [TicTacToeEnv, lambda *a, **k: TicTacToeVectorEnv(2, *a, **k)])
def test_both_envs_take_the_keywords_positionally_and_by_name(make):
    env = make("minimax", "O", "raise", "ansi", rows=np.int64(2), cols=2, win_length=2,
               start="random", start_probability=np.float32(0.5))
    assert env.options == EnvOptions("minimax", "O", "raise", "ansi", rows=2, cols=2,
                                     win_length=2, start="random", start_probability=0.5)
    assert (env.rules.size, env.agent_mark_option, env.illegal_action, env.render_mode,
            env.start, env.start_probability) == ((2, 2, 2), "O", "raise", "ansi", "random", 0.5)
    assert type(env.options.rows) is int and type(env.start_probability) is float


@pytest.mark.parametrize("make, name", [(TicTacToeEnv, "TicTacToeEnv"),
                                        (TicTacToeVectorEnv, "TicTacToeVectorEnv")])
def test_a_wrong_keyword_is_python_s_type_error_naming_the_env(make, name):
    with pytest.raises(TypeError, match=rf"^{name}\.__init__\(\) got an unexpected keyword "
                                        r"argument 'board'$"):
        make(board=3)
    with pytest.raises(TypeError, match=rf"^{name}\.__init__\(\) takes from 1 to \d+ "
                                        r"positional arguments but 7 were given$"):
        make(1, "random", "X", "lose", None, 3)


@pytest.mark.parametrize("keyword, value, message", [
    ("agent_mark", "Z", "agent_mark must be one of"),
    ("illegal_action", "skip", "illegal_action must be one of"),
    ("render_mode", "human?", "render_mode must be one of"),
    ("start", "middle", "start must be one of"),
    ("start_probability", 1.5, r"start_probability must be a number in \[0, 1\]"),
    ("rows", True, "rows must be an integer"),
])
@pytest.mark.parametrize("make", [TicTacToeEnv, TicTacToeVectorEnv])
def test_both_envs_refuse_a_bad_keyword_alike(make, keyword, value, message):
    with pytest.raises(ValueError, match=message):
        make(**{keyword: value})


def test_the_vector_env_renders_only_text():
    with pytest.raises(ValueError, match=r"render_mode must be one of \[None, 'ansi'\]"):
        TicTacToeVectorEnv(render_mode="rgb_array")
    assert TicTacToeEnv(render_mode="rgb_array").render_mode == "rgb_array"


def test_options_are_frozen():
    with pytest.raises(AttributeError):
        TicTacToeEnv().options.rows = 4
