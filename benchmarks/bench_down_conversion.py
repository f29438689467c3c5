"""The same log served to an old consumer (Fetch v3: the v2 batches converted to message format
1 while the answer is written) and to a current one (Fetch v12: the batches sent with
sendfile), in one run, against one broker.

Starts ZooKeeper and a kafka-py broker (bench_broker.py's, ``config/server.properties`` with a
free port and a temp log dir), creates a topic of one partition and writes ``--records``
records of ``--value-size`` bytes with 10-byte keys through confluent-kafka (16 KiB batches,
Kafka's default ``batch.size``; ``--compression``). Then each consumer reads the whole log,
from offset 0 to the high watermark, in *passes*: one connection, one Fetch in flight,
``--partition-max-bytes`` per fetch (1 MiB, the default of Kafka's consumers), each fetch
starting where the last whole message or batch of the previous answer ended:

* ``v12``: batch headers walked to find the next offset;
* ``v3``: every message's log entry header walked (what an old consumer must do to find its
  next offset, a message per record when uncompressed), by the project's compiled walk.

With ``--client rdkafka`` the two consumers are librdkafka's instead (confluent-kafka, in
this process): an old one (``api.version.request=false``, ``broker.version.fallback=0.10.0.0``:
Fetch v2, message format 1, what a 0.10-era client gets) and a current one (Fetch v11); each
pass assigns the partition from offset 0 and consumes every message, the messages handed to
Python in batches of 10,000. That is what a user's old consumer gets against a current one,
the client's own per-message work included; the raw consumers above show the broker's part.

The figure of a pass is the log's size (the stored v2 bytes) divided by the pass's time: MB/s
of v2 data served. One warm-up pass of each (the page cache), then ``--rounds`` rounds of
``--passes`` passes of each consumer, the first of the two flipping from round to round; the
medians, ranges and the ratio v3 / v12 are printed last, with the broker's CPU per pass.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_down_conversion.py [--records 300000] [--value-size 100]
        [--compression none] [--rounds 5] [--passes 2] [--client raw|rdkafka]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_broker as bb  # noqa: E402

from kafka_py.clients.common.protocol.fast_fetch_request import encode_fetch_request  # noqa: E402
from kafka_py.clients.common.protocol.fast_fetch_response import read_fetch_response  # noqa: E402
from kafka_py.clients.common.record.records_util import scan_entries  # noqa: E402

TOPIC = "bench-down-conversion"
_ENTRY = struct.Struct(">qi")  # a log entry's offset and length, in every format
_LAST_OFFSET_DELTA = struct.Struct(">i")


def next_offset_v2(records: memoryview) -> tuple[int, int]:
    """(bytes of whole batches, the offset after the last whole batch; -1 if none)."""
    pos, end, next_offset = 0, len(records), -1
    while end - pos >= 12:
        base, length = _ENTRY.unpack_from(records, pos)
        if pos + 12 + length > end:
            break
        next_offset = base + _LAST_OFFSET_DELTA.unpack_from(records, pos + 23)[0] + 1
        pos += 12 + length
    return pos, next_offset


def next_offset_legacy(records: memoryview) -> tuple[int, int]:
    """(bytes of whole entries, the offset after the last whole entry; -1 if none). A format 1
    wrapper's offset is its last inner message's; an overflow entry (offset -1, a length past
    the end) is never whole. The walk is the project's compiled entry walk (``scan_entries``,
    the broker's own for Records.hasCompatibleMagic), as an old consumer in a compiled
    language steps through the messages: a walk in Python would cost the consumer about as
    much CPU as the broker spends converting, and measure the consumer."""
    scan = scan_entries(records)
    return scan.size_in_bytes, -1 if scan.entries == 0 else scan.last_offset + 1


class Consumer:
    """One connection reading the whole partition with Fetch ``version``."""

    def __init__(self, port: int, version: int, partition_max_bytes: int) -> None:
        self.conn = bb.RawConnection(port)
        self.version = version
        self.partition_max_bytes = partition_max_bytes
        self.buffer = bytearray(partition_max_bytes + (4 << 20))
        self.correlation_id = 0
        self.walk = next_offset_v2 if version >= 4 else next_offset_legacy
        # after the correlation id, the flexible versions' header has a tagged-fields byte
        self.body_at = 5 if version >= 12 else 4

    def fetch(self, offset: int) -> tuple[int, int, int]:
        """(high watermark, bytes of whole entries, next offset) of one Fetch from ``offset``."""
        self.correlation_id += 1
        self.conn.sock.sendall(encode_fetch_request(
            self.version, self.correlation_id, "bench-down-conversion", -1, 500, 1, 50 << 20, 0, 0, -1,
            [(TOPIC, [(0, -1, offset, -1, -1, self.partition_max_bytes)])]))
        frame = self.conn.read_frame(self.buffer)
        answer = read_fetch_response(self.version, frame[self.body_at:])
        partition = answer.responses[0][1][0]
        if partition.error_code:
            raise RuntimeError(f"Fetch v{self.version} at {offset} answered error {partition.error_code}")
        used, next_offset = self.walk(partition.records or memoryview(b""))
        if next_offset < 0:
            raise RuntimeError(f"Fetch v{self.version} at {offset} returned no whole message")
        return partition.high_watermark, used, next_offset

    def read_all(self, end_offset: int) -> tuple[float, int, float]:
        """One pass over [0, end_offset): (seconds, fetches, this process's CPU seconds)."""
        cpu = time.process_time()
        start = time.perf_counter()
        offset = fetches = 0
        while offset < end_offset:
            _hw, _used, offset = self.fetch(offset)
            fetches += 1
        return time.perf_counter() - start, fetches, time.process_time() - cpu

    def close(self) -> None:
        self.conn.close()


class RdkafkaConsumer:
    """librdkafka reading the whole partition, as an old client (``old``: the 0.10 protocol
    without ApiVersions, so Fetch v2 and message format 1) or a current one."""

    def __init__(self, port: int, old: bool, partition_max_bytes: int) -> None:
        from confluent_kafka import Consumer as RdConsumer

        config = {"bootstrap.servers": f"127.0.0.1:{port}", "group.id": f"bench-{'old' if old else 'new'}",
                  "enable.auto.commit": False, "fetch.max.bytes": 50 << 20,
                  "max.partition.fetch.bytes": partition_max_bytes, "enable.partition.eof": False}
        if old:
            config.update({"api.version.request": False, "broker.version.fallback": "0.10.0.0"})
        self.consumer = RdConsumer(config)

    def read_all(self, end_offset: int) -> tuple[float, int, float]:
        """One pass over [0, end_offset): (seconds, messages, this process's CPU seconds)."""
        from confluent_kafka import TopicPartition as RdTopicPartition

        cpu = time.process_time()
        start = time.perf_counter()
        self.consumer.assign([RdTopicPartition(TOPIC, 0, 0)])
        seen = 0
        deadline = start + 600
        while seen < end_offset and time.perf_counter() < deadline:
            for message in self.consumer.consume(10_000, 1.0):
                if message.error() is None:
                    seen += 1
        self.consumer.unassign()
        if seen < end_offset:
            raise RuntimeError(f"consumed {seen} of {end_offset} messages in 600 s")
        return time.perf_counter() - start, seen, time.process_time() - cpu

    def close(self) -> None:
        self.consumer.close()


def produce(port: int, records: int, value_size: int, compression: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "linger.ms": 5, "batch.size": 16384,
                         "compression.codec": compression, "queue.buffering.max.messages": 1_000_000})
    value = (b"0123456789abcdef" * (value_size // 16 + 1))[:value_size]
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, value, key=b"%010d" % i)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300) != 0:
        raise RuntimeError("records left unsent")


def log_size(port: int, end_offset: int, partition_max_bytes: int) -> int:
    """The stored bytes of [0, end_offset), as a Fetch v12 pass reads them."""
    consumer = Consumer(port, 12, partition_max_bytes)
    try:
        total = offset = 0
        while offset < end_offset:
            _hw, used, offset = consumer.fetch(offset)
            total += used
        return total
    finally:
        consumer.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--compression", default="none", help="none, gzip, snappy or lz4")
    parser.add_argument("--partition-max-bytes", type=int, default=1 << 20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--passes", type=int, default=2, help="passes of each consumer per round")
    parser.add_argument("--client", choices=("raw", "rdkafka"), default="raw",
                        help="raw: Fetch v3 and v12 by hand (the broker's part); rdkafka: librdkafka "
                             "as a 0.10 client and as a current one")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench-down-conversion-"))
    zookeeper = bb.ZooKeeper(workdir).start()
    broker = None
    consumers: dict = {}
    try:
        broker = bb.KafkaPyBroker(workdir, f"127.0.0.1:{zookeeper.port}", {}).start()
        print(broker.description, flush=True)
        bb.create_topic(broker.port, TOPIC)
        produce(broker.port, args.records, args.value_size, args.compression)
        probe = Consumer(broker.port, 12, args.partition_max_bytes)
        end_offset = probe.fetch(0)[0]
        probe.close()
        if args.client == "raw":
            consumers = {"v3": Consumer(broker.port, 3, args.partition_max_bytes),
                         "v12": Consumer(broker.port, 12, args.partition_max_bytes)}
        else:
            consumers = {"v2": RdkafkaConsumer(broker.port, True, args.partition_max_bytes),
                         "v11": RdkafkaConsumer(broker.port, False, args.partition_max_bytes)}
        size = log_size(broker.port, end_offset, args.partition_max_bytes)
        print(f"{end_offset:,} records of {args.value_size} B ({args.compression}), {size / 1e6:.1f} MB stored",
              flush=True)
        for name, consumer in consumers.items():
            consumer.read_all(end_offset)  # warm-up: the log in the page cache, the code paths run
        results: dict[str, list[float]] = {name: [] for name in consumers}
        cpu: dict[str, list[float]] = {name: [] for name in consumers}
        client_cpu: dict[str, list[float]] = {name: [] for name in consumers}
        for round_ in range(args.rounds):
            order = list(consumers) if round_ % 2 == 0 else list(reversed(consumers))
            for name in order:
                for _ in range(args.passes):
                    user0, system0 = bb.process_cpu(broker.process.pid)
                    seconds, fetches, client = consumers[name].read_all(end_offset)
                    unit = "fetches" if args.client == "raw" else "messages"
                    user1, system1 = bb.process_cpu(broker.process.pid)
                    mb_per_s = size / seconds / 1e6
                    results[name].append(mb_per_s)
                    cpu[name].append(user1 - user0 + system1 - system0)
                    client_cpu[name].append(client)
                    print(f"round {round_ + 1} Fetch {name:<4} {mb_per_s:8.1f} MB/s of v2 data, {seconds:6.3f} s, "
                          f"{fetches} {unit}, CPU broker {user1 - user0:.3f} s user + {system1 - system0:.3f} s "
                          f"system, client {client:.3f} s", flush=True)
        print(f"\n{size / 1e6:.1f} MB ({end_offset:,} records of {args.value_size} B, {args.compression}), "
              f"medians of {args.rounds * args.passes} passes:")
        for name, values in results.items():
            print(f"  Fetch {name:<4} {statistics.median(values):8.1f} MB/s [{min(values):.1f}-{max(values):.1f}], "
                  f"CPU per pass: broker {statistics.median(cpu[name]):.3f} s, "
                  f"client {statistics.median(client_cpu[name]):.3f} s")
        old_name, current_name = consumers
        ratio = statistics.median(results[old_name]) / statistics.median(results[current_name])
        print(f"  {old_name} / {current_name}: {ratio:.0%}")
    finally:
        for consumer in consumers.values():
            consumer.close()
        if broker is not None:
            broker.stop()
        zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
