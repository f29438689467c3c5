"""Time from starting a single node to its first acknowledged produce, in KRaft mode and in
ZooKeeper mode (which needs its ZooKeeper started too), measured in the same run.

    .venv/bin/python benchmarks/bench_kraft_startup.py [--rounds 7] [--bytecode cached|none]

KRaft: ``bin/kafka-server-start.sh`` of a combined node (config/kraft/server.properties with
free ports and a fresh log dir, formatted before the clock starts). ZooKeeper mode:
``bin/zookeeper-server-start.sh`` (config/zookeeper.properties), then ``bin/kafka-server-start.sh``
(config/server.properties) as soon as ZooKeeper's port accepts connections (as
``bin/kafka-quickstart.sh`` does, without its checks), both with free ports and fresh dirs, so
its ZooKeeper's start counts, as it does for a user. (A broker started at the same moment as
its ZooKeeper sometimes gave up: its first connection, made while ZooKeeper was still
starting, waited out the whole zookeeper.connection.timeout.ms.) The clock stops
when a kafka-python producer (imported before the clock starts) has a record to a new topic
acknowledged (acks=1; the topic is auto-created). Rounds alternate the two modes and which
goes first.

``--bytecode cached`` (the default) runs the broker as after ``pip install`` or any earlier
start: its modules' bytecode compiled (into a cache of this run, PYTHONPYCACHEPREFIX, filled
by one untimed start per mode). ``none`` runs it with PYTHONDONTWRITEBYTECODE set and no
cache for the project's modules, so each start compiles them from source (what a start in a
tree under PYTHONDONTWRITEBYTECODE=1 pays).

Besides the time, each round reports the CPU seconds the node's processes had used when the
produce was acknowledged (the broker's Python process; in ZooKeeper mode also ZooKeeper's
JVM), read from /proc, and the machine's load average, since other work on the machine
stretches the time but hardly the CPU. Prints each round and the medians as JSON.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports (all held open until each is known, so none repeats)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def first_ack(port: int, deadline: float) -> None:
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    while time.monotonic() < deadline:
        if not port_open(port):
            time.sleep(0.01)  # nothing to wait on but the port itself
            continue
        producer = None
        try:
            producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", acks=1, max_block_ms=5000,
                                     request_timeout_ms=5000)
            producer.send("startup", b"first").get(timeout=10)
            return
        except KafkaError:
            time.sleep(0.05)
        finally:
            if producer is not None:
                producer.close(timeout=5)
    raise TimeoutError("no acknowledged produce")


def group_cpu_seconds(pgid: int) -> float:
    """User and system CPU of every live process of the process group ``pgid``."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the command: state, ppid, pgrp, ...
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


def kraft_config(work: pathlib.Path) -> tuple[pathlib.Path, int]:
    port, controller_port = free_ports(2)
    text = (ROOT / "config" / "kraft" / "server.properties").read_text()
    text = text.replace("/tmp/kraft-combined-logs", str(work / "data"))
    text = re.sub(r"\b9092\b", str(port), text)
    text = re.sub(r"\b9093\b", str(controller_port), text)
    config = work / "server.properties"
    config.write_text(text)
    cluster_id = subprocess.run([str(ROOT / "bin" / "kafka-storage.sh"), "random-uuid"], check=True,
                                capture_output=True, text=True).stdout.strip()
    subprocess.run([str(ROOT / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(config)],
                   check=True, capture_output=True)
    return config, port


def kraft_round(work: pathlib.Path, env: dict[str, str]) -> tuple[float, float]:
    config, port = kraft_config(work)
    return timed([[str(ROOT / "bin" / "kafka-server-start.sh"), str(config)]], port, work, env)


def zookeeper_round(work: pathlib.Path, env: dict[str, str]) -> tuple[float, float]:
    port, zk_port = free_ports(2)
    zk_config = work / "zookeeper.properties"
    zk_config.write_text((ROOT / "config" / "zookeeper.properties").read_text()
                         .replace("/tmp/zookeeper", str(work / "zookeeper"))
                         .replace("clientPort=2181", f"clientPort={zk_port}"))
    text = (ROOT / "config" / "server.properties").read_text()
    text = text.replace("/tmp/kafka-logs", str(work / "kafka-logs")).replace("localhost:2181", f"localhost:{zk_port}")
    text = re.sub(r"\b9092\b", str(port), text)
    config = work / "server.properties"
    config.write_text(text)
    return timed([[str(ROOT / "bin" / "zookeeper-server-start.sh"), str(zk_config)],
                  [str(ROOT / "bin" / "kafka-server-start.sh"), str(config)]], port, work, env, zk_port)


def timed(commands: list[list[str]], port: int, work: pathlib.Path, env: dict[str, str],
          first_port: Optional[int] = None) -> tuple[float, float]:
    """Start ``commands`` in one new process group (the second once ``first_port`` accepts
    connections, when given); seconds to the first acknowledged produce on ``port`` and the
    CPU seconds of the group then."""
    env = dict(env, LOG_DIR=str(work / "logs"))
    processes: list[subprocess.Popen] = []
    with open(work / "out.log", "wb") as out:
        started = time.monotonic()
        try:
            for command in commands:
                if processes and first_port is not None:
                    while not port_open(first_port):
                        if time.monotonic() - started > 120:
                            raise TimeoutError(f"nothing listens on {first_port}")
                        time.sleep(0.01)  # nothing to wait on but the port itself
                processes.append(subprocess.Popen(
                    command, stdout=out, stderr=subprocess.STDOUT, env=env,
                    process_group=processes[0].pid if processes else 0))
            try:
                first_ack(port, started + 120)
            except TimeoutError:
                out.flush()
                tail = (work / "out.log").read_text(errors="replace")[-3000:]
                raise TimeoutError(f"no acknowledged produce within 120 s; the node's output ends:\n{tail}") from None
            elapsed = time.monotonic() - started
            return elapsed, group_cpu_seconds(processes[0].pid)
        finally:
            # The broker first, as bin/kafka-server-stop.sh would, then ZooKeeper.
            for process in reversed(processes):
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=90)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--bytecode", choices=("cached", "none"), default="cached")
    parser.add_argument("--modes", default="kraft,zookeeper")
    args = parser.parse_args()
    import kafka  # noqa: F401  (imported before any clock starts)

    modes = args.modes.split(",")
    rounds = {"kraft": kraft_round, "zookeeper": zookeeper_round}
    results: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    loads = []
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as top:
        env = dict(os.environ)
        if args.bytecode == "cached":
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(pathlib.Path(top) / "pycache")
            for mode in modes:  # untimed: fills the bytecode cache
                with tempfile.TemporaryDirectory(prefix=f"warm-{mode}-", dir=top) as d:
                    rounds[mode](pathlib.Path(d), env)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        for i in range(args.rounds):
            order = modes if i % 2 == 0 else modes[::-1]
            for mode in order:
                load = os.getloadavg()[0]
                with tempfile.TemporaryDirectory(prefix=f"{mode}-", dir=top) as d:
                    seconds, cpu = rounds[mode](pathlib.Path(d), env)
                results[mode].append((seconds, cpu))
                loads.append(load)
                print(f"round {i + 1} {mode}: {seconds:.2f} s, {cpu:.2f} s of CPU (load {load:.1f})", flush=True)
    print(json.dumps({
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "bytecode": args.bytecode,
        "rounds": args.rounds,
        "median_s": {mode: round(statistics.median(s for s, _ in v), 2) for mode, v in results.items()},
        "range_s": {mode: [round(min(s for s, _ in v), 2), round(max(s for s, _ in v), 2)]
                    for mode, v in results.items()},
        "median_cpu_s": {mode: round(statistics.median(c for _, c in v), 2) for mode, v in results.items()},
        "load_average": [round(min(loads), 1), round(max(loads), 1)],
    }, indent=2))


if __name__ == "__main__":
    sys.exit(main())
