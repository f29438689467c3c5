"""A replica fetcher's Fetch request written by fast_fetch_request.encode_fetch_request is,
byte for byte, the request kio writes from the same values (forgotten topics included), for
every Fetch version; and fast_fetch_response.read_fetch_response reads every field a fetcher
uses from any answer kio writes (tagged fields of v12 included), the records a view of the
frame, never a copy."""
from __future__ import annotations

import datetime
import struct
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from kafka_py.clients.common.protocol import fast_fetch_request, fast_fetch_response
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.headers import RequestHeader, ResponseHeader
from kafka_py.clients.common.protocol.messages import encode_request, encode_response, request_schema, response_schema

VERSIONS = list(ApiKeys.FETCH.supported_versions())
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

int8s = st.integers(0, 1)
int32s = st.integers(-(2**31), 2**31 - 1)
int64s = st.integers(-(2**63), 2**63 - 1)
names = st.text(min_size=0, max_size=12)
client_ids = st.one_of(st.none(), names)


@st.composite
def fetch_requests(draw):
    topics = []
    for _ in range(draw(st.integers(0, 3))):
        partitions = [tuple(draw(st.tuples(int32s, int32s, int64s, int32s, int64s, int32s)))
                      for _ in range(draw(st.integers(0, 3)))]
        topics.append((draw(names), partitions))
    # an incremental fetch's partitions to forget (v7+)
    forgotten = [(draw(names), draw(st.lists(int32s, max_size=3))) for _ in range(draw(st.integers(0, 2)))]
    return dict(correlation_id=draw(int32s), client_id=draw(client_ids), replica_id=draw(int32s),
                max_wait_ms=draw(st.integers(0, 2**31 - 1)), min_bytes=draw(int32s), max_bytes=draw(int32s),
                isolation_level=draw(int8s), session_id=draw(int32s), session_epoch=draw(int32s), topics=topics,
                rack_id=draw(names), forgotten_topics=forgotten)


def kio_request_frame(version: int, values: dict) -> bytes:
    topics = [{"topic": topic, "partitions": [{
        "partition": p, "current_leader_epoch": epoch, "fetch_offset": offset, "last_fetched_epoch": last_epoch,
        "log_start_offset": start, "partition_max_bytes": max_bytes}
        for p, epoch, offset, last_epoch, start, max_bytes in partitions]} for topic, partitions in values["topics"]]
    body = build_entity(request_schema(ApiKeys.FETCH, version), {
        "replica_id": values["replica_id"], "max_wait": values["max_wait_ms"], "min_bytes": values["min_bytes"],
        "max_bytes": values["max_bytes"], "isolation_level": values["isolation_level"],
        "session_id": values["session_id"], "session_epoch": values["session_epoch"],
        "forgotten_topics_data": [{"topic": topic, "partitions": partitions}
                                  for topic, partitions in values["forgotten_topics"]],
        "rack_id": values["rack_id"], "topics": topics})
    header = RequestHeader.for_request(ApiKeys.FETCH, version, values["correlation_id"], values["client_id"])
    return encode_request(header, body)


@pytest.mark.parametrize("version", VERSIONS)
def test_fetch_request_bytes_equal_kio(version: int) -> None:
    @SETTINGS
    @given(fetch_requests())
    def check(values: dict) -> None:
        assert fast_fetch_request.encode_fetch_request(version, **values) == kio_request_frame(version, values)

    check()


def test_fetch_request_of_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError):
        fast_fetch_request.encode_fetch_request(13, 1, "c", 1, 500, 1, 1 << 20, 0, 0, -1, [])


records_values = st.one_of(st.none(), st.binary(max_size=64), st.integers(4096, 9000).map(
    lambda n: bytes(i % 251 for i in range(n))))
error_codes = st.sampled_from([ErrorCode.none, ErrorCode.offset_out_of_range, ErrorCode.fenced_leader_epoch,
                               ErrorCode.not_leader_or_follower, ErrorCode.unknown_topic_or_partition])


@st.composite
def fetch_responses(draw, version: int):
    schema = response_schema(ApiKeys.FETCH.id, version)
    module = sys.modules[schema.__module__]
    topics = []
    for _ in range(draw(st.integers(0, 2))):
        partitions = []
        for _ in range(draw(st.integers(0, 3))):
            values = dict(partition_index=draw(int32s), error_code=draw(error_codes), high_watermark=draw(int64s),
                          records=draw(records_values))
            if version >= 4:
                values["last_stable_offset"] = draw(int64s)
                values["aborted_transactions"] = draw(st.one_of(st.none(), st.lists(st.builds(
                    module.AbortedTransaction, producer_id=int64s, first_offset=int64s), max_size=2).map(tuple)))
            if version >= 5:
                values["log_start_offset"] = draw(int64s)
            if version >= 11:
                values["preferred_read_replica"] = draw(int32s)
            if version >= 12:
                if draw(st.booleans()):
                    values["diverging_epoch"] = module.EpochEndOffset(epoch=draw(int32s), end_offset=draw(int64s))
                if draw(st.booleans()):
                    values["current_leader"] = module.LeaderIdAndEpoch(leader_id=draw(int32s),
                                                                       leader_epoch=draw(int32s))
                if draw(st.booleans()):
                    values["snapshot_id"] = module.SnapshotId(end_offset=draw(int64s), epoch=draw(int32s))
            partitions.append(module.PartitionData(**values))
        topics.append(module.FetchableTopicResponse(topic=draw(names), partitions=tuple(partitions)))
    values = dict(responses=tuple(topics))
    if version >= 1:
        values["throttle_time"] = datetime.timedelta(milliseconds=draw(st.integers(0, 2**31 - 1)))
    if version >= 7:
        values.update(error_code=draw(error_codes), session_id=draw(int32s))
    return schema(**values)


def body_of(response) -> memoryview:
    """The answer's bytes after its size prefix and header, as a fetcher's client holds them."""
    version = int(response.__version__)
    header = ResponseHeader(7, ApiKeys.FETCH.response_header_version(version))
    frame = encode_response(header, response)
    return memoryview(bytearray(frame))[4 + len(header.to_bytes()):]


@pytest.mark.parametrize("version", VERSIONS)
def test_fetch_answer_read_as_kio_wrote_it(version: int) -> None:
    @SETTINGS
    @given(fetch_responses(version))
    def check(response) -> None:
        body = body_of(response)
        answer = fast_fetch_response.read_fetch_response(version, body)
        assert answer.throttle_time_ms == (
            round(response.throttle_time.total_seconds() * 1000) if version >= 1 else 0)
        if version >= 7:
            assert answer.error_code == response.error_code.value
            assert answer.session_id == response.session_id
        assert [topic for topic, _ in answer.responses] == [t.topic for t in response.responses]
        for (_, parts), expected in zip(answer.responses, response.responses):
            assert len(parts) == len(expected.partitions)
            for got, want in zip(parts, expected.partitions):
                assert got.partition_index == want.partition_index
                assert got.error_code == want.error_code.value
                assert got.high_watermark == want.high_watermark
                assert got.last_stable_offset == (want.last_stable_offset if version >= 4 else -1)
                assert got.log_start_offset == (want.log_start_offset if version >= 5 else -1)
                assert got.preferred_read_replica == (want.preferred_read_replica if version >= 11 else -1)
                if version >= 4:
                    want_aborted = (None if want.aborted_transactions is None else
                                    [(a.producer_id, a.first_offset) for a in want.aborted_transactions])
                    assert got.aborted_transactions == want_aborted
                diverging = getattr(want, "diverging_epoch", None)
                if diverging is None or (diverging.epoch, diverging.end_offset) == (-1, -1):
                    assert got.diverging_epoch is None or got.diverging_epoch == (-1, -1)
                else:
                    assert got.diverging_epoch == (diverging.epoch, diverging.end_offset)
                if want.records is None:
                    assert got.records is None
                else:
                    assert bytes(got.records) == bytes(want.records)
                    # a view of the frame it came in, not a copy
                    assert isinstance(got.records, memoryview) and got.records.obj is body.obj

    check()


def test_a_truncated_fetch_answer_is_refused() -> None:
    schema = response_schema(ApiKeys.FETCH.id, 12)
    module = sys.modules[schema.__module__]
    response = schema(throttle_time=datetime.timedelta(0), error_code=ErrorCode.none, session_id=0, responses=(
        module.FetchableTopicResponse(topic="t", partitions=(module.PartitionData(
            partition_index=0, error_code=ErrorCode.none, high_watermark=5, last_stable_offset=5,
            aborted_transactions=None, records=b"x" * 100),)),))
    body = body_of(response)
    for cut in (3, 20, len(body) - 50):
        with pytest.raises((ValueError, IndexError, struct.error)):
            fast_fetch_response.read_fetch_response(12, body[:cut])
