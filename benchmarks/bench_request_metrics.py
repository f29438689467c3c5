"""CPU time of the per-request RequestMetrics update alone (network/request_metrics.py,
``RequestChannelMetrics.update_request_metrics``), the step the Processor runs for every
request once its response is written: a Produce (one API's row) and a Fetch (two rows: Fetch
and FetchConsumer); and of the produce path's other metric updates, for a one-partition
produce: ``BrokerTopicStats.record_produce`` (the topic's and all topics' BrokerTopicMetrics)
and ``mark_partition_errors`` (ErrorsPerSec of the answer).

    .venv/bin/python benchmarks/bench_request_metrics.py --rounds 15
    git worktree add /tmp/before HEAD~1
    .venv/bin/python benchmarks/bench_request_metrics.py --tree /tmp/before --rounds 15

Each round times ``--calls`` updates of a few pre-built requests (their timestamps those of a
real request) with ``time.process_time`` (the CPU of every thread of the process, so the
registry ticker's folding of the staged rows into the histograms is counted too), minus the
same loop calling a function that does nothing; it prints the median and range over the
rounds, in nanoseconds per update. ``--tree`` runs another checkout's code, for a same-machine
before/after; run the two alternately, as the machine's speed drifts.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=pathlib.Path, help="the checkout whose code to measure")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=100_000, help="updates per round and request type")
    args = parser.parse_args()
    if args.tree is not None:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
        from tree_import import use_tree

        sys.path.pop(0)
        use_tree(args.tree)
    else:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

    from types import SimpleNamespace

    from kafka_py.network.request_channel import Request, RequestContext
    from kafka_py.network.request_metrics import RequestChannelMetrics
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.headers import RequestHeader

    metrics = RequestChannelMetrics([ApiKeys.PRODUCE, ApiKeys.FETCH])

    def request(api: ApiKeys, version: int, size: int, body) -> Request:
        header = RequestHeader.for_request(api, version, 7, "bench")
        context = RequestContext(header, "127.0.0.1:9092-127.0.0.1:50000-0", "127.0.0.1")
        r = Request(0, context, 1_000_000_000, memoryview(bytearray(size)), body)
        # a request read, queued 40 us, handled in 60 us, its response queued 20 us, written in 10 us
        r.request_dequeue_time_ns = r.start_time_ns + 40_000
        r.api_local_complete_time_ns = r.request_dequeue_time_ns + 60_000
        r.api_remote_complete_time_ns = r.api_local_complete_time_ns
        r.response_complete_time_ns = r.api_remote_complete_time_ns
        r.response_dequeue_time_ns = r.response_complete_time_ns + 20_000
        return r

    workloads = {
        "Produce": [request(ApiKeys.PRODUCE, 8, 250, SimpleNamespace()) for _ in range(4)],
        "Fetch": [request(ApiKeys.FETCH, 11, 120, SimpleNamespace(replica_id=-1)) for _ in range(4)],
    }
    from kafka_py.clients.common.protocol.errors import Errors
    from kafka_py.server.broker_topic_stats import BrokerTopicStats

    update = metrics.update_request_metrics
    stats = BrokerTopicStats()
    statuses = {("bench", 0): SimpleNamespace(error=Errors.NONE)}
    # (function, its two arguments) per workload
    calls = {name: (update, requests) for name, requests in workloads.items()}
    calls["record_produce"] = (lambda topic, size: stats.record_produce(topic, 1, size), [("bench", 170)] * 4)
    calls["ErrorsPerSec"] = (metrics.mark_partition_errors, [(ApiKeys.PRODUCE, statuses.values())] * 4)

    def nothing(x, y):  # the loop's own cost
        return None

    def run(fn, arguments, n: int, request_args: bool) -> float:
        if request_args:
            end = arguments[0].response_dequeue_time_ns + 10_000
            a, b, c, d = [(r, end) for r in arguments]
        else:
            a, b, c, d = arguments
        start = time.process_time()
        for _ in range(n // 4):
            fn(*a)
            fn(*b)
            fn(*c)
            fn(*d)
        return time.process_time() - start

    results: dict[str, list[float]] = {name: [] for name in calls}
    for name, (fn, arguments) in calls.items():
        run(fn, arguments, 20_000, name in workloads)  # warm up: rows made, meters made
    for _ in range(args.rounds):
        for name, (fn, arguments) in calls.items():
            base = run(nothing, arguments, args.calls, name in workloads)
            spent = run(fn, arguments, args.calls, name in workloads)
            results[name].append((spent - base) / args.calls * 1e9)
    tree = args.tree or pathlib.Path(__file__).resolve().parents[1]
    print(f"tree {tree}: CPU ns per update, median [min-max] of {args.rounds} rounds of {args.calls:,}")
    for name, values in results.items():
        print(f"  {name:14s} {statistics.median(values):7.0f} [{min(values):.0f}-{max(values):.0f}]")


if __name__ == "__main__":
    main()
