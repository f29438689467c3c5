"""Partitions per broker: what 1,000, 4,000 and 10,000 partitions cost one kafka-py broker.

For each count and each of ``--modes`` (``zookeeper``, ``kraft``), a fresh broker process
(``python -m kafka_py.core.kafka``, replication factor 1): in ZooKeeper mode with a real ZooKeeper
started with ``bin/zookeeper-server-start.sh``; in KRaft mode a combined broker and
controller node (``process.roles=broker,controller``, formatted with ``bin/kafka-storage.sh``),
no ZooKeeper. In order:

* ``create_s``: CreateTopics for all the partitions in topics of ``--per-topic`` (default
  100) partitions, ``--topics-per-request`` topics per request, until every partition is
  served by its leader (a ListOffsets of every partition answers without error, asked once
  a full Metadata answer, polled every 0.25 s, names every leader);
* ``metadata_ms``: a full Metadata request (all topics) on an open connection, median of
  ``--metadata-rounds`` (default 5), and the response's size;
* ``scrape_ms``: one GET of the broker's Prometheus endpoint (``/metrics``, every metric of
  the broker, the Log gauges of each partition among them), median of ``--scrape-rounds``
  (default 5), and the answer's size;
* ``create_cpu_s``, ``clean_restart_cpu_s``, ``kill9_restart_cpu_s``: the broker's CPU seconds
  (user + system) over the same spans, less sensitive than the wall-clock figures to what
  else runs on the machine; ``create_user_s`` and ``create_sys_s`` split the creation's;
* ``rss_anon_mb``, ``rss_file_mb``, ``fds``, ``threads`` of the broker after creation;
* ``stop_s``: SIGTERM until the process exits (a clean shutdown);
* ``clean_restart_s``: from the start of a new process to every partition served again,
  and the "Loaded N logs in M ms" line the LogManager wrote meanwhile;
* ``kill9_restart_s``: the same after SIGKILL (recovery of what lies past each recovery
  point), timed from the new process's start; waiting for the old registration to expire
  (ZooKeeper mode) is not counted.

Usage::

    .venv/bin/python benchmarks/bench_partitions.py [--counts 1000,4000,10000] [--json out.json]
        [--no-restarts]   (creation, Metadata and scrape only)
        [--tree PATH]     (the broker runs the code of another checkout, a ``git worktree``;
                           ZooKeeper mode only)
        [--modes zookeeper,kraft]
"""
from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import pathlib
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafka_py.clients.common.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.clients.common.protocol.entities import build_entity  # noqa: E402
from kafka_py.clients.common.protocol.messages import request_schema  # noqa: E402
from tests.integration.broker_harness import BrokerProcess, RawClient, free_port, unique_chroot, wait_until  # noqa: E402
from tests.integration.kraft_harness import KRaftBrokerProcess, random_cluster_id  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from tree_broker import TreeBroker  # noqa: E402


def req(api: ApiKeys, version: int, **values):
    return build_entity(request_schema(api, version), values)


def proc_status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "Threads", "VmRSS"):
                out[key] = int(value.split()[0])
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def cpu_times(pid: int) -> tuple[float, float]:
    """CPU seconds (user, system) the process has used so far: less at the mercy of the
    machine's other load than the wall-clock times. They are told apart because the system
    time of creating partitions is mostly the file system's (inode allocation) and swings
    with the disk's state, while the user time is the broker's own code."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used so far."""
    return sum(cpu_times(pid))


def create_topics(port: int, topics: list[str], per_topic: int, per_request: int) -> None:
    with RawClient(port, timeout=300) as client:
        for i in range(0, len(topics), per_request):
            batch = topics[i:i + per_request]
            response = client.request(ApiKeys.CREATE_TOPICS, 5, req(
                ApiKeys.CREATE_TOPICS, 5, timeout=300_000, validate_only=False,
                topics=[{"name": t, "num_partitions": per_topic, "replication_factor": 1, "assignments": [],
                         "configs": []} for t in batch]))
            errors = [(t.name, t.error_code) for t in response.topics if t.error_code]
            if errors:
                raise RuntimeError(f"CreateTopics failed: {errors[:5]}")


def unserved_partitions(port: int, topics: list[str], per_topic: int) -> int:
    """Partitions whose ListOffsets (latest) does not answer without error."""
    try:
        with RawClient(port, timeout=120) as client:
            response = client.request(ApiKeys.LIST_OFFSETS, 5, req(
                ApiKeys.LIST_OFFSETS, 5, replica_id=-1, isolation_level=0,
                topics=[{"name": t, "partitions": [{"partition_index": p, "timestamp": -1, "current_leader_epoch": -1}
                                                   for p in range(per_topic)]} for t in topics]))
    except OSError:
        return len(topics) * per_topic
    return sum(1 for t in response.topics for p in t.partitions if p.error_code)


def leaders_known(port: int, count: int) -> bool:
    """Whether a full Metadata answer names a leader for ``count`` partitions (a cheap probe)."""
    from kafka_py.clients.common.protocol.messages import decode_response

    try:
        with RawClient(port, timeout=120) as client:
            client.send(ApiKeys.METADATA, 9, req(
                ApiKeys.METADATA, 9, topics=None, allow_auto_topic_creation=False,
                include_cluster_authorized_operations=False, include_topic_authorized_operations=False))
            _, response = decode_response(client.receive_frame(), ApiKeys.METADATA, 9)
    except OSError:
        return False
    return sum(1 for t in response.topics for p in t.partitions if not p.error_code and p.leader_id >= 0) >= count


def wait_served(port: int, topics: list[str], per_topic: int, timeout: float) -> None:
    # Every partition is asked (ListOffsets) only once the Metadata answer names all their
    # leaders: a ListOffsets of 10,000 partitions five times a second took a good part of the
    # broker's one CPU while it was still making them leaders.
    count = len(topics) * per_topic
    wait_until(lambda: leaders_known(port, count) and unserved_partitions(port, topics, per_topic) == 0, timeout,
               "partitions not served", interval=0.25)


def metadata_ms(port: int, rounds: int) -> tuple[float, int, int]:
    times = []
    with RawClient(port, timeout=120) as client:
        for _ in range(rounds):
            request = req(ApiKeys.METADATA, 9, topics=None, allow_auto_topic_creation=False,
                          include_cluster_authorized_operations=False, include_topic_authorized_operations=False)
            start = time.perf_counter()
            client.send(ApiKeys.METADATA, 9, request)
            frame = client.receive_frame()
            times.append((time.perf_counter() - start) * 1000)
        from kafka_py.clients.common.protocol.messages import decode_response
        _, response = decode_response(frame, ApiKeys.METADATA, 9)
    partitions = sum(len(t.partitions) for t in response.topics)
    return statistics.median(times), len(frame), partitions


def scrape_ms(port: int, rounds: int) -> tuple[float, int]:
    import http.client

    times = []
    body = b""
    for _ in range(rounds):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            start = time.perf_counter()
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            body = response.read()
            times.append((time.perf_counter() - start) * 1000)
            assert response.status == 200, response.status
        finally:
            conn.close()
    return statistics.median(times), len(body)


def run_output(broker: BrokerProcess) -> str:
    """What the broker wrote since its last start (its output file is appended across restarts)."""
    return broker.output_path.read_bytes()[broker._run_offset:].decode(errors="replace")


def loaded_line(output: str) -> Optional[str]:
    lines = re.findall(r"Loaded \d+ logs in \d+ms\.", output)
    return lines[-1] if lines else None


class CombinedNode(KRaftBrokerProcess):
    """A KRaft node that is its cluster's only broker and only controller."""

    def __init__(self, workdir: pathlib.Path, overrides: dict[str, str]) -> None:
        self.controller_port = free_port()
        super().__init__(workdir, 1, free_port(), f"1@127.0.0.1:{self.controller_port}", overrides)

    def properties(self) -> dict[str, str]:
        props = super().properties()
        props.update({"process.roles": "broker,controller",
                      "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                      "offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1"})
        props.update(self.overrides)
        return props

    def registration(self) -> None:
        return None  # no ZooKeeper registration to wait out


def run_count(count: int, mode: str, args, zk: Optional[ZooKeeperServer], workdir: pathlib.Path) -> dict:
    per_topic = args.per_topic
    topics = [f"p{count}-t{i:04d}" for i in range(count // per_topic)]
    metrics_port = free_port()
    overrides = {"num.partitions": "1", "log.segment.bytes": str(1 << 20),
                 "num.recovery.threads.per.data.dir": str(args.recovery_threads),
                 "kafka.py.metrics.prometheus.port": str(metrics_port),
                 "kafka.py.metrics.prometheus.host": "127.0.0.1"}
    if mode == "kraft":
        broker = CombinedNode(workdir / f"kraft-{count}", overrides)
        broker.format(random_cluster_id())
    else:
        broker_class = functools.partial(TreeBroker, root=pathlib.Path(args.tree).resolve()) if args.tree \
            else BrokerProcess
        broker = broker_class(workdir / f"broker-{count}", zk.connect_string, unique_chroot("bench-partitions"),
                              overrides=overrides)
    result: dict = {"mode": mode, "partitions": count}
    broker.start(timeout=120)
    try:
        start, (start_user, start_sys) = time.monotonic(), cpu_times(broker.process.pid)
        create_topics(broker.port, topics, per_topic, args.topics_per_request)
        result["create_requests_s"] = round(time.monotonic() - start, 2)
        wait_served(broker.port, topics, per_topic, 600)
        result["create_s"] = round(time.monotonic() - start, 2)
        user, system = cpu_times(broker.process.pid)
        result["create_user_s"] = round(user - start_user, 2)
        result["create_sys_s"] = round(system - start_sys, 2)
        result["create_cpu_s"] = round(result["create_user_s"] + result["create_sys_s"], 2)
        print(f"  {mode} {count}: created in {result['create_s']} s ({result['create_cpu_s']} s of the broker's CPU: "
              f"{result['create_user_s']} user, {result['create_sys_s']} system)", flush=True)
        time.sleep(args.settle)
        ms, size, partitions = metadata_ms(broker.port, args.metadata_rounds)
        assert partitions >= count, partitions
        result.update(metadata_ms=round(ms, 1), metadata_bytes=size)
        if mode == "kraft":
            result.update(scrape_ms=None, scrape_bytes=None)  # a KRaft node serves no Prometheus endpoint yet
        else:
            ms, size = scrape_ms(metrics_port, args.scrape_rounds)
            result.update(scrape_ms=round(ms, 1), scrape_bytes=size)
        status = proc_status(broker.process.pid)
        result.update(rss_anon_mb=round(status["RssAnon"] / 1024, 1), rss_file_mb=round(status["RssFile"] / 1024, 1),
                      fds=status["fds"], threads=status["Threads"])
        print(f"  {mode} {count}: {result}", flush=True)
        if args.no_restarts:
            return result

        start = time.monotonic()
        code = broker.stop(timeout=600)
        result["stop_s"] = round(time.monotonic() - start, 2)
        assert code == 0, broker.tail()
        wait_until(lambda: broker.registration() is None, 60, "registration still there")
        start = time.monotonic()
        broker.start(timeout=600, wait=False)
        wait_served(broker.port, topics, per_topic, 600)
        result["clean_restart_s"] = round(time.monotonic() - start, 2)
        result["clean_restart_cpu_s"] = round(cpu_s(broker.process.pid), 2)
        result["clean_restart_loaded"] = loaded_line(run_output(broker))
        print(f"  {mode} {count}: clean restart {result['clean_restart_s']} s, {result['clean_restart_cpu_s']} s of CPU "
              f"({result['clean_restart_loaded']})", flush=True)

        broker.kill()
        wait_until(lambda: broker.registration() is None, 60, "registration did not expire")
        start = time.monotonic()
        broker.start(timeout=600, wait=False)
        wait_served(broker.port, topics, per_topic, 600)
        result["kill9_restart_s"] = round(time.monotonic() - start, 2)
        result["kill9_restart_cpu_s"] = round(cpu_s(broker.process.pid), 2)
        result["kill9_restart_loaded"] = loaded_line(run_output(broker))
        print(f"  {mode} {count}: kill -9 restart {result['kill9_restart_s']} s ({result['kill9_restart_loaded']})",
              flush=True)
    finally:
        if broker.running:
            broker.stop(timeout=600)
        if not args.keep:
            shutil.rmtree(broker.workdir, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1000,4000,10000")
    parser.add_argument("--per-topic", type=int, default=100)
    parser.add_argument("--topics-per-request", type=int, default=10)
    parser.add_argument("--metadata-rounds", type=int, default=5)
    parser.add_argument("--scrape-rounds", type=int, default=5)
    parser.add_argument("--no-restarts", action="store_true", help="skip the stop and restart measures")
    parser.add_argument("--recovery-threads", type=int, default=1,
                        help="num.recovery.threads.per.data.dir (Kafka's default is 1)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds between creation and the measures")
    parser.add_argument("--dir", default=None)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--tree", default=None, metavar="PATH",
                        help="run the broker from another checkout (git worktree add PATH <commit>)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--modes", default="zookeeper", help="zookeeper, kraft or both (zookeeper,kraft)")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = set(modes) - {"zookeeper", "kraft"}
    if unknown:
        parser.error(f"--modes: unknown mode(s) {', '.join(sorted(unknown))} (zookeeper, kraft)")
    workdir = pathlib.Path(args.dir or tempfile.mkdtemp(prefix="bench-partitions-"))
    zk = None
    if "zookeeper" in modes:
        (workdir / "zookeeper").mkdir(parents=True, exist_ok=True)
        zk = ZooKeeperServer(workdir / "zookeeper").start()
    results = []
    try:
        for count in (int(c) for c in args.counts.split(",")):
            for mode in modes:  # the modes in turns, count by count, so both see the same machine
                results.append(run_count(count, mode, args, zk, workdir))
    finally:
        if zk is not None:
            zk.stop()
    print(json.dumps({"date": datetime.datetime.now().isoformat(timespec="minutes"), "cpus": os.cpu_count(),
                      "results": results}, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    main()
