"""What this machine allows replication before any broker code: the bytes of an RF=1 acks=1 and an
RF=3 acks=all produce moved by the simplest loops, no protocol, no parsing, no CRC.

    python3 benchmarks/bench_copy_floor.py [--rounds 9] [--mb 200] [--window 1] [--dir DIR]

Each run is three or four processes on loopback TCP, one frame (1 MiB, the size of the
benchmark producer's requests) at a time per ``--window``:

* client: sends ``--mb`` frames and counts one-byte acknowledgements;
* leader: receives a frame, ``write``s it to its file, ``sendfile``s it from that file to each
  follower (as Kafka answers a follower's fetch), and acknowledges the client: at once with
  no followers (acks=1), once both followers have acknowledged it with two (acks=all);
* followers: receive a frame, ``write`` it to their own file, acknowledge it.

Sockets keep the kernel's autotuned buffers (Kafka's brokers set 64 and 100 KiB ones, which
cost more), so the figures are an upper bound for a broker on the same machine. Rounds run
RF=1 and RF=3 in alternating order; every file is deleted after its run, so each run writes
into freed page cache as ``bench_replication.py`` does. Prints, per round, MB/s and the CPU
(user + system, from /proc) each process spent per MB, then the medians as JSON.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import socket
import statistics
import tempfile
import threading
import time

FRAME = 1 << 20
ACK = b"a"


def recv_frame(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from ``sock``; False when the peer closed before the frame began."""
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            if got:
                raise EOFError("connection closed inside a frame")
            return False
        got += n
    return True


def follower(port: int, path: str, connected: multiprocessing.Queue) -> None:
    sock = socket.create_connection(("127.0.0.1", port))
    connected.put(True)
    view = memoryview(bytearray(FRAME))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while recv_frame(sock, view):
            os.write(fd, view)
            sock.sendall(ACK)
    finally:
        os.close(fd)
        os.unlink(path)
        sock.close()


class FollowerAcks:
    """Frames every follower has acknowledged, counted by one reader thread per follower."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self._acked = [0] * len(sockets)
        self._changed = threading.Condition()
        for i, sock in enumerate(sockets):
            threading.Thread(target=self._read, args=(i, sock), daemon=True).start()

    def _read(self, i: int, sock: socket.socket) -> None:
        while data := sock.recv(4096):
            with self._changed:
                self._acked[i] += len(data)
                self._changed.notify_all()

    def wait_beyond(self, count: int) -> int:
        """Block until every follower has acknowledged more than ``count`` frames; the new minimum."""
        with self._changed:
            while min(self._acked) <= count:
                self._changed.wait()
            return min(self._acked)


def leader(ready: multiprocessing.Queue, path: str, followers: int) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    ready.put(listener.getsockname()[1])
    replicas = [listener.accept()[0] for _ in range(followers)]
    client, _ = listener.accept()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    if replicas:
        acks = FollowerAcks(replicas)

        def acknowledge_replicated() -> None:  # acks=all: answer the client behind the followers
            done = 0
            while True:
                now = acks.wait_beyond(done)
                client.sendall(ACK * (now - done))
                done = now
        threading.Thread(target=acknowledge_replicated, daemon=True).start()
    view = memoryview(bytearray(FRAME))
    position = 0
    try:
        while recv_frame(client, view):
            os.write(fd, view)
            for replica in replicas:
                offset, left = position, FRAME
                while left:
                    sent = os.sendfile(replica.fileno(), fd, offset, left)
                    offset += sent
                    left -= sent
            position += FRAME
            if not replicas:
                client.sendall(ACK)
    finally:
        for replica in replicas:
            replica.shutdown(socket.SHUT_WR)
        os.close(fd)
        os.unlink(path)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce(port: int, frames: int, window: int) -> tuple[float, socket.socket]:
    sock = socket.create_connection(("127.0.0.1", port))
    payload = os.urandom(FRAME)
    sent = acked = 0
    start = time.perf_counter()
    while acked < frames:
        while sent < frames and sent - acked < window:
            sock.sendall(payload)
            sent += 1
        acked += len(sock.recv(4096))
    return time.perf_counter() - start, sock


def run(replication_factor: int, frames: int, window: int, directory: str) -> tuple[float, list[float]]:
    """MB/s, and ms of CPU per MB for the leader, the followers and the client."""
    ready: multiprocessing.Queue = multiprocessing.Queue()
    leader_process = multiprocessing.Process(target=leader, args=(ready, f"{directory}/leader",
                                                                   replication_factor - 1))
    leader_process.start()
    port = ready.get(timeout=30)
    followers = []
    connected: multiprocessing.Queue = multiprocessing.Queue()
    # The leader takes the first connections for followers and the next for the client: each
    # follower is connected (so in the listen backlog) before anything else connects.
    for i in range(replication_factor - 1):
        followers.append(multiprocessing.Process(target=follower,
                                                 args=(port, f"{directory}/follower{i}", connected)))
        followers[-1].start()
        connected.get(timeout=30)
    pids = [leader_process.pid] + [p.pid for p in followers] + [os.getpid()]
    before = [cpu_seconds(pid) for pid in pids]
    elapsed, sock = produce(port, frames, window)
    after = [cpu_seconds(pid) for pid in pids]
    sock.close()
    for process in [leader_process, *followers]:
        process.join(60)
    megabytes = frames * FRAME / 1e6
    return megabytes / elapsed, [round((a - b) * 1000 / megabytes, 2) for a, b in zip(after, before)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--mb", type=int, default=200, help="frames of 1 MiB per run")
    parser.add_argument("--window", type=int, default=1, help="frames the client keeps unacknowledged")
    parser.add_argument("--dir", default=None, help="where the files go (default: the temp dir)")
    args = parser.parse_args()
    print(f"{datetime.datetime.now().isoformat(timespec='seconds')}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}, {args.mb} MiB per run, window {args.window}", flush=True)
    rates: dict[int, list[float]] = {1: [], 3: []}
    ratios = []
    with tempfile.TemporaryDirectory(prefix="copy-floor-", dir=args.dir) as directory:
        for r in range(args.rounds):
            pair = {}
            for rf in ((1, 3) if r % 2 == 0 else (3, 1)):
                pair[rf] = run(rf, args.mb, args.window, directory)
                rates[rf].append(pair[rf][0])
            ratios.append(pair[3][0] / pair[1][0])
            print(f"round {r}: RF=1 {pair[1][0]:.0f} MB/s, CPU ms/MB (leader, client) {pair[1][1]}; "
                  f"RF=3 {pair[3][0]:.0f} MB/s, CPU ms/MB (leader, followers, client) {pair[3][1]}; "
                  f"ratio {ratios[-1]:.2f}", flush=True)
    print(json.dumps({"rf1_mb_s": statistics.median(rates[1]), "rf3_mb_s": statistics.median(rates[3]),
                      "ratio": statistics.median(ratios), "ratios": [round(x, 2) for x in ratios]}, indent=1))


if __name__ == "__main__":
    main()
