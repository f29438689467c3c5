"""Broker CPU per Fetch of many idle partitions, with an incremental fetch session (KIP-227)
and with full fetches, in the same run.

Starts ZooKeeper and a kafka-py broker (bench_broker.py's, ``config/server.properties``
with a free port and a temp log dir) and creates one topic of ``--partitions`` partitions
(100 by default) holding one record (in partition 0). A consumer on one connection then
fetches every partition from its log end, one Fetch v12 in flight, ``max_wait_ms`` 0 so
each is answered at once with nothing new:

* ``full``: sessionless fetches (epoch -1) listing every partition; every answer lists
  every partition;
* ``session``: a session made once by a full fetch with epoch 0, then incremental fetches
  (epochs 1, 2, ...) listing no partition; the broker still reads every partition of the
  session and answers none of them;
* ``full-epoch0`` (with ``--with-epoch0``): full fetches asking for a session each time
  (what a client does while the broker keeps no cache entry for it: each one closes the
  entry its id named and makes a new one).

The modes alternate for ``--rounds`` rounds of ``--seconds`` each (the first mode flips
from round to round); the figure of a round is the broker process's CPU time (user and
system, all its threads, from /proc) over the round divided by the fetches answered. The
medians of the rounds and the full/session ratio are printed last. ``--tree NAME=PATH``
adds brokers running the code of other checkouts (a ``git worktree``), measured in the same
rounds, to compare the cost of a full fetch before and after a change (a broker that makes
no session is measured in the ``full`` mode only); ``--no-main`` leaves out this checkout's.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/bench_fetch_sessions.py [--partitions 100] [--rounds 5] [--seconds 3]
    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/bench_fetch_sessions.py --tree before=/tmp/before --modes full
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_broker as bb  # noqa: E402

from kafka_py.clients.common.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.clients.common.protocol.fast_fetch_request import encode_fetch_request  # noqa: E402
from kafka_py.clients.common.protocol.fast_fetch_response import read_fetch_response  # noqa: E402

VERSION = 12
TOPIC = "bench-fetch-sessions"
_HEAD = struct.Struct(">ihi")  # throttle time, error code, session id (after the response header)


class Fetcher:
    """One consumer connection fetching every partition of TOPIC at its log end."""

    def __init__(self, port: int, partitions: int) -> None:
        self.conn = bb.RawConnection(port)
        self.partitions = partitions
        self.buffer = bytearray(1 << 20)
        self.correlation_id = 0
        self.offsets = [0] * partitions
        answer = self._fetch(0, -1, self._all())
        self.offsets = [p.high_watermark for _, parts in answer.responses for p in parts]
        assert len(self.offsets) == partitions and any(self.offsets), self.offsets
        self.full_frame = self._frame(0, -1, self._all())
        self.session_id = 0
        self.epoch = 0

    def _all(self) -> list:
        # (partition, current leader epoch, fetch offset, last fetched epoch, log start offset, max bytes)
        return [(TOPIC, [(p, -1, self.offsets[p], -1, -1, 1 << 20) for p in range(self.partitions)])]

    def _frame(self, session_id: int, epoch: int, topics: list) -> bytes:
        self.correlation_id += 1
        return encode_fetch_request(VERSION, self.correlation_id, "bench-fetch-sessions", -1, 0, 1, 50 << 20, 0,
                                    session_id, epoch, topics)

    def _fetch(self, session_id: int, epoch: int, topics: list):
        self.conn.sock.sendall(self._frame(session_id, epoch, topics))
        frame = self.conn.read_frame(self.buffer)
        return read_fetch_response(VERSION, frame[5:])  # correlation id, header tagged fields

    def _answer(self) -> tuple[int, int, int]:
        frame = self.conn.read_frame(self.buffer)
        _, error, session_id = _HEAD.unpack_from(frame, 5)
        return error, session_id, frame[5 + _HEAD.size]  # the compact topic count + 1

    def full(self) -> None:
        self.conn.sock.sendall(self.full_frame)
        error, _, topics = self._answer()
        if error != 0 or topics != 2:
            raise RuntimeError(f"full fetch answered error {error} with {topics - 1} topics")

    def full_epoch0(self) -> None:
        self.conn.sock.sendall(self._frame(self.session_id, 0, self._all()))
        error, self.session_id, topics = self._answer()
        if error != 0 or topics != 2:
            raise RuntimeError(f"full fetch answered error {error} with {topics - 1} topics")

    def start_session(self) -> None:
        answer = self._fetch(self.session_id, 0, self._all())
        if answer.error_code != 0 or answer.session_id == 0:
            raise RuntimeError(f"no fetch session made: error {answer.error_code}, session {answer.session_id}")
        self.session_id, self.epoch = answer.session_id, 1

    def incremental(self) -> None:
        self.conn.sock.sendall(self._frame(self.session_id, self.epoch, []))
        error, session_id, topics = self._answer()
        if error != 0 or session_id != self.session_id or topics != 1:
            raise RuntimeError(f"incremental fetch answered error {error}, session {session_id}, "
                               f"{topics - 1} topics")
        self.epoch += 1

    def close(self) -> None:
        self.conn.close()


def run_mode(broker: bb.KafkaPyBroker, fetcher: Fetcher, mode: str, seconds: float) -> tuple[float, int]:
    if mode == "session":
        fetcher.start_session()
        step = fetcher.incremental
    elif mode == "full-epoch0":
        step = fetcher.full_epoch0
    else:
        step = fetcher.full
    for _ in range(20):
        step()
    user0, system0 = bb.process_cpu(broker.process.pid)
    count = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(20):
            step()
        count += 20
    user1, system1 = bb.process_cpu(broker.process.pid)
    return (user1 - user0 + system1 - system0) / count * 1e6, count


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--modes", default="full,session", help="full, session, full-epoch0 (comma-separated)")
    parser.add_argument("--with-epoch0", action="store_true", help="add the full-epoch0 mode")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="also measure a broker running the code of another checkout")
    parser.add_argument("--no-main", action="store_true", help="no broker of this checkout (with --tree)")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m] + (["full-epoch0"] if args.with_epoch0 else [])

    workdir = Path(tempfile.mkdtemp(prefix="bench-fetch-sessions-"))
    zookeeper = bb.ZooKeeper(workdir).start()
    brokers: dict[str, bb.KafkaPyBroker] = {}
    fetchers: dict[str, Fetcher] = {}
    sessionless: set[str] = set()
    try:
        trees = ([] if args.no_main else [("kafka-py", None)]) + [tuple(t.split("=", 1)) for t in args.tree]
        for name, path in trees:
            broker = bb.KafkaPyBroker(workdir, f"127.0.0.1:{zookeeper.port}", {}, name=name,
                                      root=Path(path).resolve() if path else None)
            brokers[name] = broker.start()
            bb.create_topic(broker.port, TOPIC, args.partitions)
            fetchers[name] = Fetcher(broker.port, args.partitions)
            try:
                fetchers[name].start_session()
            except RuntimeError as e:
                # code from before fetch sessions: only its full fetches are measured
                print(f"{name}: {e}", flush=True)
                sessionless.add(name)
            print(f"{name}: {broker.description}", flush=True)
        results: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.rounds):
            order = [(name, mode) for name in brokers for mode in modes]
            if round_ % 2:
                order.reverse()
            for name, mode in order:
                if name in sessionless and mode != "full":
                    continue
                us, count = run_mode(brokers[name], fetchers[name], mode, args.seconds)
                results.setdefault((name, mode), []).append(us)
                print(f"round {round_ + 1} {name:<10} {mode:<12} {us:8.1f} us broker CPU per fetch "
                      f"({count / args.seconds:7,.0f} fetches/s)", flush=True)
        print(f"\n{args.partitions} idle partitions, medians of {args.rounds} rounds, broker CPU per fetch:")
        for (name, mode), values in results.items():
            print(f"  {name:<10} {mode:<12} {statistics.median(values):8.1f} us "
                  f"[{min(values):.1f}-{max(values):.1f}]")
        for name in brokers:
            full, session = results.get((name, "full")), results.get((name, "session"))
            if full and session:
                print(f"  {name}: full / session {statistics.median(full) / statistics.median(session):.2f}x")
    finally:
        for fetcher in fetchers.values():
            fetcher.close()
        for broker in brokers.values():
            broker.stop()
        zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
