"""Each request type's error response (Kafka's AbstractRequest.getErrorResponse), registered
beside its handler: every API the broker advertises has one or is listed as closing the
connection, and each builds a response of the request's version for any request."""
from __future__ import annotations

import pytest

from kafka_py.network.request_channel import Request, RequestContext
from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys, api_versions_response_keys
from kafka_py.clients.common.protocol.codec import read_entity, write_entity
from kafka_py.clients.common.protocol.entities import build_entity, to_version
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import encode_request, request_schema
from kafka_py.server.kafka_apis_common import (
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


def request_with(api: ApiKeys, version: int, values: dict) -> Request:
    """A request of the given field values (nested entities as dicts)."""
    header = RequestHeader.for_request(api, version, 12, "error-response-test")
    body = build_entity(request_schema(api, version), values)
    frame = memoryview(bytearray(encode_request(header, body)[4:]))
    return Request(0, RequestContext(header, "127.0.0.1:9092-127.0.0.1:5000-1", "127.0.0.1"), 0, frame)


def test_every_advertised_api_has_an_error_response_or_closes() -> None:
    advertised = advertised_apis()
    assert advertised == set(IMPLEMENTED_APIS) - {api for api in IMPLEMENTED_APIS if not api.supported_versions()}
    registered = set(error_responses())
    assert advertised - registered - CLOSES_CONNECTION_ON_ERROR == set()
    assert registered & CLOSES_CONNECTION_ON_ERROR == set()
    assert registered <= advertised
    # the security, ACL and client quota APIs answer a failure as Kafka does, not by closing
    assert {ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE, ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS,
            ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, ApiKeys.DESCRIBE_ACLS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS,
            ApiKeys.DESCRIBE_CLIENT_QUOTAS, ApiKeys.ALTER_CLIENT_QUOTAS} <= registered


CASES = [(api, version) for api in sorted(advertised_apis()) if api not in CLOSES_CONNECTION_ON_ERROR
         for version in api.supported_versions()]


@pytest.mark.parametrize("api,version", CASES, ids=[f"{a.name}-v{v}" for a, v in CASES])
def test_error_response_is_a_response_of_the_request(api: ApiKeys, version: int) -> None:
    request = request_of(api, version)
    response = error_response(request, Errors.NOT_CONTROLLER, "not here")
    assert int(response.__api_key__) == api.id
    if api is not ApiKeys.API_VERSIONS:
        # built with the newest version's classes, written at the request's version as the
        # network layer writes it (Request.build_response_send)
        response = to_version(response, version)
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
    # an API no handler serves (the broker refuses it before KafkaApis): the caller closes
    header = RequestHeader.for_request(ApiKeys.DESCRIBE_PRODUCERS, 0, 11, "error-response-test")
    body = build(request_schema(ApiKeys.DESCRIBE_PRODUCERS, 0), 1)
    request = Request(0, RequestContext(header, "127.0.0.1:9092-127.0.0.1:5000-1", "127.0.0.1"), 0,
                      memoryview(b""), body)
    assert ApiKeys.DESCRIBE_PRODUCERS not in error_responses()
    assert error_response(request, Errors.UNKNOWN_SERVER_ERROR) is None


# What each request class's getErrorResponse fills (Kafka 2.8.2): the message as
# ApiError.fromThrowable keeps it (none for UNKNOWN_SERVER_ERROR or the error's own text).

def test_sasl_error_responses() -> None:
    handshake = error_response(request_with(ApiKeys.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}),
                               Errors.ILLEGAL_SASL_STATE, "not now")
    assert (handshake.error_code, handshake.mechanisms) == (Errors.ILLEGAL_SASL_STATE.error_code, ())
    request = request_with(ApiKeys.SASL_AUTHENTICATE, 2, {"auth_bytes": b"secret"})
    response = error_response(request, Errors.ILLEGAL_SASL_STATE, "not now")
    assert (response.error_code, response.error_message, response.auth_bytes) == (
        Errors.ILLEGAL_SASL_STATE.error_code, "not now", b"")
    assert error_response(request, Errors.UNKNOWN_SERVER_ERROR, "internal detail").error_message is None


def test_scram_error_responses() -> None:
    describe = request_with(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": "alice"}]})
    response = error_response(describe, Errors.NOT_CONTROLLER, "moved")
    assert (response.error_code, response.error_message, response.results) == (
        Errors.NOT_CONTROLLER.error_code, "moved", ())
    alter = request_with(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, 0, {
        "deletions": [{"name": "carol", "mechanism": 1}, {"name": "alice", "mechanism": 2}],
        "upsertions": [{"name": "alice", "mechanism": 1, "iterations": 4096, "salt": b"s",
                        "salted_password": b"p"}]})
    response = error_response(alter, Errors.CLUSTER_AUTHORIZATION_FAILED,
                              Errors.CLUSTER_AUTHORIZATION_FAILED.message)
    # every user once, sorted; the error's own text is no message
    assert [(r.user, r.error_code, r.error_message) for r in response.results] == [
        ("alice", Errors.CLUSTER_AUTHORIZATION_FAILED.error_code, None),
        ("carol", Errors.CLUSTER_AUTHORIZATION_FAILED.error_code, None)]


ACL_FILTER = {"resource_type_filter": 2, "resource_name_filter": "t", "pattern_type_filter": 3,
              "principal_filter": "User:a", "host_filter": "*", "operation": 3, "permission_type": 3}


def test_acl_error_responses() -> None:
    denied = Errors.CLUSTER_AUTHORIZATION_FAILED
    describe = error_response(request_with(ApiKeys.DESCRIBE_ACLS, 2, ACL_FILTER), denied, "Request is not authorized.")
    assert (describe.error_code, describe.error_message, describe.resources) == (
        denied.error_code, "Request is not authorized.", ())
    creation = {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3, "principal": "User:a",
                "host": "*", "operation": 3, "permission_type": 3}
    create = error_response(request_with(ApiKeys.CREATE_ACLS, 2, {"creations": [creation] * 3}), denied, "no")
    assert [(r.error_code, r.error_message) for r in create.results] == [(denied.error_code, "no")] * 3
    delete = error_response(request_with(ApiKeys.DELETE_ACLS, 2, {"filters": [ACL_FILTER] * 2}), denied, "no")
    assert [(r.error_code, r.error_message, r.matching_acls) for r in delete.filter_results] == [
        (denied.error_code, "no", ())] * 2


def test_client_quota_error_responses() -> None:
    describe = request_with(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 1, {
        "components": [{"entity_type": "user", "match_type": 0, "match": "a"}], "strict": False})
    response = error_response(describe, Errors.INVALID_REQUEST, "Duplicate user filter component entity type")
    assert (response.error_code, response.error_message, response.entries) == (
        Errors.INVALID_REQUEST.error_code, "Duplicate user filter component entity type", None)
    alter = request_with(ApiKeys.ALTER_CLIENT_QUOTAS, 1, {"validate_only": False, "entries": [
        {"entity": [{"entity_type": "user", "entity_name": "a"}, {"entity_type": "client-id", "entity_name": None}],
         "ops": [{"key": "producer_byte_rate", "value": 10.0, "remove": False}]},
        {"entity": [{"entity_type": "ip", "entity_name": "127.0.0.1"}], "ops": []}]})
    response = error_response(alter, Errors.INVALID_REQUEST, "what went wrong")
    # each entry's entity echoed; the message is the error's own text, never the exception's
    assert [(e.error_code, e.error_message, [(d.entity_type, d.entity_name) for d in e.entity])
            for e in response.entries] == [
        (Errors.INVALID_REQUEST.error_code, Errors.INVALID_REQUEST.message, [("user", "a"), ("client-id", None)]),
        (Errors.INVALID_REQUEST.error_code, Errors.INVALID_REQUEST.message, [("ip", "127.0.0.1")])]


def test_a_second_builder_for_one_api_is_refused() -> None:
    def another_heartbeat_error_response(request, error, message):
        return None

    with pytest.raises(ValueError, match="HEARTBEAT"):
        error_response_of(ApiKeys.HEARTBEAT)(another_heartbeat_error_response)
    assert error_responses()[ApiKeys.HEARTBEAT] is not another_heartbeat_error_response
