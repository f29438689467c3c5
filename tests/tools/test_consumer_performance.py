"""kafka-consumer-perf-test.sh without a broker: report lines, dates, and the consume loop."""
from __future__ import annotations

import os
import re
import time
from collections import namedtuple

import click
import pytest
from click.testing import CliRunner

from kafka_py.core.tools.consumer_performance import (
    DEFAULT_DATE_FORMAT,
    consume,
    consumer_props,
    header_line,
    java_date_format,
    main,
    progress_line,
    summary_line,
)

# 2023-11-14 22:13:20.123 UTC
EPOCH_MS = 1_700_000_000_123


@pytest.fixture
def utc():
    previous = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if previous is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = previous
    time.tzset()


@pytest.mark.parametrize("pattern, expected", [
    (DEFAULT_DATE_FORMAT, "2023-11-14 22:13:20:123"),
    ("yy/M/d h:mm a", "23/11/14 10:13 PM"),
    ("EEE, d MMM yyyy HH:mm:ss Z", "Tue, 14 Nov 2023 22:13:20 +0000"),
    ("EEEE MMMM", "Tuesday November"),
    ("'at' HH 'o''clock'", "at 22 o'clock"),
    ("D.S", "318.123"),
])
def test_simple_date_format(utc, pattern: str, expected: str) -> None:
    assert java_date_format(pattern, EPOCH_MS) == expected


def test_bad_date_pattern() -> None:
    with pytest.raises(click.UsageError, match="Illegal pattern character 'q'"):
        java_date_format("yyyy-qq", 0)


def test_header_lines() -> None:
    assert header_line(False) == ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
                                  "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
    assert header_line(True).startswith("time, threadId, data.consumed.in.MB, MB.sec,")


def test_summary_line(utc) -> None:
    line = summary_line(DEFAULT_DATE_FORMAT, EPOCH_MS, EPOCH_MS + 2000, 10 * 1024 * 1024, 1000, 500)
    assert line == ("2023-11-14 22:13:20:123, 2023-11-14 22:13:22:123, 10.0000, 5.0000, 1000, 500.0000, "
                    "500, 1500, 6.6667, 666.6667")


def test_summary_line_of_an_instant_run(utc) -> None:
    line = summary_line(DEFAULT_DATE_FORMAT, EPOCH_MS, EPOCH_MS, 0, 0, 0)
    assert line.endswith(", 0.0000, NaN, 0, NaN, 0, 0, NaN, NaN")
    line = summary_line(DEFAULT_DATE_FORMAT, EPOCH_MS, EPOCH_MS, 1024 * 1024, 1, 0)
    assert ", 1.0000, Infinity, 1, Infinity," in line


def test_progress_line(utc) -> None:
    line = progress_line(DEFAULT_DATE_FORMAT, 0, 3 * 1024 * 1024, 1024 * 1024, 300, 100, EPOCH_MS - 2000,
                         EPOCH_MS, 1000)
    assert line == "2023-11-14 22:13:20:123, 0, 3.0000, 1.0000, 300, 100.0000, 1000, 1000, 2.0000, 200.0000"
    assert progress_line(DEFAULT_DATE_FORMAT, 0, 0, 0, 0, 0, EPOCH_MS, EPOCH_MS, 5).endswith(
        ", 5, -5, 0.0000, 0.0000")


Record = namedtuple("Record", "key value")


class ScriptedConsumer:
    """Hands out prepared poll results, then nothing."""

    def __init__(self, polls: list[list[Record]]) -> None:
        self.polls = list(polls)

    def poll(self, timeout_ms: int) -> dict:
        if self.polls:
            return {"tp": self.polls.pop(0)}
        time.sleep(timeout_ms / 1000)
        return {}


def test_consume_counts_key_and_value_bytes() -> None:
    lines: list[str] = []
    progress: list[int] = []
    consumer = ScriptedConsumer([[Record(b"k", b"vv"), Record(None, b"vvv")], [Record(b"kk", None)]])
    result = consume(consumer, 3, 1000, 5000, False, DEFAULT_DATE_FORMAT, lines.append, progress.append)
    assert (result.messages_read, result.bytes_read) == (3, 1 + 2 + 3 + 2)
    assert progress == [2, 1] and lines == []


def test_consume_warns_after_the_timeout() -> None:
    lines: list[str] = []
    result = consume(ScriptedConsumer([[Record(None, b"x")]]), 5, 300, 5000, False, DEFAULT_DATE_FORMAT,
                     lines.append)
    assert result.messages_read == 1
    assert lines == ["WARNING: Exiting before consuming the expected number of messages: timeout (300 ms) "
                     "exceeded. You can use the --timeout option to increase the timeout."]


def test_consumer_props_override_the_file() -> None:
    props = consumer_props({"auto.offset.reset": "none", "fetch.min.bytes": "5"}, "h:1", None, 100, 200, False)
    group = props.pop("group.id")
    assert re.fullmatch(r"perf-consumer-\d{1,5}", group)  # Kafka's default group: a new one each run
    assert props == {"auto.offset.reset": "earliest", "fetch.min.bytes": "5", "bootstrap.servers": "h:1",
                     "receive.buffer.bytes": "100", "max.partition.fetch.bytes": "200", "check.crcs": "false"}
    assert consumer_props({}, "h:1", "g", 1, 1, True)["auto.offset.reset"] == "latest"
    assert consumer_props({}, "h:1", "g", 1, 1, True)["group.id"] == "g"


@pytest.mark.parametrize("args, message", [
    (["--bootstrap-server", "h:1", "--messages", "5"], "topic"),
    (["--bootstrap-server", "h:1", "--topic", "t"], "messages"),
    (["--topic", "t", "--messages", "5"], "bootstrap-server"),
    (["--bootstrap-server", "h:1", "--topic", "t", "--messages", "5", "--reporting-interval", "0"],
     "Reporting interval must be greater than 0."),
    (["--bootstrap-server", "h:1", "--topic", "t", "--messages", "5", "--date-format", "qqq"],
     "Illegal pattern character"),
])
def test_option_rules(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and message in result.output
