"""kafka-console-consumer.sh without a broker: the formatter and the option rules."""
from __future__ import annotations

import re
import struct

import click
import pytest
from click.testing import CliRunner

from kafka_py.clients.common.protocol.requests import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from kafka_py.core.utils.command_line_utils import CommandError
from kafka_py.core.tools.console_consumer import (
    ConsumerRecord,
    DefaultMessageFormatter,
    consumer_props,
    formatter_for,
    main,
    parse_offset,
)

RECORD = ConsumerRecord("t", 3, 42, 1700000000123, 0, b"k1", b"v1", (("h1", b"a"), ("h2", b"b")))


def fmt(record: ConsumerRecord = RECORD, **props: str) -> bytes:
    return DefaultMessageFormatter().configure(props).format(record)


def test_value_only_by_default() -> None:
    assert fmt() == b"v1\n"


def test_all_columns_in_kafkas_order() -> None:
    out = fmt(**{"print.timestamp": "true", "print.partition": "true", "print.offset": "true",
                 "print.headers": "true", "print.key": "true"})
    assert out == b"CreateTime:1700000000123\tPartition:3\tOffset:42\th1:a,h2:b\tk1\tv1\n"


def test_separators_and_null_literal() -> None:
    record = ConsumerRecord("t", 0, 0, 5, 1, None, None, ())
    out = fmt(record, **{"print.key": "true", "print.timestamp": "true", "print.headers": "true",
                         "key.separator": " | ", "line.separator": "\r\n", "null.literal": "<nil>"})
    assert out == b"LogAppendTime:5 | NO_HEADERS | <nil> | <nil>\r\n"


def test_without_value_the_last_column_ends_the_line() -> None:
    assert fmt(**{"print.key": "true", "print.value": "false"}) == b"k1\n"
    assert fmt(**{"print.offset": "true", "print.value": "false"}) == b"Offset:42\n"


def test_no_timestamp_and_header_separator() -> None:
    record = ConsumerRecord("t", 0, 0, -1, None, b"k", b"v", (("a", None),))
    out = fmt(record, **{"print.timestamp": "true", "print.headers": "true", "headers.separator": ";"})
    assert out == b"NO_TIMESTAMP\ta:null\tv\n"
    two = ConsumerRecord("t", 0, 0, 1, 0, b"k", b"v", (("a", b"1"), ("b", b"2")))
    assert fmt(two, **{"print.headers": "true", "headers.separator": ";"}) == b"a:1;b:2\tv\n"


def test_deserializers() -> None:
    record = ConsumerRecord("t", 0, 0, 1, 0, struct.pack(">q", -7), struct.pack(">i", 99), ())
    out = fmt(record, **{"print.key": "true",
                         "key.deserializer": "org.apache.kafka.common.serialization.LongDeserializer",
                         "value.deserializer": "IntegerDeserializer"})
    assert out == b"-7\t99\n"
    with pytest.raises(ValueError, match="is not 8"):
        fmt(RECORD, **{"key.deserializer": "LongDeserializer", "print.key": "true"})
    with pytest.raises(CommandError, match="Unsupported deserializer"):
        fmt(RECORD, **{"value.deserializer": "com.example.Avro"})


def test_formatters() -> None:
    assert formatter_for("kafka.tools.NoOpMessageFormatter").format(RECORD) == b""
    assert formatter_for("kafka.tools.DefaultMessageFormatter").format(RECORD) == b"v1\n"
    with pytest.raises(click.UsageError):
        formatter_for("kafka.tools.ChecksumMessageFormatter")


@pytest.mark.parametrize("text, expected", [
    ("earliest", EARLIEST_TIMESTAMP), ("LATEST", LATEST_TIMESTAMP), ("0", 0), ("12345", 12345)])
def test_offsets(text: str, expected: int) -> None:
    assert parse_offset(text) == expected


@pytest.mark.parametrize("text", ["-1", "first", "1.5"])
def test_bad_offsets(text: str) -> None:
    with pytest.raises(click.UsageError, match=f"The provided offset value '{text}' is incorrect"):
        parse_offset(text)


def test_auto_offset_reset_rules() -> None:
    assert consumer_props({}, {}, "h:1", True, "read_uncommitted", None)["auto.offset.reset"] == "earliest"
    assert consumer_props({}, {}, "h:1", False, "read_uncommitted", None)["auto.offset.reset"] == "latest"
    props = consumer_props({"auto.offset.reset": "latest"}, {"auto.offset.reset": "earliest"}, "h:1", True,
                           "read_committed", "g")
    assert props["auto.offset.reset"] == "earliest"
    assert props["isolation.level"] == "read_committed" and props["group.id"] == "g"
    with pytest.raises(click.UsageError, match="Can't simultaneously specify --from-beginning"):
        consumer_props({}, {"auto.offset.reset": "latest"}, "h:1", True, "read_uncommitted", None)


def test_without_a_group_a_random_throw_away_group_that_commits_nothing() -> None:
    props = consumer_props({}, {}, "h:1", False, "read_uncommitted", None)
    assert re.fullmatch(r"console-consumer-\d{1,5}", props["group.id"])
    assert props["enable.auto.commit"] == "false"
    assert len({consumer_props({}, {}, "h:1", False, "read_uncommitted", None)["group.id"]
                for _ in range(20)}) > 1
    # an explicit enable.auto.commit is kept, as Kafka keeps it
    assert consumer_props({}, {"enable.auto.commit": "true"}, "h:1", False, "read_uncommitted",
                          None)["enable.auto.commit"] == "true"
    # a group of the user's commits as the consumer is configured to
    assert "enable.auto.commit" not in consumer_props({}, {}, "h:1", False, "read_uncommitted", "g")


@pytest.mark.parametrize("args, message", [
    (["--topic", "t", "--whitelist", "x"], "Exactly one of whitelist/topic is required."),
    ([], "Exactly one of whitelist/topic is required."),
    (["--topic", "t", "--offset", "5"], "The partition is required when offset is specified."),
    (["--whitelist", "x", "--partition", "0"], "The topic is required when partition is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "1", "--from-beginning"],
     "Options from-beginning and offset cannot be specified together."),
    (["--topic", "t", "--partition", "0", "--group", "g"], "Options group and partition cannot be specified"),
    (["--topic", "t", "--group", "a", "--consumer-property", "group.id=b"], "do not match"),
])
def test_option_rules(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["--bootstrap-server", "127.0.0.1:1", *args])
    assert result.exit_code == 2
    assert message in result.output
