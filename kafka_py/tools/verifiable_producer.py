"""Port of tools/src/main/java/org/apache/kafka/tools/VerifiableProducer.java
(``bin/kafka-verifiable-producer.sh``).

Produces the increasing integers 0, 1, 2... (as strings, ``<value-prefix>.<n>`` with
``--value-prefix``) to ``--topic`` and prints one JSON object a line on stdout for each
outcome, so that a test harness can tell which records the cluster acknowledged:

    {"timestamp":...,"name":"startup_complete"}
    {"timestamp":...,"name":"producer_send_success","key":null,"value":"0","topic":"t","partition":0,"offset":0}
    {"timestamp":...,"name":"producer_send_error","key":null,"value":"7","topic":"t",
     "exception":"class org.apache.kafka.common.errors.TimeoutException","message":"..."}
    {"timestamp":...,"name":"shutdown_complete"}
    {"timestamp":...,"name":"tool_data","sent":N,"acked":M,"target_throughput":-1,"avg_throughput":...}

The field names and their order are those Kafka's system tests parse
(tests/kafkatest/services/verifiable_producer.py). The producer sends with ``--acks``
(default -1) and no retries, as Kafka's tool configures it; ``--producer.config`` may
override both. ``--max-messages -1`` produces until SIGTERM or SIGINT; either signal,
or the last message, ends with the producer flushed and closed, then
``shutdown_complete`` and ``tool_data``.
"""
from __future__ import annotations

import json
import signal
import sys
import threading
import time
from typing import IO, Any, Callable, Optional

import click

from kafka_py.core.utils.command_line_utils import client_configs, connect, handle_errors, load_props, run_tool
from kafka_py.tools.producer_performance import JAVA_PRODUCER_DEFAULTS, ThroughputThrottler

JAVA_ERRORS_PACKAGE = "org.apache.kafka.common.errors"


def now_ms() -> int:
    return int(time.time() * 1000)


def java_exception_class(e: BaseException) -> str:
    """What ``exception.getClass().toString()`` prints for the Java client's exception that
    corresponds to kafka-python's ``e``: the exception class Kafka names for the error code,
    a TimeoutException for kafka-python's own timeouts, else the Python class's name."""
    errno = getattr(e, "errno", None)
    if isinstance(errno, int) and errno > 0:
        from kafka_py.clients.common.protocol.errors import Errors

        try:
            name = Errors.for_code(errno).exception_name
        except (KeyError, ValueError):
            name = None
        if name:
            return f"class {JAVA_ERRORS_PACKAGE}.{name}"
    type_name = type(e).__name__
    if "Timeout" in type_name:
        return f"class {JAVA_ERRORS_PACKAGE}.TimeoutException"
    return f"class {type(e).__module__}.{type_name}"


def exception_message(e: BaseException) -> Optional[str]:
    """``exception.getMessage()``: the exception's text, or null when it has none."""
    if e.args and isinstance(e.args[0], str) and e.args[0]:
        return e.args[0]
    description = getattr(e, "description", None)
    return description or (str(e) or None)


class EventPrinter:
    """Prints events as compact JSON lines. Callbacks arrive on the client's I/O thread while
    the main thread prints too, so every line is written whole under one lock."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.lock = threading.Lock()

    def print_json(self, name: str, **fields: Any) -> None:
        event = {"timestamp": now_ms(), "name": name, **fields}
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
        with self.lock:
            try:
                self.out.write(line + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError):
                pass


class VerifiableProducer:
    def __init__(self, producer: Any, topic: str, throughput: int, max_messages: int,
                 value_prefix: Optional[int], create_time: Optional[int], repeating_keys: Optional[int],
                 printer: EventPrinter) -> None:
        self.producer = producer
        self.topic = topic
        self.throughput = throughput
        self.max_messages = max_messages
        self.value_prefix = value_prefix
        self.create_time = create_time
        self.repeating_keys = repeating_keys
        self.printer = printer
        self.start_time = now_ms()
        self.key_counter = 0
        self.num_sent = 0
        self.num_acked = 0
        self.stop_producing = threading.Event()
        self._count_lock = threading.Lock()

    def get_value(self, n: int) -> str:
        return f"{self.value_prefix}.{n}" if self.value_prefix is not None else str(n)

    def get_key(self) -> Optional[str]:
        if self.repeating_keys is None:
            return None
        key = str(self.key_counter)
        self.key_counter += 1
        if self.key_counter == self.repeating_keys:
            self.key_counter = 0
        return key

    def _on_success(self, key: Optional[str], value: str) -> Callable[[Any], None]:
        def callback(metadata: Any) -> None:
            with self._count_lock:
                self.num_acked += 1
            self.printer.print_json("producer_send_success", key=key, value=value, topic=metadata.topic,
                                    partition=metadata.partition, offset=metadata.offset)
        return callback

    def _on_error(self, key: Optional[str], value: str) -> Callable[[BaseException], None]:
        def errback(e: BaseException) -> None:
            self.printer.print_json("producer_send_error", key=key, value=value, topic=self.topic,
                                    exception=java_exception_class(e), message=exception_message(e))
        return errback

    def send(self, key: Optional[str], value: str) -> None:
        timestamp_ms = None
        if self.create_time is not None:
            timestamp_ms = self.create_time
            # Kafka's tool moves the create time on by the time since it started, at every send
            self.create_time += now_ms() - self.start_time
        self.num_sent += 1
        try:
            future = self.producer.send(self.topic, value=value.encode(),
                                        key=None if key is None else key.encode(), timestamp_ms=timestamp_ms)
        except Exception as e:  # noqa: BLE001 - a refused send is reported as an event, as Kafka's tool does
            self._on_error(key, value)(e)
            return
        future.add_callback(self._on_success(key, value))
        future.add_errback(self._on_error(key, value))

    def run(self, throttler: ThroughputThrottler) -> None:
        self.printer.print_json("startup_complete")
        limit = sys.maxsize if self.max_messages < 0 else self.max_messages
        i = 0
        while i < limit and not self.stop_producing.is_set():
            send_start = now_ms()
            self.send(self.get_key(), self.get_value(i))
            if throttler.should_throttle(i, send_start):
                throttler.throttle()
            i += 1

    def close(self) -> None:
        self.producer.close()
        self.printer.print_json("shutdown_complete")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool produces increasing integers to the specified topic and prints JSON metadata to "
                    "stdout on each \"send\" request, making externally visible which messages have been acked "
                    "and which have not.")
@click.option("--topic", required=True, metavar="TOPIC", help="Produce messages to this topic.")
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="REQUIRED: The server(s) to connect to. Comma-separated list of Kafka brokers in the form "
                   "HOST1:PORT1,HOST2:PORT2,...")
@click.option("--broker-list", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--max-messages", type=int, default=-1, show_default=True, metavar="MAX-MESSAGES",
              help="Produce this many messages. If -1, produce messages until the process is killed externally.")
@click.option("--throughput", type=int, default=-1, show_default=True, metavar="THROUGHPUT",
              help="If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec.")
@click.option("--acks", type=click.Choice(["0", "1", "-1"]), default="-1", show_default=True, metavar="ACKS",
              help="Acks required on each produced message. See Kafka docs on acks for details.")
@click.option("--producer.config", "producer_config", metavar="CONFIG_FILE", help="Producer config properties file.")
@click.option("--message-create-time", type=int, default=-1, show_default=True, metavar="CREATETIME",
              help="Send messages with creation time starting at the arguments value, in milliseconds since epoch")
@click.option("--value-prefix", type=int, metavar="VALUE-PREFIX",
              help="If specified, each produced value will have this prefix with a dot separator")
@click.option("--repeating-keys", type=int, metavar="REPEATING-KEYS",
              help="If specified, each produced record will have a key starting at 0 increment by 1 up to the "
                   "number specified (exclusive), then the key is set to 0 again")
@handle_errors()
def main(topic: str, bootstrap_server: Optional[str], broker_list: Optional[str], max_messages: int,
         throughput: int, acks: str, producer_config: Optional[str], message_create_time: int,
         value_prefix: Optional[int], repeating_keys: Optional[int]) -> None:
    if bootstrap_server is not None and broker_list is not None:
        raise click.UsageError("argument --broker-list: not allowed with argument --bootstrap-server")
    servers = bootstrap_server or broker_list
    if servers is None:
        click.echo(click.get_current_context().get_help())
        return
    props = {**JAVA_PRODUCER_DEFAULTS, "bootstrap.servers": servers, "acks": acks, "retries": "0"}
    if producer_config is not None:
        props.update(load_props(producer_config))
    from kafka import KafkaProducer

    producer = connect(KafkaProducer, client_configs(props, KafkaProducer))
    printer = EventPrinter(sys.stdout)
    tool = VerifiableProducer(producer, topic, throughput, max_messages, value_prefix,
                              None if message_create_time == -1 else message_create_time, repeating_keys, printer)
    start_ms = now_ms()
    throttler = ThroughputThrottler(throughput, start_ms)

    def stop(signum: int, frame: Any) -> None:
        tool.stop_producing.set()
        throttler.wakeup()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        tool.run(throttler)
    finally:
        # what Kafka's shutdown hook does, after the last message or on a signal alike
        tool.close()
        elapsed = now_ms() - start_ms
        avg = 1000 * tool.num_acked / elapsed if elapsed > 0 else 0.0
        printer.print_json("tool_data", sent=tool.num_sent, acked=tool.num_acked, target_throughput=throughput,
                           avg_throughput=avg)


if __name__ == "__main__":
    run_tool(main, "kafka-verifiable-producer.sh")
