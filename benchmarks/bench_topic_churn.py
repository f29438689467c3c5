"""Memory of a broker whose topics come and go: one broker (a KafkaServer in this process,
with a real ZooKeeper started for the run) sees topics of two partitions created, held for
``--hold-s`` seconds and deleted, one after another, by kafka-python's admin client in a
child process.

    python3 benchmarks/bench_topic_churn.py [--cycles 500] [--warm-up 60] [--hold-s 0]

After ``--warm-up`` lifecycles, and every 50 after that, prints Python's allocated blocks
(``sys.getallocatedblocks()`` after a full collection), the process's anonymous RSS
(RssAnon in /proc/self/status) and what glibc's malloc holds (mallinfo2: in use and free),
each as growth per lifecycle since the warm-up, then the totals as JSON. Lifecycles are
counted once the deletion has completed everywhere (ZooKeeper, the metadata cache, the
replica manager, the log manager) and the deleted logs are gone from disk.
"""
from __future__ import annotations

import argparse
import ctypes
import datetime
import gc
import json
import os
import pathlib
import platform
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafka_py.clients.common.topic_partition import TopicPartition  # noqa: E402
from tests.integration.broker_harness import unique_chroot, wait_until  # noqa: E402
from tests.integration.in_process_state import ClientWorker, in_process_broker, log_dirs_of  # noqa: E402
from tests.integration.test_topic_churn_memory import PARTITIONS, _gone  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _malloc_in_use_and_free() -> tuple[int, int]:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd, info.fordblks


def _rss_anon_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no RssAnon in /proc/self/status")


def _reading() -> dict[str, int]:
    gc.collect()
    in_use, free = _malloc_in_use_and_free()
    return {"blocks": sys.getallocatedblocks(), "rss_anon": _rss_anon_bytes(), "malloc_in_use": in_use,
            "malloc_free": free}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=500, help="lifecycles measured after the warm-up")
    parser.add_argument("--warm-up", type=int, default=60)
    parser.add_argument("--hold-s", type=float, default=0.0, help="seconds between a topic's creation and deletion")
    args = parser.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-topic-churn-"))
    (work / "zookeeper").mkdir()
    (work / "broker").mkdir()
    zookeeper = ZooKeeperServer(work / "zookeeper").start()
    marker = f"churn{uuid.uuid4().hex[:6]}"
    try:
        with in_process_broker(f"{zookeeper.connect_string}{unique_chroot()}", work / "broker") as server:
            worker = ClientWorker(f"127.0.0.1:{server.bound_port()}")
            base = None
            started = time.monotonic()
            try:
                for i in range(args.warm_up + args.cycles):
                    topic = f"{marker}-{i}"
                    worker.call("create", topic, PARTITIONS)
                    wait_until(lambda: all(server.replica_manager.online_partition(TopicPartition(topic, p))
                                           for p in range(PARTITIONS)), 30, f"{topic} not created")
                    if args.hold_s:
                        time.sleep(args.hold_s)  # the topic's life, as a short-lived topic has one
                    worker.call("delete", topic)
                    wait_until(lambda: _gone(server, topic), 60, f"{topic} deletion did not complete")
                    done = i + 1 - args.warm_up
                    if done == 0 or (done > 0 and (done % 50 == 0 or done == args.cycles)):
                        wait_until(lambda: not log_dirs_of(server, marker), 60, "deleted logs still on disk")
                        now = _reading()
                        if base is None:
                            base = now
                            print(f"after the warm-up ({args.warm_up} lifecycles): {now}", flush=True)
                            continue
                        growth = {k: (now[k] - base[k]) / done for k in now}
                        print(f"{done} lifecycles: blocks {growth['blocks']:+.2f}, RssAnon {growth['rss_anon']:+.0f} B, "
                              f"malloc in use {growth['malloc_in_use']:+.0f} B, free {growth['malloc_free']:+.0f} B "
                              "per lifecycle", flush=True)
            finally:
                worker.close()
            print(json.dumps({
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
                "machine": f"{os.cpu_count()} cores, {platform.machine()}",
                "warm_up": args.warm_up, "cycles": args.cycles, "hold_s": args.hold_s,
                "seconds": round(time.monotonic() - started),
                "per_lifecycle": {k: round((now[k] - base[k]) / args.cycles, 2) for k in now},
            }, indent=2))
    finally:
        zookeeper.stop()


if __name__ == "__main__":
    main()
