"""Time from starting a single node to its first acknowledged produce, in KRaft mode and in
ZooKeeper mode (which needs its ZooKeeper started first), measured in the same run.

    .venv/bin/python benchmarks/bench_kraft_startup.py [--rounds 5]

KRaft: ``bin/kafka-server-start.sh`` of a combined node (config/kraft/server.properties with
free ports and a fresh log dir, formatted before the clock starts). ZooKeeper mode:
``bin/kafka-quickstart.sh`` (ZooKeeper from config/zookeeper.properties, then the broker of
config/server.properties, both with free ports and fresh dirs), so its ZooKeeper's start
counts, as it does for a user. The clock stops when a kafka-python producer (imported
before the clock starts) has a record to a new topic acknowledged (acks=1; the topic is
auto-created). Rounds alternate the two modes; prints each round and the medians as JSON.
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

ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def kraft_round(work: pathlib.Path) -> float:
    port, controller_port = free_port(), free_port()
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
    return timed([str(ROOT / "bin" / "kafka-server-start.sh"), str(config)], port, work)


def zookeeper_round(work: pathlib.Path) -> float:
    port, zk_port = free_port(), free_port()
    zk_config = work / "zookeeper.properties"
    zk_config.write_text((ROOT / "config" / "zookeeper.properties").read_text()
                         .replace("/tmp/zookeeper", str(work / "zookeeper"))
                         .replace("clientPort=2181", f"clientPort={zk_port}"))
    text = (ROOT / "config" / "server.properties").read_text()
    text = text.replace("/tmp/kafka-logs", str(work / "kafka-logs")).replace("localhost:2181", f"localhost:{zk_port}")
    text = re.sub(r"\b9092\b", str(port), text)
    config = work / "server.properties"
    config.write_text(text)
    return timed([str(ROOT / "bin" / "kafka-quickstart.sh"), str(zk_config), str(config)], port, work)


def timed(command: list[str], port: int, work: pathlib.Path) -> float:
    with open(work / "out.log", "wb") as out:
        started = time.monotonic()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                   env=dict(os.environ, LOG_DIR=str(work / "logs")))
        try:
            first_ack(port, started + 120)
            return time.monotonic() - started
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import kafka  # noqa: F401  (imported before any clock starts)

    results: dict[str, list[float]] = {"kraft": [], "zookeeper": []}
    for i in range(args.rounds):
        order = ["kraft", "zookeeper"] if i % 2 == 0 else ["zookeeper", "kraft"]
        for mode in order:
            with tempfile.TemporaryDirectory(prefix=f"bench-startup-{mode}-") as d:
                seconds = (kraft_round if mode == "kraft" else zookeeper_round)(pathlib.Path(d))
            results[mode].append(seconds)
            print(f"round {i + 1} {mode}: {seconds:.2f} s", flush=True)
    print(json.dumps({
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "rounds": args.rounds,
        "median_s": {mode: round(statistics.median(v), 2) for mode, v in results.items()},
        "range_s": {mode: [round(min(v), 2), round(max(v), 2)] for mode, v in results.items()},
    }, indent=2))


if __name__ == "__main__":
    sys.exit(main())
