"""kafka_py.core.utils.command_line_utils: client property mapping, errors, metrics, progress."""
from __future__ import annotations

import io
import logging
import os
import pathlib
import shlex
import subprocess
import sys

import click
import kafka.errors as kafka_errors
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    describe_exception,
    error_message,
    expand_multi_value_options,
    format_metrics,
    handle_errors,
    parse_key_value_args,
    validate_bootstrap_servers,
    want_progress_bar,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_java_producer_properties_become_kafka_python_keywords() -> None:
    configs = client_configs({
        "bootstrap.servers": "a:1, b:2",
        "acks": "all",
        "linger.ms": "5",
        "enable.idempotence": "false",
        "compression.type": "none",
        "retries": "3",
        "client.id": "perf",
        "send.buffer.bytes": "131072",
    }, KafkaProducer)
    assert configs == {
        "bootstrap_servers": ["a:1", "b:2"],
        "acks": -1,
        "linger_ms": 5,
        "enable_idempotence": False,
        "compression_type": None,
        "retries": 3,
        "client_id": "perf",
        "send_buffer_bytes": 131072,
    }


def test_acks_and_codecs_keep_their_meaning() -> None:
    assert client_configs({"acks": "1", "compression.type": "LZ4"}, KafkaProducer) == {
        "acks": 1, "compression_type": "lz4"}
    assert client_configs({"acks": "0"}, KafkaProducer) == {"acks": 0}


def test_consumer_properties_with_renamed_keys() -> None:
    configs = client_configs({"max.partition.fetch.bytes": "1024", "receive.buffer.bytes": "2048",
                              "group.id": "g", "auto.offset.reset": "earliest", "check.crcs": "false"},
                             KafkaConsumer)
    assert configs == {"max_partition_fetch_bytes": 1024, "receive_buffer_bytes": 2048, "group_id": "g",
                       "auto_offset_reset": "earliest", "check_crcs": False}


def test_unknown_properties_are_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        configs = client_configs({"no.such.config": "1", "key.serializer": "x", "request.timeout.ms": "100"},
                                 KafkaAdminClient)
    assert configs == {"request_timeout_ms": 100}
    assert "no.such.config" in caplog.text
    assert "key.serializer" not in caplog.text


@pytest.mark.parametrize("props, message", [
    ({"linger.ms": "soon"}, "Invalid value soon for configuration linger.ms"),
    ({"enable.idempotence": "yes"}, "either true or false"),
])
def test_bad_property_values_are_command_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        client_configs(props, KafkaProducer)


def test_parse_key_value_args_splits_at_the_first_equals() -> None:
    assert parse_key_value_args(["a=b=c", "d", "e="]) == {"a": "b=c", "d": "", "e": ""}
    with pytest.raises(CommandError, match="Missing value for key d"):
        parse_key_value_args(["d"], accept_missing_value=False)


@pytest.mark.parametrize("servers", ["localhost:9092", "a:1,b:2", " h:10 , k:20 "])
def test_valid_bootstrap_servers(servers: str) -> None:
    assert all(":" in s for s in validate_bootstrap_servers(servers))


@pytest.mark.parametrize("servers", ["localhost", "a:1,b", "", "host:port"])
def test_invalid_bootstrap_servers(servers: str) -> None:
    with pytest.raises(click.UsageError, match="valid host:port"):
        validate_bootstrap_servers(servers)


def test_error_messages_default_to_kafkas() -> None:
    assert error_message(36) == "Topic with this name already exists."
    assert error_message(36, "Topic 't' already exists.") == "Topic 't' already exists."
    # Errors.forCode: an unknown code is UNKNOWN_SERVER_ERROR
    assert error_message(9999) == "The server experienced an unexpected error when processing the request."


def test_describe_exception_is_one_line() -> None:
    assert describe_exception(CommandError("plain")) == "plain"
    assert describe_exception(kafka_errors.KafkaTimeoutError("took too long")) == "KafkaTimeoutError: took too long"
    assert describe_exception(kafka_errors.UnknownTopicOrPartitionError()).startswith(
        "UnknownTopicOrPartitionError: This request is for a topic")
    assert "\n" not in describe_exception(ValueError("two\nlines"))


def test_handle_errors_prints_one_line_and_exits_1() -> None:
    @click.command()
    @handle_errors("Error while executing : ")
    def cmd() -> None:
        raise CommandError("it broke")

    from click.testing import CliRunner

    result = CliRunner().invoke(cmd, [])
    assert result.exit_code == 1
    assert result.output.strip() == "Error while executing : it broke"
    assert "Traceback" not in result.output


def test_handle_errors_leaves_usage_errors_to_click() -> None:
    @click.command()
    @handle_errors()
    def cmd() -> None:
        raise click.UsageError("bad usage")

    from click.testing import CliRunner

    result = CliRunner().invoke(cmd, [])
    assert result.exit_code == 2
    assert "bad usage" in result.output


def test_expand_multi_value_options() -> None:
    args = ["--topic", "t", "--producer-props", "a=1", "b=2", "--throughput", "-1", "--producer-props=c=3"]
    assert expand_multi_value_options(args, ["--producer-props"]) == [
        "--topic", "t", "--producer-props", "a=1", "--producer-props", "b=2", "--throughput", "-1",
        "--producer-props", "c=3"]


def test_format_metrics_like_tools_utils() -> None:
    lines = format_metrics({"producer-metrics:record-send-rate:{client-id=p}": 12.34567,
                            "a:count:{}": 3})
    width = len("producer-metrics:record-send-rate:{client-id=p}")
    assert lines == [
        "",
        "Metric Name".ljust(width) + "   Value",
        "a:count:{}".ljust(width) + " : 3",
        "producer-metrics:record-send-rate:{client-id=p} : 12.346",
    ]
    assert format_metrics({}) == []


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize("stdout_tty, stderr_tty, expected", [
    (False, True, True), (True, True, False), (False, False, False), (True, False, False)])
def test_progress_bar_only_when_stdout_is_redirected(stdout_tty: bool, stderr_tty: bool, expected: bool) -> None:
    assert want_progress_bar(_Stream(stdout_tty), _Stream(stderr_tty)) is expected


# -- run_tool: a reader of the output that goes away -----------------------------------------

_TOOL = """
import sys
import click
from kafka_py.core.utils.command_line_utils import CommandError, handle_errors, run_tool

@click.command()
@click.option("--lines", type=int, default=100000)
@click.option("--fail", is_flag=True)
@handle_errors()
def main(lines, fail):
    if fail:
        raise CommandError("it went wrong")
    for i in range(lines):
        click.echo(f"line {i} " + "x" * 60)

run_tool(main, "tool")
"""


def _run_tool_with_stdout(stdout_reader_closed: bool, *args: str) -> subprocess.CompletedProcess:
    read_end, write_end = os.pipe()
    if stdout_reader_closed:
        os.close(read_end)  # as `| head` does once it has its lines
    try:
        return subprocess.run([sys.executable, "-c", _TOOL, *args], stdout=write_end, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=60, cwd=ROOT)
    finally:
        os.close(write_end)
        if not stdout_reader_closed:
            os.close(read_end)


def test_a_tool_whose_stdout_reader_has_gone_exits_quietly_with_status_0() -> None:
    result = _run_tool_with_stdout(True)
    assert result.returncode == 0
    assert result.stderr == ""


def test_a_closed_stdout_does_not_hide_a_failure_before_any_output() -> None:
    result = _run_tool_with_stdout(False, "--fail")
    assert result.returncode == 1
    assert result.stderr == "it went wrong\n"


def test_a_tool_exits_with_its_status_when_stdout_is_read() -> None:
    result = _run_tool_with_stdout(False, "--lines", "3")
    assert (result.returncode, result.stderr) == (0, "")


def test_shell_pipeline_into_head_keeps_the_first_lines_and_no_traceback() -> None:
    script = f"set -o pipefail; {shlex.quote(sys.executable)} -c {shlex.quote(_TOOL)} | head -n 2"
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["line 0 " + "x" * 60, "line 1 " + "x" * 60]
    assert result.stderr == ""
