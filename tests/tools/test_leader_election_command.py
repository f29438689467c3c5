"""kafka-leader-election.sh and kafka-preferred-replica-election.sh without a broker: the
election JSON, the option rules and their messages, the answer's lines; and the deprecated
--zookeeper path against a real ZooKeeper with no controller (the znode it writes, and the
refusal while one is pending)."""
from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner

from kafka_py.clients.common.errors import AdminOperationException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.admin import leader_election_command, preferred_replica_leader_election_command
from kafka_py.core.utils.command_line_utils import AdminCommandFailedException
from kafka_py.core.admin.leader_election_command import (
    ElectionError,
    ElectionOutcome,
    parse_replica_election_data,
    report,
    validate,
)
from kafka_py.core.admin.preferred_replica_leader_election_command import (
    parse_preferred_replica_election_data,
    scala_set,
)

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


# -- the JSON file ----------------------------------------------------------------------------

def test_election_json_names_partitions() -> None:
    text = '{"partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}, {"topic": "u", "partition": 0}]}'
    assert parse_replica_election_data(text) == {T0, T1, U0}
    assert parse_replica_election_data('{"partitions": []}') == set()


@pytest.mark.parametrize("text, message", [
    ("", "Replica election data is empty"),
    ("not json", "Replica election data is empty"),
    ('{"topics": []}', 'Replica election data is missing "partitions" field'),
    ('{"partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 0}]}',
     "Replica election data contains duplicate partitions: t-0"),
    ('{"partitions": [{"topic": "t"}]}',
     'Replica election data: each partition needs a "topic" string and a "partition" integer, got {"topic": "t"}'),
    ('{"partitions": [{"topic": "t", "partition": "0"}]}',
     'Replica election data: each partition needs a "topic" string and a "partition" integer, '
     'got {"topic": "t", "partition": "0"}'),
    ('{"partitions": {"topic": "t"}}',
     'Replica election data: "partitions" must be an array of {"topic": ..., "partition": ...}'),
])
def test_bad_election_json(text: str, message: str) -> None:
    with pytest.raises(AdminOperationException) as e:
        parse_replica_election_data(text)
    assert str(e.value) == message


def test_preferred_replica_json_has_its_own_wording() -> None:
    with pytest.raises(AdminOperationException, match="^Preferred replica election data is empty$"):
        parse_preferred_replica_election_data('{"topics": []}')
    with pytest.raises(AdminOperationException,
                       match="^Preferred replica election data contains duplicate partitions: u-0$"):
        parse_preferred_replica_election_data('{"partitions": [{"topic": "u", "partition": 0}, '
                                              '{"topic": "u", "partition": 0}]}')


# -- option rules -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(bootstrap_server=None, election_type=None), "Missing required option(s): election-type, bootstrap-server"),
    (dict(election_type=None), "Missing required option(s): election-type"),
    (dict(all_topic_partitions=False), "One and only one of the following options is required: topic, "
                                       "all-topic-partitions, path-to-json-file"),
    (dict(topic="t", partition=0), "One and only one of the following options is required: topic, "
                                   "all-topic-partitions, path-to-json-file"),
    (dict(all_topic_partitions=False, topic="t"), "Missing required option(s): partition"),
    (dict(partition=0), "Option partition is only allowed if topic is used"),
])
def test_option_rules(kwargs, message) -> None:
    args = dict(bootstrap_server="localhost:9092", election_type="preferred", topic=None, partition=None,
                all_topic_partitions=True, path_to_json_file=None)
    args.update(kwargs)
    with pytest.raises(AdminCommandFailedException) as e:
        validate(**args)
    assert str(e.value) == message


def test_the_command_refuses_bad_options_before_connecting() -> None:
    runner = CliRunner()
    result = runner.invoke(leader_election_command.main, ["--bootstrap-server", "127.0.0.1:1", "--topic", "t",
                                                          "--election-type", "unclean"])
    assert result.exit_code == 1 and result.stderr == "Missing required option(s): partition\n"
    result = runner.invoke(leader_election_command.main, ["--bootstrap-server", "nohost", "--election-type",
                                                          "unclean", "--all-topic-partitions"])
    assert result.exit_code == 2 and "Please provide valid host:port" in result.stderr
    result = runner.invoke(leader_election_command.main, ["--bootstrap-server", "127.0.0.1:1", "--election-type",
                                                          "clean", "--all-topic-partitions"])
    assert result.exit_code == 2 and "'clean' is not one of 'preferred', 'unclean'" in result.stderr
    # no arguments at all: the help, as Kafka's tools print it, and status 1
    result = runner.invoke(leader_election_command.main, [])
    assert result.exit_code == 1 and "--election-type" in result.stderr and result.stdout == ""


def test_the_deprecated_command_wants_exactly_one_of_its_connections() -> None:
    runner = CliRunner()
    result = runner.invoke(preferred_replica_leader_election_command.main, ["--path-to-json-file", "x.json"])
    assert result.exit_code == 1
    assert result.stdout == ("This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: "
                             "KAFKA-8405\n")
    assert result.stderr.startswith("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided\n")
    result = runner.invoke(preferred_replica_leader_election_command.main,
                           ["--zookeeper", "localhost:2181", "--bootstrap-server", "localhost:9092"])
    assert result.exit_code == 2 and "mutually exclusive" in result.stderr
    result = runner.invoke(preferred_replica_leader_election_command.main,
                           ["--zookeeper", "localhost:2181", "--admin.config", "a.properties"])
    assert result.exit_code == 2 and "only allowed with --bootstrap-server" in result.stderr


# -- the answer's lines -----------------------------------------------------------------------

def test_errors_print_as_java_prints_the_admin_clients_exceptions() -> None:
    assert str(ElectionError(3, "The partition does not exist.")) == (
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.")
    # no message from the broker: the error's default one
    assert str(ElectionError(83, None)) == ("org.apache.kafka.common.errors.EligibleLeadersNotAvailableException: "
                                            "Eligible topic partition leaders are not available.")
    assert str(ElectionError(9999, None)).startswith("org.apache.kafka.common.errors.UnknownServerException")


def test_report_lines() -> None:
    lines: list[str] = []
    outcome = ElectionOutcome.of({T1: None, T0: None, U0: ElectionError(84, None)})
    report(outcome, "PREFERRED", lines.append)
    assert lines == ["Successfully completed leader election (PREFERRED) for partitions t-0, t-1",
                     "Valid replica already elected for partitions u-0"]

    lines.clear()
    failed = ElectionOutcome.of({T0: ElectionError(80, "Failed to elect leader for partition t-0 under strategy "
                                                       "PreferredReplicaPartitionLeaderElectionStrategy"),
                                 T1: ElectionError(84, None)})
    with pytest.raises(AdminCommandFailedException, match=r"^1 replica\(s\) could not be elected$"):
        report(failed, "PREFERRED", lines.append)
    assert lines == [
        "Valid replica already elected for partitions t-1",
        "Error completing leader election (PREFERRED) for partition: t-0: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition "
        "t-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy"]


def test_scala_sets() -> None:
    assert scala_set([]) == "Set()"
    assert scala_set([T1, T0]) == "Set(t-0, t-1)"
    assert scala_set([TopicPartition("t", p) for p in range(5)]) == "HashSet(t-0, t-1, t-2, t-3, t-4)"


# -- the ZooKeeper path -----------------------------------------------------------------------

def test_the_zookeeper_path_writes_the_znode_and_refuses_while_one_is_pending(zookeeper, tmp_path) -> None:
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

    connect = f"{zookeeper.connect_string}/pre-{uuid.uuid4().hex[:8]}"
    zk = KafkaZkClient(connect, session_timeout_ms=10000, name="test")
    try:
        zk.create_topic_assignment("t", None, {T0: [0, 1], T1: [1, 0]})
        json_file = tmp_path / "election.json"
        json_file.write_text(json.dumps({"partitions": [{"topic": "t", "partition": 1},
                                                        {"topic": "gone", "partition": 0}]}))
        runner = CliRunner()
        args = ["--zookeeper", connect, "--path-to-json-file", str(json_file)]
        first = runner.invoke(preferred_replica_leader_election_command.main, args)
        assert first.exit_code == 0, first.output
        assert first.stdout.splitlines()[-3:] == [
            "Created preferred replica election path with t-1",
            "Successfully started preferred replica election for partitions Set(t-1)",
            "Skipping preferred replica leader election for partition gone-0 since it doesn't exist."]
        # Kafka's znode, as a 2.8 controller reads it
        data, _ = zk.get_data_and_version("/admin/preferred_replica_election")
        assert json.loads(data) == {"version": 1, "partitions": [{"topic": "t", "partition": 1}]}

        # no controller carried it out: it is still pending
        second = runner.invoke(preferred_replica_leader_election_command.main, args)
        assert second.exit_code == 1
        assert second.stderr == ("Admin command failed: Preferred replica leader election currently in progress for "
                                 "t-1. Aborting operation\n")
    finally:
        zk.close()
