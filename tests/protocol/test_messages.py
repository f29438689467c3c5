"""parse_request / encode_response and friends: dispatch, errors, zero copy, bad input."""
from __future__ import annotations

import datetime
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import response as fetch_v12
from kio.schema.metadata.v9.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v8.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.serial import entity_reader as kio_entity_reader

from kafka_py.clients.common.errors import InvalidRequestException, UnsupportedVersionException
from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys
from kafka_py.clients.common.protocol.codec import read_entity, write_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader, ResponseHeader
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_response_chunks,
    is_unsupported_api_versions_request,
    parse_request,
    parse_response,
    request_schema,
    response_schema,
    unsupported_api_versions_response,
)

from .builders import build


def produce_request(records: bytes) -> ProduceRequest:
    return ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout=datetime.timedelta(seconds=30),
        topic_data=(
            TopicProduceData(
                name="orders",
                partition_data=(PartitionProduceData(index=2, records=records),),
            ),
        ),
    )


def frame_body(frame: bytes) -> memoryview:
    return memoryview(bytearray(frame))[4:]  # writable, like FrameDecoder's frames


def test_parse_request_body() -> None:
    request = MetadataRequest(
        topics=(MetadataRequestTopic(name="a"),),
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=True,
        include_topic_authorized_operations=False,
    )
    assert parse_request(3, 9, write_entity(request)) == request


def test_records_are_a_writable_view_of_the_frame() -> None:
    records = bytes(range(200))
    frame = encode_request(RequestHeader.for_request(ApiKeys.PRODUCE, 8, 1, "p"),
                           produce_request(records))
    body = frame_body(frame)
    _, request = decode_request(body)
    parsed = request.topic_data[0].partition_data[0].records
    assert isinstance(parsed, memoryview) and parsed == records
    assert not parsed.readonly
    parsed[0:8] = struct.pack(">q", 1234)  # in-place base offset assignment
    assert bytes(body).find(struct.pack(">q", 1234)) > 0


def test_null_records_parse_as_none() -> None:
    request = produce_request(b"")
    request = ProduceRequest(
        transactional_id="txn", acks=1, timeout=request.timeout,
        topic_data=(TopicProduceData(name="t", partition_data=(
            PartitionProduceData(index=0, records=None),)),),
    )
    assert parse_request(0, 8, write_entity(request)) == request


def test_unknown_api_key() -> None:
    with pytest.raises(InvalidRequestException, match="Unknown API key 77"):
        parse_request(77, 0, b"")


def test_api_not_served() -> None:
    with pytest.raises(InvalidRequestException, match="DESCRIBE_PRODUCERS which is not enabled"):
        parse_request(ApiKeys.DESCRIBE_PRODUCERS, 0, b"\x00\x05PLAIN")


@pytest.mark.parametrize("api, version", [(ApiKeys.PRODUCE, -1), (ApiKeys.PRODUCE, 10),
                                          (ApiKeys.METADATA, 12), (ApiKeys.FETCH, -1)])
def test_unsupported_version(api, version) -> None:
    with pytest.raises(UnsupportedVersionException, match=f"version {version} is not supported"):
        parse_request(api, version, b"\x00" * 64)


def test_unsupported_version_maps_to_its_error_code() -> None:
    with pytest.raises(UnsupportedVersionException) as info:
        parse_request(ApiKeys.FETCH, 13, b"")
    assert Errors.for_exception(info.value) is Errors.UNSUPPORTED_VERSION


def test_unsupported_api_versions_request_is_answered_with_v0() -> None:
    # A client newer than us sends ApiVersions v9 with a body we cannot know.
    frame = RequestHeader(ApiKeys.API_VERSIONS, 9, 44, "future", 2).to_bytes() + b"\xde\xad"
    header, request = decode_request(frame)
    assert is_unsupported_api_versions_request(header)
    assert type(request).__version__ == 0
    response = unsupported_api_versions_response()
    encoded = encode_response(header.to_response_header(), response)
    size, correlation_id, error, count = struct.unpack_from(">iihi", encoded)
    assert (size, correlation_id) == (len(encoded) - 4, 44)
    assert error == Errors.UNSUPPORTED_VERSION.code
    assert count == 1 and struct.unpack_from(">hhh", encoded, 14) == (18, 0, 3)


def test_supported_api_versions_request_is_not_special() -> None:
    header = RequestHeader.for_request(ApiKeys.API_VERSIONS, 3, 1)
    assert not is_unsupported_api_versions_request(header)
    metadata = RequestHeader.for_request(ApiKeys.METADATA, 99, 1)
    assert not is_unsupported_api_versions_request(metadata)


@pytest.mark.parametrize("version", range(4))
def test_api_versions_response_round_trip(version) -> None:
    response = api_versions_response(version, throttle_time_ms=25)
    header = RequestHeader.for_request(ApiKeys.API_VERSIONS, version, 5).to_response_header()
    encoded = encode_response(header, response)
    # ApiVersions responses carry header v0: the body starts right after the correlation id.
    assert struct.unpack_from(">ih", encoded, 4) == (5, 0)
    parsed_header, parsed = decode_response(memoryview(encoded)[4:], ApiKeys.API_VERSIONS, version)
    assert parsed == response and parsed_header == ResponseHeader(5, 0)
    served = {k.api_key: (k.min_version, k.max_version) for k in parsed.api_keys}
    assert set(served) == {api.id for api in IMPLEMENTED_APIS}
    if version >= 1:
        assert parsed.throttle_time == datetime.timedelta(milliseconds=25)


def test_api_versions_error_response_is_v0() -> None:
    response = api_versions_response(3, error=Errors.INVALID_REQUEST)
    assert type(response).__version__ == 0
    assert response.error_code == ErrorCode.invalid_request


def test_encode_checks_header_matches_message() -> None:
    request = produce_request(b"x")
    with pytest.raises(ValueError, match="header is for api"):
        encode_request(RequestHeader.for_request(ApiKeys.PRODUCE, 9, 1), request)
    with pytest.raises(ValueError, match="needs request header v1"):
        encode_request(RequestHeader(ApiKeys.PRODUCE, 8, 1, "c", 2), request)
    response = build(fetch_v12.FetchResponse)
    with pytest.raises(ValueError, match="needs response header v1"):
        encode_response(ResponseHeader(1, 0), response)


def test_encode_response_frame_layout() -> None:
    response = build(fetch_v12.FetchResponse)
    frame = encode_response(ResponseHeader(9, 1), response)
    assert struct.unpack_from(">iiB", frame) == (len(frame) - 4, 9, 0)
    assert frame[9:] == write_entity(response)


class FileRegion:
    """Stands in for a FileRecords slice: only its length is known in memory."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def fetch_response(records_values) -> fetch_v12.FetchResponse:
    partitions = tuple(
        fetch_v12.PartitionData(
            partition_index=i, error_code=ErrorCode.none, high_watermark=10,
            last_stable_offset=10, log_start_offset=0, aborted_transactions=None,
            preferred_read_replica=-1, records=records,
        )
        for i, records in enumerate(records_values)
    )
    return fetch_v12.FetchResponse(
        throttle_time=datetime.timedelta(0), error_code=ErrorCode.none, session_id=0,
        responses=(fetch_v12.FetchableTopicResponse(topic="t", partitions=partitions),),
    )


def test_encode_response_chunks_keeps_records_apart() -> None:
    big = bytes(range(256)) * 40
    region = FileRegion(70_000)
    chunks = encode_response_chunks(ResponseHeader(3, 1), fetch_response([b"small", big, region]))
    assert chunks[1] is big and chunks[3] is region
    assert all(isinstance(c, bytes) for i, c in enumerate(chunks) if i not in (1, 3))
    total = sum(len(c) for c in chunks)
    assert struct.unpack_from(">i", chunks[0])[0] == total - 4
    # With the region's bytes filled in, the frame is what encode_response writes.
    filler = b"\x07" * region.size
    joined = b"".join(filler if c is region else bytes(c) for c in chunks)
    assert joined == encode_response(ResponseHeader(3, 1), fetch_response([b"small", big, filler]))


def test_request_schema_errors() -> None:
    with pytest.raises(UnsupportedVersionException):
        request_schema(ApiKeys.ALTER_ISR, 1)  # 2.8.2 defines AlterIsr v0 only
    assert request_schema(ApiKeys.ALTER_ISR, 0).__version__ == 0  # generated into kafka_py.clients.common.protocol.schema
    assert request_schema(ApiKeys.SASL_HANDSHAKE, 1).__version__ == 1


def test_parse_response_rejects_garbage() -> None:
    with pytest.raises(InvalidRequestException, match="Error reading response"):
        parse_response(ApiKeys.METADATA, 9, b"\x00\x00\x00")


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xff\xff\xff\xff\x0f" + b"\x00" * 16,  # compact array of 4 billion topics
        b"\x80\x80\x80\x80\x80\x80",  # endless varint
        b"\x02\x02\xff\x00\x00\x00\x00",  # invalid UTF-8 in a topic name
    ],
)
def test_malformed_metadata_v9_body(body) -> None:
    with pytest.raises(InvalidRequestException):
        parse_request(3, 9, body)


@pytest.mark.parametrize(
    "body",
    [
        struct.pack(">i", 2**31 - 1) + b"\x00" * 8,  # legacy array of 2 billion topics
        struct.pack(">i", -5),  # negative array length
    ],
)
def test_malformed_legacy_arrays(body) -> None:
    with pytest.raises(InvalidRequestException):
        parse_request(3, 4, body)


def test_negative_records_length() -> None:
    data = bytearray(write_entity(produce_request(b"abc")))
    pos = data.rfind(struct.pack(">i", 3) + b"abc")
    data[pos:pos + 4] = struct.pack(">i", -7)
    with pytest.raises(InvalidRequestException, match="negative length -7"):
        parse_request(0, 8, data)


def test_unknown_tagged_fields_are_skipped() -> None:
    request = MetadataRequest(topics=None, allow_auto_topic_creation=True,
                              include_cluster_authorized_operations=False,
                              include_topic_authorized_operations=False)
    data = write_entity(request)
    assert data.endswith(b"\x00")
    with_tags = data[:-1] + b"\x02" + b"\x2a\x03abc" + b"\x90\x03\x00"  # tags 42 and 400
    assert parse_request(3, 9, with_tags) == request


def test_tagged_field_running_past_the_end_is_invalid() -> None:
    request = MetadataRequest(topics=None, allow_auto_topic_creation=True,
                              include_cluster_authorized_operations=False,
                              include_topic_authorized_operations=False)
    data = write_entity(request)[:-1] + b"\x01\x2a\x09ab"
    with pytest.raises(InvalidRequestException, match="past the end"):
        parse_request(3, 9, data)


SERVED = [(api, v) for api in sorted(IMPLEMENTED_APIS) for v in api.supported_versions()]


@pytest.mark.parametrize("api, version", SERVED, ids=lambda x: str(x))
def test_reader_agrees_with_kio_native_reader(api, version) -> None:
    """On valid input our bounds-checked reader builds exactly what kio's builds."""
    for cls in (request_schema(api, version), response_schema(api, version)):
        message = build(cls, seed=4)
        data = write_entity(message)
        assert read_entity(cls, data) == kio_entity_reader(cls)(data, 0) == (message, len(data))


@pytest.mark.parametrize("api, version", SERVED, ids=lambda x: str(x))
def test_every_truncation_of_a_request_is_rejected(api, version) -> None:
    request = build(request_schema(api, version))
    frame = encode_request(RequestHeader.for_request(api, version, 1, "c"), request)
    body = frame[4:]
    _, parsed = decode_request(body)
    assert parsed == request
    header_size = RequestHeader.for_request(api, version, 1, "c").size()
    # Each field that precedes the cut is complete but the next one is not, so every
    # cut inside the body must fail cleanly; a cut of zero bytes too.
    for cut in range(header_size, len(body)):
        with pytest.raises(InvalidRequestException):
            decode_request(body[:cut])


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SERVED), st.binary(max_size=80))
def test_random_bodies_raise_only_our_exceptions(api_version, body) -> None:
    api, version = api_version
    try:
        parse_request(api, version, body)
    except InvalidRequestException:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=120))
def test_random_frames_raise_only_our_exceptions(frame) -> None:
    try:
        decode_request(frame)
    except (InvalidRequestException, UnsupportedVersionException):
        pass


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SERVED), st.data())
def test_bit_flips_in_valid_requests(api_version, data) -> None:
    api, version = api_version
    body = bytearray(write_entity(build(request_schema(api, version))))
    if not body:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(body) - 1))
        body[i] ^= 1 << data.draw(st.integers(0, 7))
    try:
        parse_request(api, version, body)
    except InvalidRequestException:
        pass


def test_read_entity_reports_consumed_size() -> None:
    response = build(fetch_v12.FetchResponse)
    data = write_entity(response)
    assert read_entity(fetch_v12.FetchResponse, data + b"trailing") == (response, len(data))


def test_flexible_messages_read_their_tagged_fields_present_absent_and_repeated() -> None:
    """A flexible entity is filled field by field (codec.entity_reader): a tagged field sent
    has its value, one not sent its default, each object its own, as kio's reader builds them;
    unknown tags, repeated or not, are skipped."""
    def partition(index: int, **tagged):
        return fetch_v12.PartitionData(partition_index=index, error_code=ErrorCode.none, high_watermark=10,
                                       last_stable_offset=10, log_start_offset=0, aborted_transactions=None,
                                       preferred_read_replica=-1, records=b"r", **tagged)

    response = fetch_v12.FetchResponse(throttle_time=datetime.timedelta(0), error_code=ErrorCode.none, session_id=3,
                                       responses=(fetch_v12.FetchableTopicResponse(topic="t", partitions=(
                                           partition(0, diverging_epoch=fetch_v12.EpochEndOffset(epoch=4,
                                                                                                  end_offset=7)),
                                           partition(1),
                                           partition(2, current_leader=fetch_v12.LeaderIdAndEpoch(leader_id=2,
                                                                                                  leader_epoch=5),
                                                     snapshot_id=fetch_v12.SnapshotId(end_offset=9, epoch=1)))),))
    data = write_entity(response)
    read, used = read_entity(type(response), data)
    assert (read, used) == (response, len(data)) == kio_entity_reader(type(response))(data, 0)
    first, second, third = read.responses[0].partitions
    assert first.diverging_epoch == fetch_v12.EpochEndOffset(epoch=4, end_offset=7)
    assert second.diverging_epoch == partition(1).diverging_epoch and second.snapshot_id == partition(1).snapshot_id
    assert third.current_leader == fetch_v12.LeaderIdAndEpoch(leader_id=2, leader_epoch=5)
    # MetadataRequest v9 has no tagged fields of its own: one repeated unknown tag is skipped
    request = MetadataRequest(topics=(MetadataRequestTopic(name="a"),), allow_auto_topic_creation=False,
                              include_cluster_authorized_operations=True, include_topic_authorized_operations=False)
    body = write_entity(request)
    assert parse_request(3, 9, body[:-1] + b"\x02\x2a\x01x\x2a\x01y") == request
