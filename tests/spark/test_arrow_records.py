"""The column decoder (kafka_py/spark/arrow_records.py) against the record decoder of
kafka_py/clients/common/record, on random batches; no Spark needed."""
from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafka_py.clients.common.errors import CorruptRecordException  # noqa: E402
from kafka_py.clients.common.record.compression import CompressionType, decompress  # noqa: E402
from kafka_py.clients.common.record.default_record_batch import (  # noqa: E402
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from kafka_py.spark.arrow_records import RecordColumnsBuilder, arrow_schema, decode_records  # noqa: E402

blobs = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=200, max_size=9000))
headers = st.lists(st.tuples(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6), st.one_of(st.none(), st.binary(max_size=8))), max_size=3)
records = st.lists(
    st.tuples(blobs, blobs, headers, st.one_of(st.integers(0, 300), st.integers(0, 2**45))),
    min_size=1, max_size=40)
batch_specs = st.lists(
    st.tuples(records, st.sampled_from(list(CompressionType)), st.booleans(), st.integers(0, 5)),
    min_size=1, max_size=4)


def make_batches(specs, start=0):
    """Encoded batches and the rows a reader must produce from them."""
    batches, expected = [], []
    offset = start
    for recs, codec, log_append, gap in specs:
        base_ts = 1_650_000_000_000
        simple = [SimpleRecord(k, v, base_ts + d, tuple(h)) for k, v, h, d in recs]
        # Offsets with holes, as the log cleaner leaves them.
        offsets = [offset + i * (gap + 1) for i in range(len(recs))]
        ts_type = TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME
        lat = base_ts + 99 if log_append else None
        data = build_batch(simple, base_offset=offset, compression=codec, timestamp_type=ts_type,
                           log_append_time=lat, offsets=offsets)
        batches.append(DefaultRecordBatch(data))
        for r in DefaultRecordBatch(data).records():
            expected.append((r.key, r.value, r.offset, r.timestamp, 1 if log_append else 0,
                             [{"key": hk, "value": hv} for hk, hv in r.headers] or None))
        offset = offsets[-1] + 1
    return batches, expected


def body(batch: DefaultRecordBatch):
    data = batch.buffer[RECORD_BATCH_OVERHEAD:]
    return decompress(batch.compression_type, data) if batch.compression_type else data


def build(batches, include_headers=True, from_offset=0, until_offset=2**62, column_kernels=True):
    corrupt = []
    builder = RecordColumnsBuilder("t", 3, include_headers, from_offset, until_offset,
                                   lambda pos, size, reason: corrupt.append((pos, reason)))
    position = 0
    for b in batches:
        lat = b.max_timestamp if b.timestamp_type == TimestampType.LOG_APPEND_TIME else None
        builder.add_batch(position, b.size_in_bytes, body(b), b.record_count, b.base_offset,
                          b.last_offset_delta, b.base_timestamp, lat)
        position += b.size_in_bytes
    result = builder.build()
    # Well-formed input never needs the plain decoder.
    assert builder.plain_builds == (0 if column_kernels else 1)
    return result, corrupt


def as_rows(rb, include_headers=True):
    d = rb.to_pydict()
    rows = []
    for i in range(rb.num_rows):
        ts = d["timestamp"][i]
        rows.append((d["key"][i], d["value"][i], d["offset"][i],
                     rb.column(5).cast(pa.int64())[i].as_py() // 1000 if ts is not None else None,
                     d["timestampType"][i], d["headers"][i] if include_headers else None))
    return rows


@settings(max_examples=60, deadline=None)
@given(batch_specs)
def test_columns_equal_the_record_decoder(specs):
    batches, expected = make_batches(specs)
    rb, corrupt = build(batches)
    assert corrupt == []
    assert rb.schema == arrow_schema(True)
    assert rb.column(2).to_pylist() == ["t"] * rb.num_rows
    assert rb.column(3).to_pylist() == [3] * rb.num_rows
    assert as_rows(rb) == expected


@settings(max_examples=30, deadline=None)
@given(batch_specs, st.integers(0, 60), st.integers(0, 60))
def test_offset_bounds_keep_exactly_the_range(specs, a, b):
    batches, expected = make_batches(specs)
    lo, hi = min(a, b), max(a, b)
    rb, _ = build(batches, include_headers=False, from_offset=lo, until_offset=hi)
    got = as_rows(rb, include_headers=False) if rb is not None else []
    assert got == [e[:5] + (None,) for e in expected if lo <= e[2] < hi]


def test_records_without_headers_have_null_headers_as_sparks_kafka_source():
    data = build_batch([SimpleRecord(b"k", b"v", 5), SimpleRecord(b"k2", None, 6, (("a", b"1"),))])
    rb, _ = build([DefaultRecordBatch(data)])
    assert rb.column(7).to_pylist() == [None, [{"key": "a", "value": b"1"}]]


def test_corrupt_record_data_is_reported_with_the_batch_position_and_the_rest_kept():
    good = DefaultRecordBatch(build_batch([SimpleRecord(b"a", b"x" * 30, 1)] * 3, base_offset=0))
    bad_bytes = bytearray(build_batch([SimpleRecord(b"b", b"y" * 30, 1)] * 3, base_offset=3))
    # Make the first record's key length claim more bytes than the record has.
    bad_bytes[RECORD_BATCH_OVERHEAD + 4] = 0x7E
    bad = DefaultRecordBatch(bad_bytes)
    tail = DefaultRecordBatch(build_batch([SimpleRecord(b"c", b"z", 1)], base_offset=6))
    rb, corrupt = build([good, bad, tail], column_kernels=False)
    assert [pos for pos, _ in corrupt] == [good.size_in_bytes]
    assert rb.column(4).to_pylist() == [0, 1, 2, 6]


def test_plain_decoder_rejects_trailing_bytes():
    data = build_batch([SimpleRecord(b"a", b"b", 1)])
    with pytest.raises(CorruptRecordException):
        decode_records(bytes(data[RECORD_BATCH_OVERHEAD:]) + b"\x00", 1, 0, 0, None, [], [], [], [], None)
