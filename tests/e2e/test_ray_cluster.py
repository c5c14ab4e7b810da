"""The documented Ray cluster recipe (docs/agents.md, "A Ray cluster"), on Ray's own multi-node
test cluster: a head and a second node of one CPU each, started as processes on this machine,
and a smoke-sized ``train.py --algo alphazero --workers 2 --ray-address HEAD`` joining it as the
driver. Both actors need a whole CPU, so they can only run one on each node; the test checks
that they did, from the node each actor reports. Then a node that dies mid-run: one line, exit 4,
the last checkpoint kept. About 50 s on 2 busy cores, most of it the nodes starting."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from agents.alphazero import workers
from agents.alphazero.workers import BOUNDED_CONNECT, RayPlayer

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow


@pytest.fixture
def cluster(monkeypatch):
    from ray.cluster_utils import Cluster

    for name, value in BOUNDED_CONNECT.items():  # as connect() sets them; undone afterwards
        monkeypatch.setenv(name, value)
    nodes = Cluster(initialize_head=True,
                    head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        nodes.add_node(num_cpus=1)
        nodes.wait_for_nodes()
        yield nodes
    finally:
        nodes.shutdown()


def test_a_run_on_a_two_node_cluster_plays_on_both_nodes(cluster, monkeypatch, tmp_path):
    import train

    seen: list[str] = []
    close = RayPlayer.close

    def noting_nodes(player: RayPlayer) -> None:
        def node(_actor: object) -> str:
            return ray.get_runtime_context().get_node_id()

        seen.extend(ray.get([actor.__ray_call__.remote(node) for actor in player.actors]))
        close(player)

    monkeypatch.setattr(RayPlayer, "close", noting_nodes)
    assert train.main(["--algo", "alphazero", "--board", "3x3x3", "--workers", "2",
                       "--ray-address", cluster.address, "--episodes", "8", "--eval-every", "8",
                       "--games", "2", "--no-progress", "--out", str(tmp_path)]) == 0
    (folder,) = tmp_path.iterdir()
    results = json.loads((folder / "results.json").read_text())
    assert results["config"]["workers"] == 2 and results["config"]["games_played"] == 8
    assert (folder / "model.npz").is_file()
    nodes = {node.node_id for node in [cluster.head_node, *cluster.worker_nodes]}
    assert len(nodes) == 2 and sorted(seen) == sorted(nodes)  # one actor on each node
    assert not ray.is_initialized() and not workers._started_here  # the driver left the cluster


def test_a_node_that_dies_mid_run_ends_it_in_one_line_keeping_its_checkpoint(
        cluster, monkeypatch, tmp_path, capsys):
    import train

    play, rounds, gone = RayPlayer.__call__, [], []

    def losing_a_node(player: RayPlayer, net: object, games: int, upcoming: int = 0,
                      aim: object = None) -> object:
        rounds.append(games)
        if len(rounds) == 2:  # after the first round's checkpoint
            node = next(iter(cluster.worker_nodes))
            gone.append(node.node_id)
            cluster.remove_node(node)
        return play(player, net, games, upcoming, aim)

    monkeypatch.setattr(RayPlayer, "__call__", losing_a_node)
    assert train.main(["--algo", "alphazero", "--board", "3x3x3", "--workers", "2",
                       "--ray-address", cluster.address, "--episodes", "24",
                       "--games-per-round", "2", "--eval-every", "4", "--games", "2",
                       "--no-progress", "--out", str(tmp_path)]) == 4
    (folder,) = tmp_path.iterdir()
    # Round 2 was sent ahead during round 1: it may have ended before the node went, and then
    # round 3, sent to the dead actor, is the first to fail.
    assert len(rounds) in (2, 3) and (folder / "checkpoint.npz").is_file()
    assert not (folder / "results.json").exists()
    (said,) = capsys.readouterr().err.strip().splitlines()
    assert said.startswith("train.py: error: --workers: a self-play actor died (The actor died "
                           f"because its node has died. Node Id: {gone[0]}")
    assert said.endswith(f"); Ray does not restart it: {folder} keeps its last checkpoint; "
                         f"train.py --resume {folder} continues the run")
    assert not ray.is_initialized()
