"""Three KafkaRaftManagers over real sockets on 127.0.0.1 (Kafka's RaftManager, the
KafkaNetworkChannel and the controller listener's SocketServer and ControllerApis): they elect
one leader, and records appended on the leader commit on all three logs. Then the leader is
shut down (it resigns) and the other two elect a new leader that commits on."""
from __future__ import annotations

import io
import threading

import pytest

from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.network.socket_server import SocketServer
from kafka_py.raft.internals.string_serde import StringSerde
from kafka_py.raft.isolation import Isolation
from kafka_py.core.raft.kafka_metadata_log import METADATA_PARTITION
from kafka_py.raft.raft_client import Listener
from kafka_py.core.raft.raft_manager import KafkaRaftManager
from kafka_py.server.api_version_manager import ListenerType, SimpleApiVersionManager
from kafka_py.server.broker_metadata_checkpoint import initialize_log_dirs
from kafka_py.server.controller_apis import ControllerApis
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.kafka_request_handler import KafkaRequestHandlerPool
from kafka_py.core.tools.storage_tool import build_metadata_properties, config_to_log_directories, format_command
from kafka_py.clients.common.utils.time import Time
from tests.integration.broker_harness import free_port, wait_until

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"


class RecordingListener(Listener[str]):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.committed: list[tuple[int, str]] = []

    def handle_commit(self, reader) -> None:
        try:
            for batch in reader:
                with self.lock:
                    self.committed.extend((batch.base_offset + i, r) for i, r in enumerate(batch.records))
        finally:
            reader.close()

    def values(self) -> list[str]:
        with self.lock:
            return [v for _, v in self.committed]


class Node:
    """One controller's raft side: its RaftManager behind the controller listener."""

    def __init__(self, config: KafkaConfig) -> None:
        self.config = config
        meta_properties, _ = initialize_log_dirs(config)
        self.raft_manager = KafkaRaftManager(meta_properties, config, StringSerde(), METADATA_PARTITION,
                                             Time.SYSTEM, f"raft-{config.node_id}", metrics_registry=MetricsRegistry())
        self.listener = RecordingListener()
        self.raft_manager.register(self.listener)
        api_version_manager = SimpleApiVersionManager(ListenerType.CONTROLLER)
        self.socket_server = SocketServer(config, api_version_manager=api_version_manager)
        self.socket_server.startup(start_processing_requests=False, data_plane_listeners=config.controller_listeners)
        apis = ControllerApis(self.socket_server.data_plane_request_channel, None, None, Time.SYSTEM, {}, None,
                              self.raft_manager, config, meta_properties, [], api_version_manager)
        self.handlers = KafkaRequestHandlerPool(config.node_id, self.socket_server.data_plane_request_channel, apis,
                                                Time.SYSTEM, 2)
        self.socket_server.start_processing_requests()
        self.raft_manager.startup()
        self.stopped = False

    @property
    def client(self):
        return self.raft_manager.kafka_raft_client

    def log_values(self) -> list[str]:
        log = self.raft_manager.metadata_log
        records = log.read(0, Isolation.UNCOMMITTED).records
        return [bytes(r.value).decode() for b in records.batches() if not b.is_control_batch for r in b.records()]

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.raft_manager.shutdown()
        self.socket_server.stop_processing_requests()
        self.handlers.shutdown()
        self.socket_server.shutdown()


@pytest.fixture
def quorum(tmp_path):
    ports = [free_port() for _ in range(3)]
    voters = ",".join(f"{i}@127.0.0.1:{port}" for i, port in enumerate(ports, 1))
    nodes: list[Node] = []
    try:
        for node_id, port in enumerate(ports, 1):
            config = KafkaConfig.from_props({
                "process.roles": "controller", "node.id": str(node_id), "controller.quorum.voters": voters,
                "listeners": f"CONTROLLER://127.0.0.1:{port}", "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT", "log.dirs": str(tmp_path / f"n{node_id}"),
                "num.network.threads": "1", "controller.quorum.election.timeout.ms": "500",
                "controller.quorum.fetch.timeout.ms": "1000"})
            format_command(io.StringIO(), config_to_log_directories(config),
                           build_metadata_properties(CLUSTER_ID, config), False)
            nodes.append(Node(config))
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def single_leader(nodes: list[Node]):
    """The node all running nodes agree leads their common epoch, or None."""
    running = [n for n in nodes if not n.stopped]
    views = {n.client.leader_and_epoch() for n in running}
    if len(views) != 1:
        return None
    (view,) = views
    if view.leader_id is None:
        return None
    leader = next((n for n in running if n.config.node_id == view.leader_id), None)
    return leader if leader is not None and leader.client.quorum.is_leader() else None


def append_until_committed(leader: Node, nodes: list[Node], values: list[str]) -> None:
    epoch = leader.client.quorum.epoch()
    offset = leader.raft_manager.schedule_append(epoch, values)
    assert offset is not None and offset < 2 ** 62, "the leader refused the append"
    running = [n for n in nodes if not n.stopped]
    wait_until(lambda: all(set(values) <= set(n.listener.values()) for n in running), 30,
               f"{values} not committed on every node: {[n.listener.values() for n in running]}")


def test_three_raft_managers_elect_and_commit_over_sockets(quorum):
    wait_until(lambda: single_leader(quorum) is not None, 30, "no single leader elected")
    leader = single_leader(quorum)
    followers = [n for n in quorum if n is not leader]
    assert all(f.client.quorum.is_follower() for f in followers)

    append_until_committed(leader, quorum, ["a", "b", "c"])
    # Committed means on disk in every log, in the same offsets.
    offsets = {tuple(n.listener.committed) for n in quorum}
    assert len(offsets) == 1
    for node in quorum:
        assert node.log_values()[:3] == ["a", "b", "c"]

    # The leader resigns on shutdown; the other two elect one of themselves and commit on.
    old_epoch = leader.client.quorum.epoch()
    leader.stop()
    wait_until(lambda: single_leader(quorum) is not None, 30, "no new leader after the old one stopped")
    new_leader = single_leader(quorum)
    assert new_leader is not leader and new_leader.client.quorum.epoch() > old_epoch
    append_until_committed(new_leader, quorum, ["d"])
    for node in quorum:
        if not node.stopped:
            assert node.log_values() == ["a", "b", "c", "d"]
