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
  size limit is read to its last whole batch;
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

from kafka_py.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_py.common.topic_partition import TopicPartition
from kafka_py.protocol.errors import Errors
from kafka_py.record.compression import CompressionType, decompress
from kafka_py.record.control_record_type import ControlRecordType
from kafka_py.record.default_record_batch import (
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
from kafka_py.spark.arrow_records import RecordColumnsBuilder, decode_records
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
            if magic != CURRENT_MAGIC_VALUE or size < RECORD_BATCH_OVERHEAD:
                base = struct.unpack_from(">q", view, 0)[0]
                self._data_loss(f"A batch of {self.tp} at offset {base} from broker {self._broker} has magic "
                                f"{magic}: record batches of old message formats are not read", skip_what="it")
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
