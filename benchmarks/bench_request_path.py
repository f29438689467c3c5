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
fetch of 10 KB records, the FileRecords slice sent with sendfile), ``fetch-1m-v3`` (a 1 MiB
Fetch v3 of 100-byte records in 16 KiB batches: converted to message format 1 as it is
written to the socket).
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
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_broker import ZooKeeper, free_port, wait_until  # noqa: E402

from kafka_py.network.request_channel import Request, RequestContext, SendResponse  # noqa: E402
from kafka_py.clients.common.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.clients.common.protocol.headers import RequestHeader  # noqa: E402
from kafka_py.clients.common.protocol.messages import decode_request, decode_response, encode_request, request_schema  # noqa: E402
from kafka_py.clients.common.record.compression import CompressionType  # noqa: E402
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch  # noqa: E402


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
    # the old versions' classes are the project's own, which name every field
    since_v7 = {"forgotten_topics_data": ()} if version >= 7 else {"replica_id": -1}
    body = schema(max_wait=datetime.timedelta(milliseconds=0), min_bytes=1, max_bytes=50 << 20,
                  topics=(module.FetchTopic(topic=topic, partitions=(module.FetchPartition(
                      partition=0, fetch_offset=offset, partition_max_bytes=max_bytes),)),),
                  **since_v7)
    return encode_request(RequestHeader.for_request(ApiKeys.FETCH, version, 7, "bench"), body)[4:]


# (class path, method) of the produce path, outermost first, for --layers.
PRODUCE_LAYERS = (
    ("kafka_py.server.kafka_apis:KafkaApis", "handle"),
    ("kafka_py.server.replica_manager:ReplicaManager", "append_records"),
    ("kafka_py.server.replica_manager:ReplicaManager", "_append_to_local_log"),
    ("kafka_py.core.cluster.partition:Partition", "append_records_to_leader"),
    ("kafka_py.core.cluster.partition:Partition", "_maybe_increment_leader_hw"),
    ("kafka_py.log.log:Log", "append_as_leader"),
    ("kafka_py.log.log:Log", "_analyze_and_validate_records"),
    ("kafka_py.log.log:Log", "_validate_and_assign_offsets"),
    ("kafka_py.log.log:Log", "_maybe_roll"),
    ("kafka_py.log.log_segment:LogSegment", "append"),
    ("kafka_py.clients.common.record.file_records:FileRecords", "append"),
    ("kafka_py.server.kafka_apis_fast_answers", "send_produce_response"),
    ("kafka_py.clients.common.protocol.fast_produce_response", "encode_produce_response"),
    ("kafka_py.network.request_channel:RequestChannel", "send_response"),
    ("kafka_py.clients.common.protocol.messages", "decode_request"),
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


# The stages of a request counted by ``--instructions N --stages``: label -> where the function
# is, "module:Class.method" or "module:function" (alternatives after "|", for code that moves
# between modules). Each is counted inclusively (everything it calls).
REQUEST_STAGES = {
    "decode_request": "kafka_py.clients.common.protocol.messages:decode_request",
    "RequestHeader.parse": "kafka_py.clients.common.protocol.headers:RequestHeader.parse",
    "parse_request": "kafka_py.clients.common.protocol.messages:parse_request",
    "RequestContext()": "__main__:RequestContext",
    "Request()": "__main__:Request",
    "KafkaApis.handle": "kafka_py.server.kafka_apis:KafkaApis.handle",
    "handle_produce_request": "kafka_py.server.kafka_apis:KafkaApis.handle_produce_request",
    "MetadataCache.contains": "kafka_py.server.metadata_cache:MetadataCache.contains",
    "_validate_produce_records": "kafka_py.server.kafka_apis:_validate_produce_records",
    "ReplicaManager.append_records": "kafka_py.server.replica_manager:ReplicaManager.append_records",
    "_append_to_local_log": "kafka_py.server.replica_manager:ReplicaManager._append_to_local_log",
    "get_partition_or_exception": "kafka_py.server.replica_manager:ReplicaManager.get_partition_or_exception",
    "Partition.append_records_to_leader": "kafka_py.core.cluster.partition:Partition.append_records_to_leader",
    "Log.append_as_leader": "kafka_py.log.log:Log.append_as_leader",
    "_analyze_and_validate_records": "kafka_py.log.log:Log._analyze_and_validate_records",
    "_validate_and_assign_offsets": "kafka_py.log.log:Log._validate_and_assign_offsets",
    "LogValidator.validate_messages_and_assign_offsets":
        "kafka_py.log.log_validator:LogValidator.validate_messages_and_assign_offsets",
    "get_first_batch_and_maybe_validate_no_more_batches":
        "kafka_py.log.log_validator:get_first_batch_and_maybe_validate_no_more_batches",
    "validate_batch": "kafka_py.log.log_validator:validate_batch",
    "assign_offsets_non_compressed": "kafka_py.log.log_validator:assign_offsets_non_compressed",
    "_RecordRules.walk": "kafka_py.log.log_validator:_RecordRules.walk",
    "walk_records": "kafka_py.clients.common.record.partial_default_record:walk_records",
    "_RecordRules.raise_record_errors": "kafka_py.log.log_validator:_RecordRules.raise_record_errors",
    "_writable": "kafka_py.log.log_validator:_writable",
    "DefaultRecordBatch.set_max_timestamp": "kafka_py.clients.common.record.default_record_batch:DefaultRecordBatch.set_max_timestamp",
    "_maybe_roll": "kafka_py.log.log:Log._maybe_roll",
    "LogSegment.should_roll": "kafka_py.log.log_segment:LogSegment.should_roll",
    "read_entity": "kafka_py.clients.common.protocol.codec:read_entity",
    "Log.maybe_increment_high_watermark": "kafka_py.log.log:Log.maybe_increment_high_watermark",
    "Log._update_high_watermark_metadata": "kafka_py.log.log:Log._update_high_watermark_metadata",
    "ProducerStateManager.update_map_end_offset":
        "kafka_py.log.producer_state_manager:ProducerStateManager.update_map_end_offset",
    "LogSegment.append": "kafka_py.log.log_segment:LogSegment.append",
    "FileRecords.append": "kafka_py.clients.common.record.file_records:FileRecords.append",
    "OffsetIndex.append": "kafka_py.log.offset_index:OffsetIndex.append",
    "TimeIndex.maybe_append": "kafka_py.log.time_index:TimeIndex.maybe_append",
    "_update_log_end_offset": "kafka_py.log.log:Log._update_log_end_offset",
    "_maybe_increment_leader_hw": "kafka_py.core.cluster.partition:Partition._maybe_increment_leader_hw",
    "BrokerTopicStats.record_produce": "kafka_py.server.broker_topic_stats:BrokerTopicStats.record_produce",
    "call_with_deferred_wakeups": "kafka_py.tuning.wakeups:call_with_deferred_wakeups",
    "DelayedOperationPurgatory.check_and_complete":
        "kafka_py.server.delayed_operation:DelayedOperationPurgatory.check_and_complete",
    "update_record_conversion_stats": "kafka_py.server.kafka_apis:KafkaApis.update_record_conversion_stats",
    "_send_produce_response": "kafka_py.server.kafka_apis:KafkaApis._send_produce_response",
    "send_produce_response": "kafka_py.server.kafka_apis_fast_answers:send_produce_response",
    "encode_produce_response": "kafka_py.clients.common.protocol.fast_produce_response:encode_produce_response",
    "mark_partition_errors": "kafka_py.network.request_metrics:RequestChannelMetrics.mark_partition_errors",
    "RequestChannel.send_response": "kafka_py.network.request_channel:RequestChannel.send_response",
    "handle_fetch_request": "kafka_py.server.kafka_apis:KafkaApis.handle_fetch_request",
    "ReplicaManager.fetch_messages": "kafka_py.server.replica_manager:ReplicaManager.fetch_messages",
    "Log.read": "kafka_py.log.log:Log.read",
    "try_complete_actions": "kafka_py.server.replica_manager:ReplicaManager.try_complete_actions",
    "ByteBufferSend.write_to": "kafka_py.network.send:ByteBufferSend.write_to",
    "MultiRecordsSend.write_to": "kafka_py.network.send:MultiRecordsSend.write_to",
    "update_request_metrics": "kafka_py.network.request_metrics:RequestChannelMetrics.update_request_metrics",
}

# How the stages nest in one request, (depth, label); "own" is a stage's count less those of
# the stages listed under it. Stages of the other tree that ran show up under "elsewhere".
_COMMON_HEAD = ((0, "decode_request"), (1, "RequestHeader.parse"), (1, "parse_request"), (2, "read_entity"),
                (0, "RequestContext()"), (0, "Request()"), (0, "KafkaApis.handle"))
_COMMON_TAIL = ((1, "try_complete_actions"), (0, "ByteBufferSend.write_to"), (0, "MultiRecordsSend.write_to"),
                (0, "update_request_metrics"))
PRODUCE_TREE = _COMMON_HEAD + (
    (1, "handle_produce_request"),
    (2, "MetadataCache.contains"),
    (2, "_validate_produce_records"),
    (2, "ReplicaManager.append_records"),
    (3, "_append_to_local_log"),
    (4, "get_partition_or_exception"),
    (4, "Partition.append_records_to_leader"),
    (5, "Log.append_as_leader"),
    (6, "_analyze_and_validate_records"),
    (6, "_validate_and_assign_offsets"),
    (7, "LogValidator.validate_messages_and_assign_offsets"),
    (8, "get_first_batch_and_maybe_validate_no_more_batches"),
    (8, "validate_batch"),
    (8, "assign_offsets_non_compressed"),
    (9, "_RecordRules.walk"),
    (10, "walk_records"),
    (9, "_RecordRules.raise_record_errors"),
    (9, "_writable"),
    (9, "DefaultRecordBatch.set_max_timestamp"),
    (6, "_maybe_roll"),
    (7, "LogSegment.should_roll"),
    (6, "LogSegment.append"),
    (7, "FileRecords.append"),
    (7, "OffsetIndex.append"),
    (7, "TimeIndex.maybe_append"),
    (6, "_update_log_end_offset"),
    (6, "ProducerStateManager.update_map_end_offset"),
    (5, "_maybe_increment_leader_hw"),
    (6, "Log.maybe_increment_high_watermark"),
    (7, "Log._update_high_watermark_metadata"),
    (4, "BrokerTopicStats.record_produce"),
    (3, "call_with_deferred_wakeups"),
    (4, "DelayedOperationPurgatory.check_and_complete"),
    (3, "update_record_conversion_stats"),
    (3, "_send_produce_response"),
    (4, "send_produce_response"),
    (5, "encode_produce_response"),
    (5, "mark_partition_errors"),
    (5, "RequestChannel.send_response"),
) + _COMMON_TAIL
FETCH_TREE = _COMMON_HEAD + (
    (1, "handle_fetch_request"),
    (2, "ReplicaManager.fetch_messages"),
    (3, "Log.read"),
    (3, "RequestChannel.send_response"),
) + _COMMON_TAIL


def install_stages(stages, apis) -> None:
    """Replace each function of ``REQUEST_STAGES`` by its counted stand-in (``stages``, a
    CallgrindStages) wherever it is looked up: on its class, or in every module holding it
    under its name (``__main__`` only, for this loop's own names)."""
    import importlib
    import inspect

    for index, places in enumerate(REQUEST_STAGES.values()):
        for where in places.split("|"):  # where it is, or where it was before a move
            module_name, _, attr = where.partition(":")
            try:
                module = (sys.modules["__main__"] if module_name == "__main__"
                          else importlib.import_module(module_name))
            except ImportError:
                continue
            if hasattr(module, attr.partition(".")[0]):
                break
        else:
            continue
        owner_name, _, name = attr.rpartition(".")
        if owner_name:
            owner = getattr(module, owner_name, None)
            if owner is None or not hasattr(owner, name):
                continue
            defined_on = next(c for c in inspect.getmro(owner) if name in vars(c))
            raw = vars(defined_on)[name]
            if isinstance(raw, staticmethod):
                replacement = staticmethod(stages.stand_in(raw.__func__, index))
            elif isinstance(raw, classmethod):
                replacement = classmethod(stages.stand_in(raw.__func__, index))
            else:
                replacement = stages.stand_in(raw, index)
            setattr(owner, name, replacement)
            # bound methods kept before the replacement (KafkaApis' handler table)
            for key, handler in list(apis._handlers.items()):
                if getattr(handler, "__func__", None) is raw and getattr(handler, "__self__", None) is apis:
                    apis._handlers[key] = getattr(apis, name)
            continue
        original = getattr(module, name, None)
        if original is None:
            continue
        replacement = stages.stand_in(original, index)
        holders = [module] if module_name == "__main__" else list(sys.modules.values())
        for holder in holders:
            if getattr(holder, name, None) is original:
                setattr(holder, name, replacement)


def print_stages(label: str, counts: dict[str, tuple[int, int]], total: int, requests: int) -> None:
    """One workload's stages as a tree: inclusive and own instructions per request, share of
    the request, calls per request; stages never entered are left out."""
    index_of = {name: k for k, name in enumerate(REQUEST_STAGES)}
    tree = FETCH_TREE if label.startswith("fetch") else PRODUCE_TREE
    rows = [(depth, name, *counts.get(f"kp_stage_{index_of[name]}", (0, 0))) for depth, name in tree]
    elsewhere = [(name, *counts[f"kp_stage_{k}"]) for name, k in index_of.items()
                 if f"kp_stage_{k}" in counts and name not in {n for _, n in tree}]
    print(f"{label}: {total / requests:,.0f} instructions/request with the stages counted", flush=True)
    print(f"    {'stage':<58} {'inclusive':>10} {'own':>10} {'share':>6} {'calls':>6}")
    top = 0
    for i, (depth, name, calls, inclusive) in enumerate(rows):
        if not calls:
            continue
        nested = 0
        for d, _n, _c, inc in rows[i + 1:]:
            if d <= depth:
                break
            if d == depth + 1:
                nested += inc
        own = inclusive - nested
        if depth == 0:
            top += inclusive
        print(f"    {'  ' * depth + name:<58} {inclusive / requests:>10,.0f} {own / requests:>10,.0f} "
              f"{100 * inclusive / total:>5.1f}% {calls / requests:>6.2f}")
    for name, calls, inclusive in elsewhere:
        print(f"    {'elsewhere: ' + name:<58} {inclusive / requests:>10,.0f} {'':>10} "
              f"{100 * inclusive / total:>5.1f}% {calls / requests:>6.2f}")
    print(f"    {'the loop itself (frame copy, response queue, clock reads)':<58} {(total - top) / requests:>10,.0f} "
          f"{(total - top) / requests:>10,.0f} {100 * (total - top) / total:>5.1f}%", flush=True)


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
    parser.add_argument("--keep", default="", metavar="DIR",
                        help="with --instructions: keep callgrind's output files in DIR (for callgrind_annotate)")
    parser.add_argument("--stages", action="store_true",
                        help="with --instructions: each stage of the request (REQUEST_STAGES) counted inclusively")
    args = parser.parse_args(argv)
    if args.instructions:
        from callgrind_marks import CallgrindMarks

        marks = CallgrindMarks.load()
        if not marks.running_on_valgrind:
            return count_instructions(argv if argv is not None else sys.argv[1:], args.instructions, args.stages,
                                      Path(args.keep) if args.keep else None)
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
        from kafka_py.core.zk.admin_zk_client import AdminZkClient

        admin = AdminZkClient(server.zk_client)
        topics = {}
        codecs = {"lz4": CompressionType.LZ4, "zstd": CompressionType.ZSTD, "gzip": CompressionType.GZIP,
                  "snappy": CompressionType.SNAPPY}
        for name in ("p16k", "p10k", "p1", "p1all", "f", "f3", *(f"p16k{c}" for c in codecs)):
            topic = f"bench-{name}"
            admin.create_topic(topic, 1, 1, {})
            topics[name] = topic
        from kafka_py.clients.common.topic_partition import TopicPartition

        for topic in topics.values():
            wait_until(lambda t=topic: server.replica_manager.online_partition(TopicPartition(t, 0)) is not None,
                       30, f"{topic} leader")
        # the fetch topic: 100 MB of 10 KB records
        fill = produce_frame(topics["f"], 1, 10_000, 1)
        for _ in range(10_000):
            loop.one(fill)
        # the down-conversion topic: 1.6 MB of 100-byte records in 16 KiB batches
        fill = produce_frame(topics["f3"], 163, 100, 1)
        for _ in range(100):
            loop.one(fill)

        workloads = {
            "produce-16k": produce_frame(topics["p16k"], 163, 100, 1),
            **{f"produce-16k-{c}": produce_frame(topics[f"p16k{c}"], 163, 100, 1, compression=codec)
               for c, codec in codecs.items()},
            "produce-10k": produce_frame(topics["p10k"], 1, 10_000, 1),
            "produce-1": produce_frame(topics["p1"], 1, 100, 1),
            "produce-1-all": produce_frame(topics["p1all"], 1, 100, -1),
            "fetch-1m": fetch_frame(topics["f"], 0, 1 << 20),
            "fetch-1m-v3": fetch_frame(topics["f3"], 0, 1 << 20, version=3),
        }
        only = set(args.only.split(",")) if args.only else set(workloads)
        if marks is not None and args.stages:
            from callgrind_marks import CallgrindStages

            install_stages(CallgrindStages(), loop.apis)
        clock = LayerClock() if args.layers else None
        from kafka_py.core.metrics.kafka_metrics_group import recording

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


def count_instructions(argv: Sequence[str], requests: int, stages: bool = False,
                       keep: Optional[Path] = None) -> int:
    """This benchmark again under callgrind; each workload's instructions per request (and,
    with ``stages``, per stage). ``keep``: callgrind's files are written there and left."""
    from callgrind_marks import dump_paths, dumps, inclusive_counts, run_under_callgrind

    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    out_dir = keep or Path(tempfile.mkdtemp(prefix="bench-request-path-callgrind-"))
    try:
        code = run_under_callgrind([sys.executable, str(Path(__file__).resolve()), *argv], out_dir)
        if code != 0:
            print(f"the run under callgrind failed ({code})", file=sys.stderr)
            return code
        for label, instructions in dumps(out_dir):
            print(f"{label:<17} {instructions / requests:12,.0f} instructions/request "
                  f"({requests} requests under callgrind, the request path's thread)", flush=True)
        if stages:
            totals = dict(dumps(out_dir))
            for label, path in dump_paths(out_dir):
                print_stages(label, inclusive_counts(path), totals[label], requests)
    finally:
        if keep is None:
            shutil.rmtree(out_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
