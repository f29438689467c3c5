"""Reads a byte range of one Kafka segment file into Arrow record batches, column by column.

No Kafka counterpart: this is the executor side of the ``kafka-log`` Spark data source
(kafka_py/spark/kafka_log_data_source.py), the part of Spark's KafkaSourceRDD that pulls the
records of one offset range, done here from the segment file instead of a consumer.

A ``SegmentSlice`` names the file, a byte range ``[start_position, end_position)`` that starts
and ends on batch boundaries (the driver found them through the offset index), and the offsets
``[from_offset, until_offset)`` wanted. ``read_slice`` reads the range in large ``pread`` chunks
(FileRecords), views each batch in place (DefaultRecordBatch), checks its CRC, decompresses it
when needed and decodes its records straight into per-column Python lists, which become Arrow
arrays in one call each. No per-record object is built: at a few hundred nanoseconds per
record the decode loop is the cost of the whole read.

Control batches (transaction markers) are skipped, as a consumer skips them; so are the
transactional batches of the slice's ``aborted`` transactions (a ``read_committed`` read,
kafka_py/spark/transactions.py). A batch that fails
its checks is data loss, reported with the file and the byte position: with
``fail_on_data_loss`` the read fails with that message, without it the batch is skipped (the
next batch is found again by its header and CRC when the length field itself is damaged). In
the slice that ends a partition (``tolerate_torn_tail``) damage with no valid batch after it is
the unfinished append of a live or crashed broker, not data loss: it is ignored quietly, which
is also what the broker's own recovery would truncate.
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Iterator, Optional

import pyarrow as pa

from kafka_py.clients.common.errors import CorruptRecordException, KafkaException, UnsupportedCompressionTypeException
from kafka_py.clients.common.record.compression import CompressionType, decompress
from kafka_py.clients.common.record.default_record_batch import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CURRENT_MAGIC_VALUE,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    DefaultRecordBatch,
)
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.spark.arrow_records import RecordColumnsBuilder, arrow_schema
from kafka_py.spark.transactions import is_aborted

logger = logging.getLogger(__name__)

#: Bytes read from the segment per pread: large enough that syscalls do not matter, small
#: enough that two executors' buffers stay far below their memory.
READ_CHUNK_BYTES = 8 * 1024 * 1024
#: An Arrow batch is handed to Spark once it holds this many rows or payload bytes.
ARROW_BATCH_ROWS = 32768
ARROW_BATCH_BYTES = 16 * 1024 * 1024

_unpack_i32 = struct.Struct(">i").unpack_from


class KafkaLogDataLossException(KafkaException):
    """Records that should be read cannot be: corrupt batches, deleted files, offsets gone.

    Raised only when the read was asked to fail on data loss (Spark's ``failOnDataLoss``)."""


@dataclass(frozen=True)
class SegmentSlice:
    """One unit of parallel work: batches of one segment file between two batch boundaries."""

    topic: str
    partition: int
    file: str
    start_position: int
    end_position: int
    from_offset: int
    until_offset: int
    #: The range ends where the partition's data ends (the active segment's tail).
    tolerate_torn_tail: bool = False
    #: read_committed: (producer id, first offset, marker offset) of the aborted transactions
    #: whose batches this slice may hold; those batches are dropped.
    aborted: tuple[tuple[int, int, int], ...] = ()

    @property
    def size_in_bytes(self) -> int:
        return self.end_position - self.start_position


@dataclass
class ReadStats:
    """What one read saw; the planner's tests and the benchmark look at it."""

    batches: int = 0
    records: int = 0
    bytes_read: int = 0
    skipped_batches: int = 0
    torn_tail_bytes: int = 0


# ---------------------------------------------------------------------------- file walking

def find_next_valid_batch(records: FileRecords, after: int, end: int) -> Optional[int]:
    """The first position in ``(after, end)`` where a whole, CRC-valid v2 batch lies within
    ``end``, or None. Used to step over a damaged batch whose length field cannot be trusted,
    and to tell a torn tail (nothing valid after it) from damage in the middle of a file."""
    pos = after + 1
    while pos + RECORD_BATCH_OVERHEAD <= end:
        buf = records.read_bytes(pos, min(READ_CHUNK_BYTES, end - pos))
        last_candidate = len(buf) - RECORD_BATCH_OVERHEAD
        if last_candidate < 0:
            return None
        i = buf.find(CURRENT_MAGIC_VALUE.to_bytes(1, "big"), MAGIC_OFFSET)
        while 0 <= i <= last_candidate + MAGIC_OFFSET:
            rel = i - MAGIC_OFFSET
            length = _unpack_i32(buf, rel + 8)[0]
            size = LOG_OVERHEAD + length
            if size >= RECORD_BATCH_OVERHEAD and pos + rel + size <= end:
                if rel + size <= len(buf):
                    candidate = DefaultRecordBatch(memoryview(buf)[rel:rel + size])
                else:
                    candidate = DefaultRecordBatch(records.read_bytes(pos + rel, size))
                if len(candidate.buffer) == size and candidate.is_valid():
                    return pos + rel
            i = buf.find(b"\x02", i + 1)
        pos += last_candidate + 1
    return None


def read_slice(
    segment_slice: SegmentSlice,
    include_headers: bool = False,
    fail_on_data_loss: bool = True,
    stats: Optional[ReadStats] = None,
    arrow_batch_rows: int = ARROW_BATCH_ROWS,
    arrow_batch_bytes: int = ARROW_BATCH_BYTES,
) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``segment_slice`` as Arrow record batches of ``arrow_schema``."""
    return _SliceReader(segment_slice, include_headers, fail_on_data_loss, stats or ReadStats(),
                        arrow_batch_rows, arrow_batch_bytes).read()


class _SliceReader:
    def __init__(self, segment_slice: SegmentSlice, include_headers: bool, fail_on_data_loss: bool,
                 stats: ReadStats, arrow_batch_rows: int, arrow_batch_bytes: int) -> None:
        self.slice = segment_slice
        self.include_headers = include_headers
        self.fail_on_data_loss = fail_on_data_loss
        self.stats = stats
        self.arrow_batch_rows = arrow_batch_rows
        self.arrow_batch_bytes = arrow_batch_bytes
        self.schema = arrow_schema(include_headers)
        # Set by the consumer of _walk() when a batch turned out damaged and reading must go
        # on somewhere other than right after it.
        self._resume_at: Optional[int] = None

    def read(self) -> Iterator[pa.RecordBatch]:
        s = self.slice
        if s.start_position >= s.end_position or s.from_offset >= s.until_offset:
            return
        try:
            records = FileRecords.open(s.file, file_already_exists=True, mutable=False)
        except FileNotFoundError:
            # Retention or compaction removed the segment after the plan was made.
            self._data_loss(f"Segment file {s.file} of {s.topic}-{s.partition} no longer exists "
                            f"(deleted after the read was planned)", skip_what="the segment")
            return
        try:
            yield from self._read(records)
        finally:
            # Not close(): that would fsync and trim a segment the broker may be appending to.
            records.close_handlers()

    def _data_loss(self, message: str, skip_what: str) -> None:
        if self.fail_on_data_loss:
            raise KafkaLogDataLossException(
                f"{message}. Some data may have been lost; set the option failOnDataLoss to "
                f"false to skip {skip_what} and read on.")
        logger.warning("%s; skipping %s (failOnDataLoss=false)", message, skip_what)

    def _read(self, records: FileRecords) -> Iterator[pa.RecordBatch]:
        s = self.slice
        end = min(s.end_position, records.size_in_bytes())
        if end < s.end_position:
            # The file shrank under us: the broker truncated it (a leader change) or the
            # cleaner replaced it. What was planned beyond its end is gone.
            self._data_loss(f"Segment file {s.file} is {records.size_in_bytes()} bytes, shorter than "
                            f"the {s.end_position} bytes planned", skip_what="the missing bytes")
        from_offset, until_offset = s.from_offset, s.until_offset
        builder = RecordColumnsBuilder(s.topic, s.partition, self.include_headers, from_offset,
                                       until_offset, self._undecodable)
        stats = self.stats
        aborted = s.aborted
        for position, batch in self._walk(records, end):
            (base_offset, _length, _epoch, _magic, _crc, attributes, last_offset_delta,
             base_ts, max_ts, producer_id, _pepoch, _seq, count) = batch.header()
            if base_offset >= until_offset:
                break
            if base_offset + last_offset_delta < from_offset or attributes & CONTROL_FLAG_MASK:
                continue
            if aborted and attributes & TRANSACTIONAL_FLAG_MASK and is_aborted(aborted, producer_id, base_offset):
                continue
            size = batch.size_in_bytes
            if not batch.is_valid():
                self._resume_at = self._damaged(records, position, end, self._describe_invalid(batch), size)
                continue
            try:
                codec = attributes & COMPRESSION_CODEC_MASK
                body = batch.buffer[RECORD_BATCH_OVERHEAD:]
                if codec:
                    body = decompress(CompressionType.for_id(codec), body)
                builder.add_batch(position, size, body, count, base_offset, last_offset_delta, base_ts,
                                  max_ts if attributes & TIMESTAMP_TYPE_MASK else None)
            except (CorruptRecordException, UnsupportedCompressionTypeException) as e:
                self._resume_at = self._damaged(records, position, end, str(e), size)
                continue
            if builder.record_count >= self.arrow_batch_rows or builder.body_bytes >= self.arrow_batch_bytes:
                result = builder.build()
                if result is not None and result.num_rows:
                    stats.records += result.num_rows
                    yield result
        result = builder.build()
        if result is not None and result.num_rows:
            stats.records += result.num_rows
            yield result

    def _undecodable(self, position: int, size: int, reason: str) -> None:
        # The batch's CRC held, so it was written whole: bad records in it are never a torn tail.
        self.stats.skipped_batches += 1
        self._data_loss(f"Corrupt record batch in {self.slice.file} at position {position}: {reason}",
                        skip_what="the damaged batch")

    def _walk(self, records: FileRecords, end: int) -> Iterator[tuple[int, DefaultRecordBatch]]:
        """(position, batch view) of each structurally whole batch in ``[start, end)``.

        Headers that cannot start a v2 batch go to ``_damaged``; reading resumes where it says.
        """
        stats = self.stats
        position = self.slice.start_position
        while position < end:
            got_wanted = min(READ_CHUNK_BYTES, end - position)
            buf = bytearray(got_wanted)
            got = records.read_into(buf, position).size_in_bytes
            stats.bytes_read += got
            view = memoryview(buf)[:got]
            rel = 0
            jump: Optional[int] = None
            while rel + RECORD_BATCH_OVERHEAD <= got:
                batch_position = position + rel
                length = _unpack_i32(view, rel + 8)[0]
                size = LOG_OVERHEAD + length
                magic = view[rel + MAGIC_OFFSET]
                if length < RECORD_OVERHEAD_V0 or magic != CURRENT_MAGIC_VALUE \
                        or size < RECORD_BATCH_OVERHEAD:
                    signed_magic = magic - 256 if magic > 127 else magic
                    jump = self._damaged(records, batch_position, end,
                                         f"a batch header with length {length} and magic {signed_magic}")
                    break
                if batch_position + size > end:
                    jump = self._damaged(records, batch_position, end,
                                         f"a batch of {size} bytes runs past the end of the data ({end})")
                    break
                if rel + size > got:
                    if rel > 0:
                        break  # the next chunk starts with this batch
                    # One batch larger than a whole chunk: read it on its own.
                    whole = bytearray(size)
                    if records.read_into(whole, batch_position).size_in_bytes < size:
                        jump = self._damaged(records, batch_position, end, "the file ends inside the batch")
                        break
                    stats.bytes_read += size
                    stats.batches += 1
                    yield batch_position, DefaultRecordBatch(whole)
                    rel = size
                    if self._resume_at is not None:
                        jump, self._resume_at = self._resume_at, None
                    break
                stats.batches += 1
                yield batch_position, DefaultRecordBatch(view[rel:rel + size])
                rel += size
                if self._resume_at is not None:
                    jump, self._resume_at = self._resume_at, None
                    break
            else:
                if rel == 0:
                    # Fewer than a batch header's bytes are left before the end.
                    jump = self._damaged(records, position, end, "an incomplete batch header")
            position = jump if jump is not None else position + rel

    @staticmethod
    def _describe_invalid(batch: DefaultRecordBatch) -> str:
        try:
            batch.ensure_valid()
        except Exception as e:  # noqa: BLE001 - any reason the batch failed is the message
            return str(e)
        return "the batch failed its checks"

    def _damaged(self, records: FileRecords, position: int, end: int, reason: str,
                 size: Optional[int] = None) -> int:
        """Handle a batch that cannot be read; returns where reading goes on (``end`` to stop)."""
        s = self.slice
        next_valid = find_next_valid_batch(records, position, end)
        if next_valid is None and s.tolerate_torn_tail:
            self.stats.torn_tail_bytes += end - position
            logger.info("Ignoring %d bytes at the end of %s from position %d (%s): an append that "
                        "never completed", end - position, s.file, position, reason)
            return end
        message = f"Corrupt record batch in {s.file} at position {position}: {reason}"
        self.stats.skipped_batches += 1
        self._data_loss(message, skip_what="the damaged bytes")
        if size is not None and next_valid == position + size:
            return position + size
        return end if next_valid is None else next_valid
