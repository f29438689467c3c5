"""A Produce request of versions 3 to 9 read by fast_produce_request, by its Python reader and
by the compiled one alike, is the request the generic reader (codec.read_entity) builds from
the same bytes: equal objects of the same kio classes, the records a view of the same buffer,
for any request kio writes; and bytes it is not sure of (cut short, a length out of range, a
name that is not UTF-8) are left to the generic reader, so parse_request accepts and refuses
exactly what it did before. The two readers give equal requests or both refuse."""
from __future__ import annotations

import datetime
import functools
import struct
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import InvalidRequestException
from kafka_py.clients.common.protocol import fast_produce_request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.codec import SchemaException, read_entity, write_entity
from kafka_py.clients.common.protocol.messages import parse_request, request_schema

READ_BY_HAND = range(fast_produce_request.FIRST_VERSION, fast_produce_request.LAST_VERSION + 1)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

int16s = st.integers(-(2**15), 2**15 - 1)
int32s = st.integers(-(2**31), 2**31 - 1)
names = st.text(max_size=12)
records_values = st.one_of(st.none(), st.binary(max_size=80))


@st.composite
def produce_requests(draw, version: int):
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    module = sys.modules[schema.__module__]
    topics = tuple(module.TopicProduceData(name=draw(names), partition_data=tuple(
        module.PartitionProduceData(index=draw(int32s), records=draw(records_values))
        for _ in range(draw(st.integers(0, 3))))) for _ in range(draw(st.integers(0, 3))))
    return schema(transactional_id=draw(st.one_of(st.none(), names)), acks=draw(int16s),
                  timeout=datetime.timedelta(milliseconds=draw(int32s)), topic_data=topics)


KINDS = ["python", "compiled"]


@pytest.fixture(params=KINDS)
def kind(request, monkeypatch) -> str:
    """Which reader produce_request_reader hands out: the compiled one, or the Python fallback."""
    if request.param == "python":
        monkeypatch.setattr(fast_produce_request, "_compiled", None)
    elif fast_produce_request._compiled is None:
        pytest.skip("the compiled reader was not built")
    return request.param


def reader_of(kind: str, version: int):
    """The reader of ``kind`` for ``version`` whatever the fixture patched."""
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    if kind == "python":
        module = sys.modules[schema.__module__]
        make = fast_produce_request._flexible_reader if version >= 9 else fast_produce_request._reader
        return make(schema, module.TopicProduceData, module.PartitionProduceData, {})
    return fast_produce_request.produce_request_reader(schema)


def generic(schema: type, body: memoryview):
    request, _ = read_entity(schema, body)
    return request


def assert_same_request(by_hand, expected, body: memoryview) -> None:
    assert type(by_hand) is type(expected)
    assert by_hand == expected
    for topic, want_topic in zip(by_hand.topic_data, expected.topic_data, strict=True):
        assert type(topic) is type(want_topic)
        for partition, want in zip(topic.partition_data, want_topic.partition_data, strict=True):
            assert type(partition) is type(want)
            if want.records is None:
                assert partition.records is None
            else:
                # a view of the request's buffer, writable as the generic reader's (offsets are
                # assigned in place), not a copy
                assert isinstance(partition.records, memoryview)
                assert partition.records.obj is body.obj
                assert partition.records.readonly == want.records.readonly
                assert bytes(partition.records) == bytes(want.records)


@pytest.mark.parametrize("version", READ_BY_HAND)
def test_a_request_reads_as_the_generic_reader_reads_it(version: int, kind: str) -> None:
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    read = fast_produce_request.produce_request_reader(schema)
    assert read is not None
    assert isinstance(read, functools.partial) == (kind == "compiled")

    @SETTINGS
    @given(produce_requests(version))
    def check(request) -> None:
        body = memoryview(bytearray(write_entity(request)))
        by_hand = read(body)
        assert by_hand is not None
        assert_same_request(by_hand, generic(schema, body), body)
        assert by_hand == request
        # and what parse_request hands the handler
        assert_same_request(parse_request(ApiKeys.PRODUCE.id, version, body), by_hand, body)

    check()


@pytest.mark.parametrize("version", READ_BY_HAND)
def test_bytes_after_the_body_are_ignored(version: int, kind: str) -> None:
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    module = sys.modules[schema.__module__]
    request = schema(transactional_id="tx", acks=-1, timeout=datetime.timedelta(seconds=30), topic_data=(
        module.TopicProduceData(name="t", partition_data=(module.PartitionProduceData(index=2, records=b"r" * 9),)),))
    body = memoryview(bytearray(write_entity(request) + b"\x01\x02\x03"))
    assert_same_request(fast_produce_request.produce_request_reader(schema)(body), generic(schema, body), body)


def malformed_bodies(version: int):
    """A request's bytes cut at every length, each length and count of it made out of range
    in turn, and its topic name made invalid UTF-8."""
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    module = sys.modules[schema.__module__]
    request = schema(transactional_id="tx", acks=1, timeout=datetime.timedelta(seconds=5), topic_data=(
        module.TopicProduceData(name="topic", partition_data=(
            module.PartitionProduceData(index=0, records=b"abc"),
            module.PartitionProduceData(index=1, records=None))),))
    good = write_entity(request)
    for cut in range(len(good)):
        yield good[:cut]
    if version >= 9:
        yield from _malformed_flexible(good)
        return
    # where each length or count sits in `good`, its width, and the values to put there
    fields = ((0, 2, (-2, 3, 100)),  # transactional id
              (10, 4, (-1, 2, 1 << 30)),  # topics
              (14, 2, (-1, 6, 200)),  # topic name
              (21, 4, (-1, 3, 1 << 30)),  # partitions
              (29, 4, (-2, 4, 1 << 20)),  # records of partition 0
              (40, 4, (-3, 0, 1)))  # records of partition 1 (null)
    for at, width, values in fields:
        for value in values:
            body = bytearray(good)
            struct.pack_into(">h" if width == 2 else ">i", body, at, value)
            yield bytes(body)
    body = bytearray(good)
    body[16] = 0xFF  # the topic name's first byte
    yield bytes(body)


def _malformed_flexible(good: bytes):
    """v9: each compact length, count and tagged field section of `good` (the request of
    malformed_bodies) set to other bytes in turn, the topic name made invalid UTF-8, and an
    unknown tagged field added (the generic reader skips it)."""
    # where each one-byte varint sits in `good`, and the values to put there
    fields = ((0, (0x00, 0x7F, 0x80)),  # transactional id (0: null)
              (9, (0x00, 0x01, 0x7F, 0x80)),  # topics
              (10, (0x00, 0x7F)),  # topic name
              (16, (0x00, 0x01, 0x7F)),  # partitions
              (21, (0x00, 0x01, 0x7F, 0x80)),  # records of partition 0
              (25, (0x01,)),  # partition 0's tagged fields
              (30, (0x02, 0x7F)),  # records of partition 1 (null)
              (31, (0x02,)),  # partition 1's tagged fields
              (32, (0x01,)),  # the topic's tagged fields
              (33, (0x05,)))  # the request's tagged fields
    assert good[11:16] == b"topic" and good[22:25] == b"abc" and len(good) == 34
    for at, values in fields:
        for value in values:
            body = bytearray(good)
            body[at] = value
            yield bytes(body)
    body = bytearray(good)
    body[11] = 0xFF
    yield bytes(body)
    yield good[:-1] + b"\x01\x2a\x01x"  # tag 42, one byte
    yield good[:-1] + b"\x01\x80\x80\x80\x80\x01\x00"  # a tag as a five-byte varint


def outcome(read, body: memoryview):
    try:
        return "ok", read(body)
    except (SchemaException, InvalidRequestException) as e:
        return type(e), str(e)


@pytest.mark.parametrize("version", READ_BY_HAND)
def test_malformed_bytes_are_left_to_the_generic_reader(version: int, kind: str) -> None:
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    read = fast_produce_request.produce_request_reader(schema)
    refused = 0
    for raw in malformed_bodies(version):
        body = memoryview(bytearray(raw))
        by_hand = read(body)
        expected = outcome(lambda b: generic(schema, b), body)
        if by_hand is None:
            refused += 1
        else:
            # read by hand only where the generic reader reads the same request
            assert expected[0] == "ok"
            assert_same_request(by_hand, expected[1], body)
        # parse_request answers as the generic reader did, error messages included
        got = outcome(lambda b: parse_request(ApiKeys.PRODUCE.id, version, b), body)
        if expected[0] == "ok":
            assert got[0] == "ok"
            assert_same_request(got[1], expected[1], body)
        else:
            assert got[0] is InvalidRequestException
            assert got[1].endswith(expected[1])
    assert refused > 30


def test_other_versions_and_classes_have_no_hand_reader() -> None:
    for version in ApiKeys.PRODUCE.schema_versions():
        reader = fast_produce_request.produce_request_reader(request_schema(ApiKeys.PRODUCE.id, version))
        assert (reader is not None) == (version in READ_BY_HAND)
    assert fast_produce_request.produce_request_reader(request_schema(ApiKeys.FETCH.id, 4)) is None


@pytest.mark.skipif(fast_produce_request._compiled is None, reason="the compiled reader was not built")
@pytest.mark.parametrize("version", READ_BY_HAND)
def test_the_compiled_reader_reads_what_the_python_one_reads(version: int) -> None:
    python, compiled = reader_of("python", version), reader_of("compiled", version)

    @SETTINGS
    @given(produce_requests(version), st.binary(max_size=4))
    def check(request, tail: bytes) -> None:
        body = memoryview(bytearray(write_entity(request) + tail))
        by_python, by_c = python(body), compiled(body)
        assert by_python is not None
        assert_same_request(by_c, by_python, body)

    check()
    refused = 0
    for raw in malformed_bodies(version):
        body = memoryview(bytearray(raw))
        by_python, by_c = python(body), compiled(body)
        if by_python is None:
            assert by_c is None
            refused += 1
        else:
            assert_same_request(by_c, by_python, body)
    assert refused > 30
    # a read-only buffer reads alike, its records views read-only as the generic reader's
    schema = request_schema(ApiKeys.PRODUCE.id, version)
    module = sys.modules[schema.__module__]
    body = memoryview(write_entity(schema(transactional_id="tx", acks=-1, timeout=datetime.timedelta(seconds=3),
                                          topic_data=(module.TopicProduceData(name="t", partition_data=(
                                              module.PartitionProduceData(index=1, records=b"abc"),)),))))
    assert_same_request(compiled(body), python(body), body)
    assert_same_request(compiled(body), generic(schema, body), body)


@pytest.mark.skipif(fast_produce_request._compiled is None, reason="the compiled reader was not built")
def test_the_compiled_reader_builds_timeouts_as_timedelta_does() -> None:
    compiled = reader_of("compiled", 8)
    schema = request_schema(ApiKeys.PRODUCE.id, 8)
    for ms in (0, 1, 999, 1000, 30_000, 86_399_999, 86_400_000, 2**31 - 1, -1, -1000, -86_400_001, -(2**31)):
        body = memoryview(write_entity(schema(transactional_id=None, acks=1,
                                              timeout=datetime.timedelta(milliseconds=ms), topic_data=())))
        timeout, expected = compiled(body).timeout, datetime.timedelta(milliseconds=ms)
        assert (timeout.days, timeout.seconds, timeout.microseconds) == (
            expected.days, expected.seconds, expected.microseconds)
