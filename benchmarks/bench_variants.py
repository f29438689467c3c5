"""Several kafka-py brokers side by side, differing in config or environment, measured in
short alternating runs: requests/s and the broker's CPU per request (user and system).

Each variant is ``NAME[:key=value,...[:ENV=value,...]]``: server.properties overrides,
then environment variables for the broker process. All variants run at once against one
ZooKeeper (each in its own chroot), and every round runs each workload against each
variant in turn, so a slow phase of the machine (this VM's speed swings by 2x from one
minute to the next) hits them all alike. Before each run the page cache is synced and,
for workloads that write, dropped, as bench_broker.py does. ``--tansu`` adds tansu as
one more column.

    .venv/bin/python benchmarks/bench_variants.py pinned::KAFKA_PY_CPU_AFFINITY=auto,KAFKA_PY_SCHED_POLICY=batch \\
        batch::KAFKA_PY_SCHED_POLICY=batch normal
    .venv/bin/python benchmarks/bench_variants.py default small:num.io.threads=2,num.network.threads=1 \\
        --work p16k,req16,cons --rounds 4 --seconds 3
    git worktree add /tmp/before HEAD~1
    .venv/bin/python benchmarks/bench_variants.py before after --tree before=/tmp/before

Workloads (bench_broker.py's generators):

* ``p16k``: pre-built 16 KiB batches of 100-byte records, acks=1, 4 connections with
  5 requests in flight each; ``p16kall`` the same at acks=all;
* ``req16``: one-record (100-byte) produce requests from 16 connections, one in flight
  each; ``p16k16``: 16 KiB batches the same way;
* ``cons``: the raw fetch loop over 10,000-byte records (MB/s instead of requests/s);
  ``ccons``: confluent-kafka's consumer over the first 20,000 of them (MB/s; the CPU
  columns are then per run, not per request);
* ``lat``: one-record produces at 1,000/s, the p99 in ms instead of requests/s;
* ``ilat``: the same 1,000/s shared by every variant at once, over the same seconds (one
  connection each, the sends interleaved), so that the machine's stalls, which decide a p99
  on this VM, fall on all variants alike instead of on whichever ran at the time.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_broker as bb  # noqa: E402

WORKLOADS = {
    "p16k": dict(record_size=100, acks=1, connections=4, window=5, records_per_request=163),
    "p16kall": dict(record_size=100, acks=-1, connections=4, window=5, records_per_request=163),
    "req16": dict(record_size=100, acks=1, connections=16, window=1, records_per_request=1),
    # 16 KiB batches without pipelining: one request in flight on each of 16 connections
    "p16k16": dict(record_size=100, acks=1, connections=16, window=1, records_per_request=163),
}
OTHER_WORKLOADS = ("cons", "ccons", "lat", "ilat")
FILL = dict(record_size=10_000, acks=1, connections=4, window=5, records_per_request=1)


def parse_variant(text: str) -> tuple[str, dict[str, str], dict[str, str]]:
    name, _, rest = text.partition(":")
    overrides, _, env = rest.partition(":")

    def pairs(part: str) -> dict[str, str]:
        return dict(item.split("=", 1) for item in part.split(",") if item)

    return name, pairs(overrides), pairs(env)


def run_one(broker, work: str, seconds: float) -> tuple[float, int]:
    """(figure, requests) of one run: requests/s (MB/s for cons, p99 ms for lat)."""
    if work == "cons":
        out = bb.consume_raw(broker.port, "v-cons", 10**15, 10**9, seconds)
        return out["mb_per_s"], out["fetches"]
    if work == "ccons":
        out = bb.consume_client(broker.port, "v-cons", 20_000)
        return out["mb_per_s"], 1
    if work == "lat":
        out = bb.latency(broker.port, "v-lat", 1, 1000, seconds)
        return out["p99_ms"], int(out["achieved_rate"] * out["wall_s"])
    out = bb.produce_loop(broker.port, f"v-{work}", seconds=seconds, **WORKLOADS[work])
    return out["requests_per_s"], int(out["requests_per_s"] * out["wall_s"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+", help="NAME[:key=value,...[:ENV=value,...]]")
    parser.add_argument("--work", default="p16k,req16", help=f"comma-separated: {', '.join([*WORKLOADS, *OTHER_WORKLOADS])}")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--tansu", action="store_true", help="add tansu (memory engine) as a column")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="run variant NAME from another checkout (e.g. a git worktree of the "
                             "commit before a change); repeatable")
    args = parser.parse_args(argv)
    works = args.work.split(",")
    unknown = set(works) - set(WORKLOADS) - set(OTHER_WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")

    def on_sigterm(signum: int, _frame: object) -> None:
        # One is enough: timeout(1) forwards the SIGTERM it got, and pkill hits it too.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    # Without this a SIGTERM would end Python and leave the brokers and ZooKeeper running.
    signal.signal(signal.SIGTERM, on_sigterm)
    trees = {}
    for item in args.tree:
        name, _, path = item.partition("=")
        if not (Path(path) / "kafka_py" / "kafka.py").is_file():
            parser.error(f"--tree {item}: {path} is not a kafka-py checkout")
        trees[name] = Path(path).resolve()
    workdir = Path(tempfile.mkdtemp(prefix="bench-variants-"))
    zookeeper = bb.ZooKeeper(workdir).start()
    brokers = []
    try:
        for text in args.variants:
            name, overrides, env = parse_variant(text)
            brokers.append(bb.KafkaPyBroker(workdir, f"127.0.0.1:{zookeeper.port}", overrides, name=name,
                                            env=env, root=trees.get(name)).start())
        if args.tansu:
            brokers.append(bb.TansuBroker(workdir, "memory://tansu/").start())
        for broker in brokers:
            print(f"{broker.name}: pid {broker.process.pid} - {broker.description}", flush=True)
            for work in works:
                bb.create_topic(broker.port, f"v-{work}")
            if "cons" in works or "ccons" in works:
                if "cons" not in works:
                    bb.create_topic(broker.port, "v-cons")
                bb.produce_loop(broker.port, "v-cons", seconds=4, **FILL)
        results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for round_number in range(args.rounds):
            # alternate who goes first, so that neither side always follows the other's writes
            order = brokers if round_number % 2 == 0 else list(reversed(brokers))
            for work in works:
                runs = [order] if work == "ilat" else [[broker] for broker in order]
                for together in runs:
                    os.sync()
                    if work not in ("cons", "ccons"):
                        bb.drop_clean_page_cache()
                    before = [bb.user_system_seconds(broker.process.pid) for broker in together]
                    if work == "ilat":
                        outs = bb.latency_side_by_side([(b.port, "v-ilat") for b in together], 1, 1000 // len(together), args.seconds)
                        measured = [(out["p99_ms"], int(out["achieved_rate"] * out["wall_s"])) for out in outs]
                    else:
                        measured = [run_one(together[0], work, args.seconds)]
                    for broker, (user0, system0), (figure, requests) in zip(together, before, measured):
                        user1, system1 = bb.user_system_seconds(broker.process.pid)
                        per = 1e6 / max(requests, 1)
                        row = (figure, (user1 - user0) * per, (system1 - system0) * per)
                        results.setdefault((work, broker.name), []).append(row)
                        print(f"round {round_number + 1} {work:8} {broker.name:14} {figure:10,.1f}   CPU/request: "
                              f"user {row[1]:6.0f} us, system {row[2]:5.0f} us", flush=True)
        unit = {"cons": "MB/s", "ccons": "MB/s", "lat": "p99 ms", "ilat": "p99 ms"}
        print(f"\nmedians of {args.rounds} rounds:")
        print("| workload | broker | figure | CPU/request user + system (us) |\n|---|---|---|---|")
        for (work, name), rows in results.items():
            figure = statistics.median(r[0] for r in rows)
            print(f"| {work} | {name} | {figure:,.1f} {unit.get(work, 'requests/s')} | "
                  f"{statistics.median(r[1] for r in rows):.0f} + {statistics.median(r[2] for r in rows):.0f} |")
        if len(brokers) >= 2:
            # Each round ran the variants back to back: the ratios of the same round against the
            # first variant are the paired figures, less swayed by the machine's slow phases.
            first = brokers[0].name
            print(f"\nper-round ratios against {first}, median [min-max]:")
            for work in works:
                for broker in brokers[1:]:
                    pairs = list(zip(results.get((work, first), []), results.get((work, broker.name), [])))
                    if not pairs:
                        continue
                    figure = [b[0] / a[0] for a, b in pairs if a[0]]
                    user = [b[1] / a[1] for a, b in pairs if a[1]]
                    if figure and user:
                        print(f"{work:8} {broker.name}/{first}: figure {statistics.median(figure):.3f} "
                              f"[{min(figure):.3f}-{max(figure):.3f}], user CPU/request {statistics.median(user):.3f} "
                              f"[{min(user):.3f}-{max(user):.3f}]")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        for broker in brokers:
            try:
                broker.stop()
            except Exception as e:  # noqa: BLE001 - stop the others all the same
                print(f"stopping {broker.name}: {e}", file=sys.stderr)
        zookeeper.stop()
        # The brokers' logs hold gigabytes after a few rounds: a run leaves nothing behind.
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
