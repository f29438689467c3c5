"""Decodes the records of many Kafka record batches at once into Arrow columns.

No Kafka counterpart: it does for the ``kafka-log`` Spark data source what
DefaultRecord.readFrom does for a consumer (clients/.../common/record/DefaultRecord.java),
but column-wise, so that the Python work per record is a few list appends, not a dozen
varint decodes and an object.

The record layout of a magic v2 batch body (after decompression) is a run of records::

    varint length | int8 attributes | varlong timestampDelta | varint offsetDelta |
    varint keyLength, key | varint valueLength, value | varint headerCount, headers

``RecordColumnsBuilder`` takes batch bodies one after another. For each it walks only the
length varints in Python, to learn where every record begins (the one step that is serial by
nature). ``build()`` then decodes every other field of every record of every batch with
pyarrow compute kernels over the concatenated bodies: the varints, one byte position per record
at a time, and key and value bytes gathered with ``take`` over a binary array whose offsets
tile the bodies. Every position is checked before any gather, so a malformed body can never
make a kernel read outside the buffer; when a check fails the batches are decoded again one
by one with the plain decoder (``decode_records``), which names the bad batch.
"""
from __future__ import annotations

import array
import logging
from typing import Callable, Optional

import pyarrow as pa
import pyarrow.compute as pc

from kafka_py.clients.common.errors import CorruptRecordException

logger = logging.getLogger(__name__)

HEADERS_ARROW_TYPE = pa.list_(pa.field("element", pa.struct([("key", pa.string()), ("value", pa.binary())])))
TIMESTAMP_ARROW_TYPE = pa.timestamp("us", tz="UTC")
#: The longest varint the column kernels decode (8 bytes = 56 bits). Longer ones, such as a
#: timestamp delta of more than 2^55 ms, go through the plain decoder.
_MAX_VECTOR_VARINT_BYTES = 8


def arrow_schema(include_headers: bool) -> pa.Schema:
    """The Arrow form of Spark's Kafka source schema, exactly as PySpark converts it."""
    fields = [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", TIMESTAMP_ARROW_TYPE),
        ("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(("headers", HEADERS_ARROW_TYPE))
    return pa.schema(fields)


def _invalid(message: str) -> CorruptRecordException:
    return CorruptRecordException(message)


# ---------------------------------------------------------------------------- plain decoder

def _read_varint(data: bytes, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    raw = 0
    shift = 0
    limit = 7 * max_bytes
    while True:
        b = data[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift >= limit:
            raise _invalid(f"Varint is longer than {max_bytes} bytes")


def decode_records(data: bytes, count: int, base_offset: int, base_timestamp: int,
                   log_append_time: Optional[int], keys: list, values: list, offsets: list,
                   timestamps: list, headers: Optional[list]) -> None:
    """Decode the ``count`` records of one uncompressed batch body into column lists.

    The reference decoder (and the fallback of RecordColumnsBuilder): appends to ``keys`` and
    ``values`` (bytes or None), ``offsets``, ``timestamps`` (epoch ms) and, when ``headers`` is
    a list, None for a record without headers (as Spark's Kafka source gives) or a list of
    (key, value) pairs. CorruptRecordException when the body does not parse exactly.
    """
    end = len(data)
    pos = 0
    try:
        for _ in range(count):
            size, pos = _read_varint(data, pos)
            rec_end = pos + size
            if size < 6 or rec_end > end:
                raise _invalid(f"Invalid record size {size} with {end - pos} bytes of record data left")
            pos += 1  # attributes: unused by magic v2
            ts_delta, pos = _read_varint(data, pos, 10)
            offset_delta, pos = _read_varint(data, pos)
            n, pos = _read_varint(data, pos)
            if n < -1 or pos + n > rec_end:
                raise _invalid(f"Invalid key length {n}")
            keys.append(None if n == -1 else data[pos:pos + n])
            pos += max(n, 0)
            n, pos = _read_varint(data, pos)
            if n < -1 or pos + n > rec_end:
                raise _invalid(f"Invalid value length {n}")
            values.append(None if n == -1 else data[pos:pos + n])
            pos += max(n, 0)
            offsets.append(base_offset + offset_delta)
            timestamps.append(base_timestamp + ts_delta if log_append_time is None else log_append_time)
            n, pos = _read_varint(data, pos)
            if n < 0 or n * 2 > rec_end - pos:
                raise _invalid(f"Invalid number of record headers {n}")
            pairs = [] if n else None
            for _h in range(n):
                klen, pos = _read_varint(data, pos)
                if klen < 0 or pos + klen > rec_end:
                    raise _invalid(f"Invalid header key length {klen}")
                # Kafka's Java client decodes header keys leniently, malformed UTF-8 included.
                hkey = data[pos:pos + klen].decode("utf-8", "replace")
                pos += klen
                vlen, pos = _read_varint(data, pos)
                if vlen < -1 or pos + vlen > rec_end:
                    raise _invalid(f"Invalid header value length {vlen}")
                pairs.append((hkey, None if vlen == -1 else data[pos:pos + vlen]))
                pos += max(vlen, 0)
            if pos != rec_end:
                raise _invalid(f"Record of {size} bytes has {rec_end - pos} bytes left after its fields")
            if headers is not None:
                headers.append(pairs)
    except IndexError:
        raise _invalid("Record data ends in the middle of a record") from None
    if pos != end:
        raise _invalid(f"Batch declares {count} records but {end - pos} bytes of record data remain")


def record_begins(data, count: int, base: int, out) -> None:
    """Append ``base`` + the position of each record's length varint in a batch body.

    This walk is the only per-record Python work of the column decoder: one varint and one
    append per record. The one- and two-byte lengths (records under 8 KiB) skip the zig-zag
    sign: a negative length is caught afterwards, when RecordColumnsBuilder checks that the
    decoded lengths tile the bodies. CorruptRecordException when the walk leaves the body.
    """
    pos = 0
    end = len(data)
    append = out.append
    try:
        for _ in range(count):
            append(base + pos)
            b = data[pos]
            if b < 0x80:
                pos += 1 + (b >> 1)
                continue
            b2 = data[pos + 1]
            if b2 < 0x80:
                pos += 2 + (((b & 0x7F) | (b2 << 7)) >> 1)
                continue
            size, after = _read_varint(data, pos)
            if size < 0:
                raise _invalid(f"Invalid record size {size}")
            pos = after + size
    except IndexError:
        raise _invalid("Record data ends in the middle of a record") from None
    if pos != end:
        raise _invalid(f"Record lengths of the batch's {count} records cover {pos} bytes, "
                       f"but its record data is {end} bytes")


# ---------------------------------------------------------------------------- column kernels

_arange_cache: Optional[pa.Array] = None


def _arange(n: int) -> pa.Array:
    """0, 1, ..., n-1 as int64 (a slice of one cached array)."""
    global _arange_cache
    if _arange_cache is None or len(_arange_cache) < n:
        _arange_cache = pa.array(range(max(n, 2 * 65536)), pa.int64())
    return _arange_cache.slice(0, n)


class _VectorFallback(Exception):
    """The column kernels cannot decode this input; use the plain decoder."""


def _i64(value: int) -> pa.Scalar:
    # Kernels are given Arrow scalars: a Python int argument makes pyarrow probe for numpy on
    # every call, which costs more than the kernel itself.
    return pa.scalar(value, pa.int64())


_ZERO = _i64(0)
_ONE = _i64(1)
_MINUS_ONE = _i64(-1)
_SIX = _i64(6)
_U8_128 = pa.scalar(128, pa.uint8())
_I64_127 = _i64(127)
_I64_128 = _i64(128)
_THOUSAND = _i64(1000)
_SMALL = [_i64(k) for k in range(64)]


def _varints(u8: pa.Array, positions: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The zig-zag varint starting at each of ``positions`` in ``u8``, and the positions after."""
    first = pc.take(u8, positions)
    raw = pc.cast(first, pa.int64())
    active = pc.greater_equal(first, _U8_128)
    if not pc.any(active).as_py():
        after = pc.add(positions, _ONE)
    else:
        raw = pc.bit_wise_and(raw, _I64_127)
        length = pc.add(pc.cast(active, pa.int64()), _ONE)
        k = 1
        while True:
            nxt = pc.cast(pc.take(u8, pc.add(positions, _SMALL[k])), pa.int64())
            part = pc.shift_left(pc.bit_wise_and(nxt, _I64_127), _SMALL[7 * k])
            raw = pc.if_else(active, pc.bit_wise_or(raw, part), raw)
            active = pc.and_(active, pc.greater_equal(nxt, _I64_128))
            k += 1
            if not pc.any(active).as_py():
                break
            if k >= _MAX_VECTOR_VARINT_BYTES:
                raise _VectorFallback("varint longer than the column kernels decode")
            length = pc.add(length, pc.cast(active, pa.int64()))
        after = pc.add(positions, length)
    value = pc.bit_wise_xor(pc.shift_right(raw, _ONE), pc.negate(pc.bit_wise_and(raw, _ONE)))
    return value, after


def _gather(blob: pa.Buffer, starts: pa.Array, lengths: pa.Array, has_nulls: bool) -> pa.Array:
    """Binary array of ``blob[start:start+length]`` (null where length is -1).

    Offsets ``s0, e0, s1, e1, ...`` tile the blob into values and the gaps between them (they
    never decrease: the caller has checked every field lies in order inside its record); taking
    every other element copies the values out in one kernel call.
    """
    n = len(starts)
    ends = pc.add(starts, pc.max_element_wise(lengths, _ZERO))
    idx = _arange(2 * n)
    interleave = pc.add(pc.shift_right(idx, _ONE), pc.multiply(pc.bit_wise_and(idx, _ONE), _i64(n)))
    tiled_offsets = pc.cast(pc.take(pa.concat_arrays([starts, ends]), interleave), pa.int32())
    tiled = pa.Array.from_buffers(pa.binary(), 2 * n - 1, [None, tiled_offsets.buffers()[1], blob])
    picks = pc.multiply(_arange(n), _SMALL[2])
    if has_nulls:
        picks = pc.if_else(pc.greater_equal(lengths, _ZERO), picks, pa.scalar(None, pa.int64()))
    return pc.take(tiled, picks)


def _per_record(run_ends: pa.Array, per_batch: list, arrow_type: pa.DataType) -> pa.Array:
    """Expand one value per batch to one per record (``run_ends``: records up to each batch)."""
    return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(run_ends, pa.array(per_batch, arrow_type)))


_PADDING = bytes(16)


def headers_array(headers: list) -> pa.Array:
    """A list<struct<key, value>> column from per-record None or [(key, value), ...]."""
    list_offsets = [0]
    nulls = []
    hkeys: list = []
    hvalues: list = []
    total = 0
    for pairs in headers:
        if pairs is None:
            nulls.append(True)
        else:
            nulls.append(False)
            total += len(pairs)
            for k, v in pairs:
                hkeys.append(k)
                hvalues.append(v)
        list_offsets.append(total)
    entries = pa.StructArray.from_arrays(
        [pa.array(hkeys, pa.string()), pa.array(hvalues, pa.binary())], names=["key", "value"])
    return pa.ListArray.from_arrays(pa.array(list_offsets, pa.int32()), entries,
                                    type=HEADERS_ARROW_TYPE, mask=pa.array(nulls, pa.bool_()))


# ---------------------------------------------------------------------------- the builder

class RecordColumnsBuilder:
    """Collects batch bodies of one topic-partition and turns them into an Arrow RecordBatch.

    ``on_corrupt(position, size, reason)`` is called (from ``build``) for a batch whose records
    do not parse; it may raise, or return to have the batch's rows left out.
    """

    def __init__(self, topic: str, partition: int, include_headers: bool,
                 from_offset: int, until_offset: int,
                 on_corrupt: Callable[[int, int, str], None]) -> None:
        self.topic = topic
        self.partition = partition
        self.include_headers = include_headers
        self.from_offset = from_offset
        self.until_offset = until_offset
        self.on_corrupt = on_corrupt
        self.schema = arrow_schema(include_headers)
        #: How many builds the column kernels could not do (decoded by the plain decoder).
        self.plain_builds = 0
        self._reset()

    def _reset(self) -> None:
        self._bodies: list = []
        self._size = 0
        # An int64 array, not a list: Arrow takes its buffer as it is.
        self._begins = array.array("q")
        # Per batch, expanded to per record by run-end decoding: the record count so far, the
        # base offset, the timestamp base, and 1 where a record's timestamp is base + delta
        # (CreateTime) or 0 where every record carries the batch's max timestamp (LogAppendTime).
        self._run_ends: list[int] = []
        self._base_offsets: list[int] = []
        self._base_timestamps: list[int] = []
        self._use_delta: list[int] = []
        # (file position, batch size, body, count, base offset, base ts, log append time)
        self._batches: list[tuple] = []
        self._needs_filter = False

    @property
    def record_count(self) -> int:
        return len(self._begins)

    @property
    def body_bytes(self) -> int:
        return self._size

    def add_batch(self, position: int, batch_size: int, body, count: int, base_offset: int,
                  last_offset_delta: int, base_timestamp: int,
                  log_append_time: Optional[int]) -> None:
        """Add one batch's uncompressed record data; CorruptRecordException when its record
        lengths are inconsistent (nothing of the batch is kept then)."""
        before = len(self._begins)
        try:
            record_begins(body, count, self._size, self._begins)
        except CorruptRecordException:
            del self._begins[before:]
            raise
        self._bodies.append(body)
        self._size += len(body)
        if count:
            self._run_ends.append(len(self._begins))
            self._base_offsets.append(base_offset)
            self._base_timestamps.append(base_timestamp if log_append_time is None else log_append_time)
            self._use_delta.append(1 if log_append_time is None else 0)
        self._batches.append((position, batch_size, body, count, base_offset, base_timestamp, log_append_time))
        if base_offset < self.from_offset or base_offset + last_offset_delta >= self.until_offset:
            self._needs_filter = True

    def build(self) -> Optional[pa.RecordBatch]:
        """The collected records as one RecordBatch (None when there are none); then empty."""
        try:
            if not self._begins:
                return None
            try:
                result = self._build_vectorized()
            except (_VectorFallback, pa.ArrowIndexError, pa.ArrowInvalid) as e:
                logger.debug("Column decode of %d batches of %s-%d fell back to the plain decoder: %s",
                             len(self._batches), self.topic, self.partition, e)
                self.plain_builds += 1
                result = self._build_plain()
            if result is not None and self._needs_filter:
                offsets = result.column(4)
                keep = pc.and_(pc.greater_equal(offsets, _i64(self.from_offset)), pc.less(offsets, _i64(self.until_offset)))
                result = result.filter(keep)
            return result
        finally:
            self._reset()

    def _build_vectorized(self) -> pa.RecordBatch:
        n = len(self._begins)
        total = self._size
        # Padding so that a varint read just past the last record stays inside the buffer;
        # the checks below reject such a read before its value is used.
        self._bodies.append(_PADDING)
        blob = pa.py_buffer(b"".join(self._bodies))
        u8 = pa.Array.from_buffers(pa.uint8(), total + 16, [None, blob])
        begins = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(self._begins)])
        sizes, starts = _varints(u8, begins)
        ends = pc.add(starts, sizes)
        # Records tile the bodies: each ends where the next begins, the last at the end.
        following = pa.concat_arrays([begins.slice(1), pa.array([total], pa.int64())])
        if not pc.all(pc.equal(ends, following)).as_py() or not pc.all(pc.greater_equal(sizes, _SIX)).as_py():
            raise _VectorFallback("record lengths do not tile the batch bodies")
        ts_deltas, pos = _varints(u8, pc.add(starts, _ONE))  # after the attributes byte
        offset_deltas, pos = _varints(u8, pos)
        key_lengths, key_starts = _varints(u8, pos)
        pos = pc.add(key_starts, pc.max_element_wise(key_lengths, _ZERO))
        value_lengths, value_starts = _varints(u8, pos)
        pos = pc.add(value_starts, pc.max_element_wise(value_lengths, _ZERO))
        header_counts, after_count = _varints(u8, pos)
        if not (pc.all(pc.greater_equal(key_lengths, _MINUS_ONE)).as_py()
                and pc.all(pc.greater_equal(value_lengths, _MINUS_ONE)).as_py()
                and pc.all(pc.greater_equal(header_counts, _ZERO)).as_py()):
            raise _VectorFallback("negative length")
        has_headers = pc.any(pc.greater(header_counts, _ZERO)).as_py()
        if has_headers:
            if not pc.all(pc.less_equal(after_count, ends)).as_py():
                raise _VectorFallback("fields run past their record")
        elif not pc.all(pc.equal(after_count, ends)).as_py():
            raise _VectorFallback("record length disagrees with its fields")
        keys = _gather(blob, key_starts, key_lengths, pc.any(pc.equal(key_lengths, _MINUS_ONE)).as_py())
        values = _gather(blob, value_starts, value_lengths, pc.any(pc.equal(value_lengths, _MINUS_ONE)).as_py())
        run_ends = pa.array(self._run_ends, pa.int32())
        offsets = pc.add(_per_record(run_ends, self._base_offsets, pa.int64()), offset_deltas)
        use_delta = _per_record(run_ends, self._use_delta, pa.int64())
        timestamps = pc.add(_per_record(run_ends, self._base_timestamps, pa.int64()),
                            pc.multiply(ts_deltas, use_delta))
        timestamp_types = pc.cast(pc.subtract(_ONE, use_delta), pa.int32())
        arrays = [keys, values, None, None, offsets, timestamps, timestamp_types]
        headers_column = None
        if self.include_headers:
            headers_column = self._headers_column(blob.to_pybytes(), header_counts, after_count, ends, n)
        # Headers not asked for are not parsed: the record lengths, checked above, say where
        # each record ends, and the batch CRC already vouched for the bytes in between.
        return self._assemble(arrays, n, headers_column)

    def _headers_column(self, data: bytes, counts: pa.Array, after_count: pa.Array, ends: pa.Array,
                        n: int) -> pa.Array:
        per_record: list = [None] * n
        with_headers = pc.indices_nonzero(pc.greater(counts, _ZERO)).to_pylist()
        if with_headers:
            counts_l = pc.take(counts, with_headers).to_pylist()
            pos_l = pc.take(after_count, with_headers).to_pylist()
            ends_l = pc.take(ends, with_headers).to_pylist()
            for i, count, pos, rec_end in zip(with_headers, counts_l, pos_l, ends_l):
                per_record[i] = _parse_headers(data, count, pos, rec_end)
        return headers_array(per_record)

    def _assemble(self, arrays: list, n: int, headers_column: Optional[pa.Array]) -> pa.RecordBatch:
        arrays[2] = pa.repeat(pa.scalar(self.topic, pa.string()), n)
        arrays[3] = pa.repeat(pa.scalar(self.partition, pa.int32()), n)
        # Epoch milliseconds to Spark's microseconds; int64 and timestamp share a layout.
        arrays[5] = pc.multiply_checked(arrays[5], _THOUSAND).view(TIMESTAMP_ARROW_TYPE)
        if headers_column is not None:
            arrays.append(headers_column)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _build_plain(self) -> Optional[pa.RecordBatch]:
        keys: list = []
        values: list = []
        offsets: list = []
        timestamps: list = []
        timestamp_types: list = []
        headers: Optional[list] = [] if self.include_headers else None
        for position, batch_size, body, count, base_offset, base_ts, log_append_time in self._batches:
            mark = (len(keys), len(values), len(offsets), len(timestamps), len(headers or ()))
            try:
                decode_records(bytes(body), count, base_offset, base_ts, log_append_time,
                               keys, values, offsets, timestamps, headers)
            except CorruptRecordException as e:
                del keys[mark[0]:], values[mark[1]:], offsets[mark[2]:], timestamps[mark[3]:]
                if headers is not None:
                    del headers[mark[4]:]
                self.on_corrupt(position, batch_size, str(e))
                continue
            timestamp_types.extend([0 if log_append_time is None else 1] * (len(offsets) - mark[2]))
        if not offsets:
            return None
        arrays = [pa.array(keys, pa.binary()), pa.array(values, pa.binary()), None, None,
                  pa.array(offsets, pa.int64()), pa.array(timestamps, pa.int64()),
                  pa.array(timestamp_types, pa.int32())]
        return self._assemble(arrays, len(offsets), headers_array(headers) if headers is not None else None)


def _parse_headers(data: bytes, count: int, pos: int, rec_end: int) -> list:
    if count * 2 > rec_end - pos:
        raise _VectorFallback("header count larger than the record")
    pairs = []
    try:
        for _ in range(count):
            klen, pos = _read_varint(data, pos)
            if klen < 0 or pos + klen > rec_end:
                raise _VectorFallback("bad header key length")
            hkey = data[pos:pos + klen].decode("utf-8", "replace")
            pos += klen
            vlen, pos = _read_varint(data, pos)
            if vlen < -1 or pos + vlen > rec_end:
                raise _VectorFallback("bad header value length")
            pairs.append((hkey, None if vlen == -1 else data[pos:pos + vlen]))
            pos += max(vlen, 0)
    except (IndexError, CorruptRecordException) as e:
        raise _VectorFallback(str(e)) from None
    if pos != rec_end:
        raise _VectorFallback("record length disagrees with its headers")
    return pairs
