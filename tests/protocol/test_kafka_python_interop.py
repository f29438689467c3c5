"""Our frames against kafka-python's own protocol classes (an independent implementation
generated from Kafka's JSON specs): what it sends parses here, what we send it reads,
and for every served API and version both sides write the same bytes."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import kafka.protocol
import pytest
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.metadata.api_versions import ApiVersionsRequest as KApiVersionsRequest
from kafka.protocol.metadata.api_versions import ApiVersionsResponse as KApiVersionsResponse
from kafka.protocol.metadata.metadata import MetadataRequest as KMetadataRequest
from kafka.protocol.producer.produce import ProduceRequest as KProduceRequest
from kio.schema.errors import ErrorCode

from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    request_schema,
    response_schema,
    unsupported_api_versions_response,
)

from .builders import build


def _kafka_python_classes() -> dict[tuple[int, str], type]:
    found = {}
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in info.name or "generate" in info.name:
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, ApiMessage)
                    and value is not ApiMessage and getattr(value, "_json", None)):
                found[(value.API_KEY, value.type)] = value
    return found


KAFKA_PYTHON = _kafka_python_classes()
CROSS_CASES = [
    (api, version, kind)
    for api in sorted(IMPLEMENTED_APIS)
    for kind in ("request", "response")
    if (api.id, kind) in KAFKA_PYTHON
    for version in api.supported_versions()
    if version <= KAFKA_PYTHON[(api.id, kind)].max_version
]


def test_cross_check_covers_the_client_apis() -> None:
    covered = {api for api, _, _ in CROSS_CASES}
    # kafka-python has no classes for the controller-to-broker and broker-to-controller APIs,
    # nor for the delegation token APIs.
    assert covered == IMPLEMENTED_APIS - {
        ApiKeys.LEADER_AND_ISR, ApiKeys.STOP_REPLICA, ApiKeys.UPDATE_METADATA,
        ApiKeys.CONTROLLED_SHUTDOWN, ApiKeys.ALTER_ISR,
        ApiKeys.CREATE_DELEGATION_TOKEN, ApiKeys.RENEW_DELEGATION_TOKEN, ApiKeys.EXPIRE_DELEGATION_TOKEN,
        ApiKeys.DESCRIBE_DELEGATION_TOKEN,
    }
    assert len(CROSS_CASES) > 200


@pytest.mark.parametrize("api, version, kind", CROSS_CASES,
                         ids=[f"{a.api_name}-v{v}-{k}" for a, v, k in CROSS_CASES])
def test_same_bytes_as_kafka_python(api, version, kind) -> None:
    message = build((request_schema if kind == "request" else response_schema)(api, version))
    if api is ApiKeys.API_VERSIONS and kind == "response":
        # with an error, clients read the body as v0 (see api_versions_response)
        message = dataclasses.replace(message, error_code=ErrorCode.none)
    header = RequestHeader.for_request(api, version, 17, "client-1")
    if kind == "request":
        ours = encode_request(header, message)
    else:
        ours = encode_response(header.to_response_header(), message)
    theirs_class = KAFKA_PYTHON[(api.id, kind)]
    decoded = theirs_class.decode(ours, version=version, header=True, framed=True)
    if kind == "request":
        theirs = decoded.encode(version=version, header=True, framed=True)
    else:
        theirs = decoded.encode(header=True, framed=True)
    assert bytes(theirs) == ours
    if kind == "request":
        assert decode_request(memoryview(bytearray(theirs))[4:])[1] == message
    else:
        assert decode_response(memoryview(bytearray(theirs))[4:], api, version)[1] == message


@pytest.mark.parametrize("version", range(0, 12))
def test_kafka_python_metadata_request_parses(version) -> None:
    request = KMetadataRequest(
        topics=[KMetadataRequest.MetadataRequestTopic(name="payments")],
        allow_auto_topic_creation=True,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
        version=version,
    )
    request.with_header(correlation_id=31, client_id="kafka-python-3")
    frame = request.encode(header=True, framed=True)
    header, parsed = decode_request(memoryview(frame)[4:])
    assert header.api_key is ApiKeys.METADATA and header.api_version == version
    assert header.correlation_id == 31 and header.client_id == "kafka-python-3"
    assert [t.name for t in parsed.topics] == ["payments"]
    if version >= 4:
        assert parsed.allow_auto_topic_creation is True


@pytest.mark.parametrize("version", range(3, 10))
def test_kafka_python_produce_request_parses(version) -> None:
    records = b"\x00" * 61 + b"batch-payload"
    Topic = KProduceRequest.TopicProduceData
    request = KProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=1500,
        topic_data=[Topic(name="events", partition_data=[
            Topic.PartitionProduceData(index=3, records=records)])],
        version=version,
    )
    request.with_header(correlation_id=8, client_id="producer")
    frame = bytearray(request.encode(header=True, framed=True))
    header, parsed = decode_request(memoryview(frame)[4:])
    assert header.api_version == version
    assert parsed.acks == -1 and parsed.timeout.total_seconds() == 1.5
    partition = parsed.topic_data[0].partition_data[0]
    assert parsed.topic_data[0].name == "events" and partition.index == 3
    assert partition.records == records


@pytest.mark.parametrize("version", range(0, 4))
def test_kafka_python_reads_our_api_versions_response(version) -> None:
    request = KApiVersionsRequest(client_software_name="kafka-python",
                                  client_software_version="3.0.12", version=version)
    request.with_header(correlation_id=1000 + version, client_id="kp")
    frame = request.encode(header=True, framed=True)
    header, _ = decode_request(memoryview(frame)[4:])
    encoded = encode_response(header.to_response_header(), api_versions_response(version))
    response = KApiVersionsResponse.decode(encoded, version=version, header=True, framed=True)
    assert response._header.correlation_id == 1000 + version
    assert response.error_code == 0
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert advertised[ApiKeys.PRODUCE] == (0, 9)
    assert advertised[ApiKeys.FETCH] == (0, 12)
    assert advertised[ApiKeys.API_VERSIONS] == (0, 3)
    assert ApiKeys.SASL_HANDSHAKE in advertised and ApiKeys.DESCRIBE_PRODUCERS not in advertised
    assert advertised[ApiKeys.DESCRIBE_DELEGATION_TOKEN] == (0, 2)


def test_kafka_python_reads_our_unsupported_version_answer() -> None:
    encoded = encode_response(
        RequestHeader(ApiKeys.API_VERSIONS, 4, 66, "kp", 2).to_response_header(),
        unsupported_api_versions_response(),
    )
    response = KApiVersionsResponse.decode(encoded, version=4, header=True, framed=True)
    assert response.error_code == Errors.UNSUPPORTED_VERSION.code
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 3)]
