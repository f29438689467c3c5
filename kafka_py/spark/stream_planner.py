"""Plans the micro-batches of a ``kafka-log`` stream: where it starts, how far each one reads, which bytes.

No Kafka counterpart: the driver side of Spark's Kafka micro-batch source (KafkaMicroBatchStream
and KafkaOffsetReader of spark-sql-kafka-0-10), answered from log dirs. Each call looks at the
files afresh (``StreamSnapshot``): topics created since the last micro-batch that the
subscription selects, and partitions added to a topic, are found there and read from their
start.

A stream reads only records below the high watermark, which no leader change can truncate:
the high watermark the cluster reports when ``kafka.bootstrap.servers`` is given, else the
highest one any replica wrote to its ``replication-offset-checkpoint`` (which lags the
broker's by up to ``replica.high.watermark.checkpoint.interval.ms``).

Offsets that should be read but are gone (retention or DeleteRecords removed them, a
partition or its directory disappeared, a replica was truncated) are data loss: with
``failOnDataLoss`` the micro-batch fails naming the partition and the offsets, without it the
stream skips ahead with a warning, as Spark's Kafka source does.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.spark.cluster_offsets import ClusterOffsets, PartitionState
from kafka_py.spark.log_dir_planner import LogDirPlanner, OffsetRange, PartitionLog
from kafka_py.spark.options import (
    EARLIEST,
    EARLIEST_OFFSET,
    LATEST,
    LATEST_OFFSET,
    KafkaLogOptions,
    KafkaLogOptionsException,
)
from kafka_py.spark.replicas import choose_replica, highest_checkpointed_high_watermark
from kafka_py.spark.segment_reader import KafkaLogDataLossException, SegmentSlice
from kafka_py.spark.transactions import last_stable_offset

logger = logging.getLogger(__name__)


def offsets_from_json(value: object, what: str) -> dict[TopicPartition, int]:
    """``{"orders": {"0": 42}}`` (Spark's Kafka source offset form) as {TopicPartition: offset}."""
    if not isinstance(value, dict):
        raise KafkaLogOptionsException(f"{what} {value!r} is not a kafka-log offset such as {{\"orders\": {{\"0\": 42}}}}")
    offsets: dict[TopicPartition, int] = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, dict):
            raise KafkaLogOptionsException(f"{what}: topic {topic!r} maps to {partitions!r}, not to partition offsets")
        for partition, offset in partitions.items():
            try:
                offsets[TopicPartition(str(topic), int(partition))] = int(offset)
            except (TypeError, ValueError):
                raise KafkaLogOptionsException(
                    f"{what}: {topic!r} partition {partition!r} offset {offset!r} is not a number") from None
    return offsets


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    nested: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        nested.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return nested


@dataclass
class StreamSnapshot:
    """The partitions the subscription selects as the files (and the cluster) show them now."""

    replicas: dict[TopicPartition, list[PartitionLog]]
    states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    #: kafka.isolation.level=read_committed: the readable end is the last stable offset
    read_committed: bool = False

    def leader(self, tp: TopicPartition) -> Optional[int]:
        state = self.states.get(tp)
        return state.leader if state is not None else None

    def earliest(self, tp: TopicPartition) -> int:
        return choose_replica(self.replicas[tp], self.leader(tp)).log_start_offset

    def readable_end(self, tp: TopicPartition) -> int:
        """The high watermark, cut to the longest replica in the files."""
        replicas = self.replicas[tp]
        longest = max(r.log_end_offset for r in replicas)
        state = self.states.get(tp)
        hw = state.high_watermark if state is not None else None
        if hw is None:
            hw = highest_checkpointed_high_watermark(replicas)
        earliest = self.earliest(tp)
        if hw is None:
            return earliest
        end = max(earliest, min(hw, longest))
        if self.read_committed:
            # the last stable offset below it, from the replica that will be read
            log = choose_replica(replicas, self.leader(tp), earliest, end)
            end = max(earliest, min(end, last_stable_offset(log, min(end, log.log_end_offset))))
        return end


class StreamChecks:
    """What the two stream planners (this one over log dirs, BrokerStreamPlanner through the
    brokers) check the same way: a checkpoint's partitions, and data loss."""

    options: KafkaLogOptions

    def check_checkpoint(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Offsets from a checkpoint must be of partitions this query's subscription selects."""
        foreign = sorted({str(tp) for tp in offsets if not self.options.subscription.includes(tp)})
        if foreign:
            raise KafkaLogOptionsException(
                f"The checkpoint holds offsets of {', '.join(foreign)}, which "
                f"{self.options.subscription.describe()} does not select: it was written by a query "
                f"reading other topics. Start this query with a new checkpointLocation, or with the "
                f"subscription (subscribe, subscribePattern or assign) its checkpoint was made with")

    def data_loss(self, message: str, skip_what: str) -> None:
        if self.options.fail_on_data_loss:
            raise KafkaLogDataLossException(
                f"{message}. Some data may have been lost; set the option failOnDataLoss to false to "
                f"skip {skip_what} and read on.")
        logger.warning("%s; skipping %s (failOnDataLoss=false)", message, skip_what)


class StreamPlanner(StreamChecks):
    def __init__(self, options: KafkaLogOptions, cluster: Optional[ClusterOffsets] = None) -> None:
        self.options = options
        self.cluster = cluster

    # ------------------------------------------------------------------ what is there

    def snapshot(self, only: Optional[set[TopicPartition]] = None) -> StreamSnapshot:
        planner = LogDirPlanner(self.options.paths)
        found = planner.replica_logs(self.options.subscription)
        if only is not None:
            found = {tp: rs for tp, rs in found.items() if tp in only}
        planner.describe([r for rs in found.values() for r in rs], fail_on_data_loss=False)
        replicas = {tp: alive for tp, rs in found.items() if (alive := [r for r in rs if not r.vanished])}
        states = self.cluster.fetch(replicas) if self.cluster is not None else {}
        return StreamSnapshot(replicas, states, self.options.read_committed)

    def available(self, snapshot: StreamSnapshot) -> dict[TopicPartition, int]:
        return {tp: snapshot.readable_end(tp) for tp in snapshot.replicas}

    # ------------------------------------------------------------------ offsets

    def initial_offsets(self) -> dict[TopicPartition, int]:
        snapshot = self.snapshot()
        spec = self.options.starting_offsets
        if isinstance(spec, dict):
            unknown = sorted(str(tp) for tp in spec if tp not in snapshot.replicas)
            if unknown:
                raise KafkaLogOptionsException(
                    f"startingOffsets names partitions that are not read ({', '.join(unknown)}): they are "
                    f"not in {', '.join(self.options.paths)} or not selected by "
                    f"{self.options.subscription.describe()}")
        offsets = {}
        for tp in snapshot.replicas:
            value = spec.get(tp, EARLIEST_OFFSET) if isinstance(spec, dict) else (
                EARLIEST_OFFSET if spec == EARLIEST else LATEST_OFFSET)
            if value == EARLIEST_OFFSET:
                offsets[tp] = snapshot.earliest(tp)
            elif value == LATEST_OFFSET:
                offsets[tp] = snapshot.readable_end(tp)
            else:
                offsets[tp] = value
        return offsets

    def resolves_latest(self) -> bool:
        """Whether startingOffsets starts some partition at "latest"."""
        spec = self.options.starting_offsets
        if isinstance(spec, dict):
            return LATEST_OFFSET in spec.values()
        return spec == LATEST

    def vanished(self, begins: Mapping[TopicPartition, int], snapshot: StreamSnapshot) -> list[TopicPartition]:
        """Partitions the stream was reading that are no longer in the log dirs (data loss)."""
        gone = sorted(tp for tp in begins if tp not in snapshot.replicas)
        for tp in gone:
            self.data_loss(f"Partition {tp} is no longer in {', '.join(self.options.paths)} (its topic was "
                           f"deleted, or its directory moved), so offsets from {begins[tp]} on can't be read",
                           "stop reading it")
        return gone

    def went_back(self, begins: Mapping[TopicPartition, int], snapshot: StreamSnapshot) -> dict[TopicPartition, int]:
        """Partitions whose logs now end before where the stream got to (truncated, or the
        topic deleted and created again): data loss; without failOnDataLoss the stream reads
        such a partition again from its start, returned here."""
        restart: dict[TopicPartition, int] = {}
        for tp, begin in begins.items():
            replicas = snapshot.replicas.get(tp)
            if not replicas:
                continue
            longest = max(r.log_end_offset for r in replicas)
            if longest < begin:
                self.data_loss(f"The log of {tp} now ends at offset {longest}, before offset {begin} that the "
                               f"stream had reached: it was truncated, or its topic deleted and created again",
                               "to its log start offset")
                restart[tp] = snapshot.earliest(tp)
        return restart

    # ------------------------------------------------------------------ one micro-batch

    def plan(self, begins: Mapping[TopicPartition, int], ends: Mapping[TopicPartition, int]) -> list[SegmentSlice]:
        """The slices that read ``[begins[tp], ends[tp])`` of every partition of ``ends``."""
        wanted = {tp for tp, end in ends.items() if end > begins.get(tp, -1)}
        if not wanted:
            return []
        snapshot = self.snapshot(only=wanted)
        logs: dict[TopicPartition, PartitionLog] = {}
        ranges: list[OffsetRange] = []
        for tp in sorted(wanted):
            until = ends[tp]
            begin = begins.get(tp)
            replicas = snapshot.replicas.get(tp)
            if not replicas:
                self.data_loss(f"Offsets {begins.get(tp, 0)} to {until - 1} of {tp} can't be read: the "
                               f"partition is no longer in {', '.join(self.options.paths)}", "them")
                continue
            if begin is None:
                # A partition that appeared after the previous micro-batch is read from its start.
                begin = snapshot.earliest(tp)
                if begin != 0:
                    self.data_loss(f"Added partition {tp} starts from offset {begin} instead of 0: offsets "
                                   f"0 to {begin - 1} were deleted before the stream saw them", "them")
            log = choose_replica(replicas, snapshot.leader(tp), begin, until)
            if begin < log.log_start_offset:
                self.data_loss(f"Offsets {begin} to {log.log_start_offset - 1} of {tp} were deleted (retention "
                               f"or DeleteRecords) before the stream read them; its log now starts at "
                               f"{log.log_start_offset} in {log.dir}", "to the log start offset")
                begin = log.log_start_offset
            if until > log.log_end_offset:
                self.data_loss(f"Offsets {max(begin, log.log_end_offset)} to {until - 1} of {tp} are in no "
                               f"replica's files any more (the longest, {log.dir}, ends at {log.log_end_offset}): "
                               f"truncated or deleted after the micro-batch was planned", "them")
                until = log.log_end_offset
            if begin < until:
                logs[tp] = log
                ranges.append(OffsetRange(tp, begin, until))
        planner = LogDirPlanner(self.options.paths)
        return planner.plan_ranges(logs, ranges, self.options.fail_on_data_loss,
                                   self.options.max_bytes_per_partition, self.options.min_partitions,
                                   self.options.read_committed)
