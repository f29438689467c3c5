"""Port of core/src/main/scala/kafka/tools/ConsoleProducer.scala (``bin/kafka-console-producer.sh``).

Reads lines from standard input and sends each as one record with kafka-python's
KafkaProducer. ``LineMessageReader`` turns a line into a record; its ``--property``
settings:

- ``parse.key=true`` with ``key.separator`` (default tab): ``key<sep>value``;
- ``parse.headers=true`` with ``headers.delimiter`` (default tab) ending the headers,
  ``headers.separator`` (default ``,``, a regular expression) between headers and
  ``headers.key.separator`` (default ``:``) between a header's key and value:
  ``h1:v1,h2:v2<tab>key<tab>value``;
- ``null.marker``: a key, value or header value equal to it is sent as null;
- ``ignore.error=true``: a line without the expected separator is sent without key
  (or headers) instead of stopping the tool.

Kafka 2.8.2's LineMessageReader knows only parse.key, key.separator and ignore.error;
the header and null-marker properties are those Kafka added in 3.2 (KIP-798, KIP-810),
taken over with the same names, defaults and checks so that lines written for a newer
console producer mean the same here.

Producer settings follow Kafka 2.8's tool: ``--request-required-acks`` (default 1),
``--timeout`` is linger.ms (default 1000), ``--request-timeout-ms`` (1500),
``--message-send-max-retries`` (3), ``--retry-backoff-ms``, ``--max-partition-memory-bytes``
(batch.size), ``--metadata-expiry-ms``, ``--max-block-ms``, ``--socket-buffer-size``,
``--compression-codec`` (gzip when given without a value), then ``--producer.config``
and ``--producer-property`` with Kafka's client property names. Idempotence is off
unless asked for, as in Kafka 2.8's producer. ``--sync`` sends one record at a time and
waits for its acknowledgement.

Differences from Kafka's tool, on purpose: a record the cluster refuses is reported
on stderr (one line per failure) and makes the tool exit with status 1 after the
remaining lines are sent; only the default line reader exists (``--line-reader``
accepts nothing else).
"""
from __future__ import annotations

import io
import logging
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Iterator, Mapping

import click

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    connect,
    describe_exception,
    handle_errors,
    load_props,
    parse_key_value_args,
    progress_bar,
    run_tool,
    validate_bootstrap_servers,
    want_progress_bar,
)

logger = logging.getLogger(__name__)

DEFAULT_LINE_READER = "kafka.tools.ConsoleProducer$LineMessageReader"
DEFAULT_COMPRESSION_CODEC = "gzip"
COMPRESSION_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


class LineReaderException(Exception):
    """A line the reader cannot turn into a record (KafkaException in Kafka's reader)."""


@dataclass(frozen=True)
class ProducerRecord:
    topic: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


def _bool_prop(props: Mapping[str, str], name: str, default: bool) -> bool:
    if name in props:
        return props[name].strip().lower() == "true"
    return default


def _java_regex_split(pattern: re.Pattern[str], text: str) -> list[str]:
    # Java's Pattern.split drops trailing empty strings (and a leading empty string
    # produced by a zero-width match at the start, which a separator never is here).
    parts = pattern.split(text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


@dataclass
class LineMessageReader:
    """ConsoleProducer.LineMessageReader: one record per line of text."""

    topic: str = ""
    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None
    line_number: int = 0
    _headers_separator_pattern: re.Pattern[str] = field(default=re.compile(","), repr=False)

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> "LineMessageReader":
        reader = cls(
            topic=props.get("topic", ""),
            parse_key=_bool_prop(props, "parse.key", False),
            key_separator=props.get("key.separator", "\t"),
            parse_headers=_bool_prop(props, "parse.headers", False),
            headers_delimiter=props.get("headers.delimiter", "\t"),
            headers_separator=props.get("headers.separator", ","),
            headers_key_separator=props.get("headers.key.separator", ":"),
            ignore_error=_bool_prop(props, "ignore.error", False),
            null_marker=props.get("null.marker"),
        )
        reader.check()
        return reader

    def check(self) -> None:
        try:
            self._headers_separator_pattern = re.compile(self.headers_separator)
        except re.error as e:
            raise LineReaderException(f"headers.separator '{self.headers_separator}' is not a valid "
                                      f"regular expression: {e}") from e
        pairs = [
            ("headers.delimiter", self.headers_delimiter, "headers.separator", self.headers_separator),
            ("headers.delimiter", self.headers_delimiter, "headers.key.separator", self.headers_key_separator),
            ("headers.separator", self.headers_separator, "headers.key.separator", self.headers_key_separator),
        ]
        for name_a, a, name_b, b in pairs:
            if a == b:
                raise LineReaderException(f"{name_a} and {name_b} may not be equal")
        if self.null_marker is not None:
            for name, value in (("key.separator", self.key_separator),
                                ("headers.separator", self.headers_separator),
                                ("headers.delimiter", self.headers_delimiter),
                                ("headers.key.separator", self.headers_key_separator)):
                if self.null_marker == value:
                    raise LineReaderException(f"null.marker and {name} may not be equal")

    def read_message(self, line: str | None) -> ProducerRecord | None:
        """The record for one line (without its line terminator); None at end of input."""
        self.line_number += 1
        if line is None:
            return None
        headers = self._parse(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter")
        header_offset = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._parse(self.parse_key, line, header_offset, self.key_separator, "key separator")
        key_offset = 0 if key is None else len(key) + len(self.key_separator)
        value = line[header_offset + key_offset:]
        record_headers: tuple[tuple[str, bytes | None], ...] = ()
        if headers is not None and headers != self.null_marker:
            record_headers = tuple(self._split_headers(headers))
        return ProducerRecord(
            topic=self.topic,
            key=key.encode() if key is not None and key != self.null_marker else None,
            value=value.encode() if value != self.null_marker else None,
            headers=record_headers,
        )

    def _parse(self, enabled: bool, line: str, start: int, demarcation: str, name: str) -> str | None:
        if not enabled:
            return None
        index = line.find(demarcation, start)
        if index == -1:
            if self.ignore_error:
                return None
            raise LineReaderException(f"No {name} found on line number {self.line_number}: '{line}'")
        return line[start:index]

    def _split_headers(self, headers: str) -> Iterator[tuple[str, bytes | None]]:
        for pair in _java_regex_split(self._headers_separator_pattern, headers):
            index = pair.find(self.headers_key_separator)
            if index == -1:
                if self.ignore_error:
                    yield pair, None
                    continue
                raise LineReaderException(
                    f"No header key separator found in pair '{pair}' on line number {self.line_number}")
            header_key = pair[:index]
            if header_key == self.null_marker:
                raise LineReaderException(f"Header keys should not be equal to the null marker "
                                          f"'{self.null_marker}' as they can't be null")
            header_value = pair[index + len(self.headers_key_separator):]
            yield header_key, None if header_value == self.null_marker else header_value.encode()


def read_lines(stream: IO[str]) -> Iterator[str]:
    """Lines without their terminator, as Java's BufferedReader.readLine gives them."""
    for line in stream:
        if line.endswith("\r\n"):
            yield line[:-2]
        elif line.endswith(("\n", "\r")):
            yield line[:-1]
        else:
            yield line


def producer_props(*, bootstrap_server: str, compression_codec: str, producer_config: Mapping[str, str],
                   extra_producer_props: Mapping[str, str], explicit: Mapping[str, str],
                   defaults: Mapping[str, str]) -> dict[str, str]:
    """ConsoleProducer.producerProps: file, then --producer-property, then the tool's own options.

    An option given on the command line always wins; an option left at its default only
    fills a property that neither the file nor --producer-property set
    (CommandLineUtils.maybeMergeOptions).
    """
    props: dict[str, str] = {"enable.idempotence": "false"}
    props.update(producer_config)
    props.update(extra_producer_props)
    props["bootstrap.servers"] = bootstrap_server
    props["compression.type"] = compression_codec
    props.setdefault("client.id", "console-producer")
    for key, value in defaults.items():
        if key in explicit:
            props[key] = explicit[key]
        elif key not in props:
            props[key] = value
    return props


class ConsoleProducer:
    """Sends what a reader yields; counts failures reported by the producer's callbacks."""

    def __init__(self, producer: Any, sync: bool, err: Any = None) -> None:
        self.producer = producer
        self.sync = sync
        self.failures = 0
        self.err = err or (lambda line: click.echo(line, err=True))

    def send(self, record: ProducerRecord) -> None:
        future = self.producer.send(record.topic, value=record.value, key=record.key,
                                    headers=list(record.headers) or None)
        if self.sync:
            # flush first: a synchronous send must not sit out linger.ms
            self.producer.flush()
            try:
                future.get()
            except Exception as e:
                self._failed(record, e)
        else:
            future.add_errback(lambda e, r=record: self._failed(r, e))

    def _failed(self, record: ProducerRecord, e: BaseException) -> None:
        self.failures += 1
        key = record.key.decode(errors="replace") if record.key is not None else "null"
        size = len(record.value) if record.value is not None else -1
        self.err(f"Error when sending message to topic {record.topic} with key: {key}, value: {size} bytes "
                 f"with error: {describe_exception(e)}")


def _stdin_size(stream: Any) -> int | None:
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to read data from standard input and publish it to Kafka.")
@click.option("--topic", metavar="<topic>", help="REQUIRED: The topic id to produce messages to.")
@click.option("--bootstrap-server", metavar="<server to connect to>",
              help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. The "
                   "broker list string in the form HOST1:PORT1,HOST2:PORT2.")
@click.option("--broker-list", metavar="<broker-list>",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--sync", is_flag=True,
              help="If set message send requests to the brokers are synchronously, one at a time as they arrive.")
@click.option("--compression-codec", is_flag=False, flag_value=DEFAULT_COMPRESSION_CODEC, default=None,
              metavar="[compression-codec]",
              help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'. If specified "
                   "without value, then it defaults to 'gzip'")
@click.option("--batch-size", type=int, default=200, show_default=True,
              help="Number of messages to send in a single batch if they are not being sent synchronously "
                   "(kept for compatibility: batching follows --max-partition-memory-bytes).")
@click.option("--message-send-max-retries", type=int, default=3, show_default=True,
              help="The number of retries before the producer gives up and drops a message.")
@click.option("--retry-backoff-ms", type=int, default=100, show_default=True,
              help="Time the producer waits before refreshing metadata and retrying.")
@click.option("--timeout", "send_timeout", type=int, default=1000, show_default=True, metavar="<timeout_ms>",
              help="If set and the producer is running in asynchronous mode, this gives the maximum amount "
                   "of time a message will queue awaiting sufficient batch size (linger.ms).")
@click.option("--request-required-acks", default="1", show_default=True,
              help="The required acks of the producer requests")
@click.option("--request-timeout-ms", type=int, default=1500, show_default=True,
              help="The ack timeout of the producer requests. Value must be non-negative and non-zero")
@click.option("--metadata-expiry-ms", type=int, default=5 * 60 * 1000, show_default=True,
              help="The period of time in milliseconds after which we force a refresh of metadata.")
@click.option("--max-block-ms", type=int, default=60 * 1000, show_default=True,
              help="The max time that the producer will block for during a send request")
@click.option("--max-memory-bytes", type=int, default=32 * 1024 * 1024, show_default=True,
              help="The total memory used by the producer to buffer records (kept for compatibility; "
                   "kafka-python has no such bound).")
@click.option("--max-partition-memory-bytes", type=int, default=16 * 1024, show_default=True,
              help="The buffer size allocated for a partition (batch.size).")
@click.option("--line-reader", default=DEFAULT_LINE_READER, show_default=True,
              help="The class name of the class to use for reading lines from standard in.")
@click.option("--socket-buffer-size", type=int, default=1024 * 100, show_default=True,
              help="The size of the tcp send buffer.")
@click.option("--property", "properties", multiple=True, metavar="<prop>",
              help="key=value properties for the line reader: parse.key, key.separator, parse.headers, "
                   "headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error.")
@click.option("--producer-property", multiple=True, metavar="<producer_prop>",
              help="A mechanism to pass user-defined properties in the form key=value to the producer.")
@click.option("--producer.config", "producer_config", metavar="<config file>",
              help="Producer config properties file. Note that --producer-property takes precedence.")
@handle_errors()
def main(topic: str | None, bootstrap_server: str | None, broker_list: str | None, sync: bool,
         compression_codec: str | None, batch_size: int, message_send_max_retries: int, retry_backoff_ms: int,
         send_timeout: int, request_required_acks: str, request_timeout_ms: int, metadata_expiry_ms: int,
         max_block_ms: int, max_memory_bytes: int, max_partition_memory_bytes: int, line_reader: str,
         socket_buffer_size: int, properties: tuple[str, ...], producer_property: tuple[str, ...],
         producer_config: str | None) -> None:
    ctx = click.get_current_context()
    if topic is None:
        raise click.UsageError("Missing required argument \"[topic]\"")
    servers = bootstrap_server or broker_list
    if servers is None:
        raise click.UsageError("Missing required argument \"[bootstrap-server]\"")
    validate_bootstrap_servers(servers, "--bootstrap-server" if bootstrap_server else "--broker-list")
    if line_reader not in (DEFAULT_LINE_READER, "LineMessageReader"):
        raise click.UsageError(f"Unsupported --line-reader {line_reader}: only {DEFAULT_LINE_READER} is available")
    codec = compression_codec if compression_codec is not None else "none"
    if codec == "":
        codec = DEFAULT_COMPRESSION_CODEC
    if codec not in COMPRESSION_CODECS:
        raise click.UsageError(f"Unknown compression codec '{codec}': use one of {', '.join(COMPRESSION_CODECS)}")

    reader_props = {"topic": topic, **parse_key_value_args(properties)}
    try:
        reader = LineMessageReader.from_props(reader_props)
    except LineReaderException as e:
        raise CommandError(str(e)) from e

    option_props = {
        "linger.ms": ("send_timeout", str(send_timeout)),
        "acks": ("request_required_acks", request_required_acks),
        "request.timeout.ms": ("request_timeout_ms", str(request_timeout_ms)),
        "retries": ("message_send_max_retries", str(message_send_max_retries)),
        "retry.backoff.ms": ("retry_backoff_ms", str(retry_backoff_ms)),
        "send.buffer.bytes": ("socket_buffer_size", str(socket_buffer_size)),
        "batch.size": ("max_partition_memory_bytes", str(max_partition_memory_bytes)),
        "metadata.max.age.ms": ("metadata_expiry_ms", str(metadata_expiry_ms)),
        "max.block.ms": ("max_block_ms", str(max_block_ms)),
    }
    explicit = {key: value for key, (param, value) in option_props.items()
                if ctx.get_parameter_source(param) == click.core.ParameterSource.COMMANDLINE}
    props = producer_props(
        bootstrap_server=servers, compression_codec=codec,
        producer_config=load_props(producer_config) if producer_config else {},
        extra_producer_props=parse_key_value_args(producer_property),
        explicit=explicit, defaults={k: v for k, (_, v) in option_props.items()})

    from kafka import KafkaProducer

    producer = connect(KafkaProducer, client_configs(props, KafkaProducer))
    tool = ConsoleProducer(producer, sync)
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="")
    prompt = sys.stdin.isatty()
    size = _stdin_size(sys.stdin)
    try:
        with progress_bar(size, "Producing", enabled=bool(size) and want_progress_bar()) as bar:
            lines = read_lines(stdin)
            while True:
                if prompt:
                    click.echo(">", nl=False)
                line = next(lines, None)
                try:
                    record = reader.read_message(line)
                except LineReaderException as e:
                    raise CommandError(str(e)) from e
                if record is None:
                    break
                tool.send(record)
                if line is not None:
                    bar.update(len(line.encode()) + 1)
    finally:
        producer.close()
    if tool.failures:
        raise CommandError(f"{tool.failures} record(s) could not be sent")


if __name__ == "__main__":
    run_tool(main, "kafka-console-producer.sh")
