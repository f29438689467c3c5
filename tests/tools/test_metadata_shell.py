"""Tests for the metadata shell (kafka_py/shell/, bin/kafka-metadata-shell.sh), for
``kafka-dump-log.sh --cluster-metadata-decoder`` and for the records' JSON
(kafka_py/metadata/metadata_json_converters.py), over metadata logs written here with the
project's own record classes; tests/integration/test_kraft_metadata_tools.py runs both tools
over the log of a real KRaft node.

After Kafka's shell tests (GlobComponentTest, GlobVisitorTest, LsCommandHandlerTest,
CommandTest, CommandUtilsTest, MetadataNodeTest) where they apply.
"""
from __future__ import annotations

import io
import json
import pathlib
import struct
import subprocess
import uuid

import pytest
from click.testing import CliRunner

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.metadata_json_converters import (
    java_double_to_string,
    message_to_string,
    read_json,
    to_json_string,
    to_pretty_string,
    uuid_to_string,
    write_json,
)
from kafka_py.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_py.metadata.records.config_record.v0 import ConfigRecord
from kafka_py.metadata.records.feature_level_record.v0 import FeatureLevelRecord
from kafka_py.metadata.records.fence_broker_record.v0 import FenceBrokerRecord
from kafka_py.metadata.records.partition_change_record.v0 import PartitionChangeRecord
from kafka_py.metadata.records.partition_record.v0 import PartitionRecord
from kafka_py.metadata.records.producer_ids_record.v0 import ProducerIdsRecord
from kafka_py.metadata.records.quota_record.v0 import EntityData, QuotaRecord
from kafka_py.metadata.records.register_broker_record.v0 import BrokerEndpoint, RegisterBrokerRecord
from kafka_py.metadata.records.remove_topic_record.v0 import RemoveTopicRecord
from kafka_py.metadata.records.topic_record.v0 import TopicRecord
from kafka_py.metadata.records.unfence_broker_record.v0 import UnfenceBrokerRecord
from kafka_py.raft.control_record_utils import (
    LeaderChangeMessage,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    with_leader_change_message,
)
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_py.shell.command_utils import split_path, strip_dot_path_components
from kafka_py.shell.commands import Commands, ErroneousCommandHandler, NoOpCommandHandler
from kafka_py.shell.glob_component import GlobComponent, to_regular_expression
from kafka_py.shell.glob_visitor import GlobVisitor
from kafka_py.shell.interactive_shell import InteractiveShell
from kafka_py.shell.ls_command_handler import ColumnSchema, TargetDirectory, calculate_column_schema, print_targets
from kafka_py.shell.metadata_node import DirectoryNode, NotDirectoryException
from kafka_py.shell.metadata_node_manager import MetadataNodeManager
from kafka_py.shell.metadata_shell import MetadataShell, main as shell_main
from kafka_py.shell.snapshot_file_reader import SnapshotFileReader
from kafka_py.core.tools.dump_log_segments import main as dump_main

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERDE = MetadataRecordSerde()
TOPIC_ID = uuid.UUID("b635bed7-b2c6-44ad-a243-85ae83a4c90c")
GONE_ID = uuid.UUID("541d1510-a9a0-4064-a0d5-5e73f2e434cb")
INCARNATION = uuid.UUID("7f9bc175-c291-490b-92a9-7aafa1a9c42a")


def registration(broker_id: int) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id=broker_id, incarnation_id=INCARNATION, broker_epoch=broker_id * 10,
                                end_points=(BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9092,
                                                           security_protocol=0),),
                                features=(), rack=None)


def partition(topic_id: uuid.UUID, partition_id: int, leader: int = 1) -> PartitionRecord:
    return PartitionRecord(partition_id=partition_id, topic_id=topic_id, replicas=(1, 2), isr=(1, 2),
                           removing_replicas=(), adding_replicas=(), leader=leader, leader_epoch=0,
                           partition_epoch=0)


RECORDS = [
    [registration(1), registration(2)],
    [UnfenceBrokerRecord(id=1, epoch=10), UnfenceBrokerRecord(id=2, epoch=20)],
    [TopicRecord(name="orders", topic_id=TOPIC_ID), partition(TOPIC_ID, 0), partition(TOPIC_ID, 1, leader=2),
     ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value="3600000")],
    [TopicRecord(name="gone", topic_id=GONE_ID), partition(GONE_ID, 0)],
    [ConfigRecord(resource_type=4, resource_name="1", name="log.cleaner.threads", value="2"),
     ConfigRecord(resource_type=4, resource_name="", name="log.retention.ms", value="100"),
     ConfigRecord(resource_type=2, resource_name="orders", name="cleanup.policy", value="compact")],
    [RemoveTopicRecord(topic_id=GONE_ID)],
    [PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, isr=(1,)),
     PartitionChangeRecord(partition_id=1, topic_id=TOPIC_ID, leader=1)],
    [QuotaRecord(entity=(EntityData(entity_type="user", entity_name="alice"),
                         EntityData(entity_type="client-id", entity_name=None)),
                 key="producer_byte_rate", value=1024.0, remove=False),
     ProducerIdsRecord(broker_id=1, broker_epoch=10, producer_ids_end=1000),
     FeatureLevelRecord(name="metadata.version", min_feature_level=1, max_feature_level=1),
     FenceBrokerRecord(id=2, epoch=20)],
]


def metadata_batch(base_offset: int, messages, epoch: int = 1) -> bytes:
    builder = MemoryRecordsBuilder(base_offset=base_offset, partition_leader_epoch=epoch)
    for message in messages:
        value = message if isinstance(message, bytes) else SERDE.serialize(ApiMessageAndVersion.of(message))
        builder.append(1_600_000_000_000, None, value)
    return bytes(builder.build().buffer)


def write_log(directory: pathlib.Path, record_batches=RECORDS, *, base_offset: int = 0,
              leader_change: bool = True, tail: bytes = b"") -> pathlib.Path:
    """A metadata segment: a LEADER_CHANGE control batch, then one batch per list."""
    directory.mkdir(parents=True, exist_ok=True)
    raw = []
    offset = base_offset
    if leader_change:
        raw.append(bytes(with_leader_change_message(offset, 1_600_000_000_000, 1,
                                                    LeaderChangeMessage(1, (1,), (1,))).buffer))
        offset += 1
    for messages in record_batches:
        raw.append(metadata_batch(offset, messages))
        offset += len(messages)
    path = directory / f"{base_offset:020d}.log"
    records = FileRecords.open(path)
    for r in raw:
        records.append(MemoryRecords(r))
    records.flush()
    records.close()
    if tail:
        with open(path, "ab") as f:
            f.write(tail)
    return path


@pytest.fixture
def log_dir(tmp_path) -> pathlib.Path:
    directory = tmp_path / "@metadata-0"
    write_log(directory)
    return directory


def shell_output(path, *command: str) -> str:
    result = CliRunner().invoke(shell_main, ["--snapshot", str(path), *command])
    assert result.exit_code == 0, result.output
    return result.stdout


def interactive(path, lines: str) -> str:
    shell = MetadataShell.Builder().set_snapshot_path(str(path)).build()
    out = io.StringIO()
    try:
        shell.run([], stdin=io.StringIO(lines), stdout=out)
    finally:
        shell.close()
    return out.getvalue()


# -- the records' JSON and toString ----------------------------------------------------------

def test_records_print_as_kafkas_json_converters_and_to_string_print_them():
    topic = TopicRecord(name="orders", topic_id=TOPIC_ID)
    assert uuid_to_string(TOPIC_ID) == "tjW-17LGRK2iQ4Wug6TJDA"
    assert to_json_string(write_json(topic)) == '{"name":"orders","topicId":"tjW-17LGRK2iQ4Wug6TJDA"}'
    assert message_to_string(topic) == "TopicRecord(name='orders', topicId=tjW-17LGRK2iQ4Wug6TJDA)"
    assert message_to_string(registration(1)) == (
        "RegisterBrokerRecord(brokerId=1, incarnationId=f5vBdcKRSQuSqXqvoanEKg, brokerEpoch=10, "
        "endPoints=[BrokerEndpoint(name='PLAINTEXT', host='localhost', port=9092, securityProtocol=0)], "
        "features=[], rack=null)")
    # tagged fields at their default are left out
    change = PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, leader=3)
    assert to_json_string(write_json(change)) == '{"partitionId":0,"topicId":"tjW-17LGRK2iQ4Wug6TJDA","leader":3}'
    config = ConfigRecord(resource_type=2, resource_name="t", name="k", value=None)
    assert to_json_string(write_json(config)) == '{"resourceType":2,"resourceName":"t","name":"k","value":null}'


def test_partition_record_pretty_json_reads_back():
    record = partition(TOPIC_ID, 3)
    text = to_pretty_string(write_json(record))
    assert text == "\n".join([
        "{",
        '  "partitionId" : 3,',
        '  "topicId" : "tjW-17LGRK2iQ4Wug6TJDA",',
        '  "replicas" : [ 1, 2 ],',
        '  "isr" : [ 1, 2 ],',
        '  "removingReplicas" : [ ],',
        '  "addingReplicas" : [ ],',
        '  "leader" : 1,',
        '  "leaderEpoch" : 0,',
        '  "partitionEpoch" : 0',
        "}"])
    assert read_json(json.loads(text), PartitionRecord) == record
    assert to_pretty_string({"a": [{"b": 1}], "c": {}}) == '{\n  "a" : [ {\n    "b" : 1\n  } ],\n  "c" : { }\n}'


@pytest.mark.parametrize("value,text", [(1024.0, "1024.0"), (1e7, "1.0E7"), (0.001, "0.001"), (1e-4, "1.0E-4"),
                                        (-2.5, "-2.5"), (123456.789, "123456.789"), (3.5e20, "3.5E20")])
def test_doubles_print_as_javas_double_to_string(value, text):
    assert java_double_to_string(value) == text


# -- kafka-dump-log.sh --cluster-metadata-decoder --------------------------------------------

def test_dump_log_decodes_metadata_records_and_leader_change(log_dir):
    segment = log_dir / "00000000000000000000.log"
    result = CliRunner().invoke(dump_main, ["--cluster-metadata-decoder", "--files", str(segment)])
    assert result.exit_code == 0, result.output
    records = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert " controlType: LEADER_CHANGE(3) LeaderChange: " \
           '{"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}' in records[0]
    assert records[1].endswith(' payload: {"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,'
                               '"incarnationId":"f5vBdcKRSQuSqXqvoanEKg","brokerEpoch":10,"endPoints":[{"name":'
                               '"PLAINTEXT","host":"localhost","port":9092,"securityProtocol":0}],"features":[],'
                               '"rack":null}}')
    payloads = [json.loads(line.split(" payload: ", 1)[1]) for line in records[1:]]
    assert [p["type"] for p in payloads][:7] == ["REGISTER_BROKER_RECORD", "REGISTER_BROKER_RECORD",
                                                 "UNFENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD", "TOPIC_RECORD",
                                                 "PARTITION_RECORD", "PARTITION_RECORD"]
    assert {"type": "QUOTA_RECORD", "version": 0,
            "data": {"entity": [{"entityType": "user", "entityName": "alice"},
                                {"entityType": "client-id", "entityName": None}],
                     "key": "producer_byte_rate", "value": 1024.0, "remove": False}} in payloads
    assert all(" key: " not in line for line in records)  # metadata records have no key


def test_dump_log_prints_an_error_for_a_record_that_does_not_decode_and_goes_on(tmp_path):
    bad = [b"\x00\x63\x00garbage", b"\x00\x02\x00\x01"]  # unknown api key 99; a truncated TopicRecord
    segment = write_log(tmp_path / "@metadata-0", [RECORDS[0], bad, RECORDS[1]])
    result = CliRunner().invoke(dump_main, ["--cluster-metadata-decoder", "--files", str(segment)])
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert len(lines) == 1 + 2 + 2 + 2  # every record printed, the bad ones too
    assert lines[3].endswith(" payload: Error at 3, skipping. Unknown metadata id 99")
    assert " payload: Error at 4, skipping. " in lines[4]
    assert '"type":"UNFENCE_BROKER_RECORD"' in lines[6]
    assert "the records at offsets 3, 4 could not be decoded as cluster metadata" in result.stderr


def test_dump_log_without_the_decoder_prints_control_records_as_kafka_282(log_dir):
    segment = log_dir / "00000000000000000000.log"
    result = CliRunner().invoke(dump_main, ["--files", str(segment), "--deep-iteration"])
    assert result.exit_code == 0
    assert "controlType: LEADER_CHANGE(3)\n" in result.output
    assert "LeaderChange:" not in result.output


# -- the tree --------------------------------------------------------------------------------

def test_the_tree_as_kafkas_metadata_node_manager_builds_it(log_dir):
    assert shell_output(log_dir, "ls", "/").split() == [
        "brokers", "client-quotas", "configs", "features", "local", "metadataQuorum", "producerIds", "topicIds",
        "topics"]
    assert shell_output(log_dir, "ls", "/topics").split() == ["orders"]  # "gone" was removed
    assert shell_output(log_dir, "ls", "/topics/orders").split() == ["0", "1", "id", "name"]
    assert shell_output(log_dir, "cat", "/topics/orders/id").strip() == "tjW-17LGRK2iQ4Wug6TJDA"
    assert shell_output(log_dir, "ls", "/topicIds").split() == ["tjW-17LGRK2iQ4Wug6TJDA"]
    # the change records applied: ISR of partition 0, a new leader (and epoch) for partition 1
    p0 = json.loads(shell_output(log_dir, "cat", "/topicIds/tjW-17LGRK2iQ4Wug6TJDA/0/data"))
    assert (p0["isr"], p0["leader"], p0["leaderEpoch"], p0["partitionEpoch"]) == ([1], 1, 0, 1)
    p1 = json.loads(shell_output(log_dir, "cat", "/topics/orders/1/data"))
    assert (p1["isr"], p1["leader"], p1["leaderEpoch"], p1["partitionEpoch"]) == ([1, 2], 1, 1, 1)
    assert shell_output(log_dir, "cat", "/brokers/1/isFenced", "/brokers/2/isFenced").split() == ["false", "true"]
    assert shell_output(log_dir, "cat", "/brokers/1/registration").startswith("RegisterBrokerRecord(brokerId=1, ")
    assert shell_output(log_dir, "find", "/configs").splitlines() == [
        "/configs", "/configs/broker", "/configs/broker/1", "/configs/broker/1/log.cleaner.threads",
        "/configs/broker/<default>", "/configs/broker/<default>/log.retention.ms", "/configs/topic",
        "/configs/topic/orders", "/configs/topic/orders/cleanup.policy", "/configs/topic/orders/retention.ms"]
    assert shell_output(log_dir, "cat", "/client-quotas/client-id/<default>/user/alice/producer_byte_rate") \
        == "1024.0\n"
    assert shell_output(log_dir, "cat", "/producerIds/nextBlockStartId") == "1000\n"
    assert json.loads(shell_output(log_dir, "cat", "/features/metadata.version"))["maxFeatureLevel"] == 1
    assert shell_output(log_dir, "cat", "/metadataQuorum/leader") == "MetaLogLeader(nodeId=1, epoch=1)\n"
    assert shell_output(log_dir, "cat", "/metadataQuorum/offset") == "20\n"
    assert shell_output(log_dir, "cat", "/local/version") == "2.8.2\n"


def test_tree_find_and_globs(log_dir):
    assert shell_output(log_dir, "tree", "/brokers/2").splitlines() == [
        "isFenced:", "  true", "registration:",
        "  RegisterBrokerRecord(brokerId=2, incarnationId=f5vBdcKRSQuSqXqvoanEKg, brokerEpoch=20, endPoints="
        "[BrokerEndpoint(name='PLAINTEXT', host='localhost', port=9092, securityProtocol=0)], features=[], "
        "rack=null)"]
    assert shell_output(log_dir, "cat", "/brokers/*/isFenced").split() == ["false", "true"]
    assert shell_output(log_dir, "ls", "/topics/orders/{0,1}").splitlines() == ["0:", "data", "", "1:", "data"]
    assert shell_output(log_dir, "find", "/topics/orders/?").splitlines() == [
        "/topics/orders/?", "/topics/orders/?/data", "/topics/orders/?", "/topics/orders/?/data"]


def test_errors_print_kafkas_messages(log_dir):
    assert shell_output(log_dir, "ls", "/nope") == "ls: /nope: no such file or directory.\n"
    assert shell_output(log_dir, "cat", "/topics") == "cat: /topics: Is a directory\n"
    assert shell_output(log_dir, "cat", "/x") == "cat: /x: No such file or directory.\n"
    assert shell_output(log_dir, "find", "/x") == "find: /x: no such file or directory.\n"
    assert shell_output(log_dir, "tree", "/x") == "tree: /x: No such file or directory.\n"
    assert shell_output(log_dir, "frobnicate") == \
        "invalid choice: 'frobnicate' (choose from 'cat', 'find', 'ls', 'tree')\n"
    # the shell-only commands are not offered on the command line, as in Kafka
    assert shell_output(log_dir, "pwd").startswith("invalid choice: 'pwd'")
    assert shell_output(log_dir, "l") == "invalid choice: 'l': did you mean 'ls'?\n"
    assert shell_output(log_dir, "cat") == "too few arguments\n"


def test_bad_paths_are_errors_with_status_1(tmp_path):
    runner = CliRunner()
    result = runner.invoke(shell_main, ["ls"])
    assert result.exit_code == 1 and result.stderr == "Unexpected error: You must supply the log path via --snapshot\n"
    result = runner.invoke(shell_main, ["--snapshot", str(tmp_path / "missing"), "ls"])
    assert result.exit_code == 1 and result.stderr.startswith("Error: ") and "no such file" in result.stderr
    result = runner.invoke(shell_main, ["--snapshot", str(tmp_path), "ls"])
    assert result.exit_code == 1 and "holds no metadata log segment" in result.stderr


def test_a_torn_tail_and_bad_records_load_what_is_there(tmp_path, caplog):
    bad = [b"\x00\x63\x00"]
    torn = b"\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x40junk"  # a batch header, then too little
    segment = write_log(tmp_path / "@metadata-0", [RECORDS[0], bad, RECORDS[2]], tail=torn)
    assert shell_output(segment, "ls", "/brokers").split() == ["1", "2"]
    assert shell_output(segment, "ls", "/topics").split() == ["orders"]
    assert "unable to read metadata record at offset 3" in caplog.text
    assert "Stopped reading" in caplog.text


def test_a_directory_reads_the_snapshot_then_the_segments_after_it(tmp_path):
    directory = tmp_path / "kraft-logs" / "@metadata-0"
    # segment 0 (offsets 0..5: leader change, 2 registrations, 2 unfences), then segment 5
    write_log(directory, RECORDS[:2])
    write_log(directory, RECORDS[2:4], base_offset=5, leader_change=False)
    assert shell_output(directory, "ls", "/topics").split() == ["gone", "orders"]
    # the log dir that holds @metadata-0 will do too
    assert shell_output(directory.parent, "ls", "/topics").split() == ["gone", "orders"]
    # a snapshot at offset 5 (its records stand for everything before) and a segment
    # that still holds records below it, which must not be applied twice or at all
    snapshot = directory / "00000000000000000005-0000000001.checkpoint"
    records = FileRecords.open(snapshot)
    # Kafka 3.0's snapshot header and footer control batches, whose type ids (3, 4) a
    # segment of 2.8.2's numbering would take for LEADER_CHANGE and an unknown type
    for type_id, value in ((3, SnapshotHeaderRecord(0, 1_600_000_000_000).serialize()),
                           (4, SnapshotFooterRecord(0).serialize())):
        control = SimpleRecord(struct.pack(">hh", 0, type_id), value, timestamp=1_600_000_000_000)
        records.append(MemoryRecords(build_batch([control], base_offset=0, is_control_batch=True)))
        if type_id == 3:
            records.append(MemoryRecords(metadata_batch(0, [registration(7)])))
    records.flush()
    records.close()
    assert shell_output(directory, "ls", "/brokers").split() == ["7"]
    assert shell_output(directory, "ls", "/topics").split() == ["gone", "orders"]
    assert shell_output(snapshot, "ls", "/brokers").split() == ["7"]
    assert shell_output(snapshot, "ls", "/").split() == ["brokers", "local", "metadataQuorum"]
    assert shell_output(snapshot, "ls", "/metadataQuorum").split() == ["offset"]  # no leader from the header


# -- the interactive shell -------------------------------------------------------------------

def test_interactive_shell_driven_through_stdin(log_dir):
    out = interactive(log_dir, "pwd\ncd /topics/orders\npwd\nls\ncd ..\npwd\ncd orders/name\ncd /nope\n"
                               "bogus\nhistory 2\nman cat\ncd\npwd\n")
    prompts = out.split(">> ")
    assert prompts[0] == "Loading...\nStarting...\n[ Kafka Metadata Shell ]\n"
    answers = prompts[1:]
    assert answers[0] == "/\n"
    assert answers[2] == "/topics/orders\n"
    assert answers[3] == "0\n1\nid\nname\n"
    assert answers[5] == "/topics\n"
    assert answers[6] == "cd: orders/name: not a directory.\n"
    assert answers[7] == "cd: /nope: no such directory.\n"
    assert answers[8].startswith("invalid choice: 'bogus' (choose from 'cat', 'cd', 'exit', ")
    assert answers[9] == "    8  bogus\n    9  history 2\n"
    assert answers[10].startswith("cat: Show the contents of metadata nodes.\n\nusage: cat [-h] targets [targets ...]")
    assert answers[12] == "/\n"
    assert answers[-1] == ""  # end of input ends the shell


def test_exit_leaves_the_shell(log_dir):
    with pytest.raises(SystemExit) as e:
        interactive(log_dir, "exit\nls\n")
    assert e.value.code == 0


def test_help_lists_every_command(log_dir):
    out = interactive(log_dir, "help\n")
    assert "Welcome to the Apache Kafka metadata shell." in out
    for command in ("cat", "cd", "exit", "find", "help", "history", "ls", "man", "pwd", "tree"):
        assert f"\n    {command} " in out


# -- the pieces, after Kafka's unit tests ----------------------------------------------------

def test_glob_component():
    assert to_regular_expression("abc") is None
    assert to_regular_expression("*") == "^.*$"
    assert to_regular_expression("a?c") == "^a.c$"
    assert to_regular_expression("{a,b}c") == "^(?:(?:a)|(?:b))c$"
    assert GlobComponent("{foo,bar}").matches("bar")
    assert not GlobComponent("{foo,bar}").matches("baz")
    assert to_regular_expression("$blah*") == "^\\$blah.*$"
    assert GlobComponent("b?b").matches("bob") and not GlobComponent("b?b").matches("bic")
    assert GlobComponent("{unterminated").literal()  # a malformed glob is taken literally


def test_glob_visitor_and_paths():
    manager = MetadataNodeManager()
    root = manager.data.root
    root.mkdirs("alpha", "beta").create("gamma").set_contents("g")
    root.mkdirs("alpha", "bravo")
    found = []
    manager.visit(GlobVisitor("/alpha/b*", lambda info: found.append(info and info.absolute_path())))
    assert found == ["/alpha/beta", "/alpha/bravo"]
    found.clear()
    manager.visit(GlobVisitor("/alpha/x*", lambda info: found.append(info)))
    assert found == [None]
    assert split_path("//a///b/") == ["a", "b"]
    assert strip_dot_path_components(["a", ".", "b", "..", "..", "..", "c"]) == ["c"]
    with pytest.raises(NotDirectoryException):
        root.mkdirs("alpha", "beta", "gamma", "delta")


def test_ls_column_schema_as_kafkas():
    assert calculate_column_schema(None, ["abc", "def"]) == ColumnSchema(1, 2)
    assert calculate_column_schema(80, ["a", "b", "c"]) == ColumnSchema(3, 1).set_column_widths(3, 3, 3)
    assert calculate_column_schema(8, ["a", "b", "c"]) == ColumnSchema(2, 2).set_column_widths(3, 3)
    out = io.StringIO()
    print_targets(out, 80, ["foo"], [TargetDirectory("dir", ["a", "bb", "ccc"])])
    assert out.getvalue() == "foo\n\ndir:\na  bb  ccc\n"


def test_command_parsing():
    commands = Commands(True)
    assert commands.parse_command([]) == NoOpCommandHandler()
    assert commands.parse_command(["", ""]) == NoOpCommandHandler()
    assert commands.parse_command(["history", "x"]) == ErroneousCommandHandler(
        "argument numEntriesToShow: could not convert 'x' to Integer (For input string: \"x\")")
    assert commands.parse_command(["ls", "-l"]) == ErroneousCommandHandler("unrecognized arguments: '-l'")
    assert commands.parse_command(["pwd", "x"]) == ErroneousCommandHandler("unrecognized arguments: 'x'")
    assert commands.parse_command(["c"]) == ErroneousCommandHandler("ambiguous command: 'c' could match cat, cd")
    out = io.StringIO()
    assert commands.parse_command(["ls", "-h"], out) == NoOpCommandHandler()
    assert out.getvalue().startswith("usage: ls [-h] [targets [targets ...]]")


def test_directory_nodes_keep_names_in_order():
    root = DirectoryNode()
    for name in ("b", "c", "a"):
        root.create(name)
    assert root.child_names() == ["a", "b", "c"]
    root.rmrf("b")
    assert root.child_names() == ["a", "c"]
    assert list(root.ceiling_names("b")) == ["c"]


def test_the_reader_feeds_the_listener_in_order(log_dir):
    manager = MetadataNodeManager()
    reader = SnapshotFileReader(str(log_dir), manager.log_listener())
    reader.startup()
    assert reader.caught_up
    assert [f.name for f in reader.files()] == ["00000000000000000000.log"]
    assert manager.data.root.file("metadataQuorum", "offset").contents() == "20"


def test_bin_scripts_run_the_tools(log_dir):
    shell = subprocess.run([str(ROOT / "bin" / "kafka-metadata-shell.sh"), "--snapshot", str(log_dir), "ls", "/topics"],
                           capture_output=True, text=True, timeout=60)
    assert (shell.returncode, shell.stdout) == (0, "orders\n"), shell.stderr
    via_run_class = subprocess.run([str(ROOT / "bin" / "kafka-run-class.sh"), "org.apache.kafka.shell.MetadataShell",
                                    "--snapshot", str(log_dir), "cat", "/topics/orders/name"],
                                   capture_output=True, text=True, timeout=60)
    assert (via_run_class.returncode, via_run_class.stdout) == (0, "orders\n"), via_run_class.stderr


def test_acl_and_scram_records_appear_and_go_in_the_tree():
    import uuid

    from kafka_py.metadata.records.access_control_entry_record.v0 import AccessControlEntryRecord
    from kafka_py.metadata.records.remove_access_control_entry_record.v0 import RemoveAccessControlEntryRecord
    from kafka_py.metadata.records.remove_user_scram_credential_record.v0 import RemoveUserScramCredentialRecord
    from kafka_py.metadata.records.user_scram_credential_record.v0 import UserScramCredentialRecord
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager

    manager = MetadataNodeManager()
    acl_id = uuid.uuid4()
    manager.handle_message(AccessControlEntryRecord(id=acl_id, resource_type=2, resource_name="t", pattern_type=3,
                                                    principal="User:a", host="*", operation=3, permission_type=3))
    manager.handle_message(UserScramCredentialRecord(name="alice", mechanism=1, salt=b"s", stored_key=b"k",
                                                     server_key=b"k", iterations=8192))
    root = manager.data.root
    assert [name for name, _ in root.mkdirs("acl", "id").children()] == [str(acl_id)]
    assert [name for name, _ in root.mkdirs("user-scram", "alice").children()] == ["1"]
    manager.handle_message(RemoveAccessControlEntryRecord(id=acl_id))
    manager.handle_message(RemoveUserScramCredentialRecord(name="alice", mechanism=1))
    assert list(root.mkdirs("acl", "id").children()) == []
    assert list(root.mkdirs("user-scram", "alice").children()) == []
