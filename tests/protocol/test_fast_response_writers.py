"""The hand-written Produce, Fetch and Metadata response writers of
kafka_py/clients/common/protocol/fast_*_response.py against the generic ones: the same bytes as kio's writer
(and as kafka-python rewrites them), and for a Produce answer written from plain values the
same bytes as KafkaApis' generic builder's response encoded, for every version the broker
serves."""
from __future__ import annotations

import datetime
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.index import load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_writer

from kafka_py.clients.common.protocol import fast_response_writers
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.codec import ChunkWriter
from kafka_py.clients.common.protocol.headers import ResponseHeader
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    encode_response,
    encode_response_chunks,
    encode_response_chunks_for,
    response_schema,
)

PRODUCE_VERSIONS = [v for v in ApiKeys.PRODUCE.supported_versions() if v >= 3]
# every version: v0-v3 (the old consumers') are this project's generated classes, v4+ kio's
FETCH_VERSIONS = list(ApiKeys.FETCH.supported_versions())
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

error_codes = st.sampled_from([ErrorCode.none, ErrorCode.not_leader_or_follower, ErrorCode.corrupt_message,
                               ErrorCode.unknown_topic_or_partition, ErrorCode.record_list_too_large])
names = st.text(min_size=0, max_size=12)
int32s = st.integers(-(2**31), 2**31 - 1)
int64s = st.integers(-(2**63), 2**63 - 1)
datetimes = st.one_of(st.none(), st.integers(0, 2**41).map(
    lambda ms: datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)))
throttles = st.integers(0, 2**31 - 1).map(lambda ms: datetime.timedelta(milliseconds=ms))


class FileRegion:
    """Stands in for a FileRecords slice: only its length is known in memory."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def generic_chunks(header: ResponseHeader, response) -> list:
    """What encode_response_chunks gave before the fast path: kio's writer into a ChunkWriter."""
    writer = ChunkWriter()
    writer.write(header.to_bytes())
    entity_writer(type(response))(writer, response)
    chunks = writer.getvalue()
    chunks[0] = sum(len(c) for c in chunks).to_bytes(4, "big") + chunks[0]
    return chunks


def wire(chunks: list, fill: bytes = b"\x07") -> bytes:
    return b"".join(fill * len(c) if isinstance(c, FileRegion) else bytes(c) for c in chunks)


def header_for(response) -> ResponseHeader:
    api = ApiKeys(int(response.__api_key__))
    return ResponseHeader(12345, api.response_header_version(int(response.__version__)))


# ---------------------------------------------------------------------------- Produce response

@st.composite
def produce_responses(draw, version: int):
    schema = load_response_schema(ApiKeys.PRODUCE.id, version)
    module = sys.modules[schema.__module__]
    topics = []
    for _ in range(draw(st.integers(0, 3))):
        partitions = []
        for _ in range(draw(st.integers(0, 3))):
            values = dict(index=draw(int32s), error_code=draw(error_codes), base_offset=draw(int64s),
                          log_append_time=draw(datetimes))
            if version >= 5:
                values["log_start_offset"] = draw(int64s)
            if version >= 8:
                values["record_errors"] = tuple(
                    module.BatchIndexAndErrorMessage(batch_index=draw(int32s),
                                                     batch_index_error_message=draw(st.one_of(st.none(), names)))
                    for _ in range(draw(st.integers(0, 2))))
                values["error_message"] = draw(st.one_of(st.none(), names))
            partitions.append(module.PartitionProduceResponse(**values))
        topics.append(module.TopicProduceResponse(name=draw(names), partition_responses=tuple(partitions)))
    return schema(responses=tuple(topics), throttle_time=draw(throttles))


@pytest.mark.parametrize("version", PRODUCE_VERSIONS)
def test_produce_response_bytes_equal_kio(version: int) -> None:
    @SETTINGS
    @given(produce_responses(version))
    def check(response) -> None:
        header = header_for(response)
        chunks = fast_response_writers.encode_response_chunks(header.to_bytes(), response)
        assert chunks is not None and len(chunks) == 1
        assert chunks == [encode_response(header, response)]
        assert wire(chunks) == wire(generic_chunks(header, response))

    check()


def test_produce_response_of_one_partition_is_one_bytes_chunk() -> None:
    schema = load_response_schema(ApiKeys.PRODUCE.id, 8)
    module = sys.modules[schema.__module__]
    response = schema(responses=(module.TopicProduceResponse(name="t", partition_responses=(
        module.PartitionProduceResponse(index=0, error_code=ErrorCode.none, base_offset=41, log_append_time=None,
                                        log_start_offset=0, record_errors=(), error_message=None),)),))
    chunks = encode_response_chunks(ResponseHeader(7, 0), response)
    assert len(chunks) == 1 and isinstance(chunks[0], bytes)
    assert chunks[0] == encode_response(ResponseHeader(7, 0), response)


def test_produce_response_with_values_the_layout_cannot_take_falls_back() -> None:
    schema = load_response_schema(ApiKeys.PRODUCE.id, 7)
    module = sys.modules[schema.__module__]
    response = schema(responses=(module.TopicProduceResponse(name="t", partition_responses=(
        module.PartitionProduceResponse(index=0, error_code=3, base_offset=1, log_append_time=None,
                                        log_start_offset=0),)),))
    # an int where kio expects an ErrorCode: left to the generic writer and its verdict
    assert fast_response_writers.encode_response_chunks(b"\0\0\0\0", response) is None


# ---------------------------------------------------------------------------- Fetch response

records_values = st.one_of(
    st.none(),
    st.binary(max_size=64),
    st.integers(4096, 9000).map(lambda n: bytes(n % 251 for n in range(n))),
    st.integers(0, 70_000).map(FileRegion),
)


@st.composite
def fetch_responses(draw, version: int, tagged: bool = False):
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
            if tagged and version >= 12 and draw(st.booleans()):
                values["diverging_epoch"] = module.EpochEndOffset(epoch=draw(int32s), end_offset=draw(int64s))
            partitions.append(module.PartitionData(**values))
        topics.append(module.FetchableTopicResponse(topic=draw(names), partitions=tuple(partitions)))
    values = dict(responses=tuple(topics))
    if version >= 1:
        values["throttle_time"] = draw(throttles)
    if version >= 7:
        values.update(error_code=draw(error_codes), session_id=draw(int32s))
    return schema(**values)


@pytest.mark.parametrize("version", FETCH_VERSIONS)
def test_fetch_response_bytes_equal_kio(version: int) -> None:
    @SETTINGS
    @given(fetch_responses(version))
    def check(response) -> None:
        header = header_for(response)
        chunks = fast_response_writers.encode_response_chunks(header.to_bytes(), response)
        assert chunks is not None
        assert wire(chunks) == wire(generic_chunks(header, response))
        # records never copied when large or not in memory; encoded parts are bytes
        for partition in (p for t in response.responses for p in t.partitions):
            records = partition.records
            if isinstance(records, FileRegion) and len(records) or (
                    isinstance(records, bytes) and len(records) >= 4096):
                assert any(c is records for c in chunks)
        assert all(isinstance(c, bytes) for c in chunks[::2])
        assert int.from_bytes(chunks[0][:4], "big") == sum(len(c) for c in chunks) - 4

    check()


def test_fetch_v12_tagged_fields_fall_back_to_the_generic_writer() -> None:
    @SETTINGS
    @given(fetch_responses(12, tagged=True))
    def check(response) -> None:
        header = header_for(response)
        assert wire(encode_response_chunks(header, response)) == wire(generic_chunks(header, response))

    check()
    schema = load_response_schema(ApiKeys.FETCH.id, 12)
    module = sys.modules[schema.__module__]
    diverging = schema(throttle_time=datetime.timedelta(0), error_code=ErrorCode.none, session_id=0, responses=(
        module.FetchableTopicResponse(topic="t", partitions=(module.PartitionData(
            partition_index=0, error_code=ErrorCode.none, high_watermark=5, last_stable_offset=5,
            diverging_epoch=module.EpochEndOffset(epoch=3, end_offset=4), aborted_transactions=None,
            records=b""),)),))
    assert fast_response_writers.encode_response_chunks(b"", diverging) is None


@pytest.mark.parametrize("api, version", [(ApiKeys.PRODUCE, v) for v in PRODUCE_VERSIONS]
                         + [(ApiKeys.FETCH, v) for v in FETCH_VERSIONS])
def test_kafka_python_reads_and_rewrites_the_same_frame(api: ApiKeys, version: int) -> None:
    from kafka.protocol.consumer.fetch import FetchResponse as KFetchResponse
    from kafka.protocol.producer.produce import ProduceResponse as KProduceResponse

    strategy = produce_responses(version) if api is ApiKeys.PRODUCE else fetch_responses(version)

    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(strategy)
    def check(response) -> None:
        header = header_for(response)
        chunks = encode_response_chunks(header, response)
        frame = wire(chunks)
        theirs = (KProduceResponse if api is ApiKeys.PRODUCE else KFetchResponse).decode(
            frame, version=version, header=True, framed=True)
        assert bytes(theirs.encode(header=True, framed=True)) == frame

    check()


@pytest.mark.parametrize("api, version", [(ApiKeys.PRODUCE, 8), (ApiKeys.PRODUCE, 9), (ApiKeys.FETCH, 11),
                                          (ApiKeys.FETCH, 12), (ApiKeys.API_VERSIONS, 3)])
def test_response_chunks_for_a_request_header(api: ApiKeys, version: int) -> None:
    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(-(2**31), 2**31 - 1), st.data())
    def check(correlation_id: int, data) -> None:
        if api is ApiKeys.PRODUCE:
            response = data.draw(produce_responses(version))
        elif api is ApiKeys.FETCH:
            response = data.draw(fetch_responses(version))
        else:
            response = api_versions_response(version)
        request_header = RequestHeader.for_request(api, version, correlation_id, "c")
        expected = encode_response_chunks(request_header.to_response_header(), response)
        assert wire(encode_response_chunks_for(request_header, response)) == wire(expected)

    check()


def produce_answer_values():
    """Topics as encode_produce_response takes them: (name, [(index, error, base offset,
    log append time, log start offset, record errors, message)])."""
    from kafka_py.clients.common.protocol.errors import Errors

    partitions = st.tuples(int32s, st.sampled_from(list(Errors)[:8]), int64s,
                           st.one_of(st.just(-1), st.integers(0, 2**41)), int64s,
                           st.lists(st.tuples(int32s, st.one_of(st.none(), names)), max_size=2),
                           st.one_of(st.none(), names))
    return st.lists(st.tuples(names, st.lists(partitions, max_size=3)), max_size=3)


@pytest.fixture(params=["python", "compiled"])
def produce_values_writer(request, monkeypatch) -> str:
    """encode_produce_response with its compiled values writer, or with the Python fallback."""
    from kafka_py.clients.common.protocol import fast_produce_response

    if request.param == "python":
        monkeypatch.setattr(fast_produce_response, "_compiled", None)
    elif fast_produce_response._compiled is None:
        pytest.skip("the compiled writer was not built")
    return request.param


@pytest.mark.parametrize("version", PRODUCE_VERSIONS)
def test_produce_frame_from_values_equals_the_generic_response_encoded(version: int,
                                                                       produce_values_writer: str) -> None:
    from kafka_py.clients.common.protocol.fast_produce_response import encode_produce_response
    from kafka_py.clients.common.protocol.messages import response_schema
    from kafka_py.clients.common.protocol.entities import build_entity

    @SETTINGS
    @given(produce_answer_values(), st.integers(0, 2**31 - 1), int32s)
    def check(topics, throttle, correlation_id) -> None:
        generic = build_entity(response_schema(ApiKeys.PRODUCE, version), {
            "throttle_time": throttle,
            "responses": [{"name": name, "partition_responses": [
                {"index": index, "error_code": error, "base_offset": base, "log_append_time": append_time,
                 "log_start_offset": start, "error_message": message,
                 "record_errors": [{"batch_index": i, "batch_index_error_message": m} for i, m in errors]}
                for index, error, base, append_time, start, errors, message in parts]}
                for name, parts in topics]})
        request_header = RequestHeader.for_request(ApiKeys.PRODUCE, version, correlation_id, "c")
        expected = encode_response(request_header.to_response_header(), generic)
        assert bytes(encode_produce_response(version, correlation_id, topics, throttle)) == expected

    check()


def test_produce_frame_refuses_a_topic_name_too_long_for_its_field(produce_values_writer: str) -> None:
    from kafka_py.clients.common.protocol.errors import Errors
    from kafka_py.clients.common.protocol.fast_produce_response import encode_produce_response

    with pytest.raises(ValueError):
        encode_produce_response(7, 1, [("t" * 40_000, [(0, Errors.NONE, 0, -1, 0, (), None)])])


def unusual_produce_values():
    """Makers of values only the Python writer handles (writing them or raising): other types,
    values out of their fields' range, a name too long for a legacy string or not encodable,
    iterators; and of a few it writes the same either way. Makers, as an iterator is used up."""
    from kafka_py.clients.common.protocol.errors import Errors

    def topics(name="t", index=0, error=Errors.NONE, base=5, append_time=-1, start=0, errors=(), message=None,
               partitions=None):
        return lambda: [(name, partitions() if partitions is not None else
                         [(index, error, base, append_time, start, errors() if callable(errors) else errors,
                           message)])]

    yield topics(index=2**31)
    yield topics(index="0")
    yield topics(error=2**15)
    yield topics(error=None)
    yield topics(base=2**63)
    yield topics(append_time=1.5)
    yield topics(start=-(2**63) - 1)
    yield topics(name="t" * 40_000)
    yield topics(name=None)
    yield topics(name=b"t")
    yield topics(name="\ud800")
    yield topics(message=3)
    yield topics(message="\udfff")
    yield topics(errors=[(2**31, "m")])
    yield topics(errors=[(1, "m", 2)])
    yield topics(errors=[(1, 7)])
    yield topics(errors=lambda: iter([(1, "m")]))
    yield topics(partitions=lambda: iter([(0, Errors.NONE, 5, -1, 0, (), None)]))
    yield topics(partitions=lambda: [(0, Errors.NONE, 5)])
    yield lambda: iter(topics()())
    yield lambda: [("t",)]
    # ... and ones it writes: an int or kio's ErrorCode for the error, tuples, a bool, no partitions
    yield topics(error=3)
    yield topics(error=ErrorCode.corrupt_message)
    yield topics(index=True, errors=((1, None), (2, "m")), message="é")
    yield lambda: [("t", ())]


@pytest.mark.parametrize("version", PRODUCE_VERSIONS)
def test_compiled_produce_values_writer_writes_what_the_python_one_writes(version: int, monkeypatch) -> None:
    from kafka_py.clients.common.protocol import fast_produce_response

    compiled = fast_produce_response._compiled
    if compiled is None:
        pytest.skip("the compiled writer was not built")

    body = 9 if version >= 9 else 8  # after the size, the correlation id and v9's tagged fields

    def outcome(topics, throttle, use_compiled: bool):
        monkeypatch.setattr(fast_produce_response, "_compiled", compiled if use_compiled else None)
        try:
            return bytes(fast_produce_response.encode_produce_response(version, 9, topics, throttle))
        except Exception as e:  # noqa: BLE001 - the same exception either way is the point
            return type(e)

    @SETTINGS
    @given(produce_answer_values(), int32s)
    def check(topics, throttle) -> None:
        expected = outcome(topics, throttle, False)
        assert outcome(topics, throttle, True) == expected
        out = bytearray(b"head")
        assert compiled.write_values(version, topics, throttle, out) is True
        assert bytes(out[4:]) == expected[body:]

    check()
    written_by_c = 0
    for make in unusual_produce_values():
        expected = outcome(make(), 0, False)
        assert outcome(make(), 0, True) == expected
        out = bytearray(b"head")
        if compiled.write_values(version, make(), 0, out):
            written_by_c += 1
            assert bytes(out[4:]) == expected[body:]
        else:
            assert out == b"head"  # nothing written: the Python writer starts from the same bytes
    assert written_by_c >= 4
    for throttle in (2**31, -(2**31) - 1, "1"):
        out = bytearray()
        assert compiled.write_values(version, [], throttle, out) is False and out == b""
        assert outcome([], throttle, True) == outcome([], throttle, False)


# ---------------------------------------------------------------------------- Metadata response

METADATA_VERSIONS = list(ApiKeys.METADATA.supported_versions())
node_lists = st.lists(st.integers(-1, 2**31 - 1), max_size=4)


def metadata_answer_values():
    """(brokers, cluster id, controller id, topics) as encode_metadata_response takes them."""
    import uuid

    from kafka_py.clients.common.protocol.errors import Errors

    brokers = st.lists(st.tuples(int32s, names, int32s, st.one_of(st.none(), names)), max_size=3)
    partitions = st.tuples(st.sampled_from(list(Errors)[:8]), int32s, int32s, int32s, node_lists, node_lists,
                           node_lists)
    topics = st.tuples(st.sampled_from(list(Errors)[:8]), names,
                       st.one_of(st.none(), st.integers(1, 2**128 - 1).map(lambda i: uuid.UUID(int=i))),
                       st.booleans(), st.lists(partitions, max_size=4), int32s)
    return st.tuples(brokers, st.one_of(st.none(), names), int32s, st.lists(topics, max_size=3))


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_metadata_frame_from_values_equals_the_generic_response_encoded(version: int) -> None:
    """The hand-written MetadataResponse writer gives kio's bytes, from plain values and from a
    kio response alike, for every version."""
    from kafka_py.clients.common.protocol.fast_metadata_response import encode_metadata_response
    from kafka_py.clients.common.protocol.messages import response_schema
    from kafka_py.clients.common.protocol.entities import build_entity

    @SETTINGS
    @given(metadata_answer_values(), st.integers(0, 2**31 - 1), int32s, int32s)
    def check(values, throttle, correlation_id, cluster_operations) -> None:
        brokers, cluster_id, controller_id, topics = values
        entity = {"throttle_time": throttle,
                  "brokers": [{"node_id": n, "host": h, "port": p, "rack": r} for n, h, p, r in brokers],
                  "cluster_id": cluster_id, "controller_id": controller_id,
                  "cluster_authorized_operations": cluster_operations,
                  "topics": [{"error_code": e, "name": name, "topic_id": topic_id, "is_internal": internal,
                              "topic_authorized_operations": operations,
                              "partitions": [{"error_code": pe, "partition_index": i, "leader_id": leader,
                                              "leader_epoch": epoch, "replica_nodes": replicas, "isr_nodes": isr,
                                              "offline_replicas": offline}
                                             for pe, i, leader, epoch, replicas, isr, offline in parts]}
                             for e, name, topic_id, internal, parts, operations in topics]}
        generic = build_entity(response_schema(ApiKeys.METADATA, version), entity)
        request_header = RequestHeader.for_request(ApiKeys.METADATA, version, correlation_id, "c")
        expected = encode_response(request_header.to_response_header(), generic)
        # a version's absent fields are dropped, as build_entity drops them
        frame = encode_metadata_response(version, correlation_id, brokers, cluster_id, controller_id, topics,
                                         throttle, cluster_operations)
        assert bytes(frame) == expected
        header = header_for(generic)
        assert wire(fast_response_writers.encode_response_chunks(header.to_bytes(), generic)) == \
            wire(generic_chunks(header, generic))

    check()


def test_kafka_python_reads_a_metadata_frame_written_from_values() -> None:
    import uuid

    from kafka.protocol.metadata import MetadataResponse as KMetadataResponse

    from kafka_py.clients.common.protocol.errors import Errors
    from kafka_py.clients.common.protocol.fast_metadata_response import encode_metadata_response

    topic_id = uuid.uuid4()
    frame = encode_metadata_response(
        9, 7, [(0, "localhost", 9092, None)], "cluster", 0,
        [(Errors.NONE, "orders", topic_id, False, [(Errors.NONE, 0, 0, 3, [0], [0], []),
                                                  (Errors.LEADER_NOT_AVAILABLE, 1, -1, -1, [0], [], [0])], -2**31)])
    response = KMetadataResponse.decode(bytes(frame), version=9, header=True, framed=True)
    assert response.cluster_id == "cluster"
    [topic] = response.topics
    assert topic[1] == "orders"
    assert [p[1] for p in topic[3]] == [0, 1]
