"""kafka-delete-records.sh and kafka-broker-api-versions.sh without a broker: the offset JSON
file, the required options and NodeApiVersions' text. (Against a broker:
tests/tools/test_tools_against_broker.py.)"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.core.admin import broker_api_versions_command, delete_records_command
from kafka_py.core.admin.broker_api_versions_command import api_version_text, node_api_versions_text
from kafka_py.core.utils.command_line_utils import CommandError
from kafka_py.core.admin.delete_records_command import TopicPartition, parse_offset_json_string_without_dedup

BOOTSTRAP = "127.0.0.1:9"  # never reached: every case fails before connecting


def test_offset_json_in_file_order_with_version_defaulting_to_1() -> None:
    text = json.dumps({"partitions": [{"topic": "b", "partition": 1, "offset": 5},
                                      {"topic": "a", "partition": 0, "offset": -1},
                                      {"topic": "b", "partition": 1, "offset": 2 ** 40}]})
    assert parse_offset_json_string_without_dedup(text) == [
        (TopicPartition("b", 1), 5), (TopicPartition("a", 0), -1), (TopicPartition("b", 1), 2 ** 40)]
    assert str(TopicPartition("b", 1)) == "b-1"


@pytest.mark.parametrize("content, message", [
    ("{", "The input string is not a valid JSON"),
    ('{"version": 2, "partitions": []}', "Not supported version field value 2"),
    ('{"version": 1}', "Missing partitions field"),
    ('{"partitions": [{"topic": "a", "offset": 1}]}', "No such field exists: `partition`"),
    ('{"partitions": [{"topic": "a", "partition": "0", "offset": 1}]}', 'Expected `Int` value, received "0"'),
    ('{"partitions": [{"topic": "a", "partition": 0, "offset": 1.5}]}', "Expected `Long` value, received 1.5"),
    ('{"partitions": [{"topic": 7, "partition": 0, "offset": 1}]}', "Expected `String` value, received 7"),
    ('{"partitions": [{"topic": "a", "partition": 0, "offset": 1}, {"topic": "a", "partition": 0, "offset": 2}]}',
     "Offset json file contains duplicate topic partitions: a-0"),
])
def test_bad_offset_json_file_is_one_line_and_status_1(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "offsets.json"
    path.write_text(content)
    result = CliRunner().invoke(delete_records_command.main,
                                ["--bootstrap-server", BOOTSTRAP, "--offset-json-file", str(path)])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")


def test_unreadable_offset_json_file(tmp_path) -> None:
    missing = tmp_path / "missing.json"
    result = CliRunner().invoke(delete_records_command.main,
                                ["--bootstrap-server", BOOTSTRAP, "--offset-json-file", str(missing)])
    assert result.exit_code == 1
    assert result.stderr == f"Unable to read the offset JSON file {missing}: No such file or directory\n"
    with pytest.raises(CommandError, match="Unable to read the offset JSON file"):
        delete_records_command.read_offset_json_file(str(tmp_path))  # a directory


@pytest.mark.parametrize("tool, args, message", [
    (delete_records_command, ["--offset-json-file", "x.json"], 'Missing required argument "[bootstrap-server]"'),
    (delete_records_command, ["--bootstrap-server", BOOTSTRAP], 'Missing required argument "[offset-json-file]"'),
    (delete_records_command, [], delete_records_command.HELP),
    (delete_records_command, ["--bootstrap-server", "nohost", "--offset-json-file", "x.json"],
     "Please provide valid host:port like host1:9091,host2:9092"),
    (broker_api_versions_command, ["--command-config", "x"], 'Missing required argument "[bootstrap-server]"'),
    (broker_api_versions_command, [], broker_api_versions_command.HELP),
])
def test_usage_errors_print_kafkas_message_and_help_with_status_1(tool, args: list[str], message: str) -> None:
    result = CliRunner().invoke(tool.main, args)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == message
    assert "--bootstrap-server" in result.stderr and result.stdout == ""


def test_api_version_text_as_node_api_versions_prints_it() -> None:
    assert api_version_text(0, 0, 9) == "Produce(0): 0 to 9 [usable: 9]"
    assert api_version_text(1, 4, 13) == "Fetch(1): 4 to 13 [usable: 12]"  # a newer broker: 2.8.2's latest
    assert api_version_text(47, 0, 0) == "OffsetDelete(47): 0 [usable: 0]"
    assert api_version_text(18, 4, 5) == "ApiVersions(18): 4 to 5 [unusable: node too new]"
    assert api_version_text(999, 0, 2) == "UNKNOWN(999): 0 to 2"


def test_node_api_versions_text_lists_what_a_zookeeper_broker_lacks() -> None:
    text = node_api_versions_text({18: (0, 3), 0: (3, 9), 999: (0, 1)})
    lines = text.splitlines()
    assert lines[0] == "(" and lines[-1] == ")"
    assert lines[1:3] == ["\tProduce(0): 3 to 9 [usable: 9],", "\tFetch(1): UNSUPPORTED,"]
    assert "\tApiVersions(18): 0 to 3 [usable: 3]," in lines
    assert lines[-2] == "\tUNKNOWN(999): 0 to 1"
    # every API of a ZooKeeper-mode broker has its line, the KRaft-only ones none
    assert len(lines) == 2 + sum(1 for api in ApiKeys if api.zk_broker) + 1
    assert not any(line.startswith("\tVote(") for line in lines)
    assert node_api_versions_text({0: (0, 9)}, line_breaks=False).startswith("(Produce(0): 0 to 9 [usable: 9], Fetch")
