"""ControllerApis without sockets (Kafka's ControllerApisTest): ApiVersions lists the
controller listener's APIs; an Envelope's inner request is handled with the forwarded
principal and answered inside an EnvelopeResponse; a non-forwardable inner API and a principal
that does not parse are refused with Kafka's errors; a standby's NOT_CONTROLLER reaches the
client."""
from __future__ import annotations

import datetime
import ipaddress
from concurrent.futures import Future

import pytest

from kafka_py.network.request_channel import Request, RequestContext
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from kafka_py.server.api_version_manager import ListenerType, SimpleApiVersionManager
from kafka_py.server.broker_metadata_checkpoint import MetaProperties
from kafka_py.server.controller_apis import ControllerApis, serialize_principal
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.utils.time import Time


class RecordingChannel:
    def __init__(self) -> None:
        self.responses: list = []
        self.closed: list = []

    def send_response(self, request, body) -> None:
        self.responses.append((request, body))

    def close_connection(self, request) -> None:
        self.closed.append(request)


class StubController:
    def __init__(self) -> None:
        self.create_topics_requests: list = []
        self.active = True

    def is_active(self) -> bool:
        return self.active

    def create_topics(self, request) -> Future:
        self.create_topics_requests.append(request)
        future: Future = Future()
        if not self.active:
            future.set_exception(Errors.NOT_CONTROLLER.exception("The active controller appears to be node 2"))
            return future
        from kafka_py.metadata.controller.controller_messages import make, response_module

        module = response_module(request)
        future.set_result(make(module.CreateTopicsResponse, topics=tuple(
            make(module.CreatableTopicResult, name=t.name, error_code=Errors.NONE.error_code, num_partitions=1,
                 replication_factor=1)
            for t in request.topics)))
        return future


@pytest.fixture
def apis():
    config = KafkaConfig.from_props({
        "process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093",
        "listeners": "CONTROLLER://127.0.0.1:9093", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT", "log.dirs": "/tmp/unused"})
    channel = RecordingChannel()
    controller = StubController()
    apis = ControllerApis(channel, None, None, Time.SYSTEM, {}, controller, None, config,
                          MetaProperties("MkU3OEVBNTcwNTJENDM2Qk", 1), [],
                          SimpleApiVersionManager(ListenerType.CONTROLLER))
    return apis, channel, controller


def make_request(api: ApiKeys, version: int, body, principal: str = "User:broker") -> Request:
    header = RequestHeader.for_request(api, version, 7, "test-client")
    context = RequestContext(header, "c-1", "127.0.0.1", "CONTROLLER", "PLAINTEXT", principal=principal)
    return Request(0, context, 0, memoryview(b""), body)


def create_topics_body(version: int = 5):
    return build_entity(request_schema(ApiKeys.CREATE_TOPICS, version), {
        "topics": [{"name": "t1", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
        "timeout": datetime.timedelta(seconds=5), "validate_only": False})


def envelope(inner_api: ApiKeys, inner_version: int, inner_body, principal: bytes):
    header = RequestHeader.for_request(inner_api, inner_version, 42, "client-of-broker")
    inner = encode_request(header, inner_body)[4:]
    return build_entity(request_schema(ApiKeys.ENVELOPE, 0), {
        "request_data": inner, "request_principal": principal,
        "client_host_address": ipaddress.ip_address("10.1.2.3").packed})


def test_api_versions_lists_the_controller_apis(apis):
    handler, channel, _ = apis
    body = build_entity(request_schema(ApiKeys.API_VERSIONS, 3),
                        {"client_software_name": "x", "client_software_version": "1"})
    handler.handle(make_request(ApiKeys.API_VERSIONS, 3, body))
    (_, response), = channel.responses
    served = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
    assert served[ApiKeys.FETCH.id] == (12, 12)
    assert served[ApiKeys.VOTE.id] == (0, 0)
    assert ApiKeys.ALLOCATE_PRODUCER_IDS.id in served and ApiKeys.ENVELOPE.id in served
    assert ApiKeys.PRODUCE.id not in served and ApiKeys.JOIN_GROUP.id not in served


def test_envelope_carries_the_forwarded_request_and_its_answer(apis):
    handler, channel, controller = apis
    request = make_request(ApiKeys.ENVELOPE, 0, envelope(ApiKeys.CREATE_TOPICS, 5, create_topics_body(),
                                                         serialize_principal("User:alice")))
    handler.handle(request)
    (answered, response), = channel.responses
    assert answered is request
    assert int(response.error_code) == Errors.NONE.error_code
    inner_header, inner = decode_response(response.response_data, ApiKeys.CREATE_TOPICS, 5)
    assert inner_header.correlation_id == 42
    assert [(t.name, int(t.error_code)) for t in inner.topics] == [("t1", 0)]
    assert [t.name for t in controller.create_topics_requests[0].topics] == ["t1"]


def test_envelope_refuses_what_may_not_be_forwarded(apis):
    handler, channel, _ = apis
    fetch_body = build_entity(request_schema(ApiKeys.METADATA, 9), {
        "topics": [], "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False})
    handler.handle(make_request(ApiKeys.ENVELOPE, 0, envelope(ApiKeys.METADATA, 9, fetch_body,
                                                              serialize_principal("User:alice"))))
    handler.handle(make_request(ApiKeys.ENVELOPE, 0, envelope(ApiKeys.CREATE_TOPICS, 5, create_topics_body(),
                                                              b"\x00\x07garbage")))
    errors = [int(body.error_code) for _, body in channel.responses]
    assert errors == [Errors.INVALID_REQUEST.error_code, Errors.PRINCIPAL_DESERIALIZATION_FAILURE.error_code]


def test_a_standby_answers_not_controller(apis):
    handler, channel, controller = apis
    controller.active = False
    handler.handle(make_request(ApiKeys.CREATE_TOPICS, 5, create_topics_body()))
    (_, response), = channel.responses
    assert [int(t.error_code) for t in response.topics] == [Errors.NOT_CONTROLLER.error_code]
