"""Port of core/src/main/scala/kafka/admin/DeleteRecordsCommand.scala (``bin/kafka-delete-records.sh``).

``bin/kafka-delete-records.sh --bootstrap-server host:port --offset-json-file file
[--command-config file]`` deletes the records of each listed partition below the given
offset (the partition's log start offset moves up to it; ``-1`` means its high watermark),
with DeleteRecords requests to the partitions' leaders. The JSON file is Kafka's::

    {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}

and so is the output, one line per partition, its low watermark or its error::

    Executing records delete operation
    Records delete operation completed:
    partition: foo-1	low_watermark: 1
    partition: foo-7	error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.

A file that cannot be read or parsed, a ``version`` other than 1, a missing field or a
partition listed twice is one line on stderr and exit status 1, before anything is deleted;
a partition's error is its line of the output, and the tool still exits 0, as Kafka's does.

Differences from Kafka's tool, on purpose:

- a partition number the topic does not have is reported as UnknownTopicOrPartitionException
  (Kafka's admin client reports LeaderNotAvailableException, as for a partition whose
  leader is being elected, which it also is here);
- partitions are printed in the order of the file (Kafka's in the order of a hash map);
- failures are one line on stderr, never a stack trace.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import click

from kafka_py.core.admin.broker_connections import BrokerConnections
from kafka_py.core.utils.command_line_utils import (
    CommandError,
    describe_exception,
    handle_errors,
    load_props,
    print_usage_and_die,
    run_tool,
    validate_port_or_die,
)

EARLIEST_VERSION = 1
DELETE_RECORDS_VERSION = 2
HELP = "This tool helps to delete records of the given partitions down to the specified offset."
OFFSET_JSON_FILE_DOC = ("REQUIRED: The JSON file with offset per partition. The format to use is:\n"
                        '{"partitions":\n  [{"topic": "foo", "partition": 1, "offset": 1}],\n "version":1\n}')

Out = Callable[[str], None]


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def _java_json(value: Any) -> str:
    """A JSON node as Jackson prints it in Kafka's messages."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _field(obj: Mapping[str, Any], name: str) -> Any:
    if name not in obj:
        raise CommandError(f"No such field exists: `{name}`")
    return obj[name]


def _as_int(value: Any, kind: str, bits: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise CommandError(f"Expected `{kind}` value, received {_java_json(value)}")
    return value


def _as_object(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise CommandError(f"Expected JSON object, received {_java_json(value)}")
    return value


def parse_offset_json_string_without_dedup(json_data: str) -> list[tuple[TopicPartition, int]]:
    """The (partition, offset) pairs of the file's text, in its order, duplicates kept."""
    try:
        js = json.loads(json_data)
    except ValueError:
        raise CommandError("The input string is not a valid JSON") from None
    obj = _as_object(js)
    version = _as_int(obj["version"], "Int", 32) if "version" in obj else EARLIEST_VERSION
    if version != 1:
        raise CommandError(f"Not supported version field value {version}")
    if "partitions" not in obj:
        raise CommandError("Missing partitions field")
    partitions = obj["partitions"]
    if not isinstance(partitions, list):
        raise CommandError(f"Expected JSON array, received {_java_json(partitions)}")
    out = []
    for entry in partitions:
        entry = _as_object(entry)
        topic = _field(entry, "topic")
        if not isinstance(topic, str):
            raise CommandError(f"Expected `String` value, received {_java_json(topic)}")
        partition = _as_int(_field(entry, "partition"), "Int", 32)
        offset = _as_int(_field(entry, "offset"), "Long", 64)
        out.append((TopicPartition(topic, partition), offset))
    return out


def read_offset_json_file(path: str) -> list[tuple[TopicPartition, int]]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise CommandError(f"Unable to read the offset JSON file {path}: {reason}") from None
    offsets = parse_offset_json_string_without_dedup(text)
    seen: set[TopicPartition] = set()
    duplicates: list[str] = []
    for tp, _ in offsets:
        if tp in seen and str(tp) not in duplicates:
            duplicates.append(str(tp))
        seen.add(tp)
    if duplicates:
        raise CommandError(f"Offset json file contains duplicate topic partitions: {','.join(duplicates)}")
    return offsets


def _error_text(code: int) -> str:
    """What Kafka's tool prints for a failed partition: the exception's class and message."""
    from kafka_py.clients.common.protocol.errors import Errors

    try:
        error = Errors.for_code(code)
    except (KeyError, ValueError):
        return f"org.apache.kafka.common.errors.UnknownServerException: Unknown error code {code}"
    return f"org.apache.kafka.common.errors.{error.exception_name}: {error.default_message}"


def delete_records(connections: BrokerConnections, offsets: Sequence[tuple[TopicPartition, int]],
                   timeout_ms: int) -> dict[TopicPartition, int | str]:
    """Admin.deleteRecords: each partition's new low watermark, or the text of its error."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors

    results: dict[TopicPartition, int | str] = {}
    if not offsets:
        return results
    metadata = connections.metadata(sorted({tp.topic for tp, _ in offsets}))
    by_leader: dict[int, list[tuple[TopicPartition, int]]] = defaultdict(list)
    for tp, offset in offsets:
        topic_error, partitions = metadata.topics.get(tp.topic, (Errors.UNKNOWN_TOPIC_OR_PARTITION.code, {}))
        if topic_error:
            results[tp] = _error_text(topic_error)
        elif tp.partition not in partitions:
            results[tp] = _error_text(Errors.UNKNOWN_TOPIC_OR_PARTITION.code)
        elif partitions[tp.partition].leader < 0 or partitions[tp.partition].leader not in metadata.brokers:
            results[tp] = _error_text(Errors.LEADER_NOT_AVAILABLE.code)
        else:
            by_leader[partitions[tp.partition].leader].append((tp, offset))
    for leader, entries in sorted(by_leader.items()):
        topics: dict[str, list[dict[str, int]]] = defaultdict(list)
        for tp, offset in entries:
            topics[tp.topic].append({"partition_index": tp.partition, "offset": offset})
        request = {"topics": [{"name": t, "partitions": p} for t, p in topics.items()], "timeout": timeout_ms}
        try:
            response = connections.send(metadata.brokers[leader].address, ApiKeys.DELETE_RECORDS,
                                        DELETE_RECORDS_VERSION, request)
        except Exception as e:  # the leader could not be asked: each of its partitions fails with it
            for tp, _ in entries:
                results[tp] = describe_exception(e)
            continue
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(str(topic.name), int(p.partition_index))
                code = int(p.error_code)
                results[tp] = int(p.low_watermark) if code == 0 else _error_text(code)
        for tp, _ in entries:
            results.setdefault(tp, _error_text(Errors.UNKNOWN_SERVER_ERROR.code))
    return results


def execute(bootstrap_server: str, offset_json_file: str, command_config: Mapping[str, str],
            out: Out | None = None) -> None:
    out = out or click.echo
    servers = validate_port_or_die(bootstrap_server)
    offsets = read_offset_json_file(offset_json_file)
    with BrokerConnections(servers, command_config, "delete-records") as connections:
        out("Executing records delete operation")
        # the broker's wait for the followers ends before the request's own timeout does
        timeout_ms = max(connections.request_timeout_ms - 1000, connections.request_timeout_ms // 2)
        results = delete_records(connections, offsets, timeout_ms)
        out("Records delete operation completed:")
        for tp, _ in offsets:
            result = results[tp]
            if isinstance(result, int):
                out(f"partition: {tp}\tlow_watermark: {result}")
            else:
                out(f"partition: {tp}\terror: {result}")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=HELP)
@click.option("--bootstrap-server", metavar="<server(s) to use for bootstrapping>",
              help="REQUIRED: The server to connect to.")
@click.option("--offset-json-file", metavar="<Offset json file path>", help=OFFSET_JSON_FILE_DOC)
@click.option("--command-config", metavar="<command config property file path>",
              help="A property file containing configs to be passed to Admin Client.")
@handle_errors()
def main(bootstrap_server: str | None, offset_json_file: str | None, command_config: str | None) -> None:
    if bootstrap_server is None and offset_json_file is None and command_config is None:
        print_usage_and_die(HELP)
    if bootstrap_server is None:
        print_usage_and_die('Missing required argument "[bootstrap-server]"')
    if offset_json_file is None:
        print_usage_and_die('Missing required argument "[offset-json-file]"')
    props = load_props(command_config) if command_config else {}
    execute(bootstrap_server, offset_json_file, props)


if __name__ == "__main__":
    run_tool(main, "kafka-delete-records.sh")
