"""KafkaApis' check of a produce request's records (ProduceRequest.validateRecords): the
header-only acceptance of one magic-2 batch, and the walk that names what is wrong."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    UnsupportedCompressionTypeException,
)
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.server.kafka_apis import _validate_produce_records


def batch(compression: CompressionType = CompressionType.NONE, count: int = 3) -> bytes:
    return bytes(build_batch([SimpleRecord(b"k", b"v" * 50, 1_000 + i) for i in range(count)],
                             compression=compression))


def test_one_batch_is_accepted_as_a_view_of_the_request():
    data = bytearray(batch())
    records = _validate_produce_records(8, memoryview(data))
    assert records.size_in_bytes == len(data)
    # no copy: offsets are later assigned in place, in the request's buffer
    records.buffer[0] = 0x7F
    assert data[0] == 0x7F


def test_missing_records_are_refused():
    with pytest.raises(InvalidRecordException, match="at least one record batch"):
        _validate_produce_records(8, None)
    with pytest.raises(InvalidRecordException, match="at least one record batch"):
        _validate_produce_records(8, b"")


def test_two_batches_are_refused():
    with pytest.raises(InvalidRecordException, match="exactly one record batch"):
        _validate_produce_records(8, batch() + batch())


def test_an_old_magic_is_refused_from_v3_on():
    data = bytearray(batch())
    data[16] = 1
    with pytest.raises(InvalidRecordException, match="magic version 2"):
        _validate_produce_records(8, data)


def test_v0_to_v2_message_sets_are_taken_as_they_are():
    """ProduceRequest.validateRecords checks nothing below v3 (old clients sent any magic):
    the log's validator checks the set and converts it to the topic's format."""
    from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyEntry, build_legacy_records

    data = bytearray(build_legacy_records([LegacyEntry(i, 1_000, b"k", b"v") for i in range(3)], 1))
    for version in (0, 1, 2):
        records = _validate_produce_records(version, memoryview(data))
        assert bytes(records.buffer) == bytes(data)
        assert [b.magic for b in records.batches()] == [1, 1, 1]


def test_a_length_field_past_the_end_is_corrupt():
    data = batch()
    with pytest.raises(CorruptRecordException):
        _validate_produce_records(8, data[:-5])


def test_trailing_bytes_after_the_batch_are_refused():
    with pytest.raises((InvalidRecordException, CorruptRecordException)):
        _validate_produce_records(8, batch() + b"\0" * 20)


@pytest.mark.parametrize("version", [3, 5, 6])
def test_zstd_needs_version_7(version):
    data = batch(CompressionType.ZSTD)
    with pytest.raises(UnsupportedCompressionTypeException, match="ZStandard"):
        _validate_produce_records(version, data)
    assert _validate_produce_records(7, data).size_in_bytes == len(data)


@pytest.mark.parametrize("compression", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4])
def test_other_codecs_pass_on_any_version(compression):
    data = batch(compression)
    assert _validate_produce_records(3, data).size_in_bytes == len(data)
