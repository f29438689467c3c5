"""Exports topics of Kafka log dirs to Parquet, partitioned by topic and partition, incrementally.

No Kafka counterpart. The Spark job behind bin/kafka-log-to-parquet.sh::

    bin/kafka-log-to-parquet.sh --log-dir /var/lib/kafka/data --output /data/kafka-parquet \\
        [--topic orders --topic payments | --topic-pattern 'orders.*'] [--committed-only] \\
        [--master spark://host:7077]

Each run reads, per partition, from the offset the previous run stopped at (earliest the first
time) to the offset that is the partition's end when the run is planned (its high watermark
with ``--committed-only``), appends those records under
``<output>/topic=<t>/partition=<p>/`` (columns key, value, offset, timestamp, timestampType,
headers), and only then records the new offsets in the state file
(``<output>/_kafka_log_export_state.json`` by default; Spark skips files named ``_*`` when it
reads the Parquet back). The end offsets are fixed before the read and the state is replaced
atomically after the write, so every record is exported once; a run that fails before its
state is written leaves the state as it was, and the next run exports that range again
(at-least-once, with the duplicates of the failed run's files, if any were committed).
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

import click

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.spark.job_support import (
    STATE_FILE_NAME,
    build_session,
    common_options,
    default_master,
    drop_script_dir_from_path,
    parse_conf,
    progress_context,
    user_error,
)
from kafka_py.spark.log_dir_planner import LogDirPlanner
from kafka_py.spark.options import (
    EARLIEST_OFFSET,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    KafkaLogOptions,
    KafkaLogOptionsException,
    Subscription,
    offsets_json,
)
from kafka_py.spark.transactions import last_stable_offset
from kafka_py.core.utils.command_line_utils import run_tool

logger = logging.getLogger(__name__)

STATE_VERSION = 1


@dataclass
class ExportResult:
    records: int
    #: Per partition: the offsets exported by this run, [from, until).
    ranges: dict[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    state_file: str = ""
    seconds: float = 0.0


def default_state_file(output: str) -> str:
    if "://" in output and not output.startswith("file://"):
        raise KafkaLogOptionsException(
            f"--output {output} is not a local path: give --state-file, a local file for the exported offsets")
    return os.path.join(output.removeprefix("file://"), STATE_FILE_NAME)


def load_state(path: str) -> dict[TopicPartition, int]:
    """Next offset to export per partition; {} before the first run."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    if data.get("version") != STATE_VERSION:
        raise KafkaLogOptionsException(f"{path} has state version {data.get('version')}, expected {STATE_VERSION}")
    return {TopicPartition(t, int(p)): int(o) for t, parts in data["offsets"].items() for p, o in parts.items()}


def save_state(path: str, offsets: dict[TopicPartition, int]) -> None:
    """Replace the state file atomically (a crash leaves the old or the new one, whole)."""
    nested: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        nested.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".export-state-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"version": STATE_VERSION, "offsets": nested}, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def run_export(spark, log_dirs: Sequence[str], output: str, topics: Sequence[str] = (),
               topic_pattern: Optional[str] = None, committed_only: bool = False,
               fail_on_data_loss: bool = True, state_file: Optional[str] = None,
               include_headers: bool = True, progress: str = "none",
               read_committed: bool = False) -> ExportResult:
    """Export what is new since the last run; returns what was exported."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    started = time.monotonic()
    local_output = output.removeprefix("file://")
    if "://" not in local_output and os.path.isdir(os.path.join(local_output, "_spark_metadata")):
        raise KafkaLogOptionsException(
            f"{output} is the output of a streaming export (_spark_metadata): the batch export needs an "
            f"output of its own")
    state_path = state_file or default_state_file(output)
    state = load_state(state_path)
    subscription = Subscription.create(topics=topics or None, pattern=topic_pattern)
    planner = LogDirPlanner(log_dirs)
    logs = planner.chosen_logs(KafkaLogOptions(paths=tuple(log_dirs), subscription=subscription,
                                               committed_only=committed_only,
                                               fail_on_data_loss=fail_on_data_loss,
                                               read_committed=read_committed))
    starting: dict[TopicPartition, int] = {}
    ending: dict[TopicPartition, int] = {}
    for tp, log in sorted(logs.items()):
        end = log.high_watermark if committed_only else log.log_end_offset
        if read_committed:
            # the committed tail: the next run starts where an open transaction begins
            end = max(log.log_start_offset, last_stable_offset(log, end))
        start = state.get(tp, EARLIEST_OFFSET)
        if start > end:
            # The partition is shorter than what was exported: truncated after an unclean
            # leader election, or the topic was deleted and made again.
            logger.warning("%s ends at %d but offsets up to %d were exported already; nothing to "
                           "export from it until it passes that offset", tp, end, start)
            start = end
        starting[tp] = start
        ending[tp] = end
    result = ExportResult(records=0, state_file=state_path)
    if not logs:
        logger.warning("No partition of %s matches %s", ", ".join(log_dirs), subscription.describe())
        return result
    df = (spark.read.format("kafka-log")
          .option("paths", json.dumps(list(log_dirs)))
          .option("startingOffsets", offsets_json(starting))
          .option("endingOffsets", offsets_json(ending))
          .option("includeHeaders", str(include_headers).lower())
          .option("failOnDataLoss", str(fail_on_data_loss).lower())
          .option("kafka.isolation.level", READ_COMMITTED if read_committed else READ_UNCOMMITTED)
          .option("assign", json.dumps({t: sorted(p.partition for p in logs if p.topic == t)
                                        for t in sorted({tp.topic for tp in logs})}))
          .load())
    observation = Observation("kafka-log-export")
    df = df.observe(observation, F.count(F.lit(1)).alias("records"))
    with progress_context(spark, "export", progress):
        df.write.mode("append").partitionBy("topic", "partition").parquet(output)
    result.records = int(observation.get["records"])
    new_state = dict(state)
    for tp in logs:
        first = starting[tp] if starting[tp] != EARLIEST_OFFSET else logs[tp].log_start_offset
        result.ranges[tp] = (first, ending[tp])
        new_state[tp] = ending[tp]
    save_state(state_path, new_state)
    result.seconds = time.monotonic() - started
    return result


@click.command(name="kafka-log-to-parquet")
@common_options
@click.option("--output", required=True, help="Parquet output directory (local, HDFS, S3...).")
@click.option("--state-file", default=None,
              help=f"Where exported offsets are kept (default: <output>/{STATE_FILE_NAME}).")
@click.option("--include-headers/--no-include-headers", default=True, show_default=True)
@click.option("--stream", is_flag=True, default=False,
              help="Run as a Structured Streaming query (Spark's checkpoint and file sink, no state file).")
@click.option("--checkpoint", default=None, help="The streaming query's checkpoint directory (with --stream).")
@click.option("--trigger", default=None,
              help="Micro-batch interval of a stream, e.g. 10s (default 10s; with --stream).")
@click.option("--available-now", is_flag=True, default=False,
              help="Read what is there now and stop (Trigger.AvailableNow; with --stream).")
@click.option("--max-offsets-per-trigger", type=click.IntRange(min=1), default=None,
              help="At most this many offsets per micro-batch (with --stream).")
@click.option("--bootstrap-server", default=None,
              help="Ask this cluster for high watermarks and leaders (with --stream).")
@click.option("--isolation-level", type=click.Choice([READ_UNCOMMITTED, READ_COMMITTED]),
              default=READ_UNCOMMITTED, show_default=True,
              help="read_committed: stop at each partition's last stable offset and leave out the records "
                   "of aborted transactions, as a read_committed consumer does.")
def main(log_dirs, topics, topic_pattern, committed_only, fail_on_data_loss, master, conf, progress,
         output, state_file, include_headers, stream, checkpoint, trigger, available_now,
         max_offsets_per_trigger, bootstrap_server, isolation_level) -> None:
    """Export topics of Kafka log dirs to Parquet, partitioned by topic and partition; each run
    exports only what is new since the previous one, or with --stream a streaming query does."""
    logging.basicConfig(level=logging.WARNING, format="[%(asctime)s] %(levelname)s %(message)s")
    stream_only = {"--checkpoint": checkpoint, "--trigger": trigger, "--available-now": available_now,
                   "--max-offsets-per-trigger": max_offsets_per_trigger, "--bootstrap-server": bootstrap_server}
    if not stream:
        given = [name for name, value in stream_only.items() if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} go with --stream")
    else:
        if not checkpoint:
            raise click.UsageError("--stream needs --checkpoint DIR, where the query keeps its offsets")
        if state_file:
            raise click.UsageError("--state-file is for the batch export; a stream keeps its offsets in --checkpoint")
        if trigger and available_now:
            raise click.UsageError("Give --trigger or --available-now, not both")
    spark = build_session("kafka-log-to-parquet", default_master(master), parse_conf(conf),
                          "none" if stream else progress)
    try:
        if stream:
            from kafka_py.spark.stream_export import StreamExport

            export = StreamExport(spark, log_dirs, output, checkpoint, topics, topic_pattern, fail_on_data_loss,
                                  include_headers, _spark_interval(trigger), available_now,
                                  max_offsets_per_trigger, bootstrap_server, isolation_level)
            streamed = export.run()
        else:
            result = run_export(spark, log_dirs, output, topics, topic_pattern, committed_only,
                                fail_on_data_loss, state_file, include_headers, progress,
                                read_committed=isolation_level == READ_COMMITTED)
    except Exception as e:  # noqa: BLE001 - a known problem becomes a one-line message
        message = user_error(e)
        if message is None:
            raise
        raise click.ClickException(message) from None
    finally:
        spark.stop()
    if stream:
        how = "stopped" if streamed.stopped_by_signal else "done"
        click.echo(f"Streaming export {how}: {streamed.records} records in {streamed.micro_batches} "
                   f"micro-batches to {output}; offsets in {checkpoint} (run again with it to resume)")
        return
    exported = sum(1 for a, b in result.ranges.values() if b > a)
    click.echo(f"Exported {result.records} records from {exported} of {len(result.ranges)} partitions "
               f"to {output} in {result.seconds:.1f} s; offsets saved in {result.state_file}")
    for tp in sorted(result.ranges):
        a, b = result.ranges[tp]
        if b > a:
            click.echo(f"  {tp}: offsets {a} to {b - 1}")


def _spark_interval(trigger: Optional[str]) -> Optional[str]:
    """``10s`` / ``500ms`` / ``2m`` as Spark's interval text, checked."""
    if trigger is None:
        return None
    from kafka_py.spark.options import parse_duration_ms

    try:
        ms = parse_duration_ms(trigger, "--trigger")
    except KafkaLogOptionsException as e:
        raise click.BadParameter(str(e)) from None
    return f"{ms} milliseconds"


if __name__ == "__main__":
    drop_script_dir_from_path(__file__)
    run_tool(main, "bin/kafka-log-to-parquet.sh", tool_logging=False)
