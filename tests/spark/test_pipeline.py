"""The jobs on top of the data source: incremental Parquet export, the summary table, the
progress bar, and the bin/ scripts that spark-submit them."""
from __future__ import annotations

import io
import os
import pathlib
import subprocess
import threading


from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.spark.export_job import load_state, run_export
from kafka_py.spark.progress import StageProgressBar
from kafka_py.spark.summary_job import format_table, run_summary
from tests.integration.broker_harness import wait_until
from tests.spark.conftest import rows_of, sort_key, spark_script_env

ROOT = pathlib.Path(__file__).resolve().parents[2]


def read_parquet(spark, path):
    from pyspark.sql import functions as F

    df = spark.read.parquet(str(path))
    # Partition columns come back from the directory names; give them their source types.
    return df.withColumn("partition", F.col("partition").cast("int"))


def test_parquet_export_then_an_incremental_run_exports_only_new_records(spark, produced, tmp_path):
    produced.create_topic("export-me", 2)
    first = produced.produce("export-me", 100, 2, "snappy")
    out = tmp_path / "parquet"
    result = run_export(spark, [produced.log_dir], str(out), topics=["export-me"])
    assert result.records == 100
    assert result.ranges == {TopicPartition("export-me", 0): (0, 50), TopicPartition("export-me", 1): (0, 50)}
    assert load_state(result.state_file) == {TopicPartition("export-me", 0): 50, TopicPartition("export-me", 1): 50}
    assert sorted(os.listdir(out / "topic=export-me")) == ["partition=0", "partition=1"]
    assert rows_of(read_parquet(spark, out)) == sorted(first, key=sort_key)

    second = produced.produce("export-me", 61, 2, "zstd", start=100)
    result = run_export(spark, [produced.log_dir], str(out), topics=["export-me"])
    assert result.records == 61
    assert result.ranges == {TopicPartition("export-me", 0): (50, 81), TopicPartition("export-me", 1): (50, 80)}
    assert rows_of(read_parquet(spark, out)) == sorted(first + second, key=sort_key)

    assert run_export(spark, [produced.log_dir], str(out), topics=["export-me"]).records == 0
    assert read_parquet(spark, out).count() == 161


def test_summary_per_topic_partition(spark, produced):
    summaries = run_summary(spark, [produced.log_dir], topics=["codec-none", "log-append"])
    assert [(s.topic, s.partition) for s in summaries] == [
        ("codec-none", 0), ("codec-none", 1), ("codec-none", 2), ("log-append", 0)]
    for s in summaries:
        rows = [r for r in produced.rows if (r.topic, r.partition) == (s.topic, s.partition)]
        assert s.records == len(rows)
        assert s.bytes == sum(len(r.key or b"") + len(r.value or b"") for r in rows)
        assert (s.first_offset, s.last_offset) == (0, len(rows) - 1)
        assert s.min_timestamp_ms == min(r.timestamp for r in rows)
        assert s.max_timestamp_ms == max(r.timestamp for r in rows)
        assert s.distinct_keys == len({r.key for r in rows if r.key is not None})
    table = format_table(summaries).splitlines()
    assert table[0].split()[:4] == ["topic", "partition", "records", "bytes"]
    assert table[2].split()[:3] == ["codec-none", "0", str(summaries[0].records)]
    assert table[-1].startswith("total (4 partitions)")


def test_progress_bar_draws_the_running_stage(spark, tmp_path):
    release = tmp_path / "release"
    stream = io.StringIO()
    bar = StageProgressBar(spark.sparkContext, "test", stream=stream, quiet_interval=0)
    path = str(release)

    def wait_for_release(_):
        import os as os_
        import time as time_

        while not os_.path.exists(path):
            time_.sleep(0.05)
        return 1

    job = threading.Thread(target=lambda: spark.sparkContext.parallelize(range(4), 4).map(wait_for_release).sum())
    job.start()
    try:
        wait_until(lambda: bar.poll() is not None, 60, "no active stage seen")
    finally:
        release.touch()
        job.join()
    assert "[test] stage" in stream.getvalue()
    assert "/4 tasks" in stream.getvalue()


def run_script(name, *args):
    return subprocess.run([str(ROOT / "bin" / name), *args], capture_output=True, text=True, env=spark_script_env(),
                          timeout=300, cwd=ROOT)


def test_bin_script_spark_submits_the_export(produced, tmp_path):
    # (bin/kafka-log-summary.sh through spark-submit: tests/spark/test_cluster_reads.py)
    spark_conf = ["--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1"]
    out = tmp_path / "out"
    export = run_script("kafka-log-to-parquet.sh", "--log-dir", produced.log_dir, "--topic", "other",
                        "--output", str(out), "--master=local[1]", *spark_conf)
    assert export.returncode == 0, export.stderr[-3000:]
    assert "Exported 25 records from 1 of 1 partitions" in export.stdout
    # The progress bar's last line (spark-submit passes the driver's stderr on as its stdout).
    assert "[export] done in" in export.stdout + export.stderr
    assert (out / "topic=other" / "partition=0").is_dir()
