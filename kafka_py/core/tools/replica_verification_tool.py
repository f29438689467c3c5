"""Port of core/src/main/scala/kafka/tools/ReplicaVerificationTool.scala
(``bin/kafka-replica-verification.sh``).

Checks that every replica of the partitions of the topics matching ``--topic-white-list``
holds the same data. One fetcher thread per broker fetches its replicas of those partitions
with the debugging replica id (-2, which a broker serves from a follower too), starting at
the offsets ``--time`` gives (-1 latest, the default; -2 earliest; else a timestamp). After
each round, in which every fetcher has fetched once, one thread walks the batches of all
replicas side by side up to each replica's high watermark:

* batches whose last offsets differ stop the tool (exit status 1) after
  ``<time>: partition t-0: replica 1's offset 41 doesn't match replica 2's offset 40``;
* batches whose CRCs differ are reported as
  ``<time>: partition t-0 has unmatched checksum at offset 41; replica 1's checksum ...; replica 2's checksum ...``;
* every ``--report-interval-ms`` it prints
  ``<time>: max lag is N for partition t-0 at offset X among P partitions``, the largest
  distance between a partition's high watermark and the offset up to which all its replicas
  were found equal.

Times are printed as ``yyyy-MM-dd HH:mm:ss,SSS``. SIGTERM or SIGINT stop the fetchers.
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from datetime import datetime
from typing import Any, Callable, Mapping, Optional

import click

from kafka_py.clients.network_client import PreparedRequest

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    cluster_brokers,
    connect,
    handle_errors,
    print_usage_and_die,
    run_tool,
    validate_port_or_die,
)

logger = logging.getLogger(__name__)

CLIENT_ID = "replicaVerificationTool"
DEBUGGING_CONSUMER_ID = -2
FETCH_VERSION = 12
DEFAULT_MAX_PARTITION_FETCH_BYTES = 1024 * 1024
INVALID_HIGHWATERMARK = -1
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
# Kafka's FetchRequest.Builder default response size for a replica's fetch
DEFAULT_RESPONSE_MAX_BYTES = 2**31 - 1


def current_time_string(now_ms: Optional[int] = None) -> str:
    """``yyyy-MM-dd HH:mm:ss,SSS`` in local time, as Kafka's SimpleDateFormat prints it."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    moment = datetime.fromtimestamp(ms / 1000)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f",{ms % 1000:03d}"


def tp_text(tp: Optional[tuple[str, int]]) -> str:
    return "null" if tp is None else f"{tp[0]}-{tp[1]}"


class PartitionFetch:
    """One replica's fetched data: its high watermark and its batches."""

    __slots__ = ("high_watermark", "records")

    def __init__(self, high_watermark: int, records: Any) -> None:
        self.high_watermark = high_watermark
        self.records = records

    def batches(self) -> list:
        from kafka_py.clients.common.record.memory_records import MemoryRecords

        if self.records is None:
            return []
        # a fetch answer may end with a partial batch: iteration stops before it
        return list(MemoryRecords.readable_records(self.records).batches(strict=False))


EMPTY_FETCH = PartitionFetch(INVALID_HIGHWATERMARK, None)


class ReplicaBuffer:
    def __init__(self, expected_replicas_per_partition: Mapping[tuple[str, int], int],
                 initial_offsets: Mapping[tuple[str, int], int], report_interval_ms: int,
                 out: Callable[[str], None], exit: Callable[[int], None]) -> None:
        self.expected_replicas = dict(expected_replicas_per_partition)
        self.fetch_offsets = dict(initial_offsets)
        self.records_cache: dict[tuple[str, int], dict[int, PartitionFetch]] = {
            tp: {} for tp in self.expected_replicas}
        self.report_interval_ms = report_interval_ms
        self.out = out
        self.exit = exit
        self.last_report_time = int(time.time() * 1000)
        self.max_lag = -1
        self.offset_with_max_lag = -1
        self.max_lag_partition: Optional[tuple[str, int]] = None
        self._lock = threading.Lock()

    def add_fetched_data(self, tp: tuple[str, int], replica_id: int, data: PartitionFetch) -> None:
        with self._lock:
            self.records_cache[tp][replica_id] = data

    def get_offset(self, tp: tuple[str, int]) -> int:
        with self._lock:
            return self.fetch_offsets[tp]

    def verify_checksum(self) -> None:
        self.max_lag = -1
        for tp, per_replica in self.records_cache.items():
            if len(per_replica) != self.expected_replicas[tp]:
                raise AssertionError(f"fetched {len(per_replica)} replicas for {tp_text(tp)}, but expected "
                                     f"{self.expected_replicas[tp]} replicas")
            iterators = {replica: iter(fetch.batches()) for replica, fetch in sorted(per_replica.items())}
            max_hw = max(fetch.high_watermark for fetch in per_replica.values())
            in_all_replicas = True
            while in_all_replicas:
                first: Optional[tuple[int, int, int, int]] = None  # replica, last offset, next offset, checksum
                for replica, batches in iterators.items():
                    batch = next(batches, None)
                    if batch is None:
                        in_all_replicas = False
                        continue
                    if batch.last_offset >= per_replica[replica].high_watermark:
                        # only what is below the high watermark must be the same everywhere
                        in_all_replicas = False
                        continue
                    if first is None:
                        first = (replica, batch.last_offset, batch.next_offset, batch.checksum)
                        continue
                    if first[1] != batch.last_offset:
                        self.out(f"{current_time_string()}: partition {tp_text(tp)}: replica {first[0]}'s offset "
                                 f"{first[1]} doesn't match replica {replica}'s offset {batch.last_offset}")
                        self.exit(1)
                        return
                    if first[3] != batch.checksum:
                        self.out(f"{current_time_string()}: partition {tp_text(tp)} has unmatched checksum at offset "
                                 f"{batch.last_offset}; replica {first[0]}'s checksum {first[3]}; replica {replica}'s "
                                 f"checksum {batch.checksum}")
                if in_all_replicas and first is not None:
                    with self._lock:
                        self.fetch_offsets[tp] = first[2]
                elif first is None:
                    in_all_replicas = False
            offset = self.fetch_offsets[tp]
            if max_hw - offset > self.max_lag:
                self.offset_with_max_lag = offset
                self.max_lag = max_hw - offset
                self.max_lag_partition = tp
            per_replica.clear()
        now = int(time.time() * 1000)
        if now - self.last_report_time > self.report_interval_ms:
            self.out(f"{current_time_string(now)}: max lag is {self.max_lag} for partition "
                     f"{tp_text(self.max_lag_partition)} at offset {self.offset_with_max_lag} among "
                     f"{len(self.records_cache)} partitions")
            self.last_report_time = now


class FetchSpec(PreparedRequest):
    """A sessionless Fetch of the debugging replica id, written and read by the broker's own
    fetch codec (kafka_py.clients.common.protocol.fast_fetch_request and fast_fetch_response)."""

    def __init__(self, max_wait_ms: int, min_bytes: int, topics: list) -> None:
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.topics = topics

    def encode_frame(self, correlation_id: int, client_id: Optional[str]) -> bytes:
        from kafka_py.clients.common.protocol.fast_fetch_request import encode_fetch_request

        # session id 0 and epoch -1: a full fetch outside any fetch session
        return encode_fetch_request(FETCH_VERSION, correlation_id, client_id, DEBUGGING_CONSUMER_ID, self.max_wait_ms,
                                    self.min_bytes, DEFAULT_RESPONSE_MAX_BYTES, 0, 0, -1, self.topics)

    def read_response(self, body: memoryview) -> Any:
        from kafka_py.clients.common.protocol.fast_fetch_response import read_fetch_response

        return read_fetch_response(FETCH_VERSION, body)


class ReplicaFetcher(threading.Thread):
    def __init__(self, name: str, broker_id: int, host: str, port: int, partitions: list[tuple[str, int]],
                 buffer: ReplicaBuffer, fetch_size: int, max_wait_ms: int, do_verification: bool,
                 barriers: "RoundBarriers", fetcher_id: int) -> None:
        super().__init__(name=name, daemon=True)
        self.broker_id = broker_id
        self.host = host
        self.port = port
        self.partitions = partitions
        self.buffer = buffer
        self.fetch_size = fetch_size
        self.max_wait_ms = max_wait_ms
        self.do_verification = do_verification
        self.barriers = barriers
        self.client_id = f"broker-{DEBUGGING_CONSUMER_ID}-fetcher-{fetcher_id}"
        self.running = True
        self.client: Any = None

    def _client(self) -> Any:
        from kafka_py.clients.network_client import NetworkClient
        from kafka_py.clients.network_client_utils import await_ready
        from kafka_py.core.cluster.broker import Node

        if self.client is None:
            self.client = NetworkClient(Node(self.broker_id, self.host, self.port), self.client_id, 30000)
        if not await_ready(self.client, 30000):
            raise OSError("Failed to connect within 30000 ms")
        return self.client

    def fetch(self) -> Optional[Any]:
        from kafka_py.clients.network_client_utils import send_and_receive
        from kafka_py.clients.common.protocol.api_keys import ApiKeys

        topics: dict[str, list] = {}
        for topic, partition in self.partitions:
            topics.setdefault(topic, []).append(
                (partition, -1, self.buffer.get_offset((topic, partition)), -1, -1, self.fetch_size))
        request = FetchSpec(self.max_wait_ms, 1, list(topics.items()))
        try:
            return send_and_receive(self._client(), ApiKeys.FETCH, FETCH_VERSION, request).response_body
        except Exception as e:  # noqa: BLE001 - this round counts the replica as empty, as Kafka's tool does
            if self.client is not None:
                self.client.close()
                self.client = None
            if self.running:
                logger.warning("[%s] fetch from broker %d failed: %s", self.name, self.broker_id, e)
            return None

    def do_work(self) -> None:
        response = self.fetch()
        if response is not None:
            for topic, partitions in response.responses:
                for p in partitions:
                    self.buffer.add_fetched_data((topic, p.partition_index), self.broker_id,
                                                 PartitionFetch(p.high_watermark, p.records))
        else:
            for tp in self.partitions:
                self.buffer.add_fetched_data(tp, self.broker_id, EMPTY_FETCH)
        # every fetcher has fetched once: one of them verifies, the others wait for it
        self.barriers.fetched.wait()
        if self.do_verification:
            self.buffer.verify_checksum()
        self.barriers.verified.wait()

    def run(self) -> None:
        try:
            while self.running:
                self.do_work()
        except threading.BrokenBarrierError:
            pass
        except Exception:  # noqa: BLE001 - the fetcher ends, and the rounds with it
            logger.exception("[%s] Error due to", self.name)
            self.barriers.abort()
        finally:
            if self.client is not None:
                self.client.close()

    def shutdown(self) -> None:
        self.running = False
        self.barriers.abort()


class RoundBarriers:
    """The two meeting points of a round: all fetched, then verified."""

    def __init__(self, parties: int) -> None:
        self.fetched = threading.Barrier(parties)
        self.verified = threading.Barrier(parties)

    def abort(self) -> None:
        self.fetched.abort()
        self.verified.abort()


def _describe(bootstrap: str) -> tuple[list[dict], dict[int, tuple[str, int]]]:
    from kafka import KafkaAdminClient

    admin = connect(KafkaAdminClient, client_configs({"bootstrap.servers": bootstrap, "client.id": CLIENT_ID},
                                                     KafkaAdminClient))
    try:
        topics = admin.describe_topics()
        brokers = cluster_brokers(admin)
    finally:
        admin.close()
    return topics, brokers


def initial_offsets(bootstrap: str, partitions: list[tuple[str, int]], initial_offset_time: int) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    consumer = connect(KafkaConsumer, client_configs({"bootstrap.servers": bootstrap,
                                                      "group.id": "ReplicaVerification"}, KafkaConsumer))
    try:
        tps = [TopicPartition(t, p) for t, p in partitions]
        if initial_offset_time == LATEST_TIMESTAMP:
            found = consumer.end_offsets(tps)
        elif initial_offset_time == EARLIEST_TIMESTAMP:
            found = consumer.beginning_offsets(tps)
        else:
            ends = consumer.end_offsets(tps)
            times = consumer.offsets_for_times({tp: initial_offset_time for tp in tps})
            found = {tp: times[tp].offset if times.get(tp) is not None else ends[tp] for tp in tps}
        return {(tp.topic, tp.partition): offset for tp, offset in found.items()}
    finally:
        consumer.close(autocommit=False)


@click.command(context_settings={"help_option_names": ["--help"], "max_content_width": 120},
               help="Validate that all replicas for a set of topics have the same data.")
@click.option("--broker-list", metavar="<String: hostname:port,...,hostname:port>",
              help="REQUIRED: The list of hostname and port of the server to connect to.")
@click.option("--fetch-size", type=int, default=DEFAULT_MAX_PARTITION_FETCH_BYTES, show_default=True,
              metavar="<Integer: bytes>", help="The fetch size of each request.")
@click.option("--max-wait-ms", type=int, default=1000, show_default=True, metavar="<Integer: ms>",
              help="The max amount of time each fetch request waits.")
@click.option("--topic-white-list", default=".*", show_default=True, metavar="<String: Java regex (String)>",
              help="White list of topics to verify replica consistency. Defaults to all topics.")
@click.option("--time", "initial_offset_time", type=int, default=-1, show_default=True,
              metavar="<Long: timestamp/-1(latest)/-2(earliest)>", help="Timestamp for getting the initial offsets.")
@click.option("--report-interval-ms", type=int, default=30000, show_default=True, metavar="<Long: ms>",
              help="The reporting interval.")
@handle_errors()
def main(broker_list: Optional[str], fetch_size: int, max_wait_ms: int, topic_white_list: str,
         initial_offset_time: int, report_interval_ms: int) -> None:
    if len(sys.argv) <= 1:
        print_usage_and_die("Validate that all replicas for a set of topics have the same data.")
    if broker_list is None:
        print_usage_and_die("Missing required argument \"[broker-list]\"")
    from kafka_py.core.admin.topic_command import IncludeList

    include = IncludeList(topic_white_list)
    validate_port_or_die(broker_list)
    logger.info("Getting topic metadata...")
    topics, brokers = _describe(broker_list)
    selected = sorted((t for t in topics if include.is_topic_allowed(t["name"], False)), key=lambda t: t["name"])
    if not selected:
        logger.error("No topics found. [topic-white-list] if specified, is either filtering out all topics or there "
                     "is no topic.")
        raise click.exceptions.Exit(1)
    expected: dict[tuple[str, int], int] = {}
    per_broker: dict[int, list[tuple[str, int]]] = {}
    for topic in selected:
        for p in sorted(topic["partitions"], key=lambda p: p["partition_index"]):
            tp = (topic["name"], p["partition_index"])
            expected[tp] = len(p["replica_nodes"])
            for replica in p["replica_nodes"]:
                per_broker.setdefault(replica, []).append(tp)
    missing = sorted(b for b in per_broker if b not in brokers)
    if missing:
        raise CommandError(f"Replicas on brokers {missing} cannot be fetched: those brokers are not in the cluster")

    out_lock = threading.Lock()

    def out(line: str) -> None:
        with out_lock:
            click.echo(line)
            sys.stdout.flush()

    finished = threading.Event()
    status = {"code": 0}

    def exit_with(code: int) -> None:
        status["code"] = code
        finished.set()

    buffer = ReplicaBuffer(expected, initial_offsets(broker_list, list(expected), initial_offset_time),
                           report_interval_ms, out, exit_with)
    barriers = RoundBarriers(len(per_broker))
    verification_broker = next(iter(per_broker))
    fetchers = [ReplicaFetcher(f"ReplicaFetcher-{broker_id}", broker_id, *brokers[broker_id], partitions, buffer,
                               fetch_size, max_wait_ms, broker_id == verification_broker, barriers, n)
                for n, (broker_id, partitions) in enumerate(per_broker.items(), start=1)]

    def stop(signum: int, frame: Any) -> None:
        logger.info("Stopping all fetchers")
        finished.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for f in fetchers:
        f.start()
    out(f"{current_time_string()}: verification process is started.")
    # bounded waits keep the main thread free to run the signal handlers
    while not finished.wait(1.0):
        if not any(f.is_alive() for f in fetchers):
            status["code"] = 1
            break
    for f in fetchers:
        f.shutdown()
    for f in fetchers:
        f.join(timeout=max_wait_ms / 1000 + 30)
    if status["code"]:
        raise click.exceptions.Exit(status["code"])


if __name__ == "__main__":
    run_tool(main, "kafka-replica-verification.sh")
