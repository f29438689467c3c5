"""Append throughput of kafka_py.log.Log (the produce path below the network layer).

Two workloads on one Log, as a leader append of a client batch would run:

* 1 MiB batches: throughput in MB/s (bar: >= 1 GB/s),
* 16 KiB batches: appends per second (bar: >= 20,000/s).

The batches are built once with ``build_batch``; each append takes a fresh
``bytearray`` copy so the Log can assign offsets in place, exactly as a produce
request's receive buffer would be. The copy is made outside the timed region.
The log uses a segment size large enough not to roll and no per-append flush,
so the numbers measure validation + offset assignment + the write to the page
cache, not the disk.

Usage::

    .venv/bin/python benchmarks/bench_log_append.py [--seconds 3] [--rounds 3] [--profile]

Each workload is measured in several rounds (median and best are printed), and
each round is followed by the same writes done with bare ``os.pwrite`` calls,
the kernel's share, so that a slow machine can be told from a slow log.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time

from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords

MIB = 1024 * 1024


def make_batch(batch_bytes: int, record_bytes: int) -> bytes:
    n = max(1, batch_bytes // (record_bytes + 20))
    value = os.urandom(record_bytes)
    now = int(time.time() * 1000)
    return build_batch([SimpleRecord(b"key-%d" % i, value, timestamp=now) for i in range(n)])


def prepared(template: bytes, chunk: int) -> list:
    return [MemoryRecords(bytearray(template)) for _ in range(chunk)]


def run(log: Log, template: bytes, seconds: float, max_bytes: int) -> tuple[int, int, float]:
    """Append copies of ``template`` for ``seconds`` (or until ``max_bytes``); returns (appends, bytes, elapsed)."""
    # Copies are prepared in chunks, outside the timed region.
    chunk = 64
    appends = 0
    total = 0
    elapsed = 0.0
    size = len(template)
    while elapsed < seconds and total + size * chunk <= max_bytes:
        buffers = prepared(template, chunk)
        start = time.perf_counter()
        for records in buffers:
            log.append_as_leader(records, leader_epoch=0)
        elapsed += time.perf_counter() - start
        appends += chunk
        total += size * chunk
    return appends, total, elapsed


def raw_write(path: str, template: bytes, appends: int) -> float:
    """The kernel's share alone: os.pwrite of the same buffers at the end of a plain file; returns seconds."""
    chunk = 64
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    elapsed = 0.0
    position = 0
    try:
        for _ in range(appends // chunk):
            buffers = prepared(template, chunk)
            start = time.perf_counter()
            for records in buffers:
                position += os.pwrite(fd, records.buffer, position)
            elapsed += time.perf_counter() - start
    finally:
        os.close(fd)
        os.unlink(path)
    return elapsed


def bench(name: str, batch_bytes: int, record_bytes: int, seconds: float, max_bytes: int, rounds: int,
          profile: bool, root_dir: str | None) -> dict:
    root = tempfile.mkdtemp(prefix="bench-log-append-", dir=root_dir)
    try:
        config = LogConfig(segment_size=2**31 - 1, max_message_size=2 * MIB, retention_ms=-1)
        log = Log(os.path.join(root, "bench-0"), config)
        template = make_batch(batch_bytes, record_bytes)
        # Warm-up: the same volume as a measured run, then thrown away. A long-running broker
        # writes into page-cache pages the kernel has handed out before; on a fresh VM the first
        # touch of each guest page (a hypervisor fault) costs more than the write itself: on the
        # 2-core dev VM, appending to a new file ran at ~200-400 MB/s on never-touched memory and
        # several GB/s on reused pages, for the same os.pwrite loop.
        run(log, template, seconds, max_bytes)
        results = []
        for _ in range(rounds):
            log.truncate_fully_and_start_at(log.log_end_offset)
            # Flush earlier dirty pages so that their writeback does not stall the measured run.
            os.sync()
            profiler = cProfile.Profile() if profile else None
            if profiler:
                profiler.enable()
            appends, total, elapsed = run(log, template, seconds, max_bytes)
            if profiler:
                profiler.disable()
                pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(20)
            log.truncate_fully_and_start_at(log.log_end_offset)
            os.sync()
            raw = raw_write(os.path.join(root, "raw-pwrite"), template, appends)
            results.append({"appends_per_s": appends / elapsed, "mb_per_s": total / elapsed / 1e6,
                            "us_per_append": elapsed / appends * 1e6, "raw_us": raw / appends * 1e6})
        log.close()
        results.sort(key=lambda r: r["appends_per_s"])
        return {"name": name, "batch_bytes": len(template), "rounds": results,
                "best": results[-1], "median": results[len(results) // 2]}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(result: dict, unit: str, bar: float) -> None:
    for label in ("median", "best"):
        r = result[label]
        value = r["mb_per_s"] if unit == "MB/s" else r["appends_per_s"]
        print(f"{result['name']:>15} {label:>6}: {value:10.1f} {unit:9} "
              f"({r['appends_per_s']:8.0f} appends/s, {r['mb_per_s']:7.1f} MB/s, {r['us_per_append']:7.1f} us/append, "
              f"of which the bare os.pwrite takes {r['raw_us']:6.1f} us)   bar >= {bar:g} {unit}  "
              f"{'PASS' if value >= bar else 'FAIL'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per round (at most)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per workload")
    parser.add_argument("--max-gib", type=float, default=1.5,
                        help="stop a round after this many GiB written (keep it under the kernel's dirty "
                             "page threshold, or the run measures the disk instead of the log)")
    parser.add_argument("--dir", default=None, help="directory for the log (default: the system temp dir)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each measured run")
    args = parser.parse_args()
    max_bytes = int(args.max_gib * 1024 * MIB)

    big = bench("1 MiB batches", MIB, 1000, args.seconds, max_bytes, args.rounds, args.profile, args.dir)
    small = bench("16 KiB batches", 16 * 1024, 100, args.seconds, max_bytes, args.rounds, args.profile, args.dir)
    print(f"batches: {big['batch_bytes']} B and {small['batch_bytes']} B; load average at the end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    report(big, "MB/s", 1000)
    report(small, "appends/s", 20000)


if __name__ == "__main__":
    main()
