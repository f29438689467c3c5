"""kafka-reassign-partitions.sh without a cluster: JSON, plans, throttles and texts, as
ReassignPartitionsUnitTest.scala checks them (the tool against a cluster:
tests/integration/test_reassign_partitions.py)."""
from __future__ import annotations

import click
import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.command_line_utils import AdminCommandFailedException, CommandError
from kafka_py.core.admin.reassign_partitions_command import (
    ActiveMoveState,
    CancelledMoveState,
    CompletedMoveState,
    MissingLogDirMoveState,
    MissingReplicaMoveState,
    PartitionMove,
    PartitionReassignment,
    PartitionReassignmentState,
    TopicPartitionReplica,
    calculate_follower_throttles,
    calculate_leader_throttles,
    calculate_moving_brokers,
    calculate_proposed_move_map,
    calculate_reassigning_brokers,
    check_args,
    cur_reassignments_to_string,
    current_partition_replica_assignment_to_string,
    parse_execute_assignment_args,
    parse_generate_assignment_args,
    partition_reassignment_states_to_string,
    replica_move_states_to_string,
)


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def test_partition_reassignment_states_to_string():
    assert partition_reassignment_states_to_string({
        tp("foo", 0): PartitionReassignmentState((1, 2, 3), (1, 2, 3), True),
        tp("foo", 1): PartitionReassignmentState((1, 2, 3), (1, 2, 4), False),
        tp("bar", 0): PartitionReassignmentState((1, 2, 3), (1, 2, 4), False),
        tp("baz", 0): PartitionReassignmentState((1, 2, 3), (1, 2, 4), True),
    }) == "\n".join([
        "Status of partition reassignment:",
        "Reassignment of partition bar-0 is still in progress.",
        "There is no active reassignment of partition baz-0, but replica set is 1,2,3 rather than 1,2,4.",
        "Reassignment of partition foo-0 is complete.",
        "Reassignment of partition foo-1 is still in progress."])


def test_replica_move_states_to_string():
    assert replica_move_states_to_string({
        TopicPartitionReplica("bar", 0, 0): CompletedMoveState("/tmp/kafka-logs0"),
        TopicPartitionReplica("foo", 0, 0): ActiveMoveState("/tmp/kafka-logs0", "/tmp/kafka-logs1",
                                                            "/tmp/kafka-logs1"),
        TopicPartitionReplica("foo", 1, 0): CancelledMoveState("/tmp/kafka-logs0", "/tmp/kafka-logs1"),
        TopicPartitionReplica("quux", 0, 0): MissingReplicaMoveState("/tmp/kafka-logs1"),
        TopicPartitionReplica("quux", 1, 1): ActiveMoveState("/tmp/kafka-logs0", "/tmp/kafka-logs1",
                                                             "/tmp/kafka-logs2"),
        TopicPartitionReplica("quux", 2, 1): MissingLogDirMoveState("/tmp/kafka-logs1"),
    }) == "\n".join([
        "Reassignment of replica bar-0-0 completed successfully.",
        "Reassignment of replica foo-0-0 is still in progress.",
        "Partition foo-1 on broker 0 is not being moved from log dir /tmp/kafka-logs0 to /tmp/kafka-logs1.",
        "Partition quux-0 cannot be found in any live log directory on broker 0.",
        "Partition quux-1 on broker 1 is being moved to log dir /tmp/kafka-logs2 instead of /tmp/kafka-logs1.",
        "Partition quux-2 is not found in any live log dir on broker 1. There is likely an offline log directory "
        "on the broker."])


def test_current_partition_replica_assignment_to_string():
    assert current_partition_replica_assignment_to_string(
        {tp("foo", 1): [1, 2, 3], tp("bar", 0): [7, 8, 9]},
        {tp("foo", 0): [1, 2, 3], tp("foo", 1): [4, 5, 6], tp("bar", 0): [7, 8], tp("baz", 0): [10, 11, 12]},
    ) == "\n".join([
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[7,8],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[4,5,6],"log_dirs":["any","any","any"]}]}',
        "",
        "Save this to use as the --reassignment-json-file option during rollback"])


def test_move_map_and_the_throttles_it_gives():
    def ongoing(replicas, adding, removing):
        return PartitionReassignment(tuple(replicas), tuple(adding), tuple(removing))

    move_map = calculate_proposed_move_map({
        tp("foo", 0): ongoing([1, 2, 3, 4], [4], [3]),
        tp("foo", 1): ongoing([4, 5, 6, 7, 8], [7, 8], [4, 5]),
        tp("foo", 2): ongoing([1, 2, 3, 4], [3, 4], [1, 2]),
        tp("foo", 3): ongoing([1, 2, 3, 4], [3, 4], [1, 2]),
        tp("foo", 4): ongoing([1, 2, 3, 4], [3, 4], [1, 2]),
        tp("foo", 5): ongoing([1, 2, 3, 4], [3, 4], [1, 2]),
    }, {
        tp("foo", 0): [1, 2, 5], tp("foo", 2): [3, 4], tp("foo", 3): [5, 6], tp("foo", 4): [3],
        tp("foo", 5): [3, 4, 5, 6], tp("bar", 0): [1, 2, 3],
    }, {
        tp("foo", 0): [1, 2, 3, 4], tp("foo", 1): [4, 5, 6, 7, 8], tp("foo", 2): [1, 2, 3, 4],
        tp("foo", 3): [1, 2, 3, 4], tp("foo", 4): [1, 2, 3, 4], tp("foo", 5): [1, 2, 3, 4],
        tp("bar", 0): [2, 3, 4], tp("baz", 0): [1, 2, 3],
    })

    def move(sources, destinations):
        return PartitionMove(frozenset(sources), frozenset(destinations))

    assert move_map == {
        "foo": {0: move({1, 2, 3}, {5}), 1: move({4, 5, 6}, {7, 8}), 2: move({1, 2}, {3, 4}),
                3: move({1, 2}, {5, 6}), 4: move({1, 2}, {3}), 5: move({1, 2}, {3, 4, 5, 6})},
        "bar": {0: move({2, 3, 4}, {1})},
    }
    assert calculate_leader_throttles(move_map) == {
        "foo": "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2", "bar": "0:2,0:3,0:4"}
    assert calculate_follower_throttles(move_map) == {
        "foo": "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6", "bar": "0:1"}
    assert calculate_reassigning_brokers(move_map) == {1, 2, 3, 4, 5, 6, 7, 8}
    assert calculate_moving_brokers({TopicPartitionReplica("quux", 0, 0),
                                     TopicPartitionReplica("quux", 1, 2)}) == {0, 2}


def test_parse_execute_assignment_args():
    def refused(text: str) -> str:
        with pytest.raises(AdminCommandFailedException) as e:
            parse_execute_assignment_args(text)
        return str(e.value)

    assert refused('{"version":1,"partitions":[]}') == "Partition reassignment list cannot be empty"
    assert refused('{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[0,1],'
                   '"log_dirs":["any","any"]},{"topic":"foo","partition":0,"replicas":[2,3,4],'
                   '"log_dirs":["any","any","any"]}]}').startswith(
        "Partition reassignment contains duplicate topic partitions")
    assert refused('{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[0,0],'
                   '"log_dirs":["/abc","/def"]},{"topic":"foo","partition":1,"replicas":[2,3],'
                   '"log_dirs":["/abc","/def"]}]}') == (
        "Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 0")
    assert refused('{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],'
                   '"log_dirs":["any"]}]}') == (
        "Size of replicas list List(1, 2) is different from size of log dirs list List(any) for "
        "partition foo-0")
    assert refused('{"version":2,"partitions":[]}') == "Not supported version field value 2"
    assert refused("{invalid_json").startswith("The input string is not a valid JSON")
    assert parse_execute_assignment_args(
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3],'
        '"log_dirs":["any","any","any"]},{"topic":"foo","partition":1,"replicas":[3,4,5]}]}') == (
        {tp("foo", 0): [1, 2, 3], tp("foo", 1): [3, 4, 5]}, {})
    assert parse_execute_assignment_args(
        '{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3],'
        '"log_dirs":["/tmp/a","/tmp/b","/tmp/c"]}]}') == (
        {tp("foo", 0): [1, 2, 3]},
        {TopicPartitionReplica("foo", 0, 1): "/tmp/a", TopicPartitionReplica("foo", 0, 2): "/tmp/b",
         TopicPartitionReplica("foo", 0, 3): "/tmp/c"})


def test_parse_generate_assignment_args():
    assert parse_generate_assignment_args('{"topics":[{"topic":"foo"},{"topic":"bar"}],"version":1}', "5,2,3,4") == (
        [5, 2, 3, 4], ["foo", "bar"])
    with pytest.raises(AdminCommandFailedException, match="Broker list contains duplicate entries: 1"):
        parse_generate_assignment_args('{"topics":[{"topic":"foo"}],"version":1}', "1,1,2")
    with pytest.raises(AdminCommandFailedException, match="List of topics to reassign contains duplicate entries: "
                                                          "foo"):
        parse_generate_assignment_args('{"topics":[{"topic":"foo"},{"topic":"foo"}],"version":1}', "1,2")


def test_cur_reassignments_to_string():
    assert cur_reassignments_to_string({}) == "No partition reassignments found."
    assert cur_reassignments_to_string({
        tp("foo", 1): PartitionReassignment((1, 2, 3), (4, 5), (1, 2)),
        tp("foo", 0): PartitionReassignment((0, 1, 2), (4,), ()),
        tp("bar", 0): PartitionReassignment((2, 3, 0), (), (0,)),
    }) == "\n".join(["Current partition reassignments:",
                     "bar-0: replicas: 2,3,0. removing: 0.",
                     "foo-0: replicas: 0,1,2. adding: 4.",
                     "foo-1: replicas: 1,2,3. adding: 4,5. removing: 1,2."])


def test_one_action_its_arguments_and_nothing_else():
    values = {"bootstrap_server": "localhost:9092", "reassignment_json_file": None, "throttle": -1, "timeout": 10000}
    with pytest.raises(click.UsageError, match="Command must include exactly one action: --generate, --execute, "
                                               "--verify, --cancel, --list"):
        check_args({"execute": True, "verify": True}, values)
    with pytest.raises(click.UsageError, match=r'Missing required argument "\[reassignment-json-file\]"'):
        check_args({"execute": True}, values)
    with pytest.raises(click.UsageError, match=r'Option "\[throttle\]" can\'t be used with action "\[list\]"'):
        check_args({"list": True}, dict(values, throttle=5))
    with pytest.raises(click.UsageError, match="Please specify --bootstrap-server"):
        check_args({"list": True}, dict(values, bootstrap_server=None))
    assert check_args({"execute": True}, dict(values, reassignment_json_file="p.json", throttle=5)) == "execute"


def test_the_zookeeper_mode_takes_generate_execute_and_verify_only():
    values = {"bootstrap_server": None, "zookeeper": "localhost:2181", "reassignment_json_file": "p.json",
              "throttle": -1, "timeout": 10000, "additional": False}
    assert check_args({"execute": True}, dict(values, throttle=5)) == "execute"
    assert check_args({"verify": True}, values) == "verify"
    with pytest.raises(click.UsageError, match=r'Option "\[zookeeper\]" can\'t be used with action "\[cancel\]"'):
        check_args({"cancel": True}, values)
    with pytest.raises(CommandError, match=r'You must specify --bootstrap-server when using "\[timeout\]"'):
        check_args({"execute": True}, dict(values, timeout=5000))
    with pytest.raises(CommandError, match=r'You must specify --bootstrap-server when using "\[additional\]"'):
        check_args({"execute": True}, dict(values, additional=True))
