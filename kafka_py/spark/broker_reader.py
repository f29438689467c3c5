"""Reads one offset range of a partition through the brokers into Arrow record batches.

No Kafka counterpart: the executor side of the ``kafka-log`` source when it reads through the
brokers, what Spark's KafkaSourceRDD does with a cached KafkaDataConsumer, and what the Java
consumer's Fetcher does with each answer (Fetcher.java's CompletedFetch), minus the record
objects. A ``BrokerSlice`` names a topic-partition and the offsets ``[from_offset,
until_offset)``; ``read_broker_slice`` sends Fetch requests to the partition's leader
(kafka_py/spark/broker_client.py) and hands each answer's record batches, still views of the
answer's buffer, to the column-wise decoder (arrow_records.RecordColumnsBuilder) that the
log-dir read uses.

What a consumer does, done here:

* each batch's CRC is checked (the consumer's ``check.crcs``), and an answer cut short by the
  size limit is read to its last whole batch; messages of the old formats (magic 0 and 1,
  under a ``message.format.version`` below 0.11) are decoded one by one, as a consumer reads
  them;
* control batches (transaction markers) are never rows; under ``read_committed`` the
  transactional batches of the answer's aborted transactions are dropped as Fetcher does:
  a producer's batches are dropped from its aborted transaction's first offset until its
  ABORT marker;
* a leader that moved (NOT_LEADER_OR_FOLLOWER and the other leader errors, a connection
  lost) is asked for again through Metadata, and the fetch retried, until
  ``kafka.default.api.timeout.ms`` passes without progress;
* OFFSET_OUT_OF_RANGE is data loss, as in the log-dir read: the records between the offset
  and the log start offset were deleted (or the log ends before the range does, truncated by
  an unclean leader election). With ``failOnDataLoss`` the task fails naming the partition
  and the offsets; without it the read moves on with a warning.
"""
from __future__ import annotations

import logging
import struct
import time
from dataclasses import dataclass
from typing import Iterator, Optional

import pyarrow as pa

from kafka_py.clients.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.compression import CompressionType, decompress
from kafka_py.clients.common.record.control_record_type import ControlRecordType
from kafka_py.clients.common.record.default_record_batch import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CURRENT_MAGIC_VALUE,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    DefaultRecordBatch,
)
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyRecordBatch
from kafka_py.clients.common.record.default_record_batch import TimestampType
from kafka_py.spark.arrow_records import (
    HEADERS_ARROW_TYPE,
    TIMESTAMP_ARROW_TYPE,
    RecordColumnsBuilder,
    arrow_schema,
    decode_records,
)
from kafka_py.spark.broker_client import (
    LEADER_ERRORS,
    READ_COMMITTED_LEVEL,
    READ_UNCOMMITTED_LEVEL,
    BrokerClientConfig,
    KafkaLogBrokerException,
    client_for,
    drop_client,
)
from kafka_py.spark.segment_reader import ARROW_BATCH_BYTES, ARROW_BATCH_ROWS, KafkaLogDataLossException, ReadStats

logger = logging.getLogger(__name__)

_unpack_i32 = struct.Struct(">i").unpack_from


@dataclass(frozen=True)
class BrokerSlice:
    """One unit of parallel work of a read through the brokers: offsets of one partition."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int
    config: BrokerClientConfig
    read_committed: bool = False

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def read_broker_slice(broker_slice: BrokerSlice, include_headers: bool = False, fail_on_data_loss: bool = True,
                      stats: Optional[ReadStats] = None, arrow_batch_rows: int = ARROW_BATCH_ROWS,
                      arrow_batch_bytes: int = ARROW_BATCH_BYTES) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``broker_slice`` as Arrow record batches of ``arrow_schema``."""
    return _BrokerSliceReader(broker_slice, include_headers, fail_on_data_loss, stats or ReadStats(),
                              arrow_batch_rows, arrow_batch_bytes).read()


class _BrokerSliceReader:
    def __init__(self, broker_slice: BrokerSlice, include_headers: bool, fail_on_data_loss: bool, stats: ReadStats,
                 arrow_batch_rows: int, arrow_batch_bytes: int) -> None:
        self.slice = broker_slice
        self.tp = broker_slice.topic_partition
        self.include_headers = include_headers
        self.fail_on_data_loss = fail_on_data_loss
        self.stats = stats
        self.arrow_batch_rows = arrow_batch_rows
        self.arrow_batch_bytes = arrow_batch_bytes
        self.isolation = READ_COMMITTED_LEVEL if broker_slice.read_committed else READ_UNCOMMITTED_LEVEL
        self._broker: Optional[int] = None

    def _data_loss(self, message: str, skip_what: str) -> None:
        if self.fail_on_data_loss:
            raise KafkaLogDataLossException(
                f"{message}. Some data may have been lost; set the option failOnDataLoss to "
                f"false to skip {skip_what} and read on.")
        logger.warning("%s; skipping %s (failOnDataLoss=false)", message, skip_what)

    def _undecodable(self, position: int, size: int, reason: str) -> None:
        self.stats.skipped_batches += 1
        self._data_loss(f"Corrupt record batch of {self.tp} at offset {position} fetched from broker "
                        f"{self._broker}: {reason}", skip_what="the damaged batch")

    def read(self) -> Iterator[pa.RecordBatch]:
        s = self.slice
        if s.from_offset >= s.until_offset:
            return
        client = client_for(s.config)
        builder = RecordColumnsBuilder(s.topic, s.partition, self.include_headers, s.from_offset, s.until_offset,
                                       self._undecodable)
        offset = s.from_offset
        deadline = client.deadline()
        last_problem = ""
        try:
            while offset < s.until_offset:
                try:
                    self._broker, answer = client.fetch(self.tp, offset, self.isolation)
                except OSError as e:
                    # the leader died or moved: ask again who leads
                    last_problem = f"the fetch failed: {e}"
                    client.forget_leader(self.tp)
                    deadline = self._retry(client, deadline, offset, last_problem)
                    continue
                error = Errors.for_code(answer.error_code)
                if error is Errors.NONE:
                    before = offset
                    offset = yield from self._consume(answer, offset, builder)
                    if offset > before:
                        deadline = client.deadline()
                        continue
                    # Nothing at the offset: it is at or past what the leader lets be read (a new
                    # leader's high watermark can lag the old one's for a moment) or gone.
                    limit = answer.last_stable_offset if self.isolation == READ_COMMITTED_LEVEL \
                        and answer.last_stable_offset >= 0 else answer.high_watermark
                    last_problem = (f"broker {self._broker} has nothing to read at offset {offset} "
                                    f"({'last stable offset' if self.isolation else 'high watermark'} {limit})")
                    if 0 <= limit <= offset and time.monotonic() >= deadline:
                        self._data_loss(f"Offsets {offset} to {s.until_offset - 1} of {self.tp} were planned but the "
                                        f"partition's leader (broker {self._broker}) now ends at {limit}: the log was "
                                        f"truncated (an unclean leader election, or the topic deleted and created "
                                        f"again)", skip_what="them")
                        break
                    deadline = self._retry(client, deadline, offset, last_problem, refresh=False)
                elif error in LEADER_ERRORS:
                    last_problem = f"broker {self._broker} answered {error.name}"
                    client.forget_leader(self.tp)
                    deadline = self._retry(client, deadline, offset, last_problem)
                elif error is Errors.OFFSET_OUT_OF_RANGE:
                    offset = self._out_of_range(client, offset)
                else:
                    raise KafkaLogBrokerException(
                        f"Fetch of {self.tp} at offset {offset} from broker {self._broker} failed: {error.name}"
                        f" ({error.exception()})")
        except (KafkaLogBrokerException, OSError):
            drop_client(s.config)
            raise
        result = builder.build()
        if result is not None and result.num_rows:
            self.stats.records += result.num_rows
            yield result

    def _retry(self, client, deadline: float, offset: int, problem: str, refresh: bool = True) -> float:
        if time.monotonic() >= deadline:
            raise KafkaLogBrokerException(
                f"Could not fetch offset {offset} of {self.tp} from {client.config.describe()} within "
                f"kafka.default.api.timeout.ms={client.config.setting('default.api.timeout.ms')}: {problem}")
        logger.info("Fetch of %s at offset %d: %s; retrying", self.tp, offset, problem)
        client.backoff()
        if refresh:
            try:
                client.leader(self.tp, refresh=True)
            except (KafkaLogBrokerException, OSError) as e:
                logger.info("Metadata for %s not available yet: %s", self.tp, e)
        return deadline

    def _out_of_range(self, client, offset: int) -> int:
        from kafka_py.spark.broker_client import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

        s = self.slice
        earliest = client.list_offsets({self.tp: EARLIEST_TIMESTAMP}, self.isolation)[self.tp][0]
        if offset < earliest:
            self._data_loss(f"Offsets {offset} to {min(earliest, s.until_offset) - 1} of {self.tp} were deleted "
                            f"(retention or DeleteRecords) before they were read; the log now starts at {earliest}",
                            skip_what="them")
            return min(earliest, s.until_offset)
        latest = client.list_offsets({self.tp: LATEST_TIMESTAMP}, self.isolation)[self.tp][0]
        self._data_loss(f"Offsets {offset} to {s.until_offset - 1} of {self.tp} were planned but its log now ends at "
                        f"{latest}: it was truncated (an unclean leader election, or the topic deleted and created "
                        f"again)", skip_what="them")
        return s.until_offset

    def _legacy(self, view: memoryview, offset: int) -> tuple[int, Optional[pa.RecordBatch]]:
        """The rows of one magic 0 or 1 log entry at or after ``offset``; the next offset."""
        s = self.slice
        entry = LegacyRecordBatch(view)
        try:
            entry.ensure_valid()
            records = entry.records()
            next_offset = entry.next_offset
        except Exception as e:  # noqa: BLE001 - any failure to parse is a damaged entry
            base = struct.unpack_from(">q", view, 0)[0]
            self.stats.skipped_batches += 1
            self._data_loss(f"Corrupt message of {self.tp} at offset {base} from broker {self._broker}: {e}",
                            skip_what="the damaged message")
            return max(offset, base + 1), None
        self.stats.batches += 1
        wanted = [r for r in records if offset <= r.offset < s.until_offset]
        if entry.magic == 0:
            timestamp_type, log_append_time = TimestampType.NO_TIMESTAMP_TYPE, -1
        else:
            timestamp_type = entry.timestamp_type
            log_append_time = entry.max_timestamp if timestamp_type == TimestampType.LOG_APPEND_TIME else None
        rows = _legacy_rows(wanted, s.topic, s.partition, int(timestamp_type), log_append_time,
                            self.include_headers) if wanted else None
        return max(offset, next_offset), rows

    def _consume(self, answer, offset: int, builder: RecordColumnsBuilder):
        """Add the whole batches of one answer from ``offset`` on; the offset to fetch next."""
        s = self.slice
        records = answer.records
        if not records:
            return offset
        stats = self.stats
        stats.bytes_read += len(records)
        read_committed = self.isolation == READ_COMMITTED_LEVEL
        aborted = sorted(answer.aborted_transactions or (), key=lambda a: a[1]) if read_committed else ()
        aborted_at = 0
        aborted_producers: set[int] = set()
        pos = 0
        size_total = len(records)
        until = s.until_offset
        while pos + RECORD_BATCH_OVERHEAD <= size_total:
            length = _unpack_i32(records, pos + 8)[0]
            size = LOG_OVERHEAD + length
            if pos + size > size_total:
                break  # cut short by the answer's size limit: fetched again next time
            magic = records[pos + MAGIC_OFFSET]
            view = records[pos:pos + size]
            pos += size
            if magic in (0, 1):
                # a message of an old format (message.format.version below 0.11), or a wrapper
                # of compressed ones: rare enough to decode message by message
                pending = builder.build()
                if pending is not None and pending.num_rows:
                    stats.records += pending.num_rows
                    yield pending
                offset, legacy = self._legacy(view, offset)
                if legacy is not None and legacy.num_rows:
                    stats.records += legacy.num_rows
                    yield legacy
                if offset >= until:
                    return until
                continue
            if magic != CURRENT_MAGIC_VALUE or size < RECORD_BATCH_OVERHEAD:
                base = struct.unpack_from(">q", view, 0)[0]
                self._data_loss(f"A batch of {self.tp} at offset {base} from broker {self._broker} has magic "
                                f"{magic}, which no Kafka message format has", skip_what="it")
                stats.skipped_batches += 1
                offset = max(offset, base + 1)
                continue
            batch = DefaultRecordBatch(view)
            (base_offset, _length, _epoch, _magic, _crc, attributes, last_offset_delta,
             base_ts, max_ts, producer_id, _pepoch, _seq, count) = batch.header()
            next_offset = base_offset + last_offset_delta + 1
            if base_offset >= until:
                return until
            if next_offset <= offset:
                continue
            stats.batches += 1
            if not batch.is_valid():
                stats.skipped_batches += 1
                self._data_loss(f"Corrupt record batch of {self.tp} at offset {base_offset} from broker "
                                f"{self._broker}: {_describe_invalid(batch)}", skip_what="the damaged batch")
                offset = next_offset
                continue
            offset = next_offset
            if read_committed and producer_id >= 0:
                while aborted_at < len(aborted) and aborted[aborted_at][1] <= next_offset - 1:
                    aborted_producers.add(aborted[aborted_at][0])
                    aborted_at += 1
                if attributes & CONTROL_FLAG_MASK:
                    if _is_abort_marker(batch, base_offset, count):
                        aborted_producers.discard(producer_id)
                    continue
                if attributes & TRANSACTIONAL_FLAG_MASK and producer_id in aborted_producers:
                    continue
            if attributes & CONTROL_FLAG_MASK or count == 0:
                continue
            try:
                codec = attributes & COMPRESSION_CODEC_MASK
                body = view[RECORD_BATCH_OVERHEAD:]
                if codec:
                    body = decompress(CompressionType.for_id(codec), body)
                builder.add_batch(base_offset, size, body, count, base_offset, last_offset_delta, base_ts,
                                  max_ts if attributes & TIMESTAMP_TYPE_MASK else None)
            except (CorruptRecordException, UnsupportedCompressionTypeException) as e:
                self._undecodable(base_offset, size, str(e))
                continue
            if builder.record_count >= self.arrow_batch_rows or builder.body_bytes >= self.arrow_batch_bytes:
                result = builder.build()
                if result is not None and result.num_rows:
                    stats.records += result.num_rows
                    yield result
        return min(offset, until) if offset >= until else offset


def _legacy_rows(records: list, topic: str, partition: int, timestamp_type: int, log_append_time: Optional[int],
                 include_headers: bool) -> pa.RecordBatch:
    """Rows of magic 0 and 1 messages: no headers (null), the timestamp as the consumer gives
    it (-1 with type -1 for magic 0, which has none)."""
    n = len(records)
    timestamps = [log_append_time if log_append_time is not None else r.timestamp for r in records]
    arrays = [
        pa.array([r.key for r in records], pa.binary()),
        pa.array([r.value for r in records], pa.binary()),
        pa.array([topic] * n, pa.string()),
        pa.array([partition] * n, pa.int32()),
        pa.array([r.offset for r in records], pa.int64()),
        pa.array([t * 1000 for t in timestamps], pa.int64()).cast(TIMESTAMP_ARROW_TYPE),
        pa.array([timestamp_type] * n, pa.int32()),
    ]
    if include_headers:
        arrays.append(pa.nulls(n, HEADERS_ARROW_TYPE))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(include_headers))


def _is_abort_marker(batch: DefaultRecordBatch, base_offset: int, count: int) -> bool:
    keys: list = []
    try:
        decode_records(bytes(batch.buffer[RECORD_BATCH_OVERHEAD:]), min(count, 1), base_offset, 0, None,
                       keys, [], [], [], None)
        return bool(keys) and ControlRecordType.parse(keys[0]) is ControlRecordType.ABORT
    except Exception:  # noqa: BLE001 - a marker that does not parse is no ABORT marker
        return False


def _describe_invalid(batch: DefaultRecordBatch) -> str:
    try:
        batch.ensure_valid()
    except Exception as e:  # noqa: BLE001 - any reason the batch failed is the message
        return str(e)
    return "the batch failed its checks"
