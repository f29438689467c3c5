"""Port of tools/src/main/java/org/apache/kafka/tools/ProducerPerformance.java and
ThroughputThrottler.java (``bin/kafka-producer-perf-test.sh``).

Sends ``--num-records`` records of ``--record-size`` bytes (or payloads picked at
random from ``--payload-file``) to ``--topic``, throttled to about ``--throughput``
records/s (-1: no limit), and reports in Kafka's format: every 5 seconds a window line

    N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency.

and at the end the totals with latency percentiles

    N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency,
    p50 ms 50th, p95 ms 95th, p99 ms 99th, p999 ms 99.9th.

(one line). ``--producer-props k=v ...`` and ``--producer.config`` take Kafka's
producer property names; Kafka 2.8's producer defaults apply where kafka-python's
differ (acks=1, idempotence off).

Two ways of sending:

- default: kafka-python's KafkaProducer, one ``send`` per record with a completion
  callback, as Kafka's tool does with its Java producer;
- ``--pipeline``: a load generator that can outrun the broker. The record batches are
  built once, up front (kafka_py.clients.common.record's ``build_batch``, compressed with
  ``compression.type`` if set), and wrapped in ProduceRequest frames once per
  connection; sending a request only patches its correlation id. ``--connections N``
  raw TCP connections to the partition leaders each keep up to ``--window W`` requests
  in flight (Kafka answers requests of one connection in order, so responses are
  matched first in, first out). A request carries one batch of ``batch.size`` bytes'
  worth of records for each partition its connection owns; latency is measured per
  request and counted for each of its records. Records carry the timestamp of the
  moment the batches were built, and no producer id (no idempotence). The topic must
  exist. acks comes from ``--producer-props acks=...`` (default 1; with 0 the broker
  sends no answers and latency is the time to write the request).
"""
from __future__ import annotations

import logging
import os
import random
import re
import socket
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import click

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    cluster_brokers,
    connect,
    error_message,
    error_name,
    expand_multi_value_options,
    format_metrics,
    handle_errors,
    load_props,
    merged_metric_names,
    progress_bar,
    run_tool,
    want_progress_bar,
)

logger = logging.getLogger(__name__)

REPORTING_INTERVAL_MS = 5000
MAX_LATENCY_SAMPLES = 500000
DEFAULT_BATCH_SIZE = 16384
DEFAULT_REQUEST_TIMEOUT_MS = 30000
# Kafka 2.8's Java producer defaults where kafka-python 3 chose differently.
JAVA_PRODUCER_DEFAULTS = {"acks": "1", "enable.idempotence": "false"}
# Offset of the correlation id in a size-prefixed request frame: size int32, api key
# int16, api version int16 come first in every request header version.
CORRELATION_ID_OFFSET = 8
_INT32 = struct.Struct(">i")

Out = Callable[[str], None]


def now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


# -- statistics ------------------------------------------------------------------------------

def percentiles(latencies: Sequence[int], count: int, *ps: float) -> list[int]:
    """Stats.percentiles: sort the first ``count`` samples, take the value at int(p * count)."""
    size = min(count, len(latencies))
    ordered = sorted(latencies[:size])
    values = []
    for p in ps:
        index = int(p * size)
        values.append(ordered[index] if index < size else 0)
    return values


class Stats:
    """ProducerPerformance.Stats: totals, a reporting window, and sampled latencies.

    ``record_batch`` counts several records completed by one request (the pipelined
    mode); the latency sample array is filled exactly as if they had been recorded one
    by one. Safe to call from several threads.
    """

    def __init__(self, num_records: int, reporting_interval: int = REPORTING_INTERVAL_MS,
                 clock: Callable[[], int] = now_ms, out: Out = click.echo) -> None:
        self.clock = clock
        self.out = out
        self.start = clock()
        self.window_start = self.start
        self.sampling = max(1, num_records // max(1, min(num_records, MAX_LATENCY_SAMPLES)))
        self.latencies = [0] * (num_records // self.sampling + 1)
        self.index = 0
        self.iteration = 0
        self.count = 0
        self.bytes = 0
        self.max_latency = 0
        self.total_latency = 0
        self.window_count = 0
        self.window_max_latency = 0
        self.window_total_latency = 0
        self.window_bytes = 0
        self.reporting_interval = reporting_interval
        self._lock = threading.Lock()

    def record(self, iteration: int, latency: int, nbytes: int, time_ms: int) -> None:
        self.record_batch(iteration, 1, latency, nbytes, time_ms)

    def record_batch(self, first_iteration: int, count: int, latency: int, nbytes: int, time_ms: int) -> None:
        with self._lock:
            self.count += count
            self.bytes += nbytes
            self.total_latency += latency * count
            self.max_latency = max(self.max_latency, latency)
            self.window_count += count
            self.window_bytes += nbytes
            self.window_total_latency += latency * count
            self.window_max_latency = max(self.window_max_latency, latency)
            # iterations first..first+count-1 that are multiples of the sampling step
            samples = (first_iteration + count - 1) // self.sampling - (first_iteration - 1) // self.sampling
            for _ in range(samples):
                if self.index < len(self.latencies):
                    self.latencies[self.index] = latency
                    self.index += 1
            if time_ms - self.window_start >= self.reporting_interval:
                self.print_window()
                self.new_window()

    def next_completion(self, start_ms: int, nbytes: int) -> "PerfCallback":
        callback = PerfCallback(self.iteration, start_ms, nbytes, self)
        self.iteration += 1
        return callback

    def window_line(self) -> str:
        elapsed = max(1, self.clock() - self.window_start)
        recs_per_sec = 1000.0 * self.window_count / elapsed
        mb_per_sec = 1000.0 * self.window_bytes / elapsed / (1024.0 * 1024.0)
        avg = self.window_total_latency / self.window_count if self.window_count else 0.0
        return (f"{self.window_count} records sent, {recs_per_sec:.1f} records/sec ({mb_per_sec:.2f} MB/sec), "
                f"{avg:.1f} ms avg latency, {float(self.window_max_latency):.1f} ms max latency.")

    def print_window(self) -> None:
        self.out(self.window_line())

    def new_window(self) -> None:
        self.window_start = self.clock()
        self.window_count = 0
        self.window_max_latency = 0
        self.window_total_latency = 0
        self.window_bytes = 0

    def total_line(self) -> str:
        elapsed = max(1, self.clock() - self.start)
        recs_per_sec = 1000.0 * self.count / elapsed
        mb_per_sec = 1000.0 * self.bytes / elapsed / (1024.0 * 1024.0)
        avg = self.total_latency / self.count if self.count else 0.0
        p50, p95, p99, p999 = percentiles(self.latencies, self.index, 0.5, 0.95, 0.99, 0.999)
        return (f"{self.count} records sent, {recs_per_sec:f} records/sec ({mb_per_sec:.2f} MB/sec), "
                f"{avg:.2f} ms avg latency, {float(self.max_latency):.2f} ms max latency, "
                f"{p50} ms 50th, {p95} ms 95th, {p99} ms 99th, {p999} ms 99.9th.")

    def print_total(self) -> None:
        with self._lock:
            self.out(self.total_line())


class PerfCallback:
    """Records one send's latency when the producer completes it (PerfCallback)."""

    __slots__ = ("iteration", "start", "nbytes", "stats", "on_error")

    def __init__(self, iteration: int, start: int, nbytes: int, stats: Stats,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self.iteration = iteration
        self.start = start
        self.nbytes = nbytes
        self.stats = stats
        self.on_error = on_error

    def __call__(self, metadata: Any = None, exception: BaseException | None = None) -> None:
        now = self.stats.clock()
        self.stats.record(self.iteration, int(now - self.start), self.nbytes, now)
        if exception is not None and self.on_error is not None:
            self.on_error(exception)


class ThroughputThrottler:
    """ThroughputThrottler: sleep off the deficit once it reaches 2 ms."""

    NS_PER_MS = 1_000_000
    NS_PER_SEC = 1000 * NS_PER_MS
    MIN_SLEEP_NS = 2 * NS_PER_MS

    def __init__(self, target_throughput: int, start_ms: int,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.start_ms = start_ms
        self.target_throughput = target_throughput
        self.sleep_time_ns = self.NS_PER_SEC // target_throughput if target_throughput > 0 else sys.maxsize
        self.sleep_deficit_ns = 0
        self._sleep = sleep
        self._wakeup = threading.Event()

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        if self.target_throughput < 0:
            return False
        elapsed_sec = (send_start_ms - self.start_ms) / 1000.0
        return elapsed_sec > 0 and (amount_so_far / elapsed_sec) > self.target_throughput

    def throttle(self, amount: int = 1) -> None:
        """Pause for ``amount`` sends at the target rate (Kafka calls this once per record)."""
        if self.target_throughput == 0:
            self._wakeup.wait()  # a throughput of 0 means: send nothing until woken
            return
        self.sleep_deficit_ns += self.sleep_time_ns * amount
        if self.sleep_deficit_ns >= self.MIN_SLEEP_NS:
            start = time.monotonic_ns()
            remaining = self.sleep_deficit_ns
            while not self._wakeup.is_set() and remaining > 0:
                self._sleep(remaining / self.NS_PER_SEC)
                remaining = self.sleep_deficit_ns - (time.monotonic_ns() - start)
            self.sleep_deficit_ns = 0

    def wakeup(self) -> None:
        self._wakeup.set()


# -- payloads and options --------------------------------------------------------------------

def random_payload(record_size: int, rng: random.Random | None = None) -> bytes:
    """``record_size`` upper-case ASCII letters, as Kafka's tool fills its payload."""
    rng = rng or random.Random(0)
    return bytes(rng.randrange(26) + 65 for _ in range(record_size))


def read_payloads(path: str, delimiter: str, out: Out) -> list[bytes]:
    absolute = os.path.abspath(path)
    out(f"Reading payloads from: {absolute}")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        raise CommandError("File does not exist or empty file provided.")
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    parts = re.split(delimiter, text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()  # String.split drops trailing empty strings
    out(f"Number of messages read: {len(parts)}")
    return [p.encode() for p in parts]


def parse_producer_props(producer_props: Sequence[str], producer_config: str | None) -> dict[str, str]:
    """--producer.config, then --producer-props (which win); each prop is exactly ``k=v``."""
    if not producer_props and producer_config is None:
        raise click.UsageError("Either --producer-props or --producer.config must be specified.")
    props = dict(JAVA_PRODUCER_DEFAULTS)
    if producer_config is not None:
        props.update(load_props(producer_config))
    for prop in producer_props:
        pieces = prop.split("=")
        if len(pieces) != 2:
            raise CommandError(f"Invalid property: {prop}")
        props[pieces[0]] = pieces[1]
    return props


def parse_acks(text: str) -> int:
    value = text.strip().lower()
    if value == "all":
        return -1
    try:
        acks = int(value)
    except ValueError:
        acks = 2
    if acks not in (-1, 0, 1):
        raise CommandError(f"Invalid value {text} for configuration acks: String must be one of: all, -1, 0, 1")
    return acks


# -- the pipelined mode ----------------------------------------------------------------------

def build_payload_batch(payloads: Sequence[bytes], compression: str | None, timestamp_ms: int) -> bytes:
    """One v2 record batch holding ``payloads`` as values (no keys, no producer id)."""
    from kafka_py.clients.common.record.compression import CompressionType
    from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch

    codec = CompressionType.NONE if compression in (None, "", "none") else CompressionType.for_name(compression)
    return build_batch([SimpleRecord(None, p, timestamp_ms) for p in payloads], compression=codec)


def build_produce_frame(topic: str, partition_batches: Sequence[tuple[int, bytes]], version: int, acks: int,
                        timeout_ms: int, client_id: str = "producer-performance",
                        correlation_id: int = 0) -> bytes:
    """A size-prefixed ProduceRequest frame with one batch per partition."""
    import datetime

    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.headers import RequestHeader
    from kafka_py.clients.common.protocol.messages import encode_request, request_schema

    schema = request_schema(ApiKeys.PRODUCE, version)
    module = sys.modules[schema.__module__]
    request = schema(
        transactional_id=None,
        acks=acks,
        timeout=datetime.timedelta(milliseconds=timeout_ms),
        topic_data=(module.TopicProduceData(
            name=topic,
            partition_data=tuple(module.PartitionProduceData(index=p, records=batch)
                                 for p, batch in partition_batches),
        ),),
    )
    header = RequestHeader.for_request(ApiKeys.PRODUCE, version, correlation_id, client_id)
    return encode_request(header, request)


def set_correlation_id(frame: bytearray, correlation_id: int) -> None:
    _INT32.pack_into(frame, CORRELATION_ID_OFFSET, correlation_id)


@dataclass(frozen=True)
class PrebuiltRequest:
    frame: bytes
    record_count: int
    payload_bytes: int


@dataclass(frozen=True)
class ProduceOutcome:
    """What a ProduceResponse says about the records of one request."""

    failed_records: int
    first_error: str | None


def produce_outcome(frame: bytes | memoryview, version: int, records_per_partition: Mapping[int, int]) -> ProduceOutcome:
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.messages import decode_response

    _, response = decode_response(frame, ApiKeys.PRODUCE, version)
    failed = 0
    first_error = None
    for topic in response.responses:
        for partition in topic.partition_responses:
            if partition.error_code:
                failed += records_per_partition.get(partition.index, 0)
                if first_error is None:
                    code = int(partition.error_code)
                    message = getattr(partition, "error_message", None)
                    first_error = f"{error_name(code)}: {error_message(code, message)}"
    return ProduceOutcome(failed, first_error)


class RequestPermits:
    """Hands out the records still to send, request by request, to the connections."""

    def __init__(self, num_records: int, throttler: ThroughputThrottler | None = None) -> None:
        self.remaining = num_records
        self.sent = 0
        self.throttler = throttler
        self.stopped = False
        self._lock = threading.Lock()

    def take(self, wanted: int) -> tuple[int, int] | None:
        """(first record index, count) of the next request, at most ``wanted`` records."""
        with self._lock:
            if self.stopped or self.remaining <= 0:
                return None
            count = min(wanted, self.remaining)
            first = self.sent
            self.remaining -= count
            self.sent += count
            throttler = self.throttler
            if throttler is not None and throttler.should_throttle(self.sent, now_ms()):
                # throttling under the lock: every connection waits its turn at the target rate
                throttler.throttle(count)
            return first, count

    def stop(self) -> None:
        with self._lock:
            self.stopped = True


class PipelinedConnection(threading.Thread):
    """One raw connection keeping up to ``window`` pre-built ProduceRequests in flight."""

    def __init__(self, name: str, address: tuple[str, int], topic: str, partitions: Sequence[int],
                 batch: bytes, batch_records: int, payloads: Sequence[bytes], compression: str | None,
                 timestamp_ms: int, version: int, acks: int, timeout_ms: int, window: int,
                 permits: RequestPermits, stats: Stats, send_buffer_bytes: int | None = None) -> None:
        super().__init__(name=name, daemon=True)
        self.address = address
        self.topic = topic
        self.partitions = list(partitions)
        self.batch_records = batch_records
        self.payloads = payloads
        self.compression = compression
        self.timestamp_ms = timestamp_ms
        self.version = version
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.window = max(1, window)
        self.permits = permits
        self.stats = stats
        self.send_buffer_bytes = send_buffer_bytes
        self.full = PrebuiltRequest(
            build_produce_frame(topic, [(p, batch) for p in self.partitions], version, acks, timeout_ms),
            batch_records * len(self.partitions),
            sum(len(payloads[i % len(payloads)]) for i in range(batch_records)) * len(self.partitions))
        self.failed_records = 0
        self.first_error: str | None = None
        self.fatal: BaseException | None = None
        self.requests_sent = 0
        self.bytes_sent = 0
        # window slots free to send into; requests sent whose answers the reader may read
        self._slots = threading.Semaphore(self.window)
        self._sent = threading.Semaphore(0)
        self._in_flight: deque[tuple[int, int, int, int, int, dict[int, int]] | None] = deque()

    def tail_request(self, count: int) -> tuple[PrebuiltRequest, dict[int, int]]:
        """The last, shorter request: ``count`` records over this connection's partitions.

        Built once per run, at the very end, so it costs nothing on the hot path.
        """
        batches = []
        per_partition: dict[int, int] = {}
        index = 0
        for partition in self.partitions:
            n = min(self.batch_records, count - index)
            if n <= 0:
                break
            values = [self.payloads[(index + i) % len(self.payloads)] for i in range(n)]
            batches.append((partition, build_payload_batch(values, self.compression, self.timestamp_ms)))
            per_partition[partition] = n
            index += n
        if index < count:  # more records than batches of batch_records hold: grow the last one
            partition = batches[-1][0]
            extra = count - index
            n = per_partition[partition] + extra
            values = [self.payloads[i % len(self.payloads)] for i in range(n)]
            batches[-1] = (partition, build_payload_batch(values, self.compression, self.timestamp_ms))
            per_partition[partition] = n
        frame = build_produce_frame(self.topic, batches, self.version, self.acks, self.timeout_ms)
        payload_bytes = sum(len(self.payloads[i % len(self.payloads)]) for i in range(count))
        return PrebuiltRequest(frame, count, payload_bytes), per_partition

    def run(self) -> None:
        try:
            self._run()
        except BaseException as e:  # reported by the tool after all connections stop
            self._fail(e)

    def _fail(self, e: BaseException) -> None:
        if self.fatal is None:
            self.fatal = e
        self.permits.stop()
        # wake the sender if it waits for a window slot the reader will never free
        for _ in range(self.window):
            self._slots.release()

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self.address, timeout=max(1.0, self.timeout_ms / 1000 + 5))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.send_buffer_bytes and self.send_buffer_bytes > 0:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer_bytes)
        return sock

    def _run(self) -> None:
        """The sending side; a second thread reads the responses.

        Sending and reading run apart so that a sender held back by the throttler (or by a
        full socket buffer) never delays reading answers, which would inflate latencies.
        """
        full_frame = bytearray(self.full.frame)
        full_per_partition = {p: self.batch_records for p in self.partitions}
        correlation_id = 0
        clock = self.stats.clock
        with self._connect() as sock:
            reader = None
            if self.acks != 0:
                reader = threading.Thread(target=self._read_responses, args=(sock,), name=f"{self.name}-reader",
                                          daemon=True)
                reader.start()
            try:
                while self.fatal is None:
                    if self.acks != 0:
                        self._slots.acquire()
                        if self.fatal is not None:
                            break
                    permit = self.permits.take(self.full.record_count)
                    if permit is None:
                        break
                    first, count = permit
                    if count == self.full.record_count:
                        frame, payload_bytes, per_partition = full_frame, self.full.payload_bytes, full_per_partition
                    else:
                        tail, per_partition = self.tail_request(count)
                        frame, payload_bytes = bytearray(tail.frame), tail.payload_bytes
                    correlation_id += 1
                    set_correlation_id(frame, correlation_id)
                    start = clock()
                    if self.acks != 0:
                        # queued before the bytes leave: the answer cannot come any earlier
                        self._in_flight.append((correlation_id, start, first, count, payload_bytes, per_partition))
                    sock.sendall(frame)
                    self.requests_sent += 1
                    self.bytes_sent += len(frame)
                    if self.acks == 0:
                        now = clock()
                        self.stats.record_batch(first, count, int(now - start), payload_bytes, now)
                    else:
                        self._sent.release()
            except BaseException:
                # the reader may wait for an answer to a request that never left: end its wait
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                raise
            finally:
                if reader is not None:
                    self._in_flight.append(None)
                    self._sent.release()
                    reader.join()
            if self.acks == 0:
                # let the broker read everything before the connection goes away: it closes
                # its side once it has read our end of stream
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(5.0)
                try:
                    while sock.recv(65536):
                        pass
                except OSError:
                    pass

    def _read_responses(self, sock: socket.socket) -> None:
        try:
            reader = FrameReader(sock)
            clock = self.stats.clock
            while True:
                self._sent.acquire()
                entry = self._in_flight.popleft()
                if entry is None or self.fatal is not None:
                    return
                expected, start, first, count, payload_bytes, per_partition = entry
                response = reader.read_frame()
                now = clock()
                self._slots.release()
                (received,) = _INT32.unpack_from(response, 0)
                if received != expected:
                    raise CommandError(f"Connection {self.name}: response correlation id {received} does not match "
                                       f"request {expected}")
                outcome = produce_outcome(response, self.version, per_partition)
                if outcome.failed_records:
                    self.failed_records += outcome.failed_records
                    if self.first_error is None:
                        self.first_error = outcome.first_error
                ok = count - outcome.failed_records
                if ok > 0:
                    self.stats.record_batch(first, ok, int(now - start), payload_bytes * ok // count, now)
        except BaseException as e:
            self._fail(e)


class FrameReader:
    """Reads size-prefixed response frames from a blocking socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._size = bytearray(4)

    def _read_into(self, view: memoryview) -> None:
        while len(view):
            n = self.sock.recv_into(view)
            if n == 0:
                raise ConnectionError("the broker closed the connection")
            view = view[n:]

    def read_frame(self) -> bytearray:
        self._read_into(memoryview(self._size))
        (size,) = _INT32.unpack(self._size)
        if size < 4:
            raise ConnectionError(f"invalid response size {size}")
        frame = bytearray(size)
        self._read_into(memoryview(frame))
        return frame


def negotiate_produce_version(address: tuple[str, int], timeout_s: float = 10.0) -> int:
    """The highest ProduceRequest version (3..9, magic-2 batches) both sides speak."""
    from kio.schema.api_versions.v0.request import ApiVersionsRequest

    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.headers import RequestHeader
    from kafka_py.clients.common.protocol.messages import decode_response, encode_request

    ours = ApiKeys.PRODUCE.schema_versions()
    with socket.create_connection(address, timeout=timeout_s) as sock:
        sock.sendall(encode_request(RequestHeader.for_request(ApiKeys.API_VERSIONS, 0, 1, "producer-performance"),
                                    ApiVersionsRequest()))
        frame = FrameReader(sock).read_frame()
    _, response = decode_response(frame, ApiKeys.API_VERSIONS, 0)
    if response.error_code:
        raise CommandError(f"ApiVersions failed: {error_message(int(response.error_code))}")
    for api in response.api_keys:
        if int(api.api_key) == ApiKeys.PRODUCE.id:
            common = [v for v in ours if int(api.min_version) <= v <= int(api.max_version) and v >= 3]
            if not common:
                raise CommandError("The broker supports no ProduceRequest version with magic-2 record batches")
            return max(common)
    raise CommandError("The broker does not list the Produce API")


@dataclass(frozen=True)
class PartitionLeaders:
    """Leader broker address of each partition of a topic."""

    leaders: dict[int, tuple[str, int]]


def fetch_partition_leaders(props: Mapping[str, str], topic: str) -> PartitionLeaders:
    from kafka import KafkaAdminClient

    admin_props = {k: v for k, v in props.items() if k in ("bootstrap.servers", "client.id", "request.timeout.ms",
                                                           "bootstrap.timeout.ms", "security.protocol")}
    admin_props.setdefault("bootstrap.timeout.ms", "15000")
    admin = connect(KafkaAdminClient, client_configs(admin_props, KafkaAdminClient))
    try:
        brokers = cluster_brokers(admin)
        topics = admin.describe_topics([topic])
    finally:
        admin.close()
    metadata = next((t for t in topics if t.get("name") == topic), None)
    if metadata is None or metadata.get("error_code"):
        code = metadata.get("error_code") if metadata else 3
        raise CommandError(f"Topic {topic} is not available: {error_message(code)} (the --pipeline mode does not "
                           "create topics)")
    leaders = {}
    for p in metadata.get("partitions") or ():
        leader = p.get("leader_id", -1)
        if leader is None or leader < 0 or leader not in brokers:
            raise CommandError(f"Partition {topic}-{p['partition_index']} has no leader")
        leaders[p["partition_index"]] = brokers[leader]
    if not leaders:
        raise CommandError(f"Topic {topic} has no partitions")
    return PartitionLeaders(leaders)


def assign_connections(leaders: Mapping[int, tuple[str, int]], connections: int) -> list[tuple[tuple[str, int], list[int]]]:
    """Spread ``connections`` over the leaders (at least one each), then each leader's
    partitions round-robin over its connections; a connection without a partition of its
    own shares one."""
    by_leader: dict[tuple[str, int], list[int]] = {}
    for partition in sorted(leaders):
        by_leader.setdefault(leaders[partition], []).append(partition)
    addresses = sorted(by_leader)
    counts = {a: 1 for a in addresses}
    for i in range(max(0, connections - len(addresses))):
        counts[addresses[i % len(addresses)]] += 1
    plan = []
    for address in addresses:
        partitions = by_leader[address]
        n = counts[address]
        for c in range(n):
            mine = partitions[c::n] or [partitions[c % len(partitions)]]
            plan.append((address, mine))
    return plan


def run_pipelined(topic: str, num_records: int, payloads: Sequence[bytes], throughput: int,
                  props: Mapping[str, str], connections: int, window: int, out: Out,
                  print_metrics: bool) -> tuple[Stats, int, str | None]:
    leaders = fetch_partition_leaders(props, topic).leaders
    plan = assign_connections(leaders, connections)
    version = negotiate_produce_version(plan[0][0])
    acks = parse_acks(props.get("acks", "1"))
    compression = props.get("compression.type")
    timeout_ms = int(props.get("request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS))
    average_size = max(1, sum(len(p) for p in payloads) // len(payloads))
    batch_records = max(1, int(props.get("batch.size", DEFAULT_BATCH_SIZE)) // average_size)
    timestamp_ms = int(time.time() * 1000)
    batch = build_payload_batch([payloads[i % len(payloads)] for i in range(batch_records)], compression,
                                timestamp_ms)
    send_buffer = int(props["send.buffer.bytes"]) if "send.buffer.bytes" in props else None

    stats = Stats(num_records, out=out)
    throttler = ThroughputThrottler(throughput, stats.start) if throughput >= 0 else None
    permits = RequestPermits(num_records, throttler)
    threads = [PipelinedConnection(f"pipeline-{i}", address, topic, partitions, batch, batch_records, payloads,
                                   compression, timestamp_ms, version, acks, timeout_ms, window, permits, stats,
                                   send_buffer)
               for i, (address, partitions) in enumerate(plan)]
    for thread in threads:
        thread.start()
    with progress_bar(num_records, "Producing", enabled=want_progress_bar()) as bar:
        done = 0
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.2)
            bar.update(stats.count - done)
            done = stats.count
    fatal = next((t.fatal for t in threads if t.fatal is not None), None)
    if fatal is not None:
        raise CommandError(f"Pipelined send failed: {fatal if isinstance(fatal, CommandError) else repr(fatal)}")
    failed = sum(t.failed_records for t in threads)
    first_error = next((t.first_error for t in threads if t.first_error), None)
    stats.print_total()
    if print_metrics:
        metrics = {
            "producer-performance:connection-count:{}": len(threads),
            "producer-performance:produce-version:{}": version,
            "producer-performance:records-per-request:{}": float(batch_records),
            "producer-performance:request-total:{}": sum(t.requests_sent for t in threads),
            "producer-performance:outgoing-byte-total:{}": sum(t.bytes_sent for t in threads),
            "producer-performance:record-error-total:{}": failed,
        }
        for line in format_metrics(metrics):
            out(line)
    return stats, failed, first_error


# -- the kafka-python mode -------------------------------------------------------------------

def run_with_producer(topic: str, num_records: int, payloads: Sequence[bytes], throughput: int,
                      props: Mapping[str, str], transactional_id: str, transaction_duration_ms: int,
                      out: Out, print_metrics: bool) -> tuple[Stats, int, str | None]:
    from kafka import KafkaProducer

    producer_props = dict(props)
    transactions = transaction_duration_ms > 0
    if transactions:
        producer_props["transactional.id"] = transactional_id
        producer_props["enable.idempotence"] = "true"
        producer_props["acks"] = "all"
    producer = connect(KafkaProducer, client_configs(producer_props, KafkaProducer))
    errors: list[BaseException] = []
    rng = random.Random(0)
    try:
        if transactions:
            producer.init_transactions()
        stats = Stats(num_records, out=out)
        throttler = ThroughputThrottler(throughput, stats.start)
        in_transaction = 0
        transaction_start = 0
        with progress_bar(num_records, "Producing", enabled=want_progress_bar()) as bar:
            for i in range(num_records):
                if transactions and in_transaction == 0:
                    producer.begin_transaction()
                    transaction_start = now_ms()
                payload = payloads[rng.randrange(len(payloads))] if len(payloads) > 1 else payloads[0]
                send_start = now_ms()
                callback = stats.next_completion(send_start, len(payload))
                callback.on_error = errors.append
                future = producer.send(topic, value=payload)
                future.add_callback(callback)
                future.add_errback(lambda e, cb=callback: cb(None, e))
                in_transaction += 1
                if transactions and transaction_duration_ms <= send_start - transaction_start:
                    producer.commit_transaction()
                    in_transaction = 0
                if throttler.should_throttle(i, send_start):
                    throttler.throttle()
                if i % 1000 == 999:
                    bar.update(1000)
            if transactions and in_transaction:
                producer.commit_transaction()
            producer.flush()
        stats.print_total()
        if print_metrics:
            for line in format_metrics(merged_metric_names(producer.metrics(raw=True))):
                out(line)
    finally:
        producer.close()
    first = None
    if errors:
        from kafka_py.core.utils.command_line_utils import describe_exception

        first = describe_exception(errors[0])
    return stats, len(errors), first


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool is used to verify the producer performance.")
@click.option("--topic", required=True, metavar="TOPIC", help="produce messages to this topic")
@click.option("--num-records", required=True, type=int, metavar="NUM-RECORDS", help="number of messages to produce")
@click.option("--record-size", type=int, metavar="RECORD-SIZE",
              help="message size in bytes. Note that you must provide exactly one of --record-size or "
                   "--payload-file.")
@click.option("--payload-file", metavar="PAYLOAD-FILE",
              help="file to read the message payloads from. This works only for UTF-8 encoded text files. "
                   "Payloads will be read from this file and a payload will be randomly selected when sending "
                   "messages.")
@click.option("--payload-delimiter", default="\\n", show_default=True, metavar="PAYLOAD-DELIMITER",
              help="provides delimiter to be used when --payload-file is provided.")
@click.option("--throughput", required=True, type=int, metavar="THROUGHPUT",
              help="throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to "
                   "-1 to disable throttling.")
@click.option("--producer-props", multiple=True, metavar="PROP-NAME=PROP-VALUE",
              help="kafka producer related configuration properties like bootstrap.servers,client.id etc. These "
                   "configs take precedence over those passed via --producer.config. Several may follow one "
                   "--producer-props.")
@click.option("--producer.config", "producer_config", metavar="CONFIG-FILE", help="producer config properties file.")
@click.option("--print-metrics", is_flag=True, help="print out metrics at the end of the test.")
@click.option("--transactional-id", default="performance-producer-default-transactional-id", show_default=True,
              metavar="TRANSACTIONAL-ID",
              help="The transactionalId to use if transaction-duration-ms is > 0.")
@click.option("--transaction-duration-ms", type=int, default=0, show_default=True, metavar="TRANSACTION-DURATION",
              help="The max age of each transaction. Transactions are only enabled if this value is positive.")
@click.option("--pipeline", is_flag=True,
              help="Send pre-built record batches over raw connections with pipelined ProduceRequests instead "
                   "of kafka-python's producer; pushes more than the broker can take.")
@click.option("--connections", type=click.IntRange(min=1), default=4, show_default=True,
              help="With --pipeline: the number of TCP connections, spread over the partition leaders.")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="With --pipeline: requests in flight per connection [default: the producer property "
                   "max.in.flight.requests.per.connection, else 5].")
@handle_errors()
def cli(topic: str, num_records: int, record_size: int | None, payload_file: str | None, payload_delimiter: str,
        throughput: int, producer_props: tuple[str, ...], producer_config: str | None, print_metrics: bool,
        transactional_id: str, transaction_duration_ms: int, pipeline: bool, connections: int,
        window: int | None) -> None:
    if (record_size is None) == (payload_file is None):
        raise click.UsageError("either --record-size or --payload-file must be specified but not both.")
    if num_records <= 0:
        raise click.UsageError("--num-records must be positive")
    if record_size is not None and record_size < 0:
        raise click.UsageError("--record-size must not be negative")
    props = parse_producer_props(producer_props, producer_config)
    if "bootstrap.servers" not in props:
        raise click.UsageError("bootstrap.servers must be given in --producer-props or --producer.config")
    delimiter = "\n" if payload_delimiter == "\\n" else payload_delimiter
    if payload_file is not None:
        payloads = read_payloads(payload_file, delimiter, click.echo)
    else:
        assert record_size is not None
        payloads = [random_payload(record_size)]
    if pipeline:
        if transaction_duration_ms > 0:
            raise click.UsageError("--pipeline sends no transactions: drop --transaction-duration-ms")
        in_flight = window or int(props.get("max.in.flight.requests.per.connection", "5"))
        _, failed, first_error = run_pipelined(topic, num_records, payloads, throughput, props, connections,
                                               in_flight, click.echo, print_metrics)
    else:
        _, failed, first_error = run_with_producer(topic, num_records, payloads, throughput, props,
                                                   transactional_id, transaction_duration_ms, click.echo,
                                                   print_metrics)
    if failed:
        raise CommandError(f"{failed} records failed; first error: {first_error}")


def main(args: Sequence[str] | None = None) -> None:
    """Entry point: accepts ``--producer-props k1=v1 k2=v2`` as Kafka's argparse4j parser does."""
    argv = list(sys.argv[1:] if args is None else args)
    cli.main(args=expand_multi_value_options(argv, ["--producer-props"]), prog_name="kafka-producer-perf-test.sh")


if __name__ == "__main__":
    run_tool(main)
