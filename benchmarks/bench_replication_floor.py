"""The 10 KB replication ratio (RF=3 acks=all over RF=1 acks=1) of the brokers and of the bare
copies, measured in turns within one run, so that both see the same machine.

    .venv/bin/python benchmarks/bench_replication_floor.py [--iterations 4] [--floor-rounds 3]

Each iteration runs, one after the other, each as its own process:

1. ``bench_copy_floor.py --window 1`` (``--floor-rounds`` rounds): the bytes alone, one frame at a time;
2. ``bench_replication.py --only throughput --rounds 1``: the brokers, one partition, so one request
   at a time in the leader;
3. ``bench_copy_floor.py --window 8``: the bytes alone, eight frames in flight;
4. ``bench_replication.py --only throughput --rounds 1 --partitions 6``: the brokers, six
   partitions whose leaders are spread over the three brokers.

A machine whose speed drifts moves both figures of a pair together. Prints each ratio as it
comes, then, per pair, the medians over all rounds as JSON.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def run_json(script: str, *args: str) -> dict:
    """Run a sibling benchmark and return the JSON summary it prints last."""
    out = subprocess.run([sys.executable, str(HERE / script), *args], check=True, capture_output=True,
                         text=True).stdout
    start = out.find("\n{")
    if start < 0:
        raise RuntimeError(f"{script} printed no summary:\n{out}")
    return json.loads(out[start:])


def ten_kb_ratio(summary: dict) -> float:
    row = next(r for r in summary["throughput"] if r["size"] == 10_000)
    return row["ratio"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--floor-rounds", type=int, default=3, help="rounds of each copy-floor run")
    args = parser.parse_args()
    print(f"{datetime.datetime.now().isoformat(timespec='seconds')}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    pairs = {"one at a time": ([], []), "several at a time": ([], [])}
    for i in range(args.iterations):
        for name, window, partitions in (("one at a time", "1", "1"), ("several at a time", "8", "6")):
            floor, broker = pairs[name]
            floor_ratios = run_json("bench_copy_floor.py", "--window", window,
                                    "--rounds", str(args.floor_rounds))["ratios"]
            floor.extend(floor_ratios)
            broker.append(ten_kb_ratio(run_json("bench_replication.py", "--only", "throughput", "--rounds", "1",
                                                "--partitions", partitions)))
            print(f"iteration {i}, {name}: floor (window {window}) {floor_ratios}, "
                  f"brokers ({partitions} partition{'s' if partitions != '1' else ''}) {broker[-1]:.2f}", flush=True)
    print(json.dumps({name: {"floor_ratio": statistics.median(floor), "floor_ratios": floor,
                             "broker_ratio": statistics.median(broker), "broker_ratios": [round(r, 2) for r in broker]}
                      for name, (floor, broker) in pairs.items()}, indent=1))


if __name__ == "__main__":
    main()
