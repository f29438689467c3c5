"""A partition that a reassignment moves off a broker leaves nothing of itself there.

Broker 0 runs in this process (tests/integration/in_process_state.py), brokers 1 and 2 are
broker processes of the same cluster (real ZooKeeper; broker 1 starts first and is the
controller, so that broker 0 holds no controller state). Each test gives broker 0 a replica
of a compacted partition (small segments, so that broker 0's cleaner cleans it and its
cleaner-offset-checkpoint names it), produces to it with an idempotent acks=all producer,
moves it to brokers [1, 2] with bin/kafka-reassign-partitions.sh under a replication
throttle, and runs ``--verify`` once the move completed, which clears the throttle. Then,
once broker 0 dropped the partition and its ``-delete`` directory, and its checkpoint files
no longer name it, the garbage collector's objects are walked (tests/leak_finder.py):
nothing but the metadata cache's view of the cluster may still name the partition's topic.

* a follower moved away: [1, 0] -> [1, 2]; broker 0's replica fetcher and its fetch
  session to broker 1 had the partition;
* a leadership moved away: [0, 1] -> [1, 2] removes the leader; a consumer and broker 1's
  follower read from broker 0 in fetch sessions, and their long polls and the producer's
  acks=all wait in its purgatories; once moved, a full fetch of the partition from broker
  0 (a client with stale metadata) makes no session there.
"""
from __future__ import annotations

import json
import subprocess
import uuid

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.server.kafka_server import KafkaServer
from tests.integration.broker_harness import ROOT, BrokerProcess, RawClient, unique_chroot, wait_until
from tests.integration.in_process_state import (ClientWorker, checkpoint_lines_of, in_process_broker, log_dirs_of,
                                                reachable_from)
from tests.leak_finder import persistent_holders

WAIT = 60
RECORDS = 40
# small segments and any dirt cleanable: the cleaner cleans the partition at once
COMPACTED = ["cleanup.policy=compact", "segment.bytes=1024", "min.cleanable.dirty.ratio=0.01"]


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("moved")
    others = {i: BrokerProcess(tmp_path_factory.mktemp(f"moved-broker{i}-"), zookeeper.connect_string, chroot, i)
              for i in (1, 2)}
    try:
        others[1].start()
        others[2].start(wait=False)
        with in_process_broker(f"{zookeeper.connect_string}{chroot}", tmp_path_factory.mktemp("moved-broker0-"),
                               overrides={"replica.high.watermark.checkpoint.interval.ms": "200",
                                          "log.cleaner.backoff.ms": "100",
                                          "offsets.topic.replication.factor": "1"}) as server:
            others[2].wait_started()
            assert server.zk_client.get_controller_id() == 1
            wait_until(lambda: all(server.metadata_cache.has_alive_broker(i) for i in (1, 2)), WAIT,
                       "broker 0 does not know brokers 1 and 2")
            yield server, others
    finally:
        for broker in others.values():
            if broker.running:
                broker.stop()


def _reassign(server: KafkaServer, others: dict[int, BrokerProcess], tmp_path, topic: str,
              target: list[int]) -> None:
    """Move ``topic``-0 to ``target`` with the tool and a throttle; once done, ``--verify``."""
    plan = tmp_path / f"{topic}.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": target}]}))

    def tool(*args: str) -> str:
        r = subprocess.run([str(ROOT / "bin" / "kafka-reassign-partitions.sh"), "--bootstrap-server",
                            others[1].bootstrap, "--reassignment-json-file", str(plan), *args],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    assert "Successfully started partition reassignment" in tool("--execute", "--throttle", "100000000")
    # broker 0 has a current replica: the throttle names it on the leader side
    wait_until(lambda: server.quota_managers.leader.throttled_partitions(topic) is not None, WAIT,
               "broker 0 did not take the replication throttle in")

    def completed() -> bool:
        [assignment] = server.zk_client.get_full_replica_assignment_for_topics([topic]).values()
        return (list(assignment.replicas) == target and not assignment.adding_replicas
                and not assignment.removing_replicas)

    wait_until(completed, WAIT, f"{topic}-0 was not moved to {target}", interval=0.2)
    verified = tool("--verify")
    assert f"Reassignment of partition {topic}-0 is complete." in verified, verified


def _dropped(server: KafkaServer, topic: str, marker: str) -> bool:
    """Broker 0 no longer hosts the partition, removed its directory and rewrote its
    checkpoint files without it, and took the replication throttle off."""
    tp = TopicPartition(topic, 0)
    quotas = server.quota_managers
    return (tp not in server.replica_manager.all_partitions
            and server.log_manager.get_log(tp) is None
            and server.log_manager.get_log(tp, is_future=True) is None
            and not log_dirs_of(server, marker)
            and not checkpoint_lines_of(server, marker)
            and quotas.leader.throttled_partitions(topic) is None
            and quotas.follower.throttled_partitions(topic) is None)


def _check_nothing_left(server: KafkaServer, topic: str, marker: str) -> None:
    wait_until(lambda: _dropped(server, topic, marker), WAIT,
               f"broker 0 still has {topic}-0: dirs {log_dirs_of(server, marker)}, "
               f"checkpoints {checkpoint_lines_of(server, marker)}", interval=0.2)
    assert topic in server.metadata_cache.get_all_topics()  # the topic lives on, elsewhere
    reports = persistent_holders([topic], markers=[marker],
                                 rightly_held=lambda: reachable_from([server.metadata_cache._snapshot]))
    assert not reports, f"broker 0 still holds {topic}:\n" + "\n".join(map(str, reports))


def _wait_cleaned(server: KafkaServer, marker: str) -> None:
    wait_until(lambda: any(line.startswith("cleaner-offset-checkpoint")
                           for line in checkpoint_lines_of(server, marker)), WAIT,
               "broker 0's cleaner did not clean its replica", interval=0.2)


def test_a_follower_moved_away_leaves_nothing_behind(cluster, tmp_path):
    server, others = cluster
    marker = f"follower{uuid.uuid4().hex[:8]}"
    topic = f"{marker}-moved"
    worker = ClientWorker(others[1].bootstrap)
    try:
        worker.call("create-assigned", topic, "1,0", *COMPACTED)
        worker.call("produce", topic, 1, RECORDS)
    finally:
        worker.close()
    tp = TopicPartition(topic, 0)
    wait_until(lambda: server.replica_manager.replica_fetcher_manager.get_fetcher(tp) is not None, WAIT,
               "broker 0 does not follow the partition")
    _wait_cleaned(server, marker)
    del tp

    _reassign(server, others, tmp_path, topic, [1, 2])
    _check_nothing_left(server, topic, marker)


def test_a_leadership_moved_away_leaves_nothing_behind(cluster, tmp_path):
    server, others = cluster
    marker = f"leader{uuid.uuid4().hex[:8]}"
    topic = f"{marker}-moved"
    worker = ClientWorker(others[1].bootstrap)
    try:
        worker.call("create-assigned", topic, "0,1", *COMPACTED)
        worker.call("produce", topic, 1, RECORDS)
        partition = server.replica_manager.online_partition(TopicPartition(topic, 0))
        assert partition is not None and partition.is_leader
        del partition
        # the consumer reads from broker 0, the leader, in a fetch session that stays in
        # broker 0's cache once the consumer has gone
        worker.call("read", topic, 1, 1)
        _wait_cleaned(server, marker)
        _reassign(server, others, tmp_path, topic, [1, 2])
        # the producer and consumer find the new leader
        worker.call("produce", topic, 1)
        worker.call("read", topic, 1, 1)
    finally:
        worker.close()
    # a client whose metadata still names broker 0 asks it for a session: none is made
    error, session_id = _full_fetch(server, topic)
    assert (error, session_id) == (Errors.NOT_LEADER_OR_FOLLOWER, 0)
    _check_nothing_left(server, topic, marker)


def _full_fetch(server: KafkaServer, topic: str) -> tuple[Errors, int]:
    """A Fetch of ``topic``-0 asking broker 0 for a new session: the partition's error and the
    answer's session id."""
    request = build_entity(request_schema(ApiKeys.FETCH, 12), {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": 0, "rack_id": "",
        "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 16}]}],
        "forgotten_topics_data": []})
    with RawClient(server.bound_port(), timeout=30) as client:
        response = client.request(ApiKeys.FETCH, 12, request)
    [answer] = [p for t in response.responses for p in t.partitions]
    return Errors.for_code(answer.error_code), int(response.session_id)
