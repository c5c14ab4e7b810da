"""train.py's defaults per algorithm and board (agents/hyperparams/<algo>.yml): what the files
say, how a flag overrides one value, and one line for a bad file."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from agents import hyperparams
from gym_tictactoe import game

ROOT = Path(__file__).resolve().parents[2]
ALGOS = ("q", "alphazero", "dqn", "ppo", "maskable-ppo")


def board(name: str) -> game.Rules:
    return game.rules(*game.parse_board(name))


@pytest.mark.parametrize("algo", ALGOS)
def test_every_file_reads_on_every_kind_of_board(algo):
    for name in ("3x3x3", "4x4x3", "4x4x4", "9x9x5"):
        found = hyperparams.load(algo, board(name))
        assert set(found.values) == set(hyperparams.schema_of(algo))
        assert found.entry in (name, "default")


def test_the_default_entries_are_the_defaults_train_py_had():
    from agents import EXPLORING_STARTS
    from agents.alphazero.training import AlphaZeroSettings
    from agents.run.alphazero import flat_settings
    from agents.run.config import EPISODES, TIMESTEPS
    from agents.tabular.focus import ALPHA_EPISODES
    from agents.tabular.q_learning import TRAINING_OPPONENT

    q = hyperparams.load("q", game.TICTACTOE).values
    assert q == {"episodes": EPISODES, "n_envs": None, "eval_every": None,
                 "opponent": TRAINING_OPPONENT, **EXPLORING_STARTS, "focus_share": 0.0,
                 "back_share": 0.0, "forget": False, "alpha_end": None,
                 "alpha_episodes": ALPHA_EPISODES}
    zero = hyperparams.load("alphazero", game.TICTACTOE).values
    defaults = flat_settings(AlphaZeroSettings())
    defaults.pop("start_probability")  # train.py's is EXPLORING_STARTS' (settings_of)
    assert zero["start_probability"] == EXPLORING_STARTS["start_probability"]
    assert {key: zero[key] for key in defaults} == defaults
    assert zero["episodes"] == EPISODES and zero["minutes"] is None and zero["device"] == "cpu"
    sb3 = pytest.importorskip("agents.sb3")
    for algo in ("dqn", "ppo", "maskable-ppo"):
        values = hyperparams.load(algo, game.TICTACTOE).values
        assert values["timesteps"] == TIMESTEPS and values["n_envs"] == sb3.N_ENVS[algo]
        assert {k: values[k] for k in sb3.ENV_OPTIONS[algo]} == sb3.ENV_OPTIONS[algo]


@pytest.mark.parametrize(("name", "result"), [("4x4x3", "q_perfect_4x4x3_focus_seed0.json"),
                                              ("4x4x4", "q_perfect_4x4x4_long_seed0.json")])
def test_q_on_4x4_uses_the_settings_that_reached_perfect_play(name, result):
    recorded = json.loads((ROOT / "benchmarks" / "results" / result).read_text())
    words = shlex.split(recorded["command"])
    values = hyperparams.load("q", board(name)).values
    assert values["n_envs"] == recorded["batch"]
    assert values["eval_every"] == int(words[words.index("--eval-every") + 1])
    assert values["opponent"] == recorded["opponent"]
    assert values["start_probability"] == recorded["env_options"]["start_probability"]
    focus = recorded["focus"]
    assert (values["focus_share"], values["back_share"]) == (focus["share"], focus["back_share"])
    assert values["forget"] == focus.get("forget", False)
    schedule = recorded["alpha_schedule"]
    assert (values["alpha_end"], values["alpha_episodes"]) == (schedule["end"],
                                                               schedule["episodes"])
    assert values["episodes"] > recorded["perfect_at_episodes"]


def test_train_py_on_4x4x3_takes_its_entry_and_a_flag_overrides_one_value(tmp_path):
    from train import parse_args

    config = parse_args(["--board", "4x4x3", "--out", str(tmp_path)])
    assert (config.episodes, config.n_envs, config.eval_every) == (50_000_000, 4096, 2_000_000)
    focus = config.focus
    assert (focus.share, focus.back_share, focus.forget, focus.alpha_end,
            focus.alpha_episodes) == (0.5, 0.2, False, 0.01, 40_000_000)
    assert config.hyperparams["entry"] == "4x4x3" and config.hyperparams["from_flags"] == []
    assert config.hyperparams["file"] == "agents/hyperparams/q.yml"
    config = parse_args(["--board", "4x4x3", "--focus-share", "0.3", "--out", str(tmp_path)])
    assert (config.focus.share, config.focus.back_share) == (0.3, 0.2)
    assert config.hyperparams["from_flags"] == ["focus_share"]
    assert config.hyperparams["values"]["focus_share"] == 0.3


def test_flags_that_turn_a_setting_off_drop_the_file_values_that_refine_it(tmp_path):
    from train import parse_args

    empty = parse_args(["--board", "4x4x3", "--start", "empty", "--out", str(tmp_path)])
    assert empty.focus.share == 0.0 and empty.focus.alpha_end == 0.01
    assert empty.hyperparams["values"]["start_probability"] is None
    kept = parse_args(["--board", "4x4x4", "--no-forget", "--out", str(tmp_path)])
    assert kept.focus.forget is False and kept.focus.share == 0.5
    unaimed = parse_args(["--board", "4x4x4", "--focus-share", "0", "--back-share", "0",
                          "--out", str(tmp_path)])
    assert unaimed.focus.forget is False


def test_a_flag_that_conflicts_with_the_file_says_where_the_other_value_came_from(
        tmp_path, capsys):
    from train import parse_args

    with pytest.raises(SystemExit) as stop:
        parse_args(["--board", "4x4x3", "--focus-share", "0.9", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert "agents/hyperparams/q.yml" in capsys.readouterr().err


def test_3x3_keeps_the_defaults_it_had(tmp_path):
    from agents.tabular.q_learning import TRAINING_OPPONENT
    from train import parse_args

    config = parse_args(["--out", str(tmp_path)])
    assert config.focus is None and config.n_envs is None and config.eval_every == 1000
    assert config.episodes == 200_000 and config.opponent == TRAINING_OPPONENT
    assert config.start == "random" and config.start_probability == 0.75


def test_alphazero_on_4x4_trains_90_minutes_aimed_and_annealed(tmp_path):
    from train import parse_args

    config = parse_args(["--algo", "alphazero", "--board", "4x4x4", "--out", str(tmp_path)])
    assert (config.episodes, config.minutes, config.eval_minutes) == (None, 90.0, 7.5)
    assert config.alphazero["simulations"] == 32 and config.device == "cpu"
    assert config.alphazero["learning_rate_end"] == 0.0002
    assert config.focus is not None
    assert (config.focus.share, config.focus.back_share) == (0.5, 0.2)
    # 3x3 takes the default entry: uniform starts, a fixed rate
    config = parse_args(["--algo", "alphazero", "--out", str(tmp_path)])
    assert config.focus is None and "learning_rate_end" not in config.alphazero
    config = parse_args(["--algo", "alphazero", "--board", "4x4x4", "--episodes", "5000",
                         "--minutes", "1", "--out", str(tmp_path)])
    assert (config.episodes, config.minutes) == (5000, 1.0)
    # --minutes alone is a budget of training time only: the file's games do not apply
    config = parse_args(["--algo", "alphazero", "--minutes", "1", "--out", str(tmp_path)])
    assert (config.episodes, config.minutes) == (None, 1.0)
    assert parse_args(["--algo", "alphazero", "--out", str(tmp_path)]).episodes == 200_000


# --- bad files: one line naming the file, the entry, the key and what is allowed -----------

GOOD_Q = (ROOT / "agents" / "hyperparams" / "q.yml").read_text()


def bad_file(tmp_path: Path, text: str) -> str:
    (tmp_path / "q.yml").write_text(text)
    with pytest.raises(ValueError) as error:
        hyperparams.load("q", game.TICTACTOE, tmp_path)
    message = str(error.value)
    assert "\n" not in message and "q.yml" in message
    return message


def test_a_missing_key_names_it_and_every_key_the_default_entry_gives(tmp_path):
    message = bad_file(tmp_path, GOOD_Q.replace("  forget: false", ""))
    assert "entry default" in message and "'forget' is missing" in message
    assert "focus_share, back_share, forget" in message


def test_an_unknown_key_names_it_and_the_keys_allowed(tmp_path):
    message = bad_file(tmp_path, GOOD_Q + "3x4x3:\n  focus_shar: 0.5\n")
    assert "entry 3x4x3" in message and "unknown key 'focus_shar'" in message
    assert "allowed: episodes, n_envs" in message


@pytest.mark.parametrize(("line", "said"), [
    ("  episodes: 1e6", "episodes must be an integer >= 1; got '1e6'"),
    ("  episodes: true", "episodes must be an integer >= 1; got True"),
    ("  start_probability: 2", "start_probability must be a number in [0, 1]"),
    ("  forget: 1", "forget must be True or False; got 1"),
    ("  start: middle", "start must be one of ['empty', 'random']"),
    ("  opponent: 3", "opponent must be an opponent spec"),
    ("  opponent: grandmaster", "unknown opponent 'grandmaster'"),
])
def test_a_value_of_the_wrong_kind_says_what_is_allowed(tmp_path, line, said):
    message = bad_file(tmp_path, GOOD_Q + "4x4x3:\n" + line + "\n")
    assert "entry 4x4x3" in message and said in message


@pytest.mark.parametrize(("text", "said"), [
    ("- 1\n- 2\n", "must map 'default'"),
    ("default: [1\n", "not valid YAML"),
    (GOOD_Q + "4x4:\n  episodes: 5\n", "write the board as '4x4x4'"),
    (GOOD_Q + "big:\n  episodes: 5\n", "entry 'big' is neither 'default' nor a board"),
    (GOOD_Q + "4x4x3: 5\n", "must be a mapping of KEY: VALUE"),
])
def test_a_file_of_the_wrong_shape_is_one_line(tmp_path, text, said):
    assert said in bad_file(tmp_path, text)


def test_a_missing_or_huge_file_is_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"q\.yml: cannot be read: no hyperparameter file"):
        hyperparams.load("q", game.TICTACTOE, tmp_path)
    (tmp_path / "q.yml").write_text("#" * (hyperparams.MAX_BYTES + 1))
    with pytest.raises(ValueError, match="more than the"):
        hyperparams.load("q", game.TICTACTOE, tmp_path)


def test_the_files_ship_in_the_package():
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)
    assert project["tool"]["setuptools"]["package-data"]["agents.hyperparams"] == ["*.yml"]
    assert any(r.startswith("pyyaml") for r in project["project"]["dependencies"])
    for algo in ALGOS:
        assert hyperparams.path_of(algo).is_file()


# --- --device ------------------------------------------------------------------------------

def test_device_is_parsed_resolved_and_recorded(tmp_path):
    from train import parse_args

    config = parse_args(["--algo", "alphazero", "--device", "cpu", "--out", str(tmp_path)])
    assert config.device == "cpu" and config.hyperparams["values"]["device"] == "cpu"
    assert config.hyperparams["from_flags"] == ["device"]
    assert parse_args(["--algo", "dqn", "--out", str(tmp_path)]).device == "cpu"


def test_auto_picks_cuda_only_where_torch_finds_a_gpu():
    from agents.run.arguments import resolve_device

    assert resolve_device("auto", lambda: True) == "cuda"
    assert resolve_device("auto", lambda: False) == "cpu"
    assert resolve_device(None, lambda: True) == "cpu"
    with pytest.raises(ValueError, match="--device cuda: torch finds no CUDA GPU"):
        resolve_device("cuda", lambda: False)


def test_on_this_machine_auto_is_cpu_and_cuda_is_refused_in_one_line(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    from train import parse_args

    assert parse_args(["--algo", "ppo", "--device", "auto", "--out", str(tmp_path)]).device \
        == "cpu"
    with pytest.raises(SystemExit) as stop:
        parse_args(["--algo", "alphazero", "--device", "cuda", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        " error: --device cuda: torch finds no CUDA GPU on this machine "
        "(torch.cuda.is_available() is False); use --device cpu or auto")


def test_device_is_refused_for_tabular_q(tmp_path, capsys):
    from train import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--device", "cpu", "--out", str(tmp_path)])
    assert "--device applies to --algo alphazero and the SB3" in capsys.readouterr().err
