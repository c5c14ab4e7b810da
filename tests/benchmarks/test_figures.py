"""docs/figures.md's tables are what benchmarks/tables.py makes of the committed results, and the
benchmarks write under runs/ unless told otherwise, with progress lines and the kernels used."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from bench_helpers import benchmark_module

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"


@pytest.fixture(scope="module")
def tables():
    return benchmark_module("tables")


def test_every_table_in_the_docs_is_what_the_results_say(tables):
    names = set()
    for page in tables.PAGES:
        text = page.read_text()
        for match in tables.MARKER.finditer(text):
            names.add(match["name"])
            assert match["body"] == tables.TABLES[match["name"]](tables.RESULTS), match["name"]
        assert tables.render(text, tables.RESULTS) == (text, [])
    assert names <= set(tables.TABLES)  # each marker has a generator
    assert set(tables.TABLES) - names <= {"headline"}  # each generator is used (the front
    # page's summary once its table is between markers)


def test_the_front_page_summary_is_generated_too(tables):
    """docs/index.md and README.md show the same summary table: tables.py's headline."""
    summary = tables.headline(tables.RESULTS)
    assert "| perfect after 16,000\N{EN DASH}33,000 episodes |" in summary
    for page in tables.PAGES[1:]:
        text = page.read_text()
        assert "<!-- table: headline -->" in text and summary in text


def test_the_front_page_states_each_figure_and_the_command_its_file_records(tables):
    summary = tables.headline(tables.RESULTS)
    # PPO seed 1 was perfect at 260,032 timesteps: "within 260k" was not true.
    assert "| perfect after 60,000\N{EN DASH}260,032 timesteps |" in summary
    elo = tables.load(tables.RESULTS, "elo_6x6x4.json")["command"]
    assert elo.startswith("python -m benchmarks elo --board 6x6x4 --model ")
    assert f"`{elo.partition(' --out ')[0]}`" in summary
    old = tables.load(tables.RESULTS, "elo_9x9x5.json")["command"]
    # Written before the runner: shown as the runner's command for the same benchmark.
    assert old.startswith("python benchmarks/elo.py --board 9x9x5 --model ")
    shown = old.partition(" --out ")[0].replace("benchmarks/elo.py", "-m benchmarks elo")
    assert f"`{shown}`" in summary and "benchmarks/elo.py" not in summary
    aimed = ("`python -m benchmarks q_perfect --board 4x4x3 --seed S --eval-every 2000000 "
             "--minutes 14/9/9 --focus-share 0.5 --back-share 0.2 --alpha-end 0.01 "
             "--alpha-episodes 40000000`")
    assert aimed in summary and "`python -m benchmarks q_perfect` |" not in summary


def test_recorded_commands_merge_per_seed_and_keep_apart_what_differs():
    recorded = benchmark_module("commands").recorded
    runs = [{"command": "python b.py --board 4x4x3 --minutes 14 --out /tmp/a.json"},
            {"command": "python b.py --board 4x4x3 --seed 1 --minutes 9 --out x.json"}]
    assert recorded(*runs) == "`python b.py --board 4x4x3 --seed S --minutes 14/9`"
    assert recorded(runs[0]) == "`python b.py --board 4x4x3 --minutes 14`"
    other = {"command": "python b.py --board 4x4x3 --seed 2 --minutes 9 --forget"}
    assert recorded(runs[1], other) == ("`python b.py --board 4x4x3 --seed 1 --minutes 9`; "
                                        "`python b.py --board 4x4x3 --seed 2 --minutes 9 "
                                        "--forget`")


def test_every_measured_table_in_the_docs_is_inside_markers(tables):
    """A table typed outside the markers would escape the check above."""
    outside = tables.MARKER.sub("", tables.DOCS.read_text())
    assert [line for line in outside.splitlines() if line.startswith("|")] == []


def test_check_names_a_stale_table_and_rewriting_fixes_it(tables, tmp_path, capsys):
    docs = tmp_path / "figures.md"
    docs.write_text(tables.DOCS.read_text().replace("| DQN | ", "| DQN | 1 (1 s) | ", 1))
    assert tables.main(["--check", "--docs", str(docs)]) == 1
    assert "'sb3-timesteps'" in capsys.readouterr().err
    assert tables.main(["--docs", str(docs)]) == 0
    assert docs.read_text() == tables.DOCS.read_text()
    assert tables.main(["--check", "--docs", str(docs)]) == 0


def test_a_marker_without_a_generator_is_one_line(tables, tmp_path, capsys):
    docs = tmp_path / "figures.md"
    docs.write_text("<!-- table: typed-by-hand -->\n| a |\n<!-- end table -->\n")
    assert tables.main(["--check", "--docs", str(docs)]) == 2
    err = capsys.readouterr().err
    assert "'typed-by-hand' has no generator" in err and len(err.splitlines()) == 1


def test_the_tables_follow_the_results(tables, tmp_path):
    """A re-measured figure changes the table: nothing in it is typed."""
    results = tmp_path / "results"
    results.mkdir()
    data = json.loads((tables.RESULTS / "q_seeds.json").read_text())
    data["runs"][0].update(perfect_at_episodes=None, train_seconds=12.34)
    (results / "q_seeds.json").write_text(json.dumps(data))
    table = tables.q_seeds(results)
    assert "| episodes to perfect play | not perfect |" in table
    assert "| training time | 12.3 s |" in table


def test_the_elo_table_names_alphazero_by_its_training_and_marks_one_sided_ratings(tables,
                                                                               tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    rating = {"interval": 80.0, "games": 40, "points": 20.0, "bound": ""}
    (results / "elo_6x6x4.json").write_text(json.dumps({
        "command": "python benchmarks/elo.py --board 6x6x4 --minutes 45 --out elo.json",
        "training": {"train_seconds": 2700.0, "train_cpu_seconds": 2640.0,
                     "games_played": 12345},
        "ratings": [{**rating, "name": "random", "elo": 0.0, "points": 0.0, "bound": "upper"},
                    {**rating, "name": "alphabeta", "elo": 500.4},
                    {**rating, "name": "runs/x/model.npz", "elo": 612.0},
                    {**rating, "name": "runs/x/model.npz:simulations=100", "elo": 900.0,
                     "interval": None, "points": 40.0, "bound": "lower"}]}))
    lines = tables.TABLES["elo"](results).splitlines()[2:]
    assert lines == [
        "| 6x6x4 | AlphaZero, a search of 100 simulations (45 min of training, 44 of CPU; "
        "12,345 self-play games) | ≥ 900 | 100% of 40 |",
        "| 6x6x4 | AlphaZero, raw network (45 min of training, 44 of CPU; 12,345 self-play "
        "games) | 612 ± 80 | 50% of 40 |",
        "| 6x6x4 | `alphabeta` | 500 ± 80 | 50% of 40 |",
        "| 6x6x4 | `random` | ≤ 0 ± 80 | 0% of 40 |"]
    assert tables.elo_tables.elo_rows(results) == [[
        "AlphaZero (search of 100 simulations) against `alphabeta` (2,000 positions a move), 6x6x4",
        "+400 Elo on 6x6x4 after 45 min of training",
        "`python -m benchmarks elo --board 6x6x4 --minutes 45`"]]


@pytest.mark.parametrize("name, option", [("training", "out"), ("q_boards", "out"),
                                          ("q_seeds", "out"), ("self_play", "out"),
                                          ("speed", "json")])
def test_benchmarks_write_under_runs_unless_told(name, option):
    default = getattr(benchmark_module(name).parse_args([]), option)
    assert Path(default).parts[:2] == ("runs", "benchmarks")


def test_progress_lines_estimate_the_time_left(capsys):
    progress = benchmark_module("progress")
    assert progress.line(1, 4, 10.0) == "10 s so far, about 30 s left"
    assert progress.line(4, 4, 125.0) == "2 min 5 s so far"
    assert progress.duration(3725) == "1 h 2 min"
    steps = progress.Progress(3)
    steps.step("seed 0: perfect")
    assert capsys.readouterr().err.startswith("[1/3] seed 0: perfect; ")


@pytest.mark.parametrize("name", ["training", "q_boards", "q_seeds", "speed"])
def test_an_output_that_cannot_be_written_stops_before_any_work(name, tmp_path, capsys):
    option = "--json" if name == "speed" else "--out"
    with pytest.raises(SystemExit) as stop:
        benchmark_module(name).main([option, str(tmp_path)])  # a folder, not a file
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"{name}.py: cannot write {tmp_path}: it is a folder\n"


def test_a_benchmark_passes_on_train_pys_checkpoint_lines_and_names_its_error(capsys, tmp_path):
    progress = benchmark_module("progress")
    script = ("print('exact evaluation at 5 episodes (4x4x4)...'); print('the final table'); "
              "print('  optimal-move rate 99.00%, best response: as X draw, as O draw'); "
              "raise SystemExit('train.py: --board: no such board')")
    with pytest.raises(SystemExit) as stop:
        progress.train_results("q_boards.py", ["-c", script], tmp_path, "--seed 3")
    assert str(stop.value) == ("q_boards.py: train.py --seed 3 failed (exit 1): "
                               "train.py: --board: no such board")
    assert capsys.readouterr().err == (
        "  --seed 3: exact evaluation at 5 episodes (4x4x4)...\n"
        "  --seed 3:   optimal-move rate 99.00%, best response: as X draw, as O draw\n")


def test_speed_reports_each_group(monkeypatch, capsys):
    speed = benchmark_module("speed")
    monkeypatch.setattr(speed, "measure", lambda group, *args: {name: [1.0] for name in group})
    monkeypatch.setattr(speed, "solver_seconds", lambda: 1.0)
    monkeypatch.setattr(speed, "import_seconds", lambda: 1.0)
    steps = speed.Progress(speed.steps())
    results = speed.benchmark(True, [], steps)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(results) == speed.steps() - 2  # the solves and alpha-beta follow
    assert lines[0].startswith(f"[1/{speed.steps()}] single env, moves/s; ")


def test_numerics_say_which_kernels_and_threads_ran():
    from agents.run import numerics

    found = numerics.numerics()
    assert found["cpu"] and found["cpus"] == os.cpu_count()
    assert "torch" not in sys.modules or found["torch_cpu_capability"] in (
        "DEFAULT", "AVX2", "AVX512", "NO AVX", "ZVECTOR", "VSX", "SVE256")
    environment = numerics.reproducible_environment({"PATH": "/bin", "MKL_CBWR": "AUTO"})
    assert environment == {"PATH": "/bin", **numerics.REPRODUCIBLE}


def test_training_pins_the_kernels_only_for_its_workers(monkeypatch):
    training = benchmark_module("training")
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    with training._kernels(native=False):
        assert os.environ["ATEN_CPU_CAPABILITY"] == "default"
        assert os.environ["MKL_CBWR"] == "COMPATIBLE"
    assert "ATEN_CPU_CAPABILITY" not in os.environ and os.environ["MKL_CBWR"] == "AUTO"
    with training._kernels(native=True):
        assert os.environ["MKL_CBWR"] == "AUTO"


@pytest.mark.slow
def test_the_default_q_run_reproduces_its_committed_figure(tmp_path):
    """About 3 s (one default train.py run): the seed-0 figure of make train, and what train.py
    records about the machine in every results.json."""
    q_seeds = benchmark_module("q_seeds")
    run = q_seeds.run_seed(0, tmp_path)
    committed = json.loads((BENCHMARKS / "results" / "q_seeds.json").read_text())["runs"][0]
    assert run["perfect_at_episodes"] == committed["perfect_at_episodes"] == 28_000
    assert run["numerics"]["cpu"] and "torch_cpu_capability" not in run["numerics"]  # no torch


@pytest.mark.parametrize(("name", "argv", "message"), [
    ("elo", ["--games", "-5"], "argument --games: expected a positive integer, got '-5'"),
    ("elo", ["--seed", "-1"], "argument --seed: expected a seed"),
    ("elo", ["--key-games", "0"], "argument --key-games: expected a positive integer, got '0'"),
    ("elo", ["--board", "99x99x9"], "argument --board: rows must be an integer from 1 to 15"),
    ("elo", ["--opening", "1000000"], "--opening must be an integer from 0 to 35 on 6x6x4"),
    ("elo", ["--minutes", "-1"], "argument --minutes: value must be a number > 0"),
    ("training", ["--jobs", "0"], "argument --jobs: processes at once must be an integer from 1"),
    ("training", ["--seeds", "0", "-1"], "argument --seeds: expected a seed"),
    ("training", ["--timesteps", "-5"], "argument --timesteps: expected a positive integer"),
    ("q_seeds", ["--seeds", "-1"], "argument --seeds: expected a seed"),
    ("q_seeds", ["--out", "D/"], "argument --out: expected the path of a results file, such as "
                                 "D/results.json; got 'D/'"),
    ("speed", ["--json", "runs/"], "argument --json: expected the path of a results file"),
    ("q_boards", ["--boards", "5x5x4"], "needs a board of at most 16 cells; the 5x5x4 board"),
    ("q_boards", ["--episodes", "-5"], "argument --episodes: expected a positive integer"),
    ("q_boards", ["--seed", "-1"], "argument --seed: expected a seed"),
    ("sb3_boards", ["--boards", "99x99"], "argument --boards: rows must be an integer"),
    ("sb3_boards", ["--eval-every", "0"], "argument --eval-every: expected a positive integer"),
    ("sb3_variants", ["--seed", "-1"], "argument --seed: expected a seed"),
    ("self_play", ["--seeds", "-1"], "argument --seeds: expected a seed"),
    ("alphazero", ["--speed", "99x9"], "argument --speed: rows must be an integer from 1 to 15"),
    ("alphazero", ["--rounds", "0"], "argument --rounds: expected a positive integer"),
    ("alphazero", ["--workers", "0"], "argument --workers: processes at once must be"),
    ("alphazero", ["--search", "0"], "argument --search: the number of simulations must be"),
    ("alphazero", ["--speed", "3x3x3", "--training", "30"],
     "--training goes with --speed BOARD... and --workers N..."),
    ("alphazero", ["--training", "0"], "argument --training: value must be a number > 0"),
    ("q_perfect", ["--minutes", "-1"], "argument --minutes: value must be a number > 0"),
    ("q_perfect", ["--seed", "-1"], "argument --seed: expected a seed"),
])
def test_a_bad_benchmark_flag_is_one_usage_line_before_any_work(name, argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        benchmark_module(name).parse_args(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err.splitlines()[-1], err


@pytest.mark.parametrize("name", ["search_exact", "mcts"])
def test_these_benchmarks_check_their_output_before_any_work(name, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        benchmark_module(name).main(["--out", str(tmp_path)])  # a folder, not a file
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"{name}.py: cannot write {tmp_path}: it is a folder\n"


def test_an_output_the_atomic_writer_would_refuse_stops_before_any_work(tmp_path, capsys):
    pipe = tmp_path / "results.json"
    os.mkfifo(pipe)
    with pytest.raises(SystemExit) as stop:
        benchmark_module("q_seeds").main(["--out", str(pipe)])
    assert stop.value.code == 2
    assert "is not a regular file but a named pipe" in capsys.readouterr().err


def test_make_bench_stops_before_any_work_when_a_peer_it_installed_is_missing(monkeypatch,
                                                                              capsys, tmp_path):
    speed = benchmark_module("speed")
    monkeypatch.setattr(speed, "missing_peers", lambda: ["pgx"])
    monkeypatch.setattr(speed, "benchmark", lambda *args: pytest.fail("measured anyway"))
    assert speed.main(["--require-peers", "--json", str(tmp_path / "s.json")]) == 1
    assert capsys.readouterr().err == ("speed.py: peers not installed: pgx (pip install -e "
                                       "'.[bench]')\n")
    assert "--require-peers" in (Path(__file__).parents[2] / "Makefile").read_text()


def test_a_target_below_its_floor_is_reported_in_words_not_as_a_failure(capsys):
    speed = benchmark_module("speed")
    speed.print_targets([{"target": "a", "value": 2.0, "status": "PASS"},
                         {"target": "b", "value": 0.5, "status": "MISS"},
                         {"target": "c", "value": None, "status": "SKIP"}], [])
    out = capsys.readouterr().out
    assert "MISS" not in out and "below   b" in out and "1 met, 1 below, 1 skipped" in out
