"""server/kafka_apis_fast_answers.py: KafkaApis' Metadata and Produce answers sent as frames
written from plain values, what each sends, counts and does when sending fails. (That the
frames are kio's bytes is tests/protocol/test_fast_response_writers.py's.)"""
from __future__ import annotations

import logging
import socket
import uuid

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_produce import PartitionResponse
from kafka_py.server.kafka_apis_fast_answers import send_metadata_response, send_produce_response
from kafka_py.clients.common.protocol.fast_metadata_response import encode_metadata_response
from kafka_py.clients.common.protocol.fast_produce_response import encode_produce_response


class Request:
    def __init__(self, api_version: int, correlation_id: int = 7) -> None:
        self.api_version = api_version
        self.correlation_id = correlation_id


class Metrics:
    def __init__(self) -> None:
        self.marked: list = []

    def mark_partition_errors(self, api, statuses) -> None:
        self.marked.append((api, list(statuses)))

    def mark_metadata_errors(self, topics) -> None:
        self.marked.append((ApiKeys.METADATA, list(topics)))


class Channel:
    def __init__(self, fail: bool = False) -> None:
        self.metrics = Metrics()
        self.sent: list = []
        self.closed: list = []
        self.fail = fail

    def send_response(self, response) -> None:
        if self.fail:
            raise OSError("queue gone")
        self.sent.append(response)

    def close_connection(self, request) -> None:
        self.closed.append(request)


class Apis:
    def __init__(self, fail: bool = False) -> None:
        self.request_channel = Channel(fail)
        self.logger = logging.getLogger("test_kafka_apis_fast_answers")
        self.cluster_id = "cluster-1"


def frame_of(response) -> bytes:
    """The bytes a SendResponse's send writes (the frame, its size first)."""
    send = response.response_send
    left, right = socket.socketpair()
    try:
        while not send.completed:
            send.write_to(left)
        left.close()
        out = b""
        while chunk := right.recv(65536):
            out += chunk
        return out
    finally:
        left.close()
        right.close()


def test_produce_v3_and_later_is_sent_as_a_frame_and_its_errors_counted():
    apis = Apis()
    request = Request(9)
    statuses = {TopicPartition("a", 1): PartitionResponse(Errors.NONE, base_offset=10, log_start_offset=0),
                TopicPartition("b", 0): PartitionResponse(Errors.NOT_LEADER_OR_FOLLOWER),
                TopicPartition("a", 0): PartitionResponse(Errors.NONE, base_offset=3, log_start_offset=0)}

    assert send_produce_response(apis, request, statuses, 25) is True

    [response] = apis.request_channel.sent
    assert response.request is request
    expected = encode_produce_response(9, 7, [
        ("a", [(1, Errors.NONE, 10, -1, 0, [], None), (0, Errors.NONE, 3, -1, 0, [], None)]),
        ("b", [(0, Errors.NOT_LEADER_OR_FOLLOWER, -1, -1, -1, [], None)])], 25)
    assert frame_of(response) == bytes(expected)
    assert apis.request_channel.metrics.marked == [(ApiKeys.PRODUCE, list(statuses.values()))]
    assert apis.request_channel.closed == []


def test_produce_before_v3_is_left_to_the_caller():
    apis = Apis()
    assert send_produce_response(apis, Request(2), {TopicPartition("a", 0): PartitionResponse(Errors.NONE)}, 0) \
        is False
    assert apis.request_channel.sent == [] and apis.request_channel.metrics.marked == []


def test_an_answer_that_cannot_be_sent_closes_the_connection(caplog):
    statuses = {TopicPartition("a", 0): PartitionResponse(Errors.NONE)}
    for apis, request, statuses in ((Apis(fail=True), Request(8), statuses),
                                    # a topic name too long for its field: the writer refuses it
                                    (Apis(), Request(8), {TopicPartition("t" * 40_000, 0): PartitionResponse(
                                        Errors.NONE)})):
        with caplog.at_level(logging.ERROR, logger="test_kafka_apis_fast_answers"):
            assert send_produce_response(apis, request, statuses, 0) is True
        assert apis.request_channel.closed == [request]
        assert "Could not send the response" in caplog.text


def test_metadata_is_sent_as_a_frame_and_its_errors_counted():
    apis = Apis()
    request = Request(11, correlation_id=3)
    brokers = [(0, "h0", 9092, None), (1, "h1", 9092, "r1")]
    topics = [(Errors.NONE, "t", uuid.UUID(int=5), False, [(Errors.NONE, 0, 1, 4, [1, 0], [1, 0], [])], -(2**31)),
              (Errors.UNKNOWN_TOPIC_OR_PARTITION, "u", None, False, [], -(2**31))]

    send_metadata_response(apis, request, brokers, 1, topics, 0, -(2**31))

    [response] = apis.request_channel.sent
    expected = encode_metadata_response(11, 3, brokers, "cluster-1", 1, topics, throttle_time_ms=0,
                                        cluster_authorized_operations=-(2**31))
    assert frame_of(response) == bytes(expected)
    assert apis.request_channel.metrics.marked == [(ApiKeys.METADATA, topics)]

    failing = Apis(fail=True)
    send_metadata_response(failing, request, brokers, 1, topics, 0, -(2**31))
    assert failing.request_channel.closed == [request]
