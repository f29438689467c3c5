"""Broker CPU per request at low load, thread by thread: what one request costs besides its work.

Starts ZooKeeper and a kafka-py broker as shipped (``config/server.properties``, no CPU
pinning, no scheduling policy: ``bench_broker.py``'s ``kafka-py-untuned``), then sends
one-record produce requests (100-byte value, acks=1) on one connection at a fixed rate
(``bench_broker.py``'s latency workload, open loop) and reads, from
``/proc/<pid>/task/<tid>/``, before and after each run, every broker thread's CPU time
(user and system) and its context switches (voluntary: the thread went to sleep waiting;
involuntary: it was preempted). Each figure is printed per request answered, thread by
thread, the threads named by ``py-spy dump`` (the Processor ``data-plane-kafka-network-
thread-0-...``, the request handler ``data-plane-kafka-request-handler-0``, the timers).

``--syscalls`` also counts, over one more run, the system calls of each thread with
``strace -f -c`` (strace slows every call down, so that run's CPU figures are not
reported; the counts per request are what it is for).

    .venv/bin/python benchmarks/bench_low_load.py [--rate 1000] [--seconds 8] [--rounds 3] [--syscalls]

A request that arrives alone pays for the hand-offs a busy broker shares among many: the
Processor wakes from ``epoll_wait`` for it, queues it and wakes a request handler, which
answers it, queues the answer and wakes the Processor (its wake-up pipe), which writes it
and sleeps again.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_broker import KAFKA_PY_VARIANTS, KafkaPyBroker, ZooKeeper, create_topic, latency  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def thread_stats(pid: int) -> dict[int, tuple[float, float, int, int]]:
    """tid -> (user s, system s, voluntary, involuntary context switches) of every thread."""
    stats = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            status = (task / "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        voluntary = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        involuntary = int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        stats[int(task.name)] = (int(fields[11]) / TICK, int(fields[12]) / TICK, voluntary, involuntary)
    return stats


def thread_names(pid: int) -> dict[int, str]:
    """tid -> Python thread name, from ``py-spy dump`` (empty without py-spy)."""
    py_spy = Path(sys.executable).with_name("py-spy")
    if not py_spy.exists():
        return {}
    out = subprocess.run([str(py_spy), "dump", "--pid", str(pid)], capture_output=True, text=True).stdout
    names = {}
    for match in re.finditer(r'^Thread (0x[0-9A-Fa-f]+|\d+) \([^)]*\): "([^"]*)"', out, re.M):
        ident = match.group(1)
        if not ident.startswith("0x"):
            names[int(ident)] = match.group(2)
    # py-spy prints the OS thread id as "(tid)" after the name in some versions
    for match in re.finditer(r'^Thread \S+ \([^)]*\): "([^"]*)".*?\bTID:?\s*(\d+)', out, re.M):
        names[int(match.group(2))] = match.group(1)
    return names


def strace_counts(pid: int, seconds: float, run) -> str:
    """strace -f -c attached to ``pid`` while ``run()`` runs; its summary table."""
    out = Path(tempfile.mkstemp(prefix="low-load-strace-")[1])
    tracer = subprocess.Popen(["strace", "-f", "-c", "-o", str(out), "-p", str(pid)],
                              stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached to every thread
    try:
        run()
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(30)
    text = out.read_text()
    out.unlink()
    return text


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=1000, help="requests per second")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--acks", type=int, default=1)
    parser.add_argument("--syscalls", action="store_true", help="one more run under strace -f -c")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench-low-load-"))
    zookeeper = broker = None
    try:
        zookeeper = ZooKeeper(workdir).start()
        overrides, env = KAFKA_PY_VARIANTS["kafka-py-untuned"]
        broker = KafkaPyBroker(workdir, f"127.0.0.1:{zookeeper.port}", overrides, name="kafka-py-untuned",
                               env=env).start()
        pid = broker.process.pid
        create_topic(broker.port, "low-load")
        latency(broker.port, "low-load", args.acks, args.rate, 2.0)  # warm-up
        names = thread_names(pid)
        print(f"kafka-py as shipped (pid {pid}), one connection, {args.rate:,} one-record produce requests/s, "
              f"acks={args.acks}, {args.seconds:g} s a round", flush=True)
        per_thread: dict[int, list[tuple[float, float, float, float]]] = {}
        totals = []
        for round_ in range(args.rounds):
            before = thread_stats(pid)
            result = latency(broker.port, "low-load", args.acks, args.rate, args.seconds)
            after = thread_stats(pid)
            requests = result["achieved_rate"] * result["wall_s"]
            total = 0.0
            for tid, (user, system, vol, invol) in after.items():
                u0, s0, v0, i0 = before.get(tid, (0.0, 0.0, 0, 0))
                row = ((user - u0) / requests * 1e6, (system - s0) / requests * 1e6,
                       (vol - v0) / requests, (invol - i0) / requests)
                per_thread.setdefault(tid, []).append(row)
                total += row[0] + row[1]
            totals.append(total)
            print(f"round {round_ + 1}: {total:.1f} us of broker CPU per request, p50 {result['p50_ms']:.2f} ms, "
                  f"p99 {result['p99_ms']:.2f} ms, {result['achieved_rate']:,.0f} requests/s", flush=True)
        print(f"\nbroker CPU per request: median {statistics.median(totals):.1f} "
              f"[{min(totals):.1f}-{max(totals):.1f}] us; per thread (median of {args.rounds} rounds):")
        print(f"    {'thread':<48} {'user us':>8} {'sys us':>8} {'vol cs':>7} {'invol cs':>8}")
        rows = []
        for tid, samples in per_thread.items():
            medians = [statistics.median(column) for column in zip(*samples)]
            if medians[0] + medians[1] < 0.5 and medians[2] < 0.01:
                continue
            rows.append((medians[0] + medians[1], tid, medians))
        for _, tid, (user, system, vol, invol) in sorted(rows, reverse=True):
            name = names.get(tid, "MainThread" if tid == pid else f"tid {tid}")
            print(f"    {name[:48]:<48} {user:>8.1f} {system:>8.1f} {vol:>7.2f} {invol:>8.2f}")
        if args.syscalls:
            if shutil.which("strace") is None:
                print("strace is not installed: no system call counts")
            else:
                holder = {}

                def run() -> None:
                    holder["result"] = latency(broker.port, "low-load", args.acks, args.rate, args.seconds)

                table = strace_counts(pid, args.seconds, run)
                requests = holder["result"]["achieved_rate"] * holder["result"]["wall_s"]
                print(f"\nsystem calls per request, all threads (strace -f -c, {requests:,.0f} requests):")
                for line in table.splitlines():
                    parts = line.split()
                    if len(parts) >= 5 and parts[-1].isidentifier() and parts[3].isdigit():
                        print(f"    {parts[-1]:<20} {int(parts[3]) / requests:8.2f}")
    finally:
        if broker is not None:
            broker.stop()
        if zookeeper is not None:
            zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
