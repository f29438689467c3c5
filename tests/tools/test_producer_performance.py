"""kafka-producer-perf-test.sh without a broker: statistics, throttling, the pre-built
ProduceRequests of --pipeline, and the pipelined connection against a scripted peer."""
from __future__ import annotations

import re
import socket
import struct
import threading
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.messages import decode_request, encode_response, response_schema
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch
from kafka_py.core.utils.command_line_utils import CommandError
from kafka_py.tools.producer_performance import (
    CORRELATION_ID_OFFSET,
    PipelinedConnection,
    RequestPermits,
    Stats,
    ThroughputThrottler,
    assign_connections,
    build_payload_batch,
    build_produce_frame,
    parse_acks,
    parse_producer_props,
    percentiles,
    produce_outcome,
    random_payload,
    read_payloads,
    set_correlation_id,
)

WINDOW_LINE = re.compile(r"^\d+ records sent, \d+\.\d records/sec \(\d+\.\d\d MB/sec\), \d+\.\d ms avg latency, "
                         r"\d+\.\d ms max latency\.$")
TOTAL_LINE = re.compile(r"^\d+ records sent, \d+\.\d{6} records/sec \(\d+\.\d\d MB/sec\), \d+\.\d\d ms avg latency, "
                        r"\d+\.\d\d ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$")


class Clock:
    def __init__(self, now: int = 1000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


# -- statistics -------------------------------------------------------------------------------

def test_percentiles_pick_int_of_p_times_size() -> None:
    latencies = [5, 1, 4, 2, 3, 0, 0]
    assert percentiles(latencies, 5, 0.5, 0.95, 0.99, 0.999) == [3, 5, 5, 5]
    assert percentiles(list(range(1000)), 1000, 0.5, 0.95, 0.99, 0.999) == [500, 950, 990, 999]
    assert percentiles([0, 0], 0, 0.5) == [0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=300), st.floats(0, 0.999))
def test_percentiles_match_sorted_index(values: list[int], p: float) -> None:
    assert percentiles(values, len(values), p) == [sorted(values)[int(p * len(values))]]


def test_window_and_total_lines_in_kafkas_format() -> None:
    clock = Clock()
    lines: list[str] = []
    stats = Stats(10, reporting_interval=5000, clock=clock, out=lines.append)
    for i in range(4):
        clock.now += 1000
        stats.record(i, 10 + i, 1024 * 1024, clock.now)
    assert lines == []
    clock.now += 1000
    stats.record(4, 50, 1024 * 1024, clock.now)  # 5 s after the start: the window is printed
    assert lines == ["5 records sent, 1.0 records/sec (1.00 MB/sec), 19.2 ms avg latency, 50.0 ms max latency."]
    assert WINDOW_LINE.match(lines[0])
    clock.now += 1000
    assert stats.total_line() == ("5 records sent, 0.833333 records/sec (0.83 MB/sec), 19.20 ms avg latency, "
                                  "50.00 ms max latency, 12 ms 50th, 50 ms 95th, 50 ms 99th, 50 ms 99.9th.")
    assert TOTAL_LINE.match(stats.total_line())


def test_sampling_keeps_at_most_500000_latencies() -> None:
    stats = Stats(1_200_000, clock=Clock(), out=lambda _: None)
    assert stats.sampling == 2
    assert len(stats.latencies) == 600_001


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 4), st.data())
def test_record_batch_samples_like_one_by_one(num_records: int, sampling: int, data: st.DataObject) -> None:
    one = Stats(num_records, clock=Clock(), out=lambda _: None)
    batched = Stats(num_records, clock=Clock(), out=lambda _: None)
    one.sampling = batched.sampling = sampling
    one.latencies = [0] * (num_records // sampling + 1)
    batched.latencies = list(one.latencies)
    i = 0
    while i < num_records:
        n = data.draw(st.integers(1, num_records - i))
        latency = data.draw(st.integers(0, 100))
        for k in range(n):
            one.record(i + k, latency, 10, 0)
        batched.record_batch(i, n, latency, 10 * n, 0)
        i += n
    assert (batched.count, batched.bytes, batched.total_latency, batched.max_latency) == (
        one.count, one.bytes, one.total_latency, one.max_latency)
    assert batched.index == one.index and batched.latencies == one.latencies


def test_callbacks_record_latency_per_send() -> None:
    clock = Clock(100)
    stats = Stats(3, clock=clock, out=lambda _: None)
    callbacks = [stats.next_completion(100, 7) for _ in range(3)]
    assert [c.iteration for c in callbacks] == [0, 1, 2]
    errors: list[BaseException] = []
    callbacks[2].on_error = errors.append
    clock.now = 130
    callbacks[0](None)
    clock.now = 160
    callbacks[2](None, RuntimeError("nope"))
    assert (stats.count, stats.bytes, stats.max_latency, stats.total_latency) == (2, 14, 60, 90)
    assert len(errors) == 1


# -- throttling -------------------------------------------------------------------------------

def test_throttler_decides_on_the_average_rate() -> None:
    throttler = ThroughputThrottler(100, start_ms=0)
    assert not throttler.should_throttle(50, 0)         # no time elapsed yet
    assert throttler.should_throttle(101, 1000)
    assert not throttler.should_throttle(100, 1000)
    assert not ThroughputThrottler(-1, 0).should_throttle(10**9, 1)


def test_throttler_sleeps_once_the_deficit_reaches_2ms() -> None:
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)

    throttler = ThroughputThrottler(1000, 0, sleep=sleep)   # 1 ms per record
    throttler.throttle()
    assert slept == [] and throttler.sleep_deficit_ns == 1_000_000
    throttler.throttle()
    assert slept and slept[0] == pytest.approx(0.002, abs=1e-4)
    assert throttler.sleep_deficit_ns == 0
    slept.clear()
    throttler.throttle(5)                                   # a request of 5 records
    assert slept and slept[0] == pytest.approx(0.005, abs=1e-4)


# -- options and payloads ---------------------------------------------------------------------

def test_producer_props() -> None:
    props = parse_producer_props(["bootstrap.servers=h:1", "acks=all"], None)
    assert props == {"acks": "all", "enable.idempotence": "false", "bootstrap.servers": "h:1"}
    with pytest.raises(CommandError, match="Invalid property: a=b=c"):
        parse_producer_props(["a=b=c"], None)
    import click

    with pytest.raises(click.UsageError, match="Either --producer-props or --producer.config"):
        parse_producer_props([], None)


def test_producer_config_file_loses_to_props(tmp_path) -> None:
    path = tmp_path / "p.properties"
    path.write_text("acks=0\nlinger.ms=5\n")
    assert parse_producer_props(["acks=1"], str(path))["acks"] == "1"
    assert parse_producer_props(["acks=1"], str(path))["linger.ms"] == "5"


@pytest.mark.parametrize("text, acks", [("all", -1), ("-1", -1), ("0", 0), ("1", 1)])
def test_acks(text: str, acks: int) -> None:
    assert parse_acks(text) == acks


def test_bad_acks() -> None:
    with pytest.raises(CommandError, match="acks"):
        parse_acks("2")


def test_random_payload_is_upper_case_letters() -> None:
    payload = random_payload(500)
    assert len(payload) == 500 and set(payload) <= set(range(65, 91))
    assert random_payload(10) == random_payload(10)   # seeded, as Kafka's Random(0)


def test_payload_file(tmp_path) -> None:
    path = tmp_path / "payloads.txt"
    path.write_text("one\ntwo\nthree\n\n")
    lines: list[str] = []
    assert read_payloads(str(path), "\n", lines.append) == [b"one", b"two", b"three"]
    assert lines == [f"Reading payloads from: {path}", "Number of messages read: 3"]
    (tmp_path / "empty").write_text("")
    with pytest.raises(CommandError, match="empty file"):
        read_payloads(str(tmp_path / "empty"), "\n", lines.append)


# -- pre-built requests -----------------------------------------------------------------------

def decode(frame: bytes):
    return decode_request(memoryview(bytearray(frame))[4:])


@pytest.mark.parametrize("version", [3, 7, 8, 9])
@pytest.mark.parametrize("codec", ["none", "gzip", "lz4", "zstd", "snappy"])
def test_prebuilt_request_decodes(version: int, codec: str) -> None:
    payloads = [random_payload(100), b"x" * 10]
    batch = build_payload_batch([payloads[i % 2] for i in range(7)], codec, 1_700_000_000_000)
    frame = bytearray(build_produce_frame("perf", [(0, batch), (2, batch)], version, -1, 30000))
    set_correlation_id(frame, 123456)
    assert struct.unpack_from(">i", frame, 0)[0] == len(frame) - 4
    header, request = decode(bytes(frame))
    assert header.api_key is ApiKeys.PRODUCE and header.api_version == version
    assert header.correlation_id == 123456
    assert request.acks == -1 and request.timeout.total_seconds() == 30
    assert request.transactional_id is None
    (topic,) = request.topic_data
    assert topic.name == "perf" and [p.index for p in topic.partition_data] == [0, 2]
    for partition in topic.partition_data:
        b = DefaultRecordBatch(partition.records)
        b.ensure_valid()
        assert b.record_count == 7 and b.compression_type == CompressionType.for_name(codec)
        assert not b.has_producer_id
        assert [r.value for r in b] == [payloads[i % 2] for i in range(7)]
        assert all(r.timestamp == 1_700_000_000_000 and r.key is None for r in b)


def test_correlation_id_patch_leaves_the_rest() -> None:
    frame = bytearray(build_produce_frame("t", [(0, build_payload_batch([b"v"], None, 1))], 8, 1, 1000))
    before = bytes(frame)
    set_correlation_id(frame, 99)
    assert frame[:CORRELATION_ID_OFFSET] == before[:CORRELATION_ID_OFFSET]
    assert frame[CORRELATION_ID_OFFSET + 4:] == before[CORRELATION_ID_OFFSET + 4:]


def produce_response(version: int, topic: str, codes: dict[int, int]) -> bytes:
    schema = response_schema(ApiKeys.PRODUCE, version)
    import sys

    module = sys.modules[schema.__module__]
    response = schema(responses=(module.TopicProduceResponse(name=topic, partition_responses=tuple(
        module.PartitionProduceResponse(index=p, error_code=ErrorCode(code), base_offset=0, record_errors=(),
                                        error_message=None)
        for p, code in codes.items())),))
    from kafka_py.clients.common.protocol.headers import ResponseHeader

    frame = encode_response(ResponseHeader(7, ApiKeys.PRODUCE.response_header_version(version)), response)
    return frame[4:]


def test_produce_outcome_counts_failed_partitions() -> None:
    outcome = produce_outcome(produce_response(8, "t", {0: 0, 1: 6, 2: 0}), 8, {0: 10, 1: 10, 2: 3})
    assert outcome.failed_records == 10
    assert outcome.first_error is not None and outcome.first_error.startswith("NOT_LEADER_OR_FOLLOWER: ")
    assert produce_outcome(produce_response(8, "t", {0: 0}), 8, {0: 5}).failed_records == 0


def test_connections_spread_over_leaders_and_partitions() -> None:
    a, b = ("a", 1), ("b", 1)
    leaders = {0: a, 1: b, 2: a, 3: b, 4: a}
    plan = assign_connections(leaders, 4)
    assert plan == [(a, [0, 4]), (a, [2]), (b, [1]), (b, [3])]
    assert assign_connections({0: a}, 3) == [(a, [0]), (a, [0]), (a, [0])]
    assert assign_connections(leaders, 1) == [(a, [0, 2, 4]), (b, [1, 3])]


# -- the pipelined connection against a scripted peer -----------------------------------------

@dataclass
class ScriptedBroker:
    """Answers ProduceRequests on one accepted connection, recording what it got."""

    error_for_partition: dict[int, int] = field(default_factory=dict)
    records: dict[int, int] = field(default_factory=dict)
    correlation_ids: list[int] = field(default_factory=list)
    max_unanswered: int = 0
    hold: int = 1

    def __post_init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = self.server.getsockname()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _read(self, conn: socket.socket, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        pending = []
        with conn:
            while True:
                # a quiet connection gets its held answers: the client has nothing more in flight to send
                conn.settimeout(0.3)
                try:
                    size = self._read(conn, 4)
                except TimeoutError:
                    self._answer(conn, pending)
                    pending = []
                    continue
                conn.settimeout(None)
                if size is None:
                    break
                frame = self._read(conn, struct.unpack(">i", size)[0])
                header, request = decode_request(memoryview(bytearray(frame)))
                self.correlation_ids.append(header.correlation_id)
                codes = {}
                for partition in request.topic_data[0].partition_data:
                    n = DefaultRecordBatch(partition.records).record_count
                    self.records[partition.index] = self.records.get(partition.index, 0) + n
                    codes[partition.index] = self.error_for_partition.get(partition.index, 0)
                if not request.acks:
                    continue  # acks=0: Kafka sends no response
                pending.append((header, request.topic_data[0].name, codes))
                # hold answers back until `hold` requests are waiting: the client must pipeline to get there
                self.max_unanswered = max(self.max_unanswered, len(pending))
                if len(pending) >= self.hold:
                    self._answer(conn, pending)
                    pending = []
            self.server.close()

    def _answer(self, conn: socket.socket, pending: list) -> None:
        for header, topic, codes in pending:
            body = produce_response(header.api_version, topic, codes)
            frame = bytearray(struct.pack(">i", len(body)) + body)
            struct.pack_into(">i", frame, 4, header.correlation_id)
            conn.sendall(frame)


def pipelined(broker: ScriptedBroker, num_records: int, partitions: list[int], batch_records: int,
              window: int, acks: int = 1) -> tuple[PipelinedConnection, Stats]:
    payloads = [b"0123456789"]
    batch = build_payload_batch(payloads * batch_records, None, 1)
    stats = Stats(num_records, out=lambda _: None)
    conn = PipelinedConnection("test", broker.address, "t", partitions, batch, batch_records, payloads, None, 1,
                               8, acks, 5000, window, RequestPermits(num_records), stats)
    conn.start()
    conn.join(timeout=30)
    assert not conn.is_alive()
    if conn.fatal is not None:
        raise conn.fatal
    return conn, stats


def test_pipelined_connection_sends_exactly_the_records() -> None:
    broker = ScriptedBroker(hold=3)
    # 3 partitions x 10 records per request, 95 records: three full requests and a tail of 5
    conn, stats = pipelined(broker, 95, [0, 1, 2], 10, window=3)
    broker.thread.join(timeout=10)
    assert sum(broker.records.values()) == 95
    assert stats.count == 95 and stats.bytes == 950
    assert broker.correlation_ids == [1, 2, 3, 4]
    assert broker.max_unanswered == 3          # the window was used in full
    assert conn.failed_records == 0 and conn.requests_sent == 4


def test_tail_request_spreads_over_partitions() -> None:
    broker = ScriptedBroker()
    _, stats = pipelined(broker, 25, [0, 1, 2], 10, window=1)
    broker.thread.join(timeout=10)
    assert broker.records == {0: 10, 1: 10, 2: 5}
    assert sum(broker.records.values()) == 25 == stats.count


def test_window_of_one_is_request_response() -> None:
    broker = ScriptedBroker(hold=1)
    pipelined(broker, 40, [0], 10, window=1)
    broker.thread.join(timeout=10)
    assert broker.max_unanswered == 1 and broker.records == {0: 40}


def test_partition_errors_are_counted_not_recorded() -> None:
    broker = ScriptedBroker(error_for_partition={1: 6})
    conn, stats = pipelined(broker, 40, [0, 1], 10, window=2)
    broker.thread.join(timeout=10)
    assert conn.failed_records == 20 and stats.count == 20
    assert conn.first_error is not None and conn.first_error.startswith("NOT_LEADER_OR_FOLLOWER")


def test_acks_zero_expects_no_answers() -> None:
    broker = ScriptedBroker(hold=10**9)
    conn, stats = pipelined(broker, 50, [0], 10, window=2, acks=0)
    broker.thread.join(timeout=10)
    assert broker.records == {0: 50} and stats.count == 50 and conn.requests_sent == 5
