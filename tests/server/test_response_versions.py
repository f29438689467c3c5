"""Answers built with the newest version's classes (as the handlers build them) are written
at the version of their request by Request.build_response_send: the bytes a client of any
version reads, field for field what that version has."""
from __future__ import annotations

import datetime
import uuid

import pytest
from kio.schema.delete_topics.v6.response import DeletableTopicResult, DeleteTopicsResponse
from kio.schema.fetch.v12.response import AbortedTransaction, EpochEndOffset, FetchableTopicResponse, FetchResponse
from kio.schema.fetch.v12.response import PartitionData as FetchPartitionResponse

from kafka_py.network.request_channel import Request, RequestContext
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema, response_schema
from tests.network.test_request_channel import send_bytes
from tests.protocol.builders import build


def request_of(api: ApiKeys, version: int) -> Request:
    header = RequestHeader.for_request(api, version, 21, "response-versions-test")
    frame = memoryview(bytearray(encode_request(header, build(request_schema(api, version), 1))[4:]))
    return Request(0, RequestContext(header, "127.0.0.1:9092-127.0.0.1:5000-1", "127.0.0.1"), 0, frame)


def written(request: Request, response: object) -> tuple[bytes, object]:
    wire = send_bytes(request.build_response_send(response))
    header, body = decode_response(wire[4:], request.api_key, request.api_version)
    assert header.correlation_id == 21
    return wire, body


NEWEST_DELETE_TOPICS = DeleteTopicsResponse(throttle_time=datetime.timedelta(milliseconds=3), responses=(
    DeletableTopicResult(name="gone", topic_id=uuid.UUID(int=7), error_code=Errors.NONE.error_code),
    DeletableTopicResult(name="kept", topic_id=None, error_code=Errors.TOPIC_DELETION_DISABLED.error_code,
                         error_message="disabled"),
))


@pytest.mark.parametrize("version", ApiKeys.DELETE_TOPICS.supported_versions())
def test_an_answer_of_the_newest_version_is_written_at_the_request_version(version: int) -> None:
    wire, body = written(request_of(ApiKeys.DELETE_TOPICS, version), NEWEST_DELETE_TOPICS)
    assert type(body) is response_schema(ApiKeys.DELETE_TOPICS, version)
    assert [(r.name, r.error_code) for r in body.responses] == [
        ("gone", Errors.NONE.error_code), ("kept", Errors.TOPIC_DELETION_DISABLED.error_code)]
    # throttle_time from v1: dropped below
    assert getattr(body, "throttle_time", None) == (datetime.timedelta(milliseconds=3) if version >= 1 else None)
    # error_message from v5, topic_id from v6: dropped below
    assert hasattr(body.responses[1], "error_message") == (version >= 5)
    assert hasattr(body.responses[0], "topic_id") == (version >= 6)
    # the same bytes as the answer built for that version alone
    same = build_entity(response_schema(ApiKeys.DELETE_TOPICS, version), {"throttle_time": 3, "responses": [
        {"name": "gone", "topic_id": uuid.UUID(int=7), "error_code": Errors.NONE},
        {"name": "kept", "error_code": Errors.TOPIC_DELETION_DISABLED, "error_message": "disabled"}]})
    assert send_bytes(request_of(ApiKeys.DELETE_TOPICS, version).build_response_send(same)) == wire


@pytest.mark.parametrize("version", [4, 5, 11, 12])
def test_a_fetch_answer_keeps_its_records_and_transactions_at_every_version(version: int) -> None:
    records = bytes(range(61)) * 3
    newest = FetchResponse(throttle_time=datetime.timedelta(0), error_code=Errors.NONE.error_code, session_id=0,
                           responses=(FetchableTopicResponse(topic="t", partitions=(FetchPartitionResponse(
                               partition_index=2, error_code=Errors.NONE.error_code, high_watermark=40,
                               last_stable_offset=30, log_start_offset=5,
                               diverging_epoch=EpochEndOffset(epoch=3, end_offset=17),
                               aborted_transactions=(AbortedTransaction(producer_id=9, first_offset=31),),
                               preferred_read_replica=-1, records=records),)),))
    _, body = written(request_of(ApiKeys.FETCH, version), newest)
    [partition] = body.responses[0].partitions
    assert (partition.partition_index, partition.high_watermark, partition.last_stable_offset) == (2, 40, 30)
    assert [(a.producer_id, a.first_offset) for a in partition.aborted_transactions] == [(9, 31)]
    assert bytes(partition.records) == records
    # log_start_offset from v5, the diverging epoch (a tagged field) from v12
    assert hasattr(partition, "log_start_offset") == (version >= 5)
    assert hasattr(partition, "diverging_epoch") == (version >= 12)
    if version >= 12:
        assert (partition.diverging_epoch.epoch, partition.diverging_epoch.end_offset) == (3, 17)
