"""``spark.readStream.format("kafka-log")``: the Structured Streaming reader of the ``kafka-log`` source.

No Kafka counterpart: PySpark's DataSourceStreamReader (Spark 4.2 and later, with admission
control), doing what Spark's Kafka micro-batch source does, over log dirs. Spark calls it on
the driver, in one long-lived Python process per query:

* ``initialOffset``: where a query without a checkpoint starts (``startingOffsets``), resolved
  once; a start at "latest" is pinned as the first micro-batch's (empty) end;
* ``latestOffset(start, limit)``: where the next micro-batch ends: each partition's readable
  end (its high watermark), held back by ``minOffsetsPerTrigger`` / ``maxTriggerDelay`` and cut
  by ``maxOffsetsPerTrigger`` (kafka_py/spark/admission_control.py); with ``ReadAllAvailable``
  (Trigger.Once) everything available; after ``prepareForTriggerAvailableNow`` never past the
  ends found then;
* ``partitions(start, end)``: the SegmentSlices of the micro-batch
  (kafka_py/spark/stream_planner.py), which executors read as the batch reader does; or,
  reading through the brokers (no path given), its BrokerSlices
  (kafka_py/spark/broker_planner.BrokerStreamPlanner), fetched from each partition's leader.

Offsets are Spark's Kafka source JSON (``{"orders": {"0": 42}}``), the form in the checkpoint's
offset log. Spark writes a micro-batch's end offsets to the checkpoint before running it and
re-runs a batch whose commit was not recorded with the same offsets, so a query killed at any
point resumes where its sink's output stops; with Spark's file sink, which skips a batch it
has already committed, every record lands once.
"""
from __future__ import annotations

import logging
import time
from typing import Iterator, Optional

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.spark.admission_control import TriggerDelay, rate_limit
from kafka_py.spark.cluster_offsets import ClusterOffsets
from kafka_py.spark.options import KafkaLogOptions
from kafka_py.spark.partition_reader import read_input_partition
from kafka_py.spark.stream_planner import StreamPlanner, offsets_from_json, offsets_to_json

logger = logging.getLogger(__name__)

#: A ReadMaxRows that limits nothing.
_NO_MAXIMUM = 2**62


class KafkaLogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: KafkaLogOptions) -> None:
        self.options = options
        if options.through_brokers:
            from kafka_py.spark.broker_planner import BrokerStreamPlanner

            self.planner = BrokerStreamPlanner(options)
        else:
            cluster = ClusterOffsets(dict(options.kafka)) if options.bootstrap_servers else None
            self.planner = StreamPlanner(options, cluster)
        self.delay = (TriggerDelay(options.min_offsets_per_trigger, options.max_trigger_delay_ms)
                      if options.min_offsets_per_trigger else None)
        #: The ends found by prepareForTriggerAvailableNow; None under other triggers.
        self.available_now_ends: Optional[dict[TopicPartition, int]] = None
        self.last_available: Optional[dict[TopicPartition, int]] = None
        #: The offsets resolved from startingOffsets, once per query run (see initialOffset).
        self.initial: Optional[dict] = None
        #: The next latestOffset from ``initial`` returns it unchanged (see initialOffset).
        self.pin_initial = False

    # ------------------------------------------------------------------ offsets

    def initialOffset(self) -> dict:
        """Resolved once: Spark asks again when it runs the first micro-batch (its start is
        this, not a checkpointed offset), and "latest" found then would skip what arrived
        in between.

        Offsets resolved from "latest" must also survive a restart before the first
        micro-batch commits, which Spark's Kafka source does by writing them under the
        checkpoint; a Python source is not told where the checkpoint is. Instead the first
        micro-batch ends where it starts, so Spark writes these offsets to the checkpoint's
        offset log as its end before anything is read: the next micro-batch starts there,
        and a restarted query whose first micro-batch was not committed runs it again
        empty (from the latest of its restart, which is not before its end) and goes on from
        the pinned offsets."""
        if self.initial is None:
            offsets = self.planner.initial_offsets()
            self.initial = offsets_to_json(offsets)
            self.pin_initial = self.planner.resolves_latest()
            logger.info("Stream starts at %s", self.initial)
        return self.initial

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        if self.options.min_offsets_per_trigger:
            # The hold-back is done here (TriggerDelay, with maxTriggerDelay, which a Python
            # ReadMinRows cannot carry); any limit but ReadAllAvailable serves to tell a
            # micro-batch trigger from Trigger.Once, which must not be held back.
            return ReadMaxRows(_NO_MAXIMUM)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.available_now_ends = self.planner.available(self.planner.snapshot())
        logger.info("Trigger.AvailableNow: reading up to %s", offsets_to_json(self.available_now_ends))

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begins = offsets_from_json(start, "The checkpointed start offset")
        self.planner.check_checkpoint(begins)
        if self.pin_initial:
            self.pin_initial = False
            if start == self.initial:
                return start
        snapshot = self.planner.snapshot()
        for tp in self.planner.vanished(begins, snapshot):
            del begins[tp]
        restart = self.planner.went_back(begins, snapshot)
        available = self.planner.available(snapshot)
        if self.available_now_ends is not None:
            available = {tp: min(end, self.available_now_ends[tp])
                         for tp, end in available.items() if tp in self.available_now_ends}
        self.last_available = available
        # Where each partition's records really begin: a new partition at its start, and one
        # whose first offsets were deleted at its log start (that loss is reported when the
        # batch is planned), so the budget is spent on records that are there.
        effective = {tp: max(begins.get(tp, 0), snapshot.earliest(tp)) for tp in available}
        ends = dict(available)
        if not isinstance(limit, ReadAllAvailable):
            if (self.delay is not None and self.available_now_ends is None
                    and self.delay.hold_back(effective, available, time.monotonic() * 1000)):
                return offsets_to_json(begins)
            budget = limit.max_rows if isinstance(limit, ReadMaxRows) else self.options.max_offsets_per_trigger
            if budget:
                ends = rate_limit(budget, effective, available)
        # Never behind where the stream already is (a partition whose high watermark as seen
        # now is lower, say from a lagging checkpoint after a leader change).
        merged = dict(begins)
        for tp, end in ends.items():
            merged[tp] = max(end, begins.get(tp, end))
        # A partition read again from its start: this micro-batch ends where the next one
        # begins, at that start (Spark takes each micro-batch's start from the previous end).
        merged.update(restart)
        return offsets_to_json(merged)

    def reportLatestOffset(self) -> Optional[dict]:
        return offsets_to_json(self.last_available) if self.last_available is not None else None

    # ------------------------------------------------------------------ reading

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        begins = offsets_from_json(start, "The micro-batch's start offset")
        ends = offsets_from_json(end, "The micro-batch's end offset")
        self.planner.check_checkpoint(ends)
        if self.pin_initial and start == self.initial:
            # The first micro-batch of a query pinned at "latest", run again after a restart
            # (Spark starts it from initialOffset, resolved anew): empty by construction, even
            # when "latest" is now lower (the cluster not answering, a lagging checkpoint).
            return []
        return [InputPartition(s) for s in self.planner.plan(begins, ends)]

    def read(self, partition: InputPartition) -> Iterator:
        yield from read_input_partition(partition, self.options)

    def commit(self, end: dict) -> None:
        logger.debug("Micro-batch committed up to %s", end)

    def stop(self) -> None:
        if self.planner.cluster is not None:
            self.planner.cluster.close()
        close = getattr(self.planner, "close", None)
        if close is not None:
            close()
