"""LocalLogManager, after Kafka's LocalLogManagerTest: one leader is elected per epoch,
every manager reads the same commits in the same order, a renounce hands the
leadership on (telling the old leader first), and writes from a node that does not lead
the current epoch are dropped."""
from __future__ import annotations

import threading

import pytest

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.records.topic_record.v0 import TopicRecord
from kafka_py.core.utils.java_limits import LONG_MAX

from tests.metadata.controller.env import LocalLogManagerTestEnv, wait_for


class MockMetaLogManagerListener(MetaLogListener):
    """Kafka's MockMetaLogManagerListener: every callback as a line, in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[str] = []
        self.leader = MetaLogLeader(-1, -1)

    def handle_commits(self, last_offset, messages) -> None:
        with self.lock:
            for m in messages:
                self.events.append(f"COMMIT {m.name}")
            self.events.append(f"LAST_COMMITTED_OFFSET {last_offset}")

    def handle_new_leader(self, leader) -> None:
        with self.lock:
            self.leader = leader
            self.events.append(f"NEW_LEADER {leader.node_id} {leader.epoch}")

    def handle_renounce(self, epoch) -> None:
        with self.lock:
            self.events.append(f"RENOUNCE {epoch}")

    def snapshot(self) -> list[str]:
        with self.lock:
            return list(self.events)


def record(name: str) -> ApiMessageAndVersion:
    return ApiMessageAndVersion.of(TopicRecord(name=name, topic_id=None))


@pytest.fixture
def env():
    env = LocalLogManagerTestEnv(3)
    listeners = []
    for manager in env.log_managers:
        listener = MockMetaLogManagerListener()
        manager.register(listener)
        listeners.append(listener)
    env.listeners = listeners
    yield env
    env.close()


def current_leader(env) -> MetaLogLeader:
    wait_for(lambda: all(m.leader().node_id >= 0 for m in env.log_managers), "a leader")
    leader = env.shared.leader()
    wait_for(lambda: all(m.leader() == leader for m in env.log_managers), "all see the leader")
    return leader


def test_one_leader_and_identical_commit_streams(env):
    leader = current_leader(env)
    manager = env.log_managers[leader.node_id]
    offsets = [manager.schedule_write(leader.epoch, [record(f"t{i}"), record(f"u{i}")])
               for i in range(5)]
    assert offsets == sorted(offsets) and len(set(offsets)) == 5
    wait_for(lambda: all(f"LAST_COMMITTED_OFFSET {offsets[-1]}" in l.snapshot()
                         for l in env.listeners), "every listener reads the commits")
    streams = [l.snapshot() for l in env.listeners]
    assert streams[0] == streams[1] == streams[2]
    commits = [e for e in streams[0] if e.startswith("COMMIT")]
    assert commits == [f"COMMIT {p}{i}" for i in range(5) for p in ("t", "u")]


def test_writes_of_a_non_leader_are_dropped(env):
    leader = current_leader(env)
    follower = env.log_managers[(leader.node_id + 1) % 3]
    end = env.shared.end_offset()
    assert follower.schedule_write(leader.epoch, [record("x")]) == LONG_MAX
    leader_manager = env.log_managers[leader.node_id]
    assert leader_manager.schedule_write(leader.epoch - 1, [record("x")]) == LONG_MAX
    assert env.shared.end_offset() == end


def test_renounce_hands_leadership_on(env):
    leader = current_leader(env)
    old = env.log_managers[leader.node_id]
    old.renounce(leader.epoch + 7)  # not the current epoch: ignored
    assert env.shared.leader() == leader
    old.renounce(leader.epoch)
    new_leader = env.shared.leader()
    assert new_leader.epoch == leader.epoch + 2 and new_leader.node_id >= 0
    old_listener = env.listeners[leader.node_id]
    wait_for(lambda: f"NEW_LEADER {new_leader.node_id} {new_leader.epoch}"
             in old_listener.snapshot(), "the old leader hears of its successor")
    events = old_listener.snapshot()
    assert events.index(f"RENOUNCE {leader.epoch}") < events.index(
        f"NEW_LEADER {new_leader.node_id} {new_leader.epoch}")
    assert old.schedule_write(leader.epoch, [record("late")]) == LONG_MAX


def test_max_read_offset_holds_a_node_back(env):
    leader = current_leader(env)
    manager = env.log_managers[leader.node_id]
    reader = env.log_managers[(leader.node_id + 1) % 3]
    reader_listener = env.listeners[(leader.node_id + 1) % 3]
    reader.set_max_read_offset(env.shared.end_offset())
    offset = manager.schedule_write(leader.epoch, [record("held")])
    wait_for(lambda: f"LAST_COMMITTED_OFFSET {offset}" in env.listeners[leader.node_id].snapshot(),
             "the leader reads its write")
    assert "COMMIT held" not in reader_listener.snapshot()
    reader.set_max_read_offset(LONG_MAX)
    wait_for(lambda: "COMMIT held" in reader_listener.snapshot(), "the reader catches up")


def test_duplicate_node_ids_are_refused(env):
    from kafka_py.metadata.metalog.local_log_manager import LocalLogManager
    with pytest.raises(ValueError):
        LocalLogManager(0, env.shared)
