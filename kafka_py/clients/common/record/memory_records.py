"""Port of clients/src/main/java/org/apache/kafka/common/record/MemoryRecords.java
(and the batch splitting of ByteBufferLogInputStream.java).

MemoryRecords is a sequence of batches held in memory: the records of a
produce request (a memoryview of the receive buffer, never copied), a fetch
response, or a chunk read from a segment by the log cleaner. Batches are magic 2
(DefaultRecordBatch) or, in logs whose message.format.version is older than
0.11.0 and in the produce requests of old clients, log entries of the message
formats v0 and v1 (LegacyRecordBatch), told apart by the magic byte each carries
at the same position.
"""
from __future__ import annotations

import logging
import socket
import struct
from typing import ClassVar, Iterator, Optional

from kafka_py.clients.common.errors import CorruptRecordException, UnsupportedForMessageFormatException
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyRecordBatch
from kafka_py.clients.common.record.control_record_type import EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import (
    CURRENT_MAGIC_VALUE,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    DefaultRecordBatch,
    Record,
    SimpleRecord,
    as_byte_view,
    build_batch,
)
from kafka_py.clients.common.utils.utils import write_fully

logger = logging.getLogger(__name__)

_unpack_i32 = struct.Struct(">i").unpack_from


class MemoryRecords:
    """Batches in a memory buffer, viewed without copying."""

    __slots__ = ("_buffer",)

    EMPTY: ClassVar["MemoryRecords"]

    def __init__(self, buffer=b"") -> None:
        self._buffer = as_byte_view(buffer)

    @classmethod
    def readable_records(cls, buffer) -> "MemoryRecords":
        return cls(buffer)

    @classmethod
    def with_records(cls, simple_records, **build_batch_kwargs) -> "MemoryRecords":
        """One batch of ``simple_records`` (see build_batch for the keyword arguments)."""
        recs = list(simple_records)
        if not recs:
            return cls.EMPTY
        return cls(bytearray(build_batch(recs, **build_batch_kwargs)))

    @classmethod
    def with_end_transaction_marker(
        cls,
        initial_offset: int,
        timestamp: int,
        partition_leader_epoch: int,
        producer_id: int,
        producer_epoch: int,
        marker: EndTransactionMarker,
    ) -> "MemoryRecords":
        record = SimpleRecord(marker.record_key(), marker.serialize_value(), timestamp)
        return cls(bytearray(build_batch(
            [record],
            base_offset=initial_offset,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            is_transactional=True,
            is_control_batch=True,
            partition_leader_epoch=partition_leader_epoch,
        )))

    @property
    def buffer(self) -> memoryview:
        return self._buffer

    @property
    def size_in_bytes(self) -> int:
        return len(self._buffer)

    def __len__(self) -> int:
        return len(self._buffer)

    def batches(self, strict: bool = True) -> Iterator[DefaultRecordBatch | LegacyRecordBatch]:
        """Each batch as a view of this buffer: a DefaultRecordBatch, or a LegacyRecordBatch
        for a log entry of magic 0 or 1 (Kafka's ByteBufferLogInputStream).

        A batch header that cannot be right (length below the smallest log entry,
        a magic other than 0, 1 and 2, a v2 batch shorter than its header) raises. Trailing
        bytes too short for the batch they start raise CorruptRecordException when
        ``strict`` (produce requests, files being recovered); with ``strict=False``
        iteration stops there, as Kafka's ByteBufferLogInputStream does for the
        partial batch a fetch response may end with.

        CRCs are not checked here; call ``ensure_valid()`` on each batch.
        """
        buf = self._buffer
        end = len(buf)
        pos = 0
        while pos < end:
            remaining = end - pos
            if remaining < LOG_OVERHEAD:
                if strict:
                    raise CorruptRecordException(
                        f"Truncated record batch at position {pos}: {remaining} trailing bytes, "
                        f"fewer than the {LOG_OVERHEAD}-byte log overhead"
                    )
                return
            length = _unpack_i32(buf, pos + LENGTH_OFFSET)[0]
            if length < RECORD_OVERHEAD_V0:
                raise CorruptRecordException(
                    f"Record size {length} is less than the minimum record overhead "
                    f"({RECORD_OVERHEAD_V0}) at position {pos}"
                )
            size = LOG_OVERHEAD + length
            if size > remaining:
                if strict:
                    raise CorruptRecordException(
                        f"Truncated record batch at position {pos}: its length field needs "
                        f"{size} bytes but only {remaining} remain"
                    )
                return
            magic = buf[pos + MAGIC_OFFSET]
            if magic != CURRENT_MAGIC_VALUE:
                if magic in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
                    yield LegacyRecordBatch(buf[pos:pos + size])
                    pos += size
                    continue
                raise CorruptRecordException(
                    f"Invalid magic found in record: {magic - 256 if magic > 127 else magic}"
                )
            if size < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordException(
                    f"Record batch at position {pos} is corrupt (the size {size} is smaller than "
                    f"the minimum allowed overhead {RECORD_BATCH_OVERHEAD})"
                )
            yield DefaultRecordBatch(buf[pos:pos + size])
            pos += size

    def __iter__(self) -> Iterator[DefaultRecordBatch]:
        return self.batches()

    def has_matching_magic(self, magic: int) -> bool:
        """AbstractRecords.hasMatchingMagic: every batch is of message format ``magic``. Reads
        only each batch's length and magic byte (an old producer's set is one entry per message)."""
        buf = self._buffer
        end = len(buf)
        pos = 0
        while end - pos > MAGIC_OFFSET:
            if buf[pos + MAGIC_OFFSET] != magic:
                return False
            length = _unpack_i32(buf, pos + LENGTH_OFFSET)[0]
            if length < RECORD_OVERHEAD_V0:
                raise CorruptRecordException(f"Record size {length} is less than the minimum record overhead "
                                             f"({RECORD_OVERHEAD_V0}) at position {pos}")
            pos += LOG_OVERHEAD + length
        return True

    def first_batch(self) -> Optional[DefaultRecordBatch | LegacyRecordBatch]:
        for batch in self.batches():
            return batch
        return None

    def records(self) -> Iterator[Record]:
        """Every record of every batch (decoding them: tools and tests only)."""
        for batch in self.batches():
            yield from batch.records()

    def valid_bytes(self) -> int:
        """Bytes covered by complete batches with valid headers and CRCs."""
        total = 0
        try:
            for batch in self.batches(strict=False):
                batch.ensure_valid()
                total += batch.size_in_bytes
        except (CorruptRecordException, UnsupportedForMessageFormatException):
            pass
        except Exception as e:  # InvalidRecordException and friends
            logger.debug("valid_bytes stops at an invalid batch: %s", e)
        return total

    def write_fully_to(self, file) -> int:
        """Write every byte to ``file`` (an fd, a socket, or a file object); returns the count."""
        mv = self._buffer
        total = len(mv)
        if isinstance(file, int):
            write_fully(file, mv)
            return total
        if isinstance(file, socket.socket):
            file.sendall(mv)
            return total
        written = 0
        while written < total:
            n = file.write(mv[written:])
            if n is None:
                raise BlockingIOError(f"{file!r} would block after {written} of {total} bytes")
            written += n
        return total

    def __repr__(self) -> str:
        return f"MemoryRecords(size={len(self._buffer)})"

    def __eq__(self, other) -> bool:
        return isinstance(other, MemoryRecords) and self._buffer == other._buffer

    __hash__ = None  # type: ignore[assignment]


MemoryRecords.EMPTY = MemoryRecords(b"")
