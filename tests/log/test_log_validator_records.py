"""LogValidator refuses a batch whose records no consumer could read, whatever its codec.

Each batch here has a correct CRC and a consistent header; only the record bytes (or the
compressed payload holding them) are wrong. The walk of the records must find it and
nothing may be handed back for appending.
"""
from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import CorruptRecordException, InvalidRecordException, InvalidTimestampException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_validator import LogValidator, LongRef
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch, assemble_batch, write_record, write_varint
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.partial_default_record import walk_records

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000
CODECS = list(CompressionType)


def records_body(count: int, key: bytes | None = b"k", value: bytes = b"v" * 20, ts_deltas=None,
                 offset_deltas=None, headers=()) -> bytearray:
    body = bytearray()
    for i in range(count):
        write_record(body, offset_deltas[i] if offset_deltas else i, ts_deltas[i] if ts_deltas else i,
                     key, value, headers)
    return body


def batch_of(body, count: int, compression=CompressionType.NONE, *, raw_payload: bytes | None = None,
             last_offset_delta: int | None = None, base_timestamp: int = NOW) -> bytearray:
    """A batch claiming ``compression`` over ``body`` (compressed with it), or over ``raw_payload``
    as it is; header fields consistent with ``count``, CRC computed."""
    if raw_payload is not None:
        # assemble_batch compresses; build with NONE and set the codec bits afterwards
        data = bytearray(assemble_batch(raw_payload, base_offset=0, record_count=count,
                                        last_offset_delta=count - 1 if last_offset_delta is None
                                        else last_offset_delta,
                                        base_timestamp=base_timestamp, max_timestamp=base_timestamp + count))
        data[22] = (data[22] & ~0x07) | int(compression)
        _recrc(data)
        return data
    return bytearray(assemble_batch(bytes(body), base_offset=0, record_count=count,
                                    last_offset_delta=count - 1 if last_offset_delta is None else last_offset_delta,
                                    base_timestamp=base_timestamp, max_timestamp=base_timestamp + count,
                                    compression=compression))


def _recrc(data: bytearray) -> None:
    import crc32c
    data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")


def validate(data, **kwargs):
    before = bytes(data)
    counter = LongRef(100)
    kwargs.setdefault("time", None)
    kwargs.setdefault("now_ms", NOW)
    try:
        return LogValidator.validate_messages_and_assign_offsets(MemoryRecords(data), TP, counter, **kwargs), counter
    except Exception:
        # a refused batch is left as it came and no offsets were handed out
        assert bytes(data) == before
        assert counter.value == 100
        raise


@pytest.mark.parametrize("codec", CODECS[1:])
def test_a_codec_flag_over_records_that_are_not_compressed_is_corrupt(codec):
    data = batch_of(None, 3, codec, raw_payload=bytes(records_body(3)))
    with pytest.raises(CorruptRecordException, match="cannot be decompressed"):
        validate(data)


@pytest.mark.parametrize("codec", CODECS[1:])
def test_a_codec_flag_over_garbage_is_corrupt(codec):
    data = batch_of(None, 2, codec, raw_payload=b"\x00\x01not compressed at all" * 3)
    with pytest.raises(CorruptRecordException):
        validate(data)


def test_a_truncated_gzip_stream_is_corrupt():
    payload = gzip.compress(bytes(records_body(5)))[:-9]
    with pytest.raises(CorruptRecordException):
        validate(batch_of(None, 5, CompressionType.GZIP, raw_payload=payload))


@pytest.mark.parametrize("codec", CODECS)
def test_fewer_records_than_the_header_counts(codec):
    data = batch_of(records_body(3), 4, codec)
    with pytest.raises(InvalidRecordException, match="batch size"):
        validate(data)


@pytest.mark.parametrize("codec", CODECS)
def test_bytes_left_after_the_last_record(codec):
    data = batch_of(records_body(3) + b"\x00\x00\x00", 3, codec)
    with pytest.raises(InvalidRecordException, match="remain after the last"):
        validate(data)


@pytest.mark.parametrize("codec", CODECS)
def test_a_record_length_that_disagrees_with_its_fields(codec):
    body = records_body(2)
    body[0] += 2  # first record's length varint (zig-zag: +1 byte), fields unchanged
    with pytest.raises(InvalidRecordException):
        validate(batch_of(body, 2, codec))


@pytest.mark.parametrize("codec", CODECS)
def test_a_value_length_past_the_record(codec):
    body = bytearray()
    rec = bytearray([0])
    write_varint(rec, 0)  # timestamp delta
    write_varint(rec, 0)  # offset delta
    write_varint(rec, -1)  # null key
    write_varint(rec, 50)  # value says 50 bytes, 3 follow
    rec += b"abc"
    write_varint(rec, 0)
    write_varint(body, len(rec))
    body += rec
    with pytest.raises(InvalidRecordException):
        validate(batch_of(body, 1, codec))


@pytest.mark.parametrize("codec", CODECS)
def test_a_negative_header_count(codec):
    body = bytearray()
    rec = bytearray([0, 0, 0, 1, 2, ord("x")])  # attrs, ts delta, offset delta, null key, value "x"
    write_varint(rec, -3)
    write_varint(body, len(rec))
    body += rec
    with pytest.raises(InvalidRecordException, match="header count"):
        validate(batch_of(body, 1, codec))


def test_a_varint_longer_than_an_int():
    body = bytearray(b"\xff\xff\xff\xff\xff\x01") + records_body(1)
    with pytest.raises(InvalidRecordException, match="longer than 5 bytes"):
        validate(batch_of(body, 1))


def test_an_uncompressed_batch_with_offset_deltas_out_of_order_is_refused_per_record():
    data = batch_of(records_body(3, offset_deltas=[0, 2, 1]), 3)
    with pytest.raises(InvalidRecordException) as info:
        validate(data)
    assert [e.batch_index for e in info.value.record_errors] == [0, 1, 2]


def test_a_compressed_batch_with_offset_deltas_out_of_order_is_rebuilt():
    data = batch_of(records_body(3, offset_deltas=[0, 2, 1]), 3, CompressionType.GZIP)
    result, counter = validate(data)
    assert result.message_size_maybe_changed
    assert counter.value == 103
    batch = next(result.validated_records.batches())
    assert [r.offset for r in batch] == [100, 101, 102]


@pytest.mark.parametrize("codec", CODECS)
def test_a_record_timestamp_below_the_first_is_range_checked(codec):
    # The header's first and max timestamps are in range; the second record is not.
    data = batch_of(records_body(3, ts_deltas=[0, -90_000, 2]), 3, codec)
    with pytest.raises(InvalidTimestampException) as info:
        validate(data, timestamp_diff_max_ms=60_000)
    assert [e.batch_index for e in info.value.record_errors] == [1]


@pytest.mark.parametrize("codec", CODECS)
def test_compacted_topic_names_each_record_without_a_key(codec):
    body = records_body(1) + bytearray()
    write_record(body, 1, 1, None, b"v")
    write_record(body, 2, 2, b"k", b"v")
    write_record(body, 3, 3, None, b"v")
    with pytest.raises(InvalidRecordException) as info:
        validate(batch_of(body, 4, codec), compacted_topic=True)
    assert [e.batch_index for e in info.value.record_errors] == [1, 3]


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_an_unknown_codec_id_is_corrupt(codec):
    data = batch_of(None, 1, codec, raw_payload=bytes(records_body(1)))
    with pytest.raises(CorruptRecordException, match="codec"):
        validate(data)


def test_the_header_max_timestamp_is_rewritten_from_the_records():
    data = batch_of(records_body(3, ts_deltas=[0, 7, 3]), 3)
    data[35:43] = (NOW + 1000).to_bytes(8, "big")
    _recrc(data)
    result, _ = validate(data)
    batch = DefaultRecordBatch(result.validated_records.buffer)
    assert batch.max_timestamp == NOW + 7 and batch.is_valid()
    assert result.shallow_offset_of_max_timestamp == 101


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 40))
def test_walk_of_arbitrary_bytes_either_parses_or_says_invalid(data, count):
    # Never any other exception, never a loop beyond the data.
    try:
        walk = walk_records(data, count)
    except InvalidRecordException:
        return
    assert walk.count == count and walk.size == len(data)


# --- the compiled walk against the Python walk ----------------------------------------------

from kafka_py.clients.common.record import partial_default_record  # noqa: E402


def _python_walk(data, count, **kwargs):
    try:
        return partial_default_record.walk_records_python(data, count, **kwargs)
    except InvalidRecordException:
        return None


def test_the_compiled_walk_is_built():
    # setup.py builds it; without it every produce of small records costs several times more
    assert partial_default_record._compiled is not None


_walk_options = st.fixed_dictionaries({
    "check_keys": st.booleans(),
    "timestamp_delta_range": st.one_of(st.none(), st.tuples(st.integers(-100, 0), st.integers(0, 100))),
    "exempt_timestamp_delta": st.one_of(st.none(), st.integers(-200, 200)),
})


@st.composite
def _record_bytes(draw):
    """Record data as a producer writes it, then maybe damaged."""
    body = bytearray()
    n = draw(st.integers(0, 6))
    for i in range(n):
        write_record(body, draw(st.sampled_from([i, i, i, i + 1])), draw(st.integers(-300, 300)),
                     draw(st.one_of(st.none(), st.binary(max_size=70))), draw(st.one_of(st.none(), st.binary(max_size=140))),
                     tuple(draw(st.lists(st.tuples(st.text(max_size=3), st.one_of(st.none(), st.binary(max_size=4))),
                                         max_size=2))))
    if body and draw(st.booleans()):
        body[draw(st.integers(0, len(body) - 1))] = draw(st.integers(0, 255))
    return bytes(body), n + draw(st.sampled_from([0, 0, 0, -1, 1]))


def _assert_walks_agree(data: bytes, count: int, options: dict) -> None:
    low, high = options["timestamp_delta_range"] or (0, 0)
    exempt = options["exempt_timestamp_delta"]
    summary = partial_default_record._compiled.walk(
        data, count, options["check_keys"], low, high, options["timestamp_delta_range"] is not None,
        low if exempt is None else exempt)
    python = _python_walk(data, count, **options)
    if python is None:
        assert summary is None
    else:
        assert summary == (python.max_timestamp_delta, python.index_of_max_timestamp, python.offsets_consecutive,
                           python.null_key_indexes, python.timestamps_out_of_range)
        assert partial_default_record.walk_records(data, count, **options) == python


@settings(max_examples=400, deadline=None)
@given(_record_bytes(), _walk_options)
def test_compiled_and_python_walks_agree_on_producer_records(case, options):
    data, count = case
    _assert_walks_agree(data, count, options)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=120), st.integers(0, 12), _walk_options)
def test_compiled_and_python_walks_agree_on_arbitrary_bytes(data, count, options):
    _assert_walks_agree(data, count, options)


def test_varints_wider_than_their_type_are_refused_by_both():
    # a 5-byte length whose value needs 33 bits, and a 10-byte timestamp delta needing 65
    wide_int = b"\xff\xff\xff\xff\x1f"
    assert partial_default_record._compiled.walk(wide_int + b"\x00" * 10, 1, False, 0, 0, False, 0) is None
    assert _python_walk(wide_int + b"\x00" * 10, 1) is None
    body = bytearray([0]) + b"\xff" * 9 + b"\x02" + bytes([0, 1, 1, 0])
    record = bytes([len(body) * 2]) + body
    assert partial_default_record._compiled.walk(record, 1, False, 0, 0, False, 0) is None
    assert _python_walk(record, 1) is None


@pytest.mark.parametrize("delta_range, exempt, out_of_range", [
    ((-(1 << 70), 1 << 70), None, []),
    ((-(1 << 70), 1 << 70), 1 << 80, []),
    ((0, 2), -(1 << 90), [(3, 3), (4, 4)]),
    ((1, 3), None, [(0, 0), (4, 4)]),
])
def test_walk_bounds_beyond_64_bits_are_clamped_alike_in_both_walks(delta_range, exempt, out_of_range) -> None:
    from kafka_py.clients.common.record.default_record_batch import RECORD_BATCH_OVERHEAD, SimpleRecord, build_batch

    batch = bytes(build_batch([SimpleRecord(None, b"x" * 10, timestamp=1000 + i) for i in range(5)]))
    data = batch[RECORD_BATCH_OVERHEAD:]
    walked = walk_records(data, 5, timestamp_delta_range=delta_range, exempt_timestamp_delta=exempt)
    assert walked == partial_default_record.walk_records_python(
        data, 5, timestamp_delta_range=delta_range, exempt_timestamp_delta=exempt)
    assert walked.timestamps_out_of_range == out_of_range
