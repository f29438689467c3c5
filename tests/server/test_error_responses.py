"""Each request type's error response (Kafka's AbstractRequest.getErrorResponse), registered
beside its handler: every API the broker advertises has one or is listed as closing the
connection, and each builds a response of the request's version for any request."""
from __future__ import annotations

import pytest

from kafka_py.network.request_channel import Request, RequestContext
from kafka_py.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys, api_versions_response_keys
from kafka_py.protocol.codec import read_entity, write_entity
from kafka_py.protocol.errors import Errors
from kafka_py.protocol.headers import RequestHeader
from kafka_py.protocol.messages import encode_request, request_schema
from kafka_py.server.kafka_apis import (
    CLOSES_CONNECTION_ON_ERROR,
    error_response,
    error_response_of,
    error_responses,
)
from tests.protocol.builders import build


def advertised_apis() -> set[ApiKeys]:
    return {ApiKeys(int(entry.api_key)) for entry in api_versions_response_keys(3)}


def request_of(api: ApiKeys, version: int, seed: int = 1) -> Request:
    """A request with every field set, as the network layer hands it to KafkaApis."""
    header = RequestHeader.for_request(api, version, 11, "error-response-test")
    frame = memoryview(bytearray(encode_request(header, build(request_schema(api, version), seed))[4:]))
    return Request(0, RequestContext(header, "127.0.0.1:9092-127.0.0.1:5000-1", "127.0.0.1"), 0, frame)


def test_every_advertised_api_has_an_error_response_or_closes() -> None:
    advertised = advertised_apis()
    assert advertised == set(IMPLEMENTED_APIS) - {api for api in IMPLEMENTED_APIS if not api.supported_versions()}
    registered = set(error_responses())
    assert advertised - registered - CLOSES_CONNECTION_ON_ERROR == set()
    assert registered & CLOSES_CONNECTION_ON_ERROR == set()
    assert registered <= advertised


CASES = [(api, version) for api in sorted(advertised_apis()) if api not in CLOSES_CONNECTION_ON_ERROR
         for version in api.supported_versions()]


@pytest.mark.parametrize("api,version", CASES, ids=[f"{a.name}-v{v}" for a, v in CASES])
def test_error_response_is_a_response_of_the_request(api: ApiKeys, version: int) -> None:
    request = request_of(api, version)
    response = error_response(request, Errors.NOT_CONTROLLER, "not here")
    assert int(response.__api_key__) == api.id
    # ApiVersions answers an error as v0, which every client reads (KIP-511).
    assert int(response.__version__) == (0 if api is ApiKeys.API_VERSIONS else version)
    # written as the network layer writes it, and read back to the same bytes
    wire = write_entity(response)
    decoded, size = read_entity(type(response), wire)
    assert size == len(wire) and write_entity(decoded) == wire


def test_error_is_carried_to_every_partition() -> None:
    request = request_of(ApiKeys.PRODUCE, 8, seed=3)
    response = error_response(request, Errors.NOT_LEADER_OR_FOLLOWER)
    partitions = [p for t in response.responses for p in t.partition_responses]
    assert len(partitions) == 4
    assert {p.error_code for p in partitions} == {Errors.NOT_LEADER_OR_FOLLOWER.error_code}
    assert {p.base_offset for p in partitions} == {-1}


def test_api_without_error_response_answers_none() -> None:
    for api in CLOSES_CONNECTION_ON_ERROR:
        version = api.supported_versions()[-1]
        assert error_response(request_of(api, version), Errors.UNKNOWN_SERVER_ERROR) is None


def test_a_second_builder_for_one_api_is_refused() -> None:
    def another_heartbeat_error_response(request, error, message):
        return None

    with pytest.raises(ValueError, match="HEARTBEAT"):
        error_response_of(ApiKeys.HEARTBEAT)(another_heartbeat_error_response)
    assert error_responses()[ApiKeys.HEARTBEAT] is not another_heartbeat_error_response
