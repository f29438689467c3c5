"""CPU cost of one Produce or Fetch request through the broker's code, without its threads.

A KafkaServer runs in this process (real ZooKeeper, started with
``bin/zookeeper-server-start.sh``). The loop here plays the network thread and a
request handler in one thread, for each request:

    frame copy (as the Selector gives each frame its own buffer) -> decode_request ->
    RequestContext/Request -> KafkaApis.handle (-> ReplicaManager -> Partition -> Log)
    -> the response Send -> written to a socketpair that a drain thread empties.

so that the CPU microseconds per request it prints (this thread's CPU time, user and
system, so the writes and sendfile count) are the broker's own work for that request, without the thread hand-offs (request queue, response queue, selector wake-ups)
that bench_broker.py includes. ``--profile`` prints a cProfile of the loop;
``--layers`` times each layer of the produce path inclusively (KafkaApis.handle down to
FileRecords.append, the response building and queueing), wrapping those methods with a
clock read on entry and exit, which adds about a microsecond per layer.

    .venv/bin/python benchmarks/bench_request_path.py [--seconds 3] [--profile] [--only produce-16k]
    .venv/bin/python benchmarks/bench_request_path.py --metrics on,off --rounds 5 --only produce-1
    .venv/bin/python benchmarks/bench_request_path.py --instructions 200 [--only produce-1]

``--instructions N`` counts instructions instead of seconds: the benchmark runs itself under
``valgrind --tool=callgrind`` (setup uninstrumented) and counts N requests of each workload
after the warm-up (benchmarks/callgrind_marks.py). The count repeats to a fraction of a
percent whatever else the machine does, so a change to the request path is judged by it.

Each request also gets what the Processor does after writing the answer: its RequestMetrics
update (network/request_metrics.py). ``--metrics on,off`` alternates recording on and off
(``kafka.py.metrics.enabled``) round by round within one run and prints the medians.

Workloads: ``produce-16k`` (one batch of 163 100-byte records, acks=1),
``produce-16k-lz4``/``-zstd``/``-gzip``/``-snappy`` (the same 16 KiB of log-line-like
values, compressed by the producer), ``produce-10k``
(one 10,000-byte record, acks=1), ``produce-1``
(one 100-byte record, acks=1), ``produce-1-all`` (acks=all), ``fetch-1m`` (a 1 MiB
fetch of 10 KB records, the FileRecords slice sent with sendfile).
"""
from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import os
import pstats
import queue
import random
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_broker import ZooKeeper, free_port, wait_until  # noqa: E402

from kafka_py.network.request_channel import Request, RequestContext, SendResponse  # noqa: E402
from kafka_py.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.protocol.headers import RequestHeader  # noqa: E402
from kafka_py.protocol.messages import decode_request, decode_response, encode_request, request_schema  # noqa: E402
from kafka_py.record.compression import CompressionType  # noqa: E402
from kafka_py.record.default_record_batch import SimpleRecord, build_batch  # noqa: E402


class CapturingProcessor:
    """Stands where a network Processor would: keeps the responses handlers send."""

    id = 10_000

    def __init__(self) -> None:
        self.responses: queue.SimpleQueue = queue.SimpleQueue()

    def enqueue_response(self, response) -> None:
        self.responses.put(response)


def compressible_value(size: int, rng: random.Random) -> bytes:
    """A log-line-like value: repeated field names, random numbers (compresses 2-4x)."""
    text = b""
    while len(text) < size:
        text += b'{"user":%d,"event":"click","page":"/item/%d","ms":%d}' % (
            rng.randrange(10**6), rng.randrange(10**4), rng.randrange(10**3))
    return text[:size]


def produce_frame(topic: str, records: int, size: int, acks: int, version: int = 8,
                  compression: CompressionType = CompressionType.NONE) -> bytes:
    now = int(time.time() * 1000)
    if compression == CompressionType.NONE:
        value = os.urandom(size)
        simple = [SimpleRecord(None, value, timestamp=now) for _ in range(records)]
    else:
        rng = random.Random(7)
        simple = [SimpleRecord(None, compressible_value(size, rng), timestamp=now) for _ in range(records)]
    batch = build_batch(simple, compression=compression)
    schema = request_schema(ApiKeys.PRODUCE, version)
    module = sys.modules[schema.__module__]
    body = schema(transactional_id=None, acks=acks, timeout=datetime.timedelta(seconds=30), topic_data=(
        module.TopicProduceData(name=topic, partition_data=(module.PartitionProduceData(index=0, records=batch),)),))
    return encode_request(RequestHeader.for_request(ApiKeys.PRODUCE, version, 7, "bench"), body)[4:]


def fetch_frame(topic: str, offset: int, max_bytes: int, version: int = 11) -> bytes:
    schema = request_schema(ApiKeys.FETCH, version)
    module = sys.modules[schema.__module__]
    body = schema(max_wait=datetime.timedelta(milliseconds=0), min_bytes=1, max_bytes=50 << 20,
                  topics=(module.FetchTopic(topic=topic, partitions=(module.FetchPartition(
                      partition=0, fetch_offset=offset, partition_max_bytes=max_bytes),)),),
                  forgotten_topics_data=())
    return encode_request(RequestHeader.for_request(ApiKeys.FETCH, version, 7, "bench"), body)[4:]


# (class path, method) of the produce path, outermost first, for --layers.
PRODUCE_LAYERS = (
    ("kafka_py.server.kafka_apis:KafkaApis", "handle"),
    ("kafka_py.server.replica_manager:ReplicaManager", "append_records"),
    ("kafka_py.server.replica_manager:ReplicaManager", "_append_to_local_log"),
    ("kafka_py.cluster.partition:Partition", "append_records_to_leader"),
    ("kafka_py.cluster.partition:Partition", "_maybe_increment_leader_hw"),
    ("kafka_py.log.log:Log", "append_as_leader"),
    ("kafka_py.log.log:Log", "_analyze_and_validate_records"),
    ("kafka_py.log.log:Log", "_validate_and_assign_offsets"),
    ("kafka_py.log.log:Log", "_maybe_roll"),
    ("kafka_py.log.log_segment:LogSegment", "append"),
    ("kafka_py.record.file_records:FileRecords", "append"),
    ("kafka_py.server.kafka_apis_fast_answers", "send_produce_response"),
    ("kafka_py.protocol.fast_produce_response", "encode_produce_response"),
    ("kafka_py.network.request_channel:RequestChannel", "send_response"),
    ("kafka_py.protocol.messages", "decode_request"),
)


class LayerClock:
    """Inclusive nanoseconds spent in each of ``PRODUCE_LAYERS`` (methods wrapped in place)."""

    def __init__(self) -> None:
        import functools
        import importlib

        self.totals: dict[str, int] = {}
        clock = time.perf_counter_ns
        for path, name in PRODUCE_LAYERS:
            module_name, _, class_name = path.partition(":")
            owner = importlib.import_module(module_name)
            if class_name:
                owner = getattr(owner, class_name)
            original = getattr(owner, name, None)
            if original is None:
                continue
            label = f"{class_name or module_name.rsplit('.', 1)[-1]}.{name}"
            self.totals[label] = 0

            def timed(*args, _original=original, _label=label, **kwargs):
                start = clock()
                try:
                    return _original(*args, **kwargs)
                finally:
                    self.totals[_label] += clock() - start

            setattr(owner, name, functools.wraps(original)(timed))
            if not class_name:
                # modules that imported the function by name call their own reference
                for module in list(sys.modules.values()):
                    if getattr(module, name, None) is original and module is not owner:
                        setattr(module, name, timed)

    def reset(self) -> None:
        for label in self.totals:
            self.totals[label] = 0

    def report(self, count: int) -> str:
        return "\n".join(f"    {label:<45} {total / count / 1000:7.1f} us" for label, total in self.totals.items())


class Loop:
    def __init__(self, server, processor: CapturingProcessor) -> None:
        self.apis = server.data_plane_request_processor
        self.metrics = server.socket_server.data_plane_request_channel.metrics
        self.processor = processor
        self.sender, receiver = socket.socketpair()
        self.sender.setblocking(False)
        self.drained = 0
        self.sort = "tottime"
        self.lines = 35
        self.on_start = None
        threading.Thread(target=self._drain, args=(receiver,), daemon=True).start()

    def _drain(self, sock: socket.socket) -> None:
        buf = bytearray(1 << 20)
        while True:
            n = sock.recv_into(buf)
            if n == 0:
                return
            self.drained += n

    def one(self, frame: bytes) -> None:
        view = memoryview(bytearray(frame))
        header, body = decode_request(view)
        context = RequestContext(header, "127.0.0.1:1-127.0.0.1:2-0", "127.0.0.1", "PLAINTEXT", "PLAINTEXT")
        request = Request(self.processor.id, context, time.monotonic_ns(), view, body)
        request.request_dequeue_time_ns = time.monotonic_ns()
        self.apis.handle(request)
        response = self.processor.responses.get(timeout=30)
        request.response_dequeue_time_ns = time.monotonic_ns()
        if isinstance(response, SendResponse):
            send = response.response_send
            while not send.completed:
                if send.write_to(self.sender) == 0:
                    time.sleep(0)
        # What the Processor does once the answer is out: the request's metrics.
        self.metrics.update_request_metrics(request, time.monotonic_ns())

    def count_instructions(self, frame: bytes, requests: int, label: str, marks) -> None:
        """``requests`` requests of ``frame`` counted by callgrind as one dump named ``label``,
        after the same warm-up as ``run``."""
        for _ in range(50):
            self.one(frame)
        gc.collect()  # every workload's count starts from the same collector state
        marks.start()
        for _ in range(requests):
            self.one(frame)
        marks.dump(label)
        marks.stop()

    def run(self, frame: bytes, seconds: float, profile: bool) -> tuple[int, float]:
        for _ in range(50):
            self.one(frame)
        if self.on_start is not None:
            self.on_start()
        # Thread CPU time: the drain thread's GIL turns would otherwise land on whatever
        # function was running when it took the GIL.
        profiler = cProfile.Profile(time.thread_time) if profile else None
        count = 0
        cpu0 = time.thread_time()
        start = time.perf_counter()
        if profiler:
            profiler.enable()
        while time.perf_counter() - start < seconds:
            for _ in range(20):
                self.one(frame)
            count += 20
        if profiler:
            profiler.disable()
        elapsed = time.perf_counter() - start
        self.cpu = time.thread_time() - cpu0
        if profiler:
            pstats.Stats(profiler, stream=sys.stdout).sort_stats(self.sort).print_stats(self.lines)
        return count, elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime", help="cProfile sort key (tottime, cumulative)")
    parser.add_argument("--only", default="", help="comma-separated workloads")
    parser.add_argument("--layers", action="store_true", help="time each layer of the produce path")
    parser.add_argument("--metrics", default="on", help="on, off, or on,off: the per-request metrics "
                        "(kafka.py.metrics.enabled); with both, each workload alternates them --rounds times")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each workload (with --metrics on,off)")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="count the instructions of N requests of each workload under valgrind's callgrind "
                             "(the benchmark runs itself under valgrind) and print instructions per request")
    args = parser.parse_args(argv)
    if args.instructions:
        from callgrind_marks import CallgrindMarks

        marks = CallgrindMarks.load()
        if not marks.running_on_valgrind:
            return count_instructions(argv if argv is not None else sys.argv[1:], args.instructions)
    else:
        marks = None

    import logging

    logging.basicConfig(level=logging.WARNING)
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.server.kafka_server import KafkaServer

    workdir = Path(tempfile.mkdtemp(prefix="bench-request-path-"))
    zookeeper = ZooKeeper(workdir).start()
    server = None
    try:
        config = KafkaConfig({
            "broker.id": "0", "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
            "log.dirs": str(workdir / "logs"), "zookeeper.connect": f"127.0.0.1:{zookeeper.port}/bench",
            "num.network.threads": "1", "num.io.threads": "1", "controlled.shutdown.enable": "false",
        }, do_log=False)
        server = KafkaServer(config)
        server.startup()
        wait_until(lambda: server.metadata_cache.has_alive_broker(0), 30, "metadata from the controller")
        processor = CapturingProcessor()
        server.socket_server.data_plane_request_channel.add_processor(processor)
        loop = Loop(server, processor)
        loop.sort = args.sort
        loop.lines = 60 if args.sort == "cumulative" else 35
        from kafka_py.zk.admin_zk_client import AdminZkClient

        admin = AdminZkClient(server.zk_client)
        topics = {}
        codecs = {"lz4": CompressionType.LZ4, "zstd": CompressionType.ZSTD, "gzip": CompressionType.GZIP,
                  "snappy": CompressionType.SNAPPY}
        for name in ("p16k", "p10k", "p1", "p1all", "f", *(f"p16k{c}" for c in codecs)):
            topic = f"bench-{name}"
            admin.create_topic(topic, 1, 1, {})
            topics[name] = topic
        from kafka_py.common.topic_partition import TopicPartition

        for topic in topics.values():
            wait_until(lambda t=topic: server.replica_manager.online_partition(TopicPartition(t, 0)) is not None,
                       30, f"{topic} leader")
        # the fetch topic: 100 MB of 10 KB records
        fill = produce_frame(topics["f"], 1, 10_000, 1)
        for _ in range(10_000):
            loop.one(fill)

        workloads = {
            "produce-16k": produce_frame(topics["p16k"], 163, 100, 1),
            **{f"produce-16k-{c}": produce_frame(topics[f"p16k{c}"], 163, 100, 1, compression=codec)
               for c, codec in codecs.items()},
            "produce-10k": produce_frame(topics["p10k"], 1, 10_000, 1),
            "produce-1": produce_frame(topics["p1"], 1, 100, 1),
            "produce-1-all": produce_frame(topics["p1all"], 1, 100, -1),
            "fetch-1m": fetch_frame(topics["f"], 0, 1 << 20),
        }
        only = set(args.only.split(",")) if args.only else set(workloads)
        clock = LayerClock() if args.layers else None
        from kafka_py.metrics.kafka_metrics_group import recording

        modes = [m.strip() for m in args.metrics.split(",") if m.strip()]
        for name, frame in workloads.items():
            if name not in only:
                continue
            if marks is not None:
                loop.count_instructions(frame, args.instructions, name, marks)
                continue
            per_mode: dict[str, list[float]] = {m: [] for m in modes}
            for round_ in range(args.rounds):
                for mode in (modes if round_ % 2 == 0 else modes[::-1]):
                    recording.enabled = mode != "off"
                    if clock:
                        loop.on_start = clock.reset
                    count, elapsed = loop.run(frame, args.seconds, args.profile)
                    per_mode[mode].append(loop.cpu / count * 1e6)
                    label = f"{name} metrics={mode}" if len(modes) > 1 else name
                    print(f"{label:<14} {loop.cpu / count * 1e6:8.1f} us CPU/request ({elapsed / count * 1e6:8.1f} us "
                          f"wall; {count / elapsed:7,.0f} requests/s on one thread)", flush=True)
                    if clock and name.startswith("produce"):
                        print(clock.report(count), flush=True)
            if len(modes) > 1 and args.rounds > 1:
                import statistics

                print(f"{name:<14} median CPU us/request: " + ", ".join(
                    f"metrics={m} {statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}]" for m, v in per_mode.items()),
                    flush=True)
                if set(modes) == {"on", "off"}:
                    # each round's on and off ran back to back: their ratio is the paired figure
                    ratios = [a / b for a, b in zip(per_mode["on"], per_mode["off"])]
                    print(f"{name:<14} on/off per round: median {statistics.median(ratios):.3f} "
                          f"[{min(ratios):.3f}-{max(ratios):.3f}]", flush=True)
            recording.enabled = True
    finally:
        if server is not None:
            server.shutdown()
        zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def count_instructions(argv: Sequence[str], requests: int) -> int:
    """This benchmark again under callgrind; each workload's instructions per request."""
    from callgrind_marks import dumps, run_under_callgrind

    out_dir = Path(tempfile.mkdtemp(prefix="bench-request-path-callgrind-"))
    try:
        code = run_under_callgrind([sys.executable, str(Path(__file__).resolve()), *argv], out_dir)
        if code != 0:
            print(f"the run under callgrind failed ({code})", file=sys.stderr)
            return code
        for label, instructions in dumps(out_dir):
            print(f"{label:<17} {instructions / requests:12,.0f} instructions/request "
                  f"({requests} requests under callgrind, the request path's thread)", flush=True)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
