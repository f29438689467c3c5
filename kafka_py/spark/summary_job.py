"""Summarises topics of Kafka log dirs per topic-partition, as a table.

No Kafka counterpart. The Spark job behind bin/kafka-log-summary.sh::

    bin/kafka-log-summary.sh --log-dir /var/lib/kafka/data [--topic orders] [--master ...]

For each topic-partition: the records, their bytes (key plus value, headers not counted),
the first and last offsets, the smallest and largest timestamp, and the number of distinct
non-null keys (exact: a shuffle of the keys, cheap next to reading the records). Given the log
dirs of several brokers, each partition is counted once (from the replica the source reads),
and a second table puts each partition's replicas side by side: per broker, the log end
offset in its files and the high watermark in its replication-offset-checkpoint.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional, Sequence

import click

from kafka_py.spark.job_support import (
    build_session,
    common_options,
    default_master,
    drop_script_dir_from_path,
    parse_conf,
    progress_context,
    user_error,
)
from kafka_py.core.utils.command_line_utils import run_tool

logger = logging.getLogger(__name__)

COLUMNS = ("topic", "partition", "records", "bytes", "first offset", "last offset",
           "min timestamp", "max timestamp", "distinct keys")


@dataclass(frozen=True)
class PartitionSummary:
    topic: str
    partition: int
    records: int
    bytes: int
    first_offset: int
    last_offset: int
    min_timestamp_ms: Optional[int]
    max_timestamp_ms: Optional[int]
    distinct_keys: int


def run_summary(spark, log_dirs: Sequence[str], topics: Sequence[str] = (), topic_pattern: Optional[str] = None,
                committed_only: bool = False, fail_on_data_loss: bool = True,
                progress: str = "none") -> list[PartitionSummary]:
    from pyspark.sql import functions as F

    reader = (spark.read.format("kafka-log")
              .option("paths", json.dumps(list(log_dirs)))
              .option("committedOnly", str(committed_only).lower())
              .option("failOnDataLoss", str(fail_on_data_loss).lower()))
    if topics:
        reader = reader.option("subscribe", ",".join(topics))
    elif topic_pattern:
        reader = reader.option("subscribePattern", topic_pattern)
    df = reader.load()
    size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    summary = (df.groupBy("topic", "partition")
               .agg(F.count(F.lit(1)).alias("records"),
                    F.sum(size.cast("long")).alias("bytes"),
                    F.min("offset").alias("first_offset"),
                    F.max("offset").alias("last_offset"),
                    F.min(F.unix_millis("timestamp")).alias("min_ts"),
                    F.max(F.unix_millis("timestamp")).alias("max_ts"),
                    F.countDistinct("key").alias("distinct_keys")))
    with progress_context(spark, "summary", progress):
        # One row per partition: sorting them here saves Spark a range-partitioning job.
        rows = sorted(summary.collect(), key=lambda r: (r["topic"], r["partition"]))
    return [PartitionSummary(r["topic"], r["partition"], r["records"], r["bytes"] or 0, r["first_offset"],
                             r["last_offset"], r["min_ts"], r["max_ts"], r["distinct_keys"]) for r in rows]


@dataclass(frozen=True)
class ReplicaState:
    log_start_offset: int
    log_end_offset: int
    high_watermark: Optional[int]


@dataclass(frozen=True)
class PartitionReplicas:
    topic: str
    partition: int
    #: Per broker id (None: a log dir whose meta.properties names no broker).
    replicas: dict


def describe_replicas(log_dirs: Sequence[str], topics: Sequence[str] = (),
                      topic_pattern: Optional[str] = None) -> list[PartitionReplicas]:
    """Each partition's replicas in ``log_dirs``, read from the files (no Spark job)."""
    from kafka_py.spark.log_dir_planner import LogDirPlanner
    from kafka_py.spark.options import Subscription

    planner = LogDirPlanner(log_dirs)
    found = planner.replica_logs(Subscription.create(topics=topics or None, pattern=topic_pattern))
    planner.describe([r for rs in found.values() for r in rs], fail_on_data_loss=False)
    return [PartitionReplicas(tp.topic, tp.partition,
                              {r.broker_id: ReplicaState(r.log_start_offset, r.log_end_offset,
                                                         r.checkpointed_high_watermark)
                               for r in found[tp] if not r.vanished})
            for tp in sorted(found)]


def format_replica_table(partitions: Sequence[PartitionReplicas]) -> str:
    """Partitions down, brokers across: ``end/hw`` of each replica, ``-`` where a broker has none."""
    brokers = sorted({b for p in partitions for b in p.replicas}, key=lambda b: (b is None, b if b is not None else 0))
    header = ["topic", "partition"] + [f"broker {b} end/hw" if b is not None else "unnamed end/hw" for b in brokers]
    rows = []
    for p in partitions:
        cells = [p.topic, str(p.partition)]
        for b in brokers:
            state = p.replicas.get(b)
            if state is None:
                cells.append("-")
            else:
                hw = "?" if state.high_watermark is None else str(state.high_watermark)
                cells.append(f"{state.log_end_offset}/{hw}")
        rows.append(cells)
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i]) for i in range(len(header))]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def _timestamp(ms: Optional[int]) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def format_table(summaries: Sequence[PartitionSummary]) -> str:
    """An aligned text table, numbers right-aligned, with a total line."""
    rows = [[s.topic, str(s.partition), str(s.records), str(s.bytes), str(s.first_offset), str(s.last_offset),
             _timestamp(s.min_timestamp_ms), _timestamp(s.max_timestamp_ms), str(s.distinct_keys)]
            for s in summaries]
    if summaries:
        mins = [s.min_timestamp_ms for s in summaries if s.min_timestamp_ms is not None]
        maxs = [s.max_timestamp_ms for s in summaries if s.max_timestamp_ms is not None]
        rows.append([f"total ({len(summaries)} partitions)", "", str(sum(s.records for s in summaries)),
                     str(sum(s.bytes for s in summaries)), "", "", _timestamp(min(mins) if mins else None),
                     _timestamp(max(maxs) if maxs else None), ""])
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(COLUMNS)]
    right = {1, 2, 3, 4, 5, 8}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(COLUMNS), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows[:-1])
    if summaries:
        out.append("  ".join("-" * w for w in widths))
        out.append(line(rows[-1]))
    return "\n".join(out)


@click.command(name="kafka-log-summary")
@common_options
def main(log_dirs, topics, topic_pattern, committed_only, fail_on_data_loss, master, conf, progress) -> None:
    """Print records, bytes, offsets, timestamps and distinct keys per topic-partition."""
    logging.basicConfig(level=logging.WARNING, format="[%(asctime)s] %(levelname)s %(message)s")
    spark = build_session("kafka-log-summary", default_master(master), parse_conf(conf), progress)
    try:
        summaries = run_summary(spark, log_dirs, topics, topic_pattern, committed_only, fail_on_data_loss, progress)
    except Exception as e:  # noqa: BLE001 - a known problem becomes a one-line message
        message = user_error(e)
        if message is None:
            raise
        raise click.ClickException(message) from None
    finally:
        spark.stop()
    click.echo(format_table(summaries))
    replicas = describe_replicas(log_dirs, topics, topic_pattern)
    if len({b for p in replicas for b in p.replicas}) > 1:
        click.echo("")
        click.echo("replicas (log end offset / checkpointed high watermark):")
        click.echo(format_replica_table(replicas))


if __name__ == "__main__":
    drop_script_dir_from_path(__file__)
    run_tool(main, "bin/kafka-log-summary.sh", tool_logging=False)
