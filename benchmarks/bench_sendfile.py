"""Fetch-path transfer rate of FileRecords.write_to (os.sendfile) over loopback TCP.

A segment file of real v2 batches (default 256 MiB) is written once. Then, as a
Processor answering fetches would, the sender takes slices of it (default
``--fetch-mib 32`` each, walking through the file and wrapping around) and
pushes each slice to a non-blocking TCP socket with ``FileRecords.write_to``,
waiting on a selector whenever the socket buffer is full and resuming where the
partial write stopped. A reader thread drains the other end with ``recv_into``
into one reusable buffer. The rate is bytes received per second of wall time.

The file is read from the page cache (it was just written), so this measures
the sendfile + TCP loopback path, not the disk.

Usage::

    .venv/bin/python benchmarks/bench_sendfile.py [--file-mib 256] [--fetch-mib 32] [--seconds 8]
"""
from __future__ import annotations

import argparse
import os
import selectors
import socket
import sys
import tempfile
import threading
import time

from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords

MIB = 1024 * 1024


def write_segment(path: str, file_bytes: int) -> FileRecords:
    value = os.urandom(1000)
    records = [SimpleRecord(b"key-%d" % i, value, timestamp=1_700_000_000_000 + i) for i in range(1000)]
    template = build_batch(records)
    fr = FileRecords.open(path)
    offset = 0
    while fr.size_in_bytes() + len(template) <= file_bytes:
        batch = MemoryRecords(bytearray(template))
        batch.first_batch().set_last_offset(offset + 999)
        fr.append(batch)
        offset += 1000
    fr.flush()
    return fr


def drain(sock: socket.socket, result: dict) -> None:
    buf = memoryview(bytearray(4 * MIB))
    total = 0
    recv_into = sock.recv_into
    while True:
        n = recv_into(buf)
        if n == 0:
            break
        total += n
    result["received"] = total


def run(fr: FileRecords, fetch_bytes: int, seconds: float) -> tuple[int, float, int]:
    server = socket.create_server(("127.0.0.1", 0))
    sender = socket.create_connection(server.getsockname())
    receiver, _ = server.accept()
    server.close()
    sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sender.setblocking(False)
    result: dict = {}
    reader = threading.Thread(target=drain, args=(receiver, result), name="bench-reader", daemon=True)

    selector = selectors.DefaultSelector()
    selector.register(sender, selectors.EVENT_WRITE)
    file_size = fr.size_in_bytes()
    position = 0
    sent_total = 0
    calls = 0
    reader.start()
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        size = min(fetch_bytes, file_size - position)
        view = fr.slice(position, size)
        sent = 0
        while sent < size:
            n = view.write_to(sender, sent, size - sent)
            calls += 1
            if n == 0:
                selector.select()  # socket buffer full: wait until the reader drains it
            sent += n
        sent_total += size
        position = 0 if position + size >= file_size else position + size
    sender.close()
    reader.join()
    elapsed = time.perf_counter() - start
    receiver.close()
    selector.close()
    if result.get("received") != sent_total:
        raise SystemExit(f"reader got {result.get('received')} bytes, sender sent {sent_total}")
    return sent_total, elapsed, calls


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file-mib", type=int, default=256)
    parser.add_argument("--fetch-mib", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--dir", default=None, help="where to write the segment (default: a temp dir)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        t0 = time.perf_counter()
        fr = write_segment(os.path.join(tmp, "00000000000000000000.log"), args.file_mib * MIB)
        print(f"segment: {fr.size_in_bytes() / MIB:.0f} MiB written in {time.perf_counter() - t0:.1f} s")
        try:
            total, elapsed, calls = run(fr, args.fetch_mib * MIB, args.seconds)
        finally:
            fr.close_handlers()
    print(f"sendfile loopback: {total / MIB:.0f} MiB in {elapsed:.2f} s, {calls} write_to calls, "
          f"{total / elapsed / 1e9:.2f} GB/s ({total / elapsed / 2**30:.2f} GiB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
