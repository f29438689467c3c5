"""Port of core/src/main/scala/kafka/tools/ConsumerPerformance.scala and PerfConfig.scala
(``bin/kafka-consumer-perf-test.sh``).

Consumes ``--messages`` records of ``--topic`` with kafka-python's KafkaConsumer and
prints Kafka's comma-separated report:

    start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    2024-01-01 10:00:00:000, 2024-01-01 10:00:02:345, 95.3674, 40.6684, 100000, 42643.9232, 0, 2345, 40.6684, 42643.9232

or, with ``--show-detailed-stats``, one line every ``--reporting-interval`` ms
(``time, threadId, ...``). Consumption stops after the requested count, or when no
record arrived for ``--timeout`` ms (with Kafka's WARNING line). ``--date-format`` takes
java.text.SimpleDateFormat patterns.

The consumer subscribes to the topic in a group, ``--group`` or else a random
``perf-consumer-NNNNN`` (commits as the consumer config says: auto-commit, on by
default), and rebalance.time.ms is the time spent joining it: from the subscription, or
from the last revocation, to each assignment, as Kafka's rebalance listener measures it.
"""
from __future__ import annotations

import logging
import math
import random
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import click

from kafka_py.core.utils.command_line_utils import (
    client_configs,
    connect,
    format_metrics,
    handle_errors,
    load_props,
    merged_metric_names,
    progress_bar,
    run_tool,
    validate_bootstrap_servers,
    want_progress_bar,
)
from kafka_py.core.tools.group_subscription import subscribe

logger = logging.getLogger(__name__)

DEFAULT_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS"
NEW_FIELDS_IN_HEADER = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
POLL_TIMEOUT_MS = 100

Out = Callable[[str], None]


# -- java.text.SimpleDateFormat --------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_TOKEN = re.compile(r"'((?:[^']|'')*)'|([A-Za-z])\2*|.", re.S)


def java_date_format(pattern: str, epoch_ms: int) -> str:
    """``epoch_ms`` in local time, formatted with a SimpleDateFormat pattern."""
    t = time.localtime(epoch_ms // 1000)
    millis = epoch_ms % 1000
    out: list[str] = []
    for match in _TOKEN.finditer(pattern):
        token = match.group(0)
        if match.group(1) is not None:
            out.append("'" if token == "''" else match.group(1).replace("''", "'"))
            continue
        letter, n = token[0], len(token)
        if not letter.isalpha():
            out.append(token)
        elif letter == "y":
            out.append(f"{t.tm_year % 100:02d}" if n == 2 else f"{t.tm_year:0{n}d}")
        elif letter == "M":
            month = _MONTHS[t.tm_mon - 1]
            out.append(month if n >= 4 else month[:3] if n == 3 else f"{t.tm_mon:0{n}d}")
        elif letter == "d":
            out.append(f"{t.tm_mday:0{n}d}")
        elif letter == "D":
            out.append(f"{t.tm_yday:0{n}d}")
        elif letter == "E":
            day = _DAYS[t.tm_wday]
            out.append(day if n >= 4 else day[:3])
        elif letter == "a":
            out.append("AM" if t.tm_hour < 12 else "PM")
        elif letter == "H":
            out.append(f"{t.tm_hour:0{n}d}")
        elif letter == "k":
            out.append(f"{t.tm_hour or 24:0{n}d}")
        elif letter == "K":
            out.append(f"{t.tm_hour % 12:0{n}d}")
        elif letter == "h":
            out.append(f"{t.tm_hour % 12 or 12:0{n}d}")
        elif letter == "m":
            out.append(f"{t.tm_min:0{n}d}")
        elif letter == "s":
            out.append(f"{t.tm_sec:0{n}d}")
        elif letter == "S":
            out.append(f"{millis:0{n}d}")
        elif letter == "Z":
            offset = t.tm_gmtoff // 60
            sign = "+" if offset >= 0 else "-"
            out.append(f"{sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}")
        elif letter == "z":
            out.append(t.tm_zone or "")
        else:
            raise click.UsageError(f"Illegal pattern character '{letter}' in --date-format {pattern}")
    return "".join(out)


# -- report lines ----------------------------------------------------------------------------

def _f4(value: float) -> str:
    # Java's %.4f of a double divided by zero
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return f"{value:.4f}"


def _div(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def header_line(show_detailed_stats: bool) -> str:
    if show_detailed_stats:
        return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + NEW_FIELDS_IN_HEADER
    return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + NEW_FIELDS_IN_HEADER


def summary_line(date_format: str, start_ms: int, end_ms: int, bytes_read: int, messages_read: int,
                 join_time_ms: int) -> str:
    elapsed_secs = (end_ms - start_ms) / 1000.0
    fetch_time_ms = (end_ms - start_ms) - join_time_ms
    total_mb = bytes_read / (1024 * 1024)
    return ", ".join([
        java_date_format(date_format, start_ms),
        java_date_format(date_format, end_ms),
        _f4(total_mb),
        _f4(_div(total_mb, elapsed_secs)),
        str(messages_read),
        _f4(_div(messages_read, elapsed_secs)),
        str(join_time_ms),
        str(fetch_time_ms),
        _f4(_div(total_mb, fetch_time_ms / 1000.0)),
        _f4(_div(messages_read, fetch_time_ms / 1000.0)),
    ])


def progress_line(date_format: str, thread_id: int, bytes_read: int, last_bytes_read: int, messages_read: int,
                  last_messages_read: int, start_ms: int, end_ms: int, periodic_join_time_ms: int) -> str:
    """printConsumerProgress: the basic columns then the rebalance/fetch ones."""
    elapsed_ms = float(end_ms - start_ms)
    total_mb = bytes_read / (1024 * 1024)
    interval_mb = (bytes_read - last_bytes_read) / (1024 * 1024)
    basic = [java_date_format(date_format, end_ms), str(thread_id), _f4(total_mb),
             _f4(_div(1000.0 * interval_mb, elapsed_ms)), str(messages_read),
             _f4(_div(messages_read - last_messages_read, elapsed_ms) * 1000.0)]
    fetch_time_ms = end_ms - start_ms - periodic_join_time_ms
    if fetch_time_ms <= 0:
        fetch_mb_sec, fetch_msg_sec = 0.0, 0.0
    else:
        fetch_mb_sec = 1000.0 * interval_mb / fetch_time_ms
        fetch_msg_sec = 1000.0 * (messages_read - last_messages_read) / fetch_time_ms
    extended = [str(periodic_join_time_ms), str(fetch_time_ms), _f4(fetch_mb_sec), _f4(fetch_msg_sec)]
    return ", ".join(basic + extended)


# -- consuming -------------------------------------------------------------------------------

@dataclass
class ConsumeResult:
    messages_read: int = 0
    bytes_read: int = 0
    join_time_ms: int = 0


def now_ms() -> int:
    return int(time.time() * 1000)


def consume(consumer: Any, count: int, timeout_ms: int, reporting_interval: int, show_detailed_stats: bool,
            date_format: str, out: Out, on_progress: Callable[[int], None] | None = None,
            join_started: Callable[[], int] | None = None, join_time: Callable[[], int] | None = None,
            take_periodic_join_time: Callable[[], int] | None = None) -> ConsumeResult:
    """ConsumerPerformance.consume: poll until ``count`` records or ``timeout_ms`` of silence."""
    result = ConsumeResult()
    last_bytes_read = 0
    last_messages_read = 0
    current = now_ms()
    last_report = current
    last_consumed = current
    while result.messages_read < count and current - last_consumed <= timeout_ms:
        batches = consumer.poll(timeout_ms=POLL_TIMEOUT_MS)
        current = now_ms()
        n = 0
        for records in batches.values():
            for record in records:
                n += 1
                result.messages_read += 1
                if record.key is not None:
                    result.bytes_read += len(record.key)
                if record.value is not None:
                    result.bytes_read += len(record.value)
                if current - last_report >= reporting_interval:
                    periodic = take_periodic_join_time() if take_periodic_join_time else 0
                    if show_detailed_stats:
                        out(progress_line(date_format, 0, result.bytes_read, last_bytes_read, result.messages_read,
                                          last_messages_read, last_report, current, periodic))
                    last_report = current
                    last_messages_read = result.messages_read
                    last_bytes_read = result.bytes_read
        if n:
            last_consumed = current
            if on_progress is not None:
                on_progress(n)
    if result.messages_read < count:
        out(f"WARNING: Exiting before consuming the expected number of messages: timeout ({timeout_ms} ms) "
            "exceeded. You can use the --timeout option to increase the timeout.")
    if join_time is not None:
        result.join_time_ms = join_time()
    return result


class _JoinTimer:
    """Measures the time spent joining the group, as Kafka's rebalance listener does."""

    def __init__(self) -> None:
        self.join_start = now_ms()
        self.total = 0
        self.periodic = 0

    def listener(self) -> Any:
        from kafka import ConsumerRebalanceListener

        timer = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                timer.join_start = now_ms()

            def on_partitions_assigned(self, assigned: Any) -> None:
                elapsed = now_ms() - timer.join_start
                timer.total += elapsed
                timer.periodic += elapsed

        return Listener()

    def take_periodic(self) -> int:
        value, self.periodic = self.periodic, 0
        return value


def random_group_id() -> str:
    """--group's default: a new group for every run."""
    return f"perf-consumer-{random.randrange(100000)}"


def consumer_props(consumer_config: Mapping[str, str], bootstrap_server: str, group: str | None,
                   socket_buffer_size: int, fetch_size: int, from_latest: bool) -> dict[str, str]:
    props = dict(consumer_config)
    props["bootstrap.servers"] = bootstrap_server
    props["group.id"] = group if group is not None else random_group_id()
    props["receive.buffer.bytes"] = str(socket_buffer_size)
    props["max.partition.fetch.bytes"] = str(fetch_size)
    props["auto.offset.reset"] = "latest" if from_latest else "earliest"
    props["check.crcs"] = "false"
    return props


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps in performance test for the full zookeeper consumer")
@click.option("--bootstrap-server", metavar="<server to connect to>",
              help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.")
@click.option("--broker-list", metavar="<broker-list>",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--topic", metavar="<topic>", help="REQUIRED: The topic to consume from.")
@click.option("--group", metavar="<gid>",
              help="The group id to consume on.  [default: perf-consumer-<random number below 100000>]")
@click.option("--fetch-size", type=int, default=1024 * 1024, show_default=True, metavar="<size>",
              help="The amount of data to fetch in a single request.")
@click.option("--from-latest", is_flag=True,
              help="If the consumer does not already have an established offset to consume from, start with "
                   "the latest message present in the log rather than the earliest message.")
@click.option("--socket-buffer-size", type=int, default=2 * 1024 * 1024, show_default=True, metavar="<size>",
              help="The size of the tcp RECV size.")
@click.option("--threads", type=int, default=None, metavar="<count>",
              help="DEPRECATED AND IGNORED: Number of processing threads.")
@click.option("--num-fetch-threads", type=int, default=None, metavar="<count>",
              help="DEPRECATED AND IGNORED: Number of fetcher threads.")
@click.option("--consumer.config", "consumer_config", metavar="<config file>", help="Consumer config properties file.")
@click.option("--print-metrics", is_flag=True, help="Print out the metrics.")
@click.option("--show-detailed-stats", is_flag=True,
              help="If set, stats are reported for each reporting interval as configured by reporting-interval")
@click.option("--timeout", "record_fetch_timeout_ms", type=int, default=10000, show_default=True,
              metavar="<milliseconds>", help="The maximum allowed time in milliseconds between returned records.")
@click.option("--messages", type=int, metavar="<count>", help="REQUIRED: The number of messages to send or consume")
@click.option("--reporting-interval", type=int, default=5000, show_default=True, metavar="<interval_ms>",
              help="Interval in milliseconds at which to print progress info.")
@click.option("--date-format", default=DEFAULT_DATE_FORMAT, show_default=True, metavar="<date format>",
              help="The date format to use for formatting the time field. See java.text.SimpleDateFormat for "
                   "options.")
@click.option("--hide-header", is_flag=True, help="If set, skips printing the header for the stats")
@handle_errors()
def main(bootstrap_server: str | None, broker_list: str | None, topic: str | None, group: str | None,
         fetch_size: int, from_latest: bool, socket_buffer_size: int, threads: int | None,
         num_fetch_threads: int | None, consumer_config: str | None, print_metrics: bool,
         show_detailed_stats: bool, record_fetch_timeout_ms: int, messages: int | None, reporting_interval: int,
         date_format: str, hide_header: bool) -> None:
    if threads is not None or num_fetch_threads is not None:
        click.echo("WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored "
                   "by the test")
    if topic is None:
        raise click.UsageError("Missing required argument \"[topic]\"")
    if messages is None:
        raise click.UsageError("Missing required argument \"[messages]\"")
    servers = bootstrap_server or broker_list
    if servers is None:
        raise click.UsageError("Missing required argument \"[bootstrap-server]\"")
    validate_bootstrap_servers(servers, "--bootstrap-server" if bootstrap_server else "--broker-list")
    if reporting_interval <= 0:
        raise click.UsageError("Reporting interval must be greater than 0.")
    java_date_format(date_format, 0)  # reject a bad pattern before connecting

    props = consumer_props(load_props(consumer_config) if consumer_config else {}, servers, group,
                           socket_buffer_size, fetch_size, from_latest)
    from kafka import KafkaConsumer

    configs = client_configs(props, KafkaConsumer)
    if not hide_header:
        click.echo(header_line(show_detailed_stats))
    consumer = connect(KafkaConsumer, configs)
    metrics = None
    try:
        start_ms = now_ms()
        joins = _JoinTimer()
        subscribe(consumer, topics=[topic], listener=joins.listener())
        with progress_bar(messages, "Consuming", enabled=want_progress_bar()) as bar:
            result = consume(consumer, messages, record_fetch_timeout_ms, reporting_interval,
                             show_detailed_stats, date_format, click.echo, bar.update,
                             join_time=lambda: joins.total, take_periodic_join_time=joins.take_periodic)
        end_ms = now_ms()
        if print_metrics:
            metrics = merged_metric_names(consumer.metrics(raw=True))
    finally:
        consumer.close()
    if not show_detailed_stats:
        click.echo(summary_line(date_format, start_ms, end_ms, result.bytes_read, result.messages_read,
                                result.join_time_ms))
    if metrics is not None:
        for line in format_metrics(metrics):
            click.echo(line)


if __name__ == "__main__":
    run_tool(main, "kafka-consumer-perf-test.sh")
