"""kafka_py.testing.KafkaCluster: time from ``__enter__`` to the first acknowledged produce,
and what start/stop cycles leave behind.

    .venv/bin/python benchmarks/bench_testing_fixture.py [--rounds 3] [--cycles 200]

Run it with the modules' bytecode cached, as an installed wheel has it (in a tree run with
PYTHONDONTWRITEBYTECODE, ``env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=<dir>``):
otherwise every process of every round compiles the broker's sources again.

Start times, per mode (KRaft; ZooKeeper mode with its own ZooKeeper) and size (1 and 3
brokers): the clock starts at ``KafkaCluster(...).__enter__`` and stops when a kafka-python
producer (imported before) has a record to a new, auto-created topic acknowledged (acks=1).
"cold" is the first cluster of a fresh process, which waits for the broker launcher's
imports; "warm" is a cluster of a process whose launcher is running (any cluster after the
first one in a test run, and the first one too under the pytest plugin, which starts the
launcher as soon as tests using a cluster are collected).

Cycles: ``--cycles`` start/stop cycles of a one-broker KRaft cluster, then counts what is
left: processes under this one, listening sockets on the ports the clusters had, cluster
directories in the temp dir and this process's open descriptors (against before the first).
Prints each figure and a JSON summary.
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

ONE_ROUND = r'''
import json, sys, time
from kafka import KafkaProducer
from kafka_py.testing import KafkaCluster, prewarm
from kafka_py.testing.cluster import _LauncherProcess
mode, brokers, warm = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "warm"
if warm:
    prewarm()
    _LauncherProcess.get().ready.wait(120)
started = time.monotonic()
with KafkaCluster(brokers=brokers, mode=mode) as cluster:
    ready = time.monotonic() - started
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1)
    producer.send("first", b"x").get(timeout=60)
    acked = time.monotonic() - started
    producer.close()
print(json.dumps({"ready": ready, "acked": acked}))
'''


def one_round(mode: str, brokers: int, warm: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", ONE_ROUND, mode, str(brokers), "warm" if warm else "cold"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def listening_ports() -> set[int]:
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":  # LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def descendants() -> list[int]:
    me, found, parents = os.getpid(), [], {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    frontier = [me]
    while frontier:
        pid = frontier.pop()
        children = [p for p, pp in parents.items() if pp == pid]
        found.extend(children)
        frontier.extend(children)
    return found


def cycles(count: int) -> dict:
    from kafka_py.testing import KafkaCluster
    from kafka_py.testing.cluster import _LauncherProcess

    pattern = os.path.join(tempfile.gettempdir(), "kafka-py-cluster-*")
    dirs_before = set(glob.glob(pattern))
    _LauncherProcess.get().ready.wait(120)
    fds_before = len(os.listdir("/proc/self/fd"))
    ports_used: set[int] = set()
    started = time.monotonic()
    for i in range(count):
        with KafkaCluster(brokers=1) as cluster:
            for broker in cluster.brokers.values():
                ports_used.update(r.port for r in broker.reservations.values())
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} cycles, {time.monotonic() - started:.0f} s", flush=True)
    elapsed = time.monotonic() - started
    left = {
        "processes_besides_launcher": [p for p in descendants() if p != _LauncherProcess.get().process.pid],
        "listening_ports": sorted(ports_used & listening_ports()),
        "cluster_dirs": sorted(set(glob.glob(pattern)) - dirs_before),
        "descriptors_added": len(os.listdir("/proc/self/fd")) - fds_before,
    }
    _LauncherProcess.shutdown()
    left["processes_after_launcher_exit"] = descendants()
    return {"cycles": count, "seconds_per_cycle": round(elapsed / count, 3), "left": left}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--modes", default="kraft,zookeeper")
    parser.add_argument("--sizes", default="1,3")
    args = parser.parse_args()
    results: dict[str, dict[str, list[float]]] = {}
    for mode in args.modes.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            for warmth in ("cold", "warm"):
                key = f"{mode} {size} broker{'s' if size > 1 else ''} {warmth}"
                rounds = [one_round(mode, size, warmth == "warm") for _ in range(args.rounds)]
                results[key] = {"ready_s": [round(r["ready"], 2) for r in rounds],
                                "first_ack_s": [round(r["acked"], 2) for r in rounds]}
                print(f"{key}: first ack {results[key]['first_ack_s']} (ready {results[key]['ready_s']})", flush=True)
    summary = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "rounds": args.rounds,
        "median_first_ack_s": {k: round(statistics.median(v["first_ack_s"]), 2) for k, v in results.items()},
    }
    if args.cycles:
        summary["cycles"] = cycles(args.cycles)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
