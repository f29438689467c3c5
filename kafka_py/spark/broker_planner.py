"""Plans a ``kafka-log`` read through the brokers: partitions from Metadata, offsets from ListOffsets.

No Kafka counterpart: the driver side of Spark's Kafka source (KafkaOffsetReaderAdmin,
KafkaOffsetRangeCalculator and, for streams, KafkaMicroBatchStream), answered by the cluster
instead of by log dirs:

* the subscription (``subscribe``, ``subscribePattern``, ``assign``, or every topic but the
  internal ones) resolved against Metadata; a named topic or an assigned partition the
  cluster does not have is an error that names it;
* ``earliest`` is each partition's log start offset and ``latest`` its high watermark, or its
  last stable offset under ``read_committed`` (ListOffsets at the read's isolation level, as
  Spark's consumer asks); offsets by timestamp are ListOffsets of the timestamp;
* each partition's range is one ``BrokerSlice``, or several with ``minPartitions``, split in
  proportion to their sizes as KafkaOffsetRangeCalculator splits them.

``BrokerStreamPlanner`` has the interface of stream_planner.StreamPlanner, so the stream
reader (kafka_py/spark/stream_reader.py) plans micro-batches the same way whichever the
path: each micro-batch asks the cluster afresh, so topics created since the last one that
the subscription selects, and partitions added to a topic, are read from their start.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.spark.broker_client import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    READ_COMMITTED_LEVEL,
    READ_UNCOMMITTED_LEVEL,
    BrokerClient,
    BrokerClientConfig,
    KafkaLogClientConfigException,
)
from kafka_py.spark.broker_reader import BrokerSlice
from kafka_py.spark.options import (
    EARLIEST,
    LATEST,
    LATEST_OFFSET,
    KafkaLogOptions,
    KafkaLogOptionsException,
    resolve_offset,
)
from kafka_py.spark.segment_reader import KafkaLogDataLossException
from kafka_py.spark.stream_planner import StreamChecks

logger = logging.getLogger(__name__)


def client_config(options: KafkaLogOptions) -> BrokerClientConfig:
    try:
        return BrokerClientConfig.create(dict(options.kafka))
    except KafkaLogClientConfigException as e:
        raise KafkaLogOptionsException(str(e)) from None


class BrokerPlanner:
    """Partitions and offset ranges of a read through the brokers (driver side)."""

    def __init__(self, options: KafkaLogOptions, client: Optional[BrokerClient] = None) -> None:
        self.options = options
        self.config = client_config(options)
        self.client = client or BrokerClient(self.config)
        self.isolation = READ_COMMITTED_LEVEL if options.read_committed else READ_UNCOMMITTED_LEVEL

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------------ partitions

    def partitions(self, strict: bool = True) -> list[TopicPartition]:
        """The partitions the subscription selects, as Metadata has them now. With ``strict``
        a topic named in ``subscribe`` or ``assign`` that the cluster lacks, or an assigned
        partition it lacks, is an error (a stream asks with ``strict`` only when it starts)."""
        subscription = self.options.subscription
        try:
            if subscription.assigned is not None:
                named = sorted({tp.topic for tp in subscription.assigned})
            elif subscription.topics is not None:
                named = sorted(subscription.topics)
            else:
                named = None
            topics = self.client.metadata(named)
        except KafkaLogClientConfigException as e:
            raise KafkaLogOptionsException(str(e)) from None
        found: list[TopicPartition] = []
        missing: list[str] = []
        for name, info in sorted(topics.items()):
            error = Errors.for_code(info.error_code)
            if error is Errors.UNKNOWN_TOPIC_OR_PARTITION or (error is Errors.NONE and not info.partitions):
                missing.append(name)
                continue
            if error is not Errors.NONE:
                if named is None and error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    continue  # a pattern reads the topics it may read
                raise KafkaLogOptionsException(
                    f"The cluster of {self.config.describe()} refused topic {name}: {error.name} ({error.exception()})")
            for index in sorted(info.partitions):
                tp = TopicPartition(name, index)
                if subscription.includes(tp):
                    found.append(tp)
        if named is not None:
            missing.extend(t for t in named if t not in topics)
        if missing and strict:
            raise KafkaLogOptionsException(
                f"Topic(s) {', '.join(sorted(set(missing)))} named by {_option_of(self.options)} do not exist in the "
                f"cluster of {self.config.describe()}")
        if subscription.assigned is not None and strict:
            absent = sorted(subscription.assigned - set(found))
            if absent:
                detail = "; ".join(f"{t} has partitions {_ranges(list(topics[t].partitions))}"
                                   for t in sorted({tp.topic for tp in absent}) if t in topics)
                raise KafkaLogOptionsException(
                    f"Option assign names partition(s) that do not exist: {', '.join(str(tp) for tp in absent)}"
                    + (f" ({detail})" if detail else ""))
        return found

    # ------------------------------------------------------------------ offsets

    def earliest_and_latest(self, tps: list[TopicPartition], skip_leaderless: bool = False
                            ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
        """Log start offset and latest offset (the high watermark, or the last stable offset
        under read_committed) of each partition; with ``skip_leaderless`` only of those that
        have a leader."""
        if not tps:
            return {}, {}
        earliest = self.client.list_offsets({tp: EARLIEST_TIMESTAMP for tp in tps}, self.isolation, skip_leaderless)
        latest = self.client.list_offsets({tp: LATEST_TIMESTAMP for tp in tps}, self.isolation, skip_leaderless)
        both = [tp for tp in tps if tp in earliest and tp in latest]
        return ({tp: earliest[tp][0] for tp in both}, {tp: max(earliest[tp][0], latest[tp][0]) for tp in both})

    def by_timestamp(self, spec, tps: list[TopicPartition], name: str) -> dict[TopicPartition, Optional[int]]:
        """The offset of the first record at or after each timestamp; None where there is none."""
        if spec is None:
            return {}
        if isinstance(spec, int):
            wanted = {tp: spec for tp in tps}
        else:
            unknown = sorted(str(tp) for tp in spec if tp not in set(tps))
            if unknown:
                raise KafkaLogOptionsException(
                    f"{name} names partitions that are not read ({', '.join(unknown)}): they are not in the "
                    f"cluster or not selected by {self.options.subscription.describe()}")
            wanted = dict(spec)
        found = self.client.list_offsets(wanted, self.isolation) if wanted else {}
        return {tp: (offset if offset >= 0 else None) for tp, (offset, _ts) in found.items()}

    def check_named(self, spec, name: str, tps: list[TopicPartition]) -> None:
        if isinstance(spec, dict):
            unknown = sorted(str(tp) for tp in spec if tp not in set(tps))
            if unknown:
                raise KafkaLogOptionsException(
                    f"{name} names partitions that are not read ({', '.join(unknown)}): they are not in the "
                    f"cluster or not selected by {self.options.subscription.describe()}")

    def starting_offsets(self, tps: list[TopicPartition], earliest: Mapping[TopicPartition, int],
                         latest: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """startingTimestamp, else startingOffsetsByTimestamp, else startingOffsets (Spark's order)."""
        options = self.options
        result: dict[TopicPartition, int] = {}
        by_time = self.by_timestamp(options.starting_timestamps, tps, "startingOffsetsByTimestamp")
        self.check_named(options.starting_offsets, "startingOffsets", tps)
        for tp in tps:
            if tp in by_time:
                offset = by_time[tp]
                if offset is None:
                    if options.starting_timestamp_strategy == "latest":
                        offset = latest[tp]
                    else:
                        raise KafkaLogOptionsException(
                            f"No record of {tp} has the starting timestamp {_timestamp_of(options.starting_timestamps, tp)} "
                            f"or a later one; set startingOffsetsByTimestampStrategy to latest to start such "
                            f"partitions at their latest offset")
                result[tp] = offset
                continue
            result[tp] = resolve_offset(options.starting_offsets, tp, earliest[tp], latest[tp], EARLIEST)
        return result

    def ending_offsets(self, tps: list[TopicPartition], earliest: Mapping[TopicPartition, int],
                       latest: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        options = self.options
        by_time = self.by_timestamp(options.ending_timestamps, tps, "endingOffsetsByTimestamp")
        self.check_named(options.ending_offsets, "endingOffsets", tps)
        result = {}
        for tp in tps:
            if tp in by_time:
                # no record that late: to the end, as Spark's source
                result[tp] = latest[tp] if by_time[tp] is None else by_time[tp]
            else:
                result[tp] = resolve_offset(options.ending_offsets, tp, earliest[tp], latest[tp], LATEST)
        return result

    # ------------------------------------------------------------------ a batch read

    def plan(self) -> list[BrokerSlice]:
        options = self.options
        tps = self.partitions()
        earliest, latest = self.earliest_and_latest(tps)
        starts = self.starting_offsets(tps, earliest, latest)
        ends = self.ending_offsets(tps, earliest, latest)
        ranges = []
        what = "last stable offset" if options.read_committed else "high watermark"
        for tp in tps:
            start, until = starts[tp], ends[tp]
            if max(start, until) > latest[tp]:
                # past the end ListOffsets gave: ask a Fetch answer for the end as well
                fetched = self.client.fetched_end(tp, latest[tp], self.isolation)
                if fetched is not None and fetched > latest[tp]:
                    latest[tp] = fetched
            if start > until:
                raise KafkaLogOptionsException(
                    f"Beginning offset {start} is after the ending offset {until} for topic {tp.topic} "
                    f"partition {tp.partition}")
            if start < earliest[tp]:
                message = (f"Starting offset {start} of {tp} is below its log start offset {earliest[tp]}: offsets "
                           f"{start} to {earliest[tp] - 1} are no longer in the cluster")
                if options.fail_on_data_loss:
                    raise KafkaLogDataLossException(
                        message + ". Some data may have been lost; set the option failOnDataLoss to false "
                        "to read from the log start offset instead.")
                logger.warning("%s; reading from %d (failOnDataLoss=false)", message, earliest[tp])
                start = earliest[tp]
            if start > latest[tp]:
                # Spark's consumer meets OFFSET_OUT_OF_RANGE there: data loss, as below the start
                message = (f"Starting offset {start} of {tp} is beyond its {what} {latest[tp]}: offsets from "
                           f"{latest[tp]} to {until - 1} are not in the cluster")
                if options.fail_on_data_loss:
                    raise KafkaLogDataLossException(
                        message + ". Some data may have been lost; set the option failOnDataLoss to false "
                        "to skip them.")
                logger.warning("%s; skipping them (failOnDataLoss=false)", message)
                start = until = latest[tp]
            if until > latest[tp]:
                logger.warning("Ending offset %d of %s is beyond its %s %d; reading to %d", until, tp, what,
                               latest[tp], latest[tp])
                until = latest[tp]
            ranges.append((tp, start, max(start, until)))
        return self.slices(ranges)

    def slices(self, ranges: list[tuple[TopicPartition, int, int]]) -> list[BrokerSlice]:
        """One slice per non-empty range, split further to reach ``minPartitions``."""
        ranges = [r for r in ranges if r[2] > r[1]]
        total = sum(until - start for _tp, start, until in ranges)
        wanted = self.options.min_partitions
        result = []
        for tp, start, until in ranges:
            parts = 1
            if wanted and wanted > len(ranges) and total:
                # rounded half up, as KafkaOffsetRangeCalculator's Math.round
                parts = max(1, int((until - start) * wanted / total + 0.5))
            size = until - start
            for i in range(parts):
                lo = start + size * i // parts
                hi = start + size * (i + 1) // parts
                if hi > lo:
                    result.append(BrokerSlice(tp.topic, tp.partition, lo, hi, self.config, self.options.read_committed))
        return result


def _timestamp_of(spec, tp: TopicPartition) -> int:
    return spec if isinstance(spec, int) else spec[tp]


def _ranges(partitions: list[int]) -> str:
    if not partitions:
        return "none"
    partitions = sorted(partitions)
    if partitions == list(range(partitions[0], partitions[-1] + 1)):
        return f"{partitions[0]} to {partitions[-1]}" if len(partitions) > 1 else str(partitions[0])
    return ", ".join(map(str, partitions))


def _option_of(options: KafkaLogOptions) -> str:
    return "assign" if options.subscription.assigned is not None else "subscribe"


# ---------------------------------------------------------------------------- streams

@dataclass
class BrokerSnapshot:
    """The partitions the subscription selects and their offsets, as the cluster said them
    (the broker path's stream_planner.StreamSnapshot)."""

    earliest_offsets: dict[TopicPartition, int]
    latest_offsets: dict[TopicPartition, int]
    replicas: dict[TopicPartition, bool] = field(default_factory=dict)

    def earliest(self, tp: TopicPartition) -> int:
        return self.earliest_offsets[tp]

    def readable_end(self, tp: TopicPartition) -> int:
        return self.latest_offsets[tp]


class BrokerStreamPlanner(StreamChecks):
    """stream_planner.StreamPlanner's interface over the cluster: micro-batches of a stream
    read through the brokers."""

    def __init__(self, options: KafkaLogOptions) -> None:
        self.options = options
        self.planner = BrokerPlanner(options)
        self.cluster = None  # the log-dir planner's ClusterOffsets; the stream reader closes it
        self._started = False
        #: partitions whose latest offset was found below where the stream had got to
        self._behind: set[TopicPartition] = set()

    def close(self) -> None:
        self.planner.close()

    def snapshot(self, only: Optional[set[TopicPartition]] = None) -> BrokerSnapshot:
        # A stream waits for a subscribed topic that does not exist yet, as Spark's does; an
        # assigned partition that does not exist is an error when the query starts.
        tps = self.planner.partitions(strict=not self._started and self.options.subscription.assigned is not None)
        self._started = True
        if only is not None:
            tps = [tp for tp in tps if tp in only]
        # A partition without a leader (its only replica's broker down, an election under way)
        # is still there but has nothing to offer now: it waits, and the others go on.
        earliest, latest = self.planner.earliest_and_latest(tps, skip_leaderless=True)
        return BrokerSnapshot(earliest, latest, {tp: tp in earliest for tp in tps})

    def available(self, snapshot: BrokerSnapshot) -> dict[TopicPartition, int]:
        return dict(snapshot.latest_offsets)

    def initial_offsets(self) -> dict[TopicPartition, int]:
        snapshot = self.snapshot()
        tps = sorted(snapshot.earliest_offsets)
        return self.planner.starting_offsets(tps, snapshot.earliest_offsets, snapshot.latest_offsets)

    def resolves_latest(self) -> bool:
        spec = self.options.starting_offsets
        if isinstance(spec, dict):
            return LATEST_OFFSET in spec.values()
        return spec == LATEST or (self.options.starting_timestamps is not None
                                  and self.options.starting_timestamp_strategy == "latest")

    def vanished(self, begins: Mapping[TopicPartition, int], snapshot: BrokerSnapshot) -> list[TopicPartition]:
        gone = sorted(tp for tp in begins if tp not in snapshot.replicas)
        for tp in gone:
            self.data_loss(f"Partition {tp} is no longer in the cluster of {self.planner.config.describe()} (its topic "
                           f"was deleted), so offsets from {begins[tp]} on can't be read", "stop reading it")
        return gone

    def went_back(self, begins: Mapping[TopicPartition, int], snapshot: BrokerSnapshot) -> dict[TopicPartition, int]:
        """A partition whose latest offset is below where the stream got to, twice running:
        truncated, or its topic deleted and created again (a new leader's high watermark can
        lag the old one's for a moment after an election, which the second look rules out)."""
        restart: dict[TopicPartition, int] = {}
        behind = set()
        for tp, begin in begins.items():
            if tp not in snapshot.latest_offsets:
                continue
            end = snapshot.latest_offsets[tp]
            if end >= begin:
                continue
            behind.add(tp)
            if tp in self._behind:
                self.data_loss(f"The log of {tp} now ends at offset {end}, before offset {begin} that the stream had "
                               f"reached: it was truncated, or its topic deleted and created again",
                               "to its log start offset")
                restart[tp] = snapshot.earliest(tp)
                behind.discard(tp)
        self._behind = behind
        return restart

    def plan(self, begins: Mapping[TopicPartition, int], ends: Mapping[TopicPartition, int]) -> list[BrokerSlice]:
        wanted = {tp for tp, end in ends.items() if end > begins.get(tp, -1)}
        if not wanted:
            return []
        snapshot = self.snapshot(only=wanted)
        ranges = []
        for tp in sorted(wanted):
            until = ends[tp]
            if tp not in snapshot.replicas:
                self.data_loss(f"Offsets {begins.get(tp, 0)} to {until - 1} of {tp} can't be read: the partition is "
                               f"no longer in the cluster", "them")
                continue
            begin = begins.get(tp)
            if tp not in snapshot.earliest_offsets:
                # leaderless now: its executor waits for a leader (kafka.default.api.timeout.ms)
                if begin is not None and begin < until:
                    ranges.append((tp, begin, until))
                continue
            earliest = snapshot.earliest(tp)
            if begin is None:
                begin = earliest
                if begin != 0:
                    self.data_loss(f"Added partition {tp} starts from offset {begin} instead of 0: offsets 0 to "
                                   f"{begin - 1} were deleted before the stream saw them", "them")
            if begin < earliest:
                self.data_loss(f"Offsets {begin} to {earliest - 1} of {tp} were deleted (retention or DeleteRecords) "
                               f"before the stream read them; its log now starts at {earliest}",
                               "to the log start offset")
                begin = earliest
            if begin < until:
                ranges.append((tp, begin, until))
        return self.planner.slices(ranges)
