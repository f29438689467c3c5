"""Port of core/src/main/scala/kafka/tools/ConsoleConsumer.scala (``bin/kafka-console-consumer.sh``).

Consumes a topic (or the topics matching ``--whitelist``) with kafka-python's
KafkaConsumer and writes each record to stdout with ``DefaultMessageFormatter``,
whose ``--property`` settings are Kafka's: print.timestamp, print.key, print.offset,
print.partition, print.headers, print.value, key.separator, line.separator,
headers.separator, null.literal, key.deserializer, value.deserializer,
headers.deserializer (Kafka's deserializer class names for strings, byte arrays and
numbers). At the end it reports ``Processed a total of N messages`` on stderr.

``--from-beginning``, ``--partition`` with ``--offset earliest|latest|N``,
``--max-messages``, ``--timeout-ms`` (stop when nothing arrives for that long),
``--isolation-level``, ``--consumer-property`` / ``--consumer.config`` with Kafka's
client property names, ``--skip-message-on-error``.

The consumer always has a group, as Kafka's: ``--group`` (or a group.id property), else
a throw-away ``console-consumer-<random number below 100000>`` whose offsets are not
committed unless ``enable.auto.commit`` is set. With ``--topic`` or ``--whitelist`` it
subscribes through the group coordinator (a topic that does not exist yet is picked up
once it does); with ``--partition`` it is assigned that partition and seeks to
``--offset``.
"""
from __future__ import annotations

import logging
import random
import signal
import struct
import sys
import time
import uuid
from dataclasses import dataclass
from typing import IO, Any, Callable, Mapping

import click

from kafka_py.clients.common.protocol.requests import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    connect,
    handle_errors,
    load_props,
    parse_key_value_args,
    progress_bar,
    run_tool,
    validate_bootstrap_servers,
    want_progress_bar,
)
from kafka_py.core.tools.group_subscription import subscribe

logger = logging.getLogger(__name__)

DEFAULT_FORMATTER = "kafka.tools.DefaultMessageFormatter"
NO_OP_FORMATTER = "kafka.tools.NoOpMessageFormatter"
_TIMESTAMP_TYPE_NAMES = {0: "CreateTime", 1: "LogAppendTime"}


# -- deserializers ---------------------------------------------------------------------------

def _fixed(fmt: str, name: str) -> Callable[[bytes], str]:
    size = struct.calcsize(fmt)

    def decode(data: bytes) -> str:
        if len(data) != size:
            raise ValueError(f"Size of data received by {name} is not {size}")
        value = struct.unpack(fmt, data)[0]
        if isinstance(value, float):
            return repr(value) if value != int(value) or abs(value) >= 1e7 else f"{value:.1f}"
        return str(value)

    return decode


# Kafka's deserializers by class name; each turns bytes into the text Kafka prints
# (the deserialized object's toString). Byte arrays pass through untouched.
DESERIALIZERS: dict[str, Callable[[bytes], str] | None] = {
    "org.apache.kafka.common.serialization.StringDeserializer": lambda b: b.decode("utf-8", errors="replace"),
    "org.apache.kafka.common.serialization.ByteArrayDeserializer": None,
    "org.apache.kafka.common.serialization.BytesDeserializer": None,
    "org.apache.kafka.common.serialization.ByteBufferDeserializer": None,
    "org.apache.kafka.common.serialization.ShortDeserializer": _fixed(">h", "ShortDeserializer"),
    "org.apache.kafka.common.serialization.IntegerDeserializer": _fixed(">i", "IntegerDeserializer"),
    "org.apache.kafka.common.serialization.LongDeserializer": _fixed(">q", "LongDeserializer"),
    "org.apache.kafka.common.serialization.FloatDeserializer": _fixed(">f", "FloatDeserializer"),
    "org.apache.kafka.common.serialization.DoubleDeserializer": _fixed(">d", "DoubleDeserializer"),
    "org.apache.kafka.common.serialization.UUIDDeserializer": lambda b: str(uuid.UUID(b.decode())),
}


def deserializer_for(name: str) -> Callable[[bytes], str] | None:
    if name not in DESERIALIZERS:
        short = {k.rsplit(".", 1)[-1]: k for k in DESERIALIZERS}
        if name in short:
            return DESERIALIZERS[short[name]]
        raise CommandError(f"Unsupported deserializer {name}: use one of "
                           + ", ".join(k.rsplit(".", 1)[-1] for k in DESERIALIZERS))
    return DESERIALIZERS[name]


# -- the formatter ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ConsumerRecord:
    """What the formatter needs of a record (kafka-python's ConsumerRecord has these fields)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


class DefaultMessageFormatter:
    """kafka.tools.DefaultMessageFormatter: the columns of a record joined by separators."""

    def __init__(self) -> None:
        self.print_timestamp = False
        self.print_key = False
        self.print_value = True
        self.print_partition = False
        self.print_offset = False
        self.print_headers = False
        self.key_separator = b"\t"
        self.line_separator = b"\n"
        self.headers_separator = b","
        self.null_literal = b"null"
        self.key_deserializer: Callable[[bytes], str] | None = None
        self.value_deserializer: Callable[[bytes], str] | None = None
        self.headers_deserializer: Callable[[bytes], str] | None = None

    def configure(self, configs: Mapping[str, str]) -> "DefaultMessageFormatter":
        def flag(name: str, current: bool) -> bool:
            return configs[name].strip().lower() == "true" if name in configs else current

        def text(name: str, current: bytes) -> bytes:
            return configs[name].encode() if name in configs else current

        self.print_timestamp = flag("print.timestamp", self.print_timestamp)
        self.print_key = flag("print.key", self.print_key)
        self.print_offset = flag("print.offset", self.print_offset)
        self.print_partition = flag("print.partition", self.print_partition)
        self.print_headers = flag("print.headers", self.print_headers)
        self.print_value = flag("print.value", self.print_value)
        self.key_separator = text("key.separator", self.key_separator)
        self.line_separator = text("line.separator", self.line_separator)
        self.headers_separator = text("headers.separator", self.headers_separator)
        self.null_literal = text("null.literal", self.null_literal)
        if "key.deserializer" in configs:
            self.key_deserializer = deserializer_for(configs["key.deserializer"])
        if "value.deserializer" in configs:
            self.value_deserializer = deserializer_for(configs["value.deserializer"])
        if "headers.deserializer" in configs:
            self.headers_deserializer = deserializer_for(configs["headers.deserializer"])
        return self

    def _deserialize(self, deserializer: Callable[[bytes], str] | None, data: bytes | None) -> bytes:
        raw = self.null_literal if data is None else data
        if deserializer is None:
            return raw
        return deserializer(raw).encode("utf-8", errors="replace")

    def format(self, record: ConsumerRecord) -> bytes:
        out: list[bytes] = []

        def separator(column: bool) -> None:
            out.append(self.key_separator if column else self.line_separator)

        if self.print_timestamp:
            name = _TIMESTAMP_TYPE_NAMES.get(record.timestamp_type)  # type: ignore[arg-type]
            if name is not None and record.timestamp is not None and record.timestamp >= 0:
                out.append(f"{name}:{record.timestamp}".encode())
            else:
                out.append(b"NO_TIMESTAMP")
            separator(self.print_offset or self.print_partition or self.print_headers or self.print_key
                      or self.print_value)
        if self.print_partition:
            out.append(f"Partition:{record.partition}".encode())
            separator(self.print_offset or self.print_headers or self.print_key or self.print_value)
        if self.print_offset:
            out.append(f"Offset:{record.offset}".encode())
            separator(self.print_headers or self.print_key or self.print_value)
        if self.print_headers:
            if record.headers:
                parts = []
                for key, value in record.headers:
                    parts.append(key.encode() + b":" + self._deserialize(self.headers_deserializer, value))
                out.append(self.headers_separator.join(parts))
            else:
                out.append(b"NO_HEADERS")
            separator(self.print_key or self.print_value)
        if self.print_key:
            out.append(self._deserialize(self.key_deserializer, record.key))
            separator(self.print_value)
        if self.print_value:
            out.append(self._deserialize(self.value_deserializer, record.value))
            out.append(self.line_separator)
        return b"".join(out)


class NoOpMessageFormatter(DefaultMessageFormatter):
    def format(self, record: ConsumerRecord) -> bytes:
        return b""


def formatter_for(name: str) -> DefaultMessageFormatter:
    short = name.rsplit(".", 1)[-1]
    if short == "DefaultMessageFormatter":
        return DefaultMessageFormatter()
    if short == "NoOpMessageFormatter":
        return NoOpMessageFormatter()
    raise click.UsageError(f"Unsupported --formatter {name}: use {DEFAULT_FORMATTER} or {NO_OP_FORMATTER}")


def to_record(r: Any) -> ConsumerRecord:
    headers = tuple((k, v) for k, v in (r.headers or ()))
    return ConsumerRecord(r.topic, r.partition, r.offset, r.timestamp, r.timestamp_type, r.key, r.value, headers)


# -- options ---------------------------------------------------------------------------------

def parse_offset(text: str) -> int:
    """``earliest`` → -2, ``latest`` → -1, a non-negative number → itself (Kafka's offsetArg)."""
    lowered = text.lower()
    if lowered == "earliest":
        return EARLIEST_TIMESTAMP
    if lowered == "latest":
        return LATEST_TIMESTAMP
    try:
        offset = int(lowered)
    except ValueError:
        offset = -1
    if offset < 0:
        raise click.UsageError(f"The provided offset value '{text}' is incorrect. Valid values are 'earliest', "
                               "'latest', or a non-negative long.")
    return offset


def random_group_id() -> str:
    """The throw-away group of a console consumer started without one."""
    return f"console-consumer-{random.randrange(100000)}"


def consumer_props(consumer_config: Mapping[str, str], extra: Mapping[str, str], bootstrap_server: str,
                   from_beginning: bool, isolation_level: str, group: str | None) -> dict[str, str]:
    """ConsoleConsumer.consumerProps, with the auto.offset.reset rules of setAutoOffsetResetValue
    and the group id rules of ConsumerConfig: without a group a random one, whose offsets
    are not committed unless enable.auto.commit asks for it."""
    props = dict(consumer_config)
    props.update(extra)
    if "auto.offset.reset" in props:
        if from_beginning and props["auto.offset.reset"] != "earliest":
            raise click.UsageError(f"Can't simultaneously specify --from-beginning and "
                                   f"'auto.offset.reset={props['auto.offset.reset']}', please remove one option")
    else:
        props["auto.offset.reset"] = "earliest" if from_beginning else "latest"
    props["bootstrap.servers"] = bootstrap_server
    props["isolation.level"] = isolation_level
    if group is not None:
        props["group.id"] = group
    else:
        props["group.id"] = random_group_id()
        props.setdefault("enable.auto.commit", "false")  # the group is not meant to be used again
    return props


# -- running ---------------------------------------------------------------------------------

class _Stop(Exception):
    pass


class ConsoleConsumer:
    """Polls the consumer and writes formatted records until a limit, a timeout or a signal."""

    def __init__(self, consumer: Any, formatter: DefaultMessageFormatter, output: IO[bytes],
                 max_messages: int = -1, timeout_ms: int = -1, skip_message_on_error: bool = False) -> None:
        self.consumer = consumer
        self.formatter = formatter
        self.output = output
        self.max_messages = max_messages
        self.timeout_ms = timeout_ms
        self.skip_message_on_error = skip_message_on_error
        self.message_count = 0

    def process(self, progress: Any = None) -> None:
        deadline = self._deadline()
        while self.max_messages < 0 or self.message_count < self.max_messages:
            remaining = self.max_messages - self.message_count if self.max_messages >= 0 else None
            wait_ms = 1000 if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            batches = self.consumer.poll(timeout_ms=min(wait_ms, 1000), max_records=remaining)
            records = [r for tp in sorted(batches, key=lambda t: (t.topic, t.partition)) for r in batches[tp]]
            if not records:
                if deadline is not None and time.monotonic() >= deadline:
                    logger.error("Error processing message, terminating consumer process: "
                                 "org.apache.kafka.common.errors.TimeoutException")
                    return
                continue
            for record in records:
                self.message_count += 1
                try:
                    self.output.write(self.formatter.format(to_record(record)))
                except (BrokenPipeError, ValueError):
                    click.echo("Unable to write to standard out, closing consumer.", err=True)
                    return
                except Exception as e:
                    if not self.skip_message_on_error:
                        raise
                    logger.error("Error processing message, skipping this message: %s", e)
            try:
                self.output.flush()
            except (BrokenPipeError, ValueError):
                click.echo("Unable to write to standard out, closing consumer.", err=True)
                return
            if progress is not None:
                progress.update(len(records))
            deadline = self._deadline()

    def _deadline(self) -> float | None:
        return None if self.timeout_ms < 0 else time.monotonic() + self.timeout_ms / 1000


def _raise_stop(signum: int, frame: Any) -> None:
    raise _Stop(signum)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to read data from Kafka topics and outputs it to standard output.")
@click.option("--topic", metavar="<topic>", help="The topic id to consume on.")
@click.option("--whitelist", metavar="<whitelist>",
              help="Regular expression specifying whitelist of topics to include for consumption.")
@click.option("--partition", type=int, metavar="<partition>",
              help="The partition to consume from. Consumption starts from the end of the partition unless "
                   "'--offset' is specified.")
@click.option("--offset", default="latest", show_default=True, metavar="<consume offset>",
              help="The offset id to consume from (a non-negative number), or 'earliest' which means from "
                   "beginning, or 'latest' which means from end")
@click.option("--consumer-property", multiple=True, metavar="<consumer_prop>",
              help="A mechanism to pass user-defined properties in the form key=value to the consumer.")
@click.option("--consumer.config", "consumer_config", metavar="<config file>",
              help="Consumer config properties file. Note that --consumer-property takes precedence over this "
                   "config.")
@click.option("--formatter", default=DEFAULT_FORMATTER, show_default=True, metavar="<class>",
              help="The name of a class to use for formatting kafka messages for display.")
@click.option("--property", "properties", multiple=True, metavar="<prop>",
              help="The properties to initialize the message formatter: print.timestamp, print.key, "
                   "print.offset, print.partition, print.headers, print.value, key.separator, line.separator, "
                   "headers.separator, null.literal, key.deserializer, value.deserializer, "
                   "headers.deserializer.")
@click.option("--from-beginning", is_flag=True,
              help="If the consumer does not already have an established offset to consume from, start with "
                   "the earliest message present in the log rather than the latest message.")
@click.option("--max-messages", type=int, metavar="<num_messages>",
              help="The maximum number of messages to consume before exiting. If not set, consumption is "
                   "continual.")
@click.option("--timeout-ms", type=int, metavar="<timeout_ms>",
              help="If specified, exit if no message is available for consumption for the specified interval.")
@click.option("--skip-message-on-error", is_flag=True,
              help="If there is an error when processing a message, skip it instead of halt.")
@click.option("--bootstrap-server", metavar="<server to connect to>", help="REQUIRED: The server(s) to connect to.")
@click.option("--key-deserializer", metavar="<deserializer for key>")
@click.option("--value-deserializer", metavar="<deserializer for values>")
@click.option("--enable-systest-events", is_flag=True,
              help="Log lifecycle events of the consumer in addition to logging consumed messages.")
@click.option("--isolation-level", default="read_uncommitted", show_default=True,
              type=click.Choice(["read_committed", "read_uncommitted"]),
              help="Set to read_committed in order to filter out transactional messages which are not "
                   "committed. Set to read_uncommitted to read all messages.")
@click.option("--group", metavar="<consumer group id>", help="The consumer group id of the consumer.")
@handle_errors()
def main(topic: str | None, whitelist: str | None, partition: int | None, offset: str,
         consumer_property: tuple[str, ...], consumer_config: str | None, formatter: str,
         properties: tuple[str, ...], from_beginning: bool, max_messages: int | None, timeout_ms: int | None,
         skip_message_on_error: bool, bootstrap_server: str | None, key_deserializer: str | None,
         value_deserializer: str | None, enable_systest_events: bool, isolation_level: str,
         group: str | None) -> None:
    ctx = click.get_current_context()
    offset_given = ctx.get_parameter_source("offset") == click.core.ParameterSource.COMMANDLINE
    if (topic is None) == (whitelist is None):
        raise click.UsageError("Exactly one of whitelist/topic is required.")
    if partition is not None:
        if topic is None:
            raise click.UsageError("The topic is required when partition is specified.")
        if from_beginning and offset_given:
            raise click.UsageError("Options from-beginning and offset cannot be specified together.")
    elif offset_given:
        raise click.UsageError("The partition is required when offset is specified.")
    offset_arg = parse_offset(offset) if offset_given else (EARLIEST_TIMESTAMP if from_beginning else LATEST_TIMESTAMP)
    if bootstrap_server is None:
        raise click.UsageError("Missing required argument \"[bootstrap-server]\"")
    validate_bootstrap_servers(bootstrap_server)

    file_props = load_props(consumer_config) if consumer_config else {}
    extra_props = parse_key_value_args(consumer_property)
    groups = {g for g in (group, file_props.get("group.id"), extra_props.get("group.id")) if g is not None}
    if len(groups) > 1:
        raise click.UsageError(
            "The group ids provided in different places (directly using '--group', via '--consumer-property', "
            "or via '--consumer.config') do not match. Detected group ids: "
            + ", ".join(f"'{g}'" for g in sorted(groups)))
    group_id = next(iter(groups), None)
    if group_id is not None and partition is not None:
        raise click.UsageError("Options group and partition cannot be specified together.")

    formatter_args = parse_key_value_args(properties)
    if key_deserializer:
        formatter_args["key.deserializer"] = key_deserializer
    if value_deserializer:
        formatter_args["value.deserializer"] = value_deserializer
    message_formatter = formatter_for(formatter).configure(formatter_args)

    props = consumer_props(file_props, extra_props, bootstrap_server, from_beginning, isolation_level, group_id)
    from kafka import KafkaConsumer, TopicPartition

    configs = client_configs(props, KafkaConsumer)
    consumer = connect(KafkaConsumer, configs)
    tool = ConsoleConsumer(consumer, message_formatter, sys.stdout.buffer,
                           max_messages if max_messages is not None else -1,
                           timeout_ms if timeout_ms is not None else -1, skip_message_on_error)
    previous_term = signal.signal(signal.SIGTERM, _raise_stop)
    status = 0
    try:
        if partition is not None:
            assert topic is not None
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            if offset_arg == EARLIEST_TIMESTAMP:
                consumer.seek_to_beginning(tp)
            elif offset_arg == LATEST_TIMESTAMP:
                consumer.seek_to_end(tp)
            else:
                consumer.seek(tp, offset_arg)
        elif topic is not None:
            subscribe(consumer, topics=[topic])
        else:
            subscribe(consumer, pattern=whitelist)
        if enable_systest_events:
            click.echo("startup_complete")
        with progress_bar(tool.max_messages, "Consuming",
                          enabled=tool.max_messages > 0 and want_progress_bar()) as bar:
            tool.process(bar)
    except (KeyboardInterrupt, _Stop) as e:
        status = 143 if isinstance(e, _Stop) else 130
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        try:
            consumer.close()
        finally:
            click.echo(f"Processed a total of {tool.message_count} messages", err=True)
            if enable_systest_events:
                click.echo("shutdown_complete")
    if status:
        raise click.exceptions.Exit(status)


if __name__ == "__main__":
    run_tool(main, "kafka-console-consumer.sh")
