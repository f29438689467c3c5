"""Exports topics of Kafka log dirs to Parquet as a Structured Streaming query.

No Kafka counterpart. ``bin/kafka-log-to-parquet.sh --stream --checkpoint DIR`` runs this
instead of the incremental batch export (kafka_py/spark/export_job.py): a ``readStream`` of
the ``kafka-log`` source written by Spark's file sink to
``<output>/topic=<t>/partition=<p>/``, with the same columns. Progress lives in Spark's
checkpoint (the offsets of each micro-batch, written before it runs) and in the file sink's
own log (``<output>/_spark_metadata``, the files of each committed micro-batch), so a query
killed at any point and started again with the same checkpoint re-runs the micro-batch it was
in with the same offsets, and the sink, which skips a micro-batch it has committed, keeps
each record exactly once. Readers of the output must go through the sink's log
(``spark.read.parquet(output)`` does), which leaves out the files of an interrupted
micro-batch.

Triggers: a processing-time interval (``--trigger 10s``, the default) reads on until the
query is stopped (SIGINT or SIGTERM, Ctrl-C on a terminal, stops it between micro-batches);
``--available-now`` reads what is there when it starts, in as many micro-batches as
``--max-offsets-per-trigger`` makes of it, and stops.
"""
from __future__ import annotations

import logging
import os
import signal
import threading
from dataclasses import dataclass
from typing import Optional, Sequence

from kafka_py.spark.job_support import STATE_FILE_NAME
from kafka_py.spark.options import KafkaLogOptionsException

logger = logging.getLogger(__name__)

#: The file sink's log at the top of its output.
SINK_METADATA_DIR = "_spark_metadata"
DEFAULT_TRIGGER = "10 seconds"


@dataclass
class StreamExportResult:
    micro_batches: int
    records: int
    stopped_by_signal: bool


class StreamExport:
    """One streaming export query: started, run until it ends or a signal stops it."""

    def __init__(self, spark, log_dirs: Sequence[str], output: str, checkpoint: str,
                 topics: Sequence[str] = (), topic_pattern: Optional[str] = None,
                 fail_on_data_loss: bool = True, include_headers: bool = True,
                 trigger: Optional[str] = None, available_now: bool = False,
                 max_offsets_per_trigger: Optional[int] = None,
                 bootstrap_servers: Optional[str] = None, isolation_level: str = "read_uncommitted") -> None:
        if trigger and available_now:
            raise KafkaLogOptionsException("Give --trigger or --available-now, not both")
        self.spark = spark
        self.log_dirs = list(log_dirs)
        self.output = output
        self.checkpoint = checkpoint
        self.topics = list(topics)
        self.topic_pattern = topic_pattern
        self.fail_on_data_loss = fail_on_data_loss
        self.include_headers = include_headers
        self.trigger = trigger or DEFAULT_TRIGGER
        self.available_now = available_now
        self.max_offsets_per_trigger = max_offsets_per_trigger
        self.bootstrap_servers = bootstrap_servers
        self.isolation_level = isolation_level
        self._stop_requested = threading.Event()
        self.query = None

    def _check_output(self) -> None:
        local = self.output.removeprefix("file://")
        if "://" not in local and os.path.exists(os.path.join(local, STATE_FILE_NAME)):
            raise KafkaLogOptionsException(
                f"{self.output} holds a batch export ({STATE_FILE_NAME}): a streaming export needs an "
                f"output of its own, since readers of a file sink's output see only the files in its "
                f"{SINK_METADATA_DIR} log")

    def start(self):
        import json

        self._check_output()
        reader = (self.spark.readStream.format("kafka-log")
                  .option("paths", json.dumps(self.log_dirs))
                  .option("includeHeaders", str(self.include_headers).lower())
                  .option("failOnDataLoss", str(self.fail_on_data_loss).lower()))
        if self.topics:
            reader = reader.option("subscribe", ",".join(self.topics))
        elif self.topic_pattern:
            reader = reader.option("subscribePattern", self.topic_pattern)
        if self.max_offsets_per_trigger:
            reader = reader.option("maxOffsetsPerTrigger", str(self.max_offsets_per_trigger))
        if self.bootstrap_servers:
            reader = reader.option("kafka.bootstrap.servers", self.bootstrap_servers)
        reader = reader.option("kafka.isolation.level", self.isolation_level)
        df = reader.load()
        columns = ["key", "value", "offset", "timestamp", "timestampType"]
        if self.include_headers:
            columns.append("headers")
        writer = (df.select(*columns, "topic", "partition").writeStream
                  .format("parquet")
                  .partitionBy("topic", "partition")
                  .option("checkpointLocation", self.checkpoint)
                  .queryName("kafka-log-to-parquet"))
        writer = writer.trigger(availableNow=True) if self.available_now else writer.trigger(processingTime=self.trigger)
        self.query = writer.start(self.output)
        return self.query

    def request_stop(self, *_args) -> None:
        """Ask the query to stop (safe from a signal handler: the stop happens in ``run``)."""
        self._stop_requested.set()

    def run(self, handle_signals: bool = True) -> StreamExportResult:
        """Start, then wait until the query ends by itself or a stop is requested."""
        previous = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, self.request_stop)
        try:
            query = self.start()
            while query.isActive and not self._stop_requested.is_set():
                # Short waits so that a signal is acted on within a fraction of a second.
                query.awaitTermination(0.5)
            stopped = self._stop_requested.is_set()
            if stopped and query.isActive:
                # Stopping between micro-batches; a micro-batch cut short is re-run on restart.
                query.stop()
            if query.exception() is not None and not stopped:
                raise query.exception()
            return self._result(query, stopped)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    @staticmethod
    def _result(query, stopped: bool) -> StreamExportResult:
        progress = query.recentProgress or []
        batches = len({p["batchId"] for p in progress})
        records = sum(p.get("numInputRows", 0) for p in progress)
        return StreamExportResult(batches, records, stopped)
