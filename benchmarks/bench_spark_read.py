"""Reading segment files with the ``kafka-log`` Spark data source, against plain Python.

No Kafka counterpart. Writes a log dir in Kafka's layout (16 KiB batches as kafka-python's
default batch.size makes them, 32 MiB segments with offset indexes) holding one topic of
100-byte values and one of 10 KiB values, then measures for each:

* ``python``: one process decoding every record with kafka_py.clients.common.record
  (FileRecords -> DefaultRecordBatch.records()), the plain way;
* ``columns``: one process running the data source's executor code (read_slice) over the
  same files, without Spark;
* ``spark``: ``spark.read.format("kafka-log")`` on ``local[2]``, every column materialised
  (``write.format("noop")``), best of ``--runs`` after one warm-up run.

MB/s counts segment file bytes. Run::

    .venv/bin/python benchmarks/bench_spark_read.py [--records-100b 2000000] [--records-10kb 20000]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from kafka_py.log.offset_index import OffsetIndex
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.file_records import FileRecords

BATCH_BYTES = 16384
SEGMENT_BYTES = 32 * 1024 * 1024
INDEX_INTERVAL = 4096


def write_topic(log_dir: str, topic: str, records: int, value_size: int) -> int:
    part = os.path.join(log_dir, f"{topic}-0")
    os.makedirs(part, exist_ok=True)
    per_batch = max(1, BATCH_BYTES // (value_size + 20))
    value = os.urandom(value_size)
    ts = 1_700_000_000_000
    offset = 0
    seg = index = None
    position = since_entry = 0
    total = 0
    while offset < records:
        if seg is None or position >= SEGMENT_BYTES:
            if seg is not None:
                seg.close()
                index.close()
            seg = open(os.path.join(part, "%020d.log" % offset), "wb")
            index = OffsetIndex(os.path.join(part, "%020d.index" % offset), offset, max_index_size=10 * 1024 * 1024)
            position = since_entry = 0
        n = min(per_batch, records - offset)
        batch = build_batch([SimpleRecord(b"key-%09d" % (offset + i), value, ts + offset + i) for i in range(n)],
                            base_offset=offset)
        if since_entry > INDEX_INTERVAL:
            index.append(offset + n - 1, position)
            since_entry = 0
        seg.write(batch)
        since_entry += len(batch)
        position += len(batch)
        total += len(batch)
        offset += n
    seg.close()
    index.close()
    return total


def segment_files(log_dir: str, topic: str) -> list[str]:
    part = os.path.join(log_dir, f"{topic}-0")
    return sorted(os.path.join(part, n) for n in os.listdir(part) if n.endswith(".log"))


def bench_python(files: list[str]) -> tuple[int, float]:
    start = time.perf_counter()
    count = 0
    for path in files:
        records = FileRecords.open(path, file_already_exists=True, mutable=False)
        for batch in records.batches():
            for _record in batch.records():
                count += 1
        records.close()
    return count, time.perf_counter() - start


def bench_columns(log_dir: str, topic: str) -> tuple[int, float]:
    from kafka_py.spark.log_dir_planner import LogDirPlanner
    from kafka_py.spark.options import KafkaLogOptions
    from kafka_py.spark.segment_reader import read_slice

    start = time.perf_counter()
    options = KafkaLogOptions.parse({"path": log_dir, "subscribe": topic})
    count = 0
    for s in LogDirPlanner(options.paths).plan(options):
        for rb in read_slice(s):
            count += rb.num_rows
    return count, time.perf_counter() - start


def bench_spark(spark, log_dir: str, topic: str, runs: int) -> tuple[int, float]:
    df = spark.read.format("kafka-log").option("subscribe", topic).load(log_dir)
    count = df.count()
    df.write.format("noop").mode("overwrite").save()  # warm-up: JVM JIT, Python workers
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        best = min(best, time.perf_counter() - start)
    return count, best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records-100b", type=int, default=2_000_000)
    parser.add_argument("--records-10kb", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", default=None, help="Where to write the log dir (default: a temp dir).")
    args = parser.parse_args()

    log_dir = args.dir or tempfile.mkdtemp(prefix="bench-spark-read-")
    sizes = {"bench-100b": (args.records_100b, 100), "bench-10kb": (args.records_10kb, 10240)}
    file_bytes = {}
    for topic, (n, value_size) in sizes.items():
        if not os.path.isdir(os.path.join(log_dir, f"{topic}-0")):
            write_topic(log_dir, topic, n, value_size)
        file_bytes[topic] = sum(os.path.getsize(f) for f in segment_files(log_dir, topic))

    from pyspark.sql import SparkSession

    from kafka_py.spark import register

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master(args.master).appName("bench-spark-read")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.log.level", "WARN")
             .getOrCreate())
    register(spark)

    print(f"log dir {log_dir}, master {args.master}, {os.cpu_count()} CPUs")
    print("| records | reader | records | seconds | records/s | MB/s |")
    print("|---|---|---:|---:|---:|---:|")
    for topic, (n, value_size) in sizes.items():
        label = "100 B" if value_size == 100 else "10 KB"
        for name, run in (("python (1 process, records())", lambda: bench_python(segment_files(log_dir, topic))),
                          ("columns (1 process, read_slice)", lambda: bench_columns(log_dir, topic)),
                          (f"spark {args.master}", lambda: bench_spark(spark, log_dir, topic, args.runs))):
            count, seconds = run()
            print(f"| {label} | {name} | {count:,} | {seconds:.2f} | {count / seconds:,.0f} | "
                  f"{file_bytes[topic] / seconds / 1e6:,.0f} |", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
