"""DelayedElectLeader in the replica manager's ElectLeader purgatory, over a real ReplicaManager
and MetadataCache: an ElectLeaders answer waits until the metadata cache shows the leaders the
controller elected, keeps the errors the controller gave, and times the rest out."""
from __future__ import annotations

import queue

import pytest

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_elect_leader import DelayedElectLeader
from kafka_py.server.delayed_operation_key import TopicPartitionOperationKey
from tests.server.test_replica_manager import Broker, um_request

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
GONE = TopicPartition("gone", 0)
WAIT_S = 10.0


@pytest.fixture
def broker(tmp_path):
    b = Broker(str(tmp_path / "logs"))
    yield b
    b.close()


def show_leaders(broker: Broker, leaders: dict[TopicPartition, int]) -> None:
    """An UpdateMetadata from the controller naming these leaders, as KafkaApis handles it."""
    topics: dict = {}
    for tp, leader in leaders.items():
        topics.setdefault(tp.topic, []).append((tp.partition, leader, (0, 1)))
    broker.metadata_cache.update_metadata(0, um_request(topics))
    for tp in leaders:
        broker.rm.try_complete_election(TopicPartitionOperationKey.from_topic_partition(tp))


def watch(broker: Broker, expected: dict[TopicPartition, int], failures: dict[TopicPartition, ApiError],
          delay_ms: int = 30_000) -> queue.Queue:
    answers: queue.Queue = queue.Queue()
    delayed = DelayedElectLeader(delay_ms, expected, failures, broker.rm, answers.put)
    keys = [TopicPartitionOperationKey.from_topic_partition(tp) for tp in expected]
    broker.rm.delayed_elect_leader_purgatory.try_complete_else_watch(delayed, keys)
    return answers


def test_answers_once_every_expected_leader_is_in_the_metadata_cache(broker):
    show_leaders(broker, {T0: 0, T1: 0})
    gone = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
    answers = watch(broker, {T0: 1, T1: 1}, {GONE: gone})
    assert answers.empty() and broker.rm.has_delayed_election_operations

    show_leaders(broker, {T0: 1, T1: 0})  # one of the two elections is known here
    assert answers.empty()
    show_leaders(broker, {T1: 1})
    assert answers.get(timeout=WAIT_S) == {T0: ApiError.NONE, T1: ApiError.NONE, GONE: gone}
    assert not broker.rm.has_delayed_election_operations


def test_already_visible_leaders_answer_at_once(broker):
    show_leaders(broker, {T0: 1})
    answers = watch(broker, {T0: 1}, {})
    assert answers.get_nowait() == {T0: ApiError.NONE}


def test_a_leader_never_shown_times_out_and_the_others_keep_their_answers(broker):
    show_leaders(broker, {T0: 1, T1: 0})
    not_needed = ApiError(Errors.ELECTION_NOT_NEEDED)
    answers = watch(broker, {T0: 1, T1: 1}, {GONE: not_needed}, delay_ms=50)
    assert answers.get(timeout=WAIT_S) == {T0: ApiError.NONE, T1: ApiError(Errors.REQUEST_TIMED_OUT),
                                           GONE: not_needed}
