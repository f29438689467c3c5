"""What a topic's message.format.version costs on append: a current producer's batch appended
to a Log of format v2 (offsets written in place), v1 and v0 (LogValidator converts every record
down, decompressing and recompressing a compressed batch), and an old producer's v1 message set
appended to a v2 log (converted up) and to a v1 log (kept in place).

Each case appends copies of one batch (prepared outside the timed region, as a produce
request's receive buffer would be) for ``--seconds``, in ``--rounds`` rounds, and prints the
median appends per second and the MB/s of producer bytes, with the ratio to the v2-to-v2 case
of the same codec.

Usage::

    .venv/bin/python benchmarks/bench_message_format_append.py [--seconds 2] [--rounds 3] [--records 100]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time

from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig, api_version
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords

FORMATS = {2: "2.8", 1: "0.10.2", 0: "0.9.0"}


def v2_batch(records: int, value_bytes: int, codec: CompressionType) -> bytes:
    now = int(time.time() * 1000)
    value = b"x" * (value_bytes // 2) + bytes(range(value_bytes - value_bytes // 2))
    return build_batch([SimpleRecord(b"key-%d" % i, value, now) for i in range(records)], compression=codec)


def v1_set(records: int, value_bytes: int, codec: CompressionType) -> bytes:
    now = int(time.time() * 1000)
    value = b"x" * (value_bytes // 2) + bytes(range(value_bytes - value_bytes // 2))
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=int(codec), batch_size=1 << 24)
    for i in range(records):
        builder.append(i, timestamp=now, key=b"key-%d" % i, value=value)
    return bytes(builder.build())


def measure(magic: int, template: bytes, seconds: float) -> float:
    """Appends per second of ``template`` to a fresh Log of format ``magic``."""
    directory = tempfile.mkdtemp(prefix="bench-format-")
    log = Log(f"{directory}/bench-0", LogConfig(message_format_version=api_version(FORMATS[magic]),
                                                segment_size=1 << 30))
    try:
        appends = 0
        elapsed = 0.0
        while elapsed < seconds:
            chunk = [MemoryRecords(bytearray(template)) for _ in range(32)]
            start = time.perf_counter()
            for records in chunk:
                log.append_as_leader(records, leader_epoch=0)
            elapsed += time.perf_counter() - start
            appends += len(chunk)
        return appends / elapsed
    finally:
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=100, help="records per batch")
    parser.add_argument("--value-bytes", type=int, default=100)
    args = parser.parse_args()
    print(f"{args.records} records of {args.value_bytes}-byte values per batch; median of {args.rounds} rounds")
    print(f"{'producer sends':<16} {'codec':<6} {'log format':<10} {'appends/s':>10} {'MB/s':>8} {'vs v2->v2':>10}")
    for codec in (CompressionType.NONE, CompressionType.GZIP):
        baseline = None
        for source, build in (("v2 batch", v2_batch), ("v1 message set", v1_set)):
            template = build(args.records, args.value_bytes, codec)
            for magic in (2, 1, 0):
                if source == "v1 message set" and magic == 0:
                    continue
                rate = statistics.median(measure(magic, template, args.seconds) for _ in range(args.rounds))
                if baseline is None:
                    baseline = rate
                print(f"{source:<16} {codec.type_name:<6} {'v%d' % magic:<10} {rate:>10.0f} "
                      f"{rate * len(template) / 1e6:>8.1f} {rate / baseline:>9.2f}x")


if __name__ == "__main__":
    main()
