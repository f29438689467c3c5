"""RequestChannel's queue, and Request/RequestContext built from real request frames."""
from __future__ import annotations

import os
import threading

import pytest
from kio.schema.errors import ErrorCode

from kafka_py.network.request_channel import (
    NoOpResponse,
    Request,
    RequestChannel,
    RequestContext,
    SendResponse,
    ShutdownRequest,
)
from kafka_py.network.send import ByteBufferSend, MultiRecordsSend
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    decode_response,
    unsupported_api_versions_response,
)
from kafka_py.clients.common.record.file_records import FileRecords

from .conftest import api_versions_frame


def make_request(correlation_id: int = 1, version: int = 3, processor: int = 0) -> Request:
    frame = memoryview(bytearray(api_versions_frame(correlation_id, version)[4:]))
    header, _ = RequestHeader.parse(frame)
    context = RequestContext(header, f"127.0.0.1:9092-127.0.0.1:5000-{correlation_id}", "127.0.0.1")
    return Request(processor, context, 0, frame)


def send_bytes(send) -> bytes:
    """What a Send writes, through a real socket pair."""
    import socket

    a, b = socket.socketpair()
    try:
        a.setblocking(False)
        out = bytearray()
        while not send.completed:
            send.write_to(a)
            b.setblocking(False)
            try:
                while True:
                    out += b.recv(1 << 16)
            except BlockingIOError:
                pass
        return bytes(out)
    finally:
        a.close()
        b.close()


def test_request_parses_its_frame_and_context_defaults() -> None:
    request = make_request(correlation_id=9)
    assert request.api_key is ApiKeys.API_VERSIONS and request.api_version == 3
    assert request.correlation_id == 9
    assert request.body.client_software_name == "raw"
    assert request.context.client_id == "raw-client"
    assert request.context.api_key is ApiKeys.API_VERSIONS
    assert request.size_in_bytes == len(request.buffer)
    assert "API_VERSIONS v3" in repr(request)


def test_build_response_send_uses_correlation_id_and_header_version() -> None:
    request = make_request(correlation_id=12)
    send = request.build_response_send(api_versions_response(3))
    assert isinstance(send, ByteBufferSend)
    wire = send_bytes(send)
    assert int.from_bytes(wire[:4], "big") == len(wire) - 4
    header, body = decode_response(wire[4:], ApiKeys.API_VERSIONS, 3)
    assert header.correlation_id == 12 and body.error_code == ErrorCode.none


def test_unsupported_api_versions_request_is_flagged() -> None:
    header = RequestHeader.for_request(ApiKeys.API_VERSIONS, 42, 5, "c")
    frame = memoryview(bytearray(header.to_bytes() + b"\x01\x02"))
    request = Request(0, RequestContext(header, "id", "127.0.0.1"), 0, frame)
    assert request.context.is_unsupported_api_versions_request
    wire = send_bytes(request.build_response_send(unsupported_api_versions_response()))
    response_header, body = decode_response(wire[4:], ApiKeys.API_VERSIONS, 0)
    assert response_header.correlation_id == 5 and body.error_code == 35


def test_response_with_file_records_becomes_a_multi_records_send(tmp_path) -> None:
    from kio.schema.fetch.v4.response import FetchableTopicResponse, FetchResponse, PartitionData
    from kio.static.primitive import i32, i32Timedelta, i64
    import datetime

    content = os.urandom(50_000)
    path = tmp_path / "0.log"
    path.write_bytes(content)
    records = FileRecords.open(path, file_already_exists=True)
    response = FetchResponse(
        throttle_time=i32Timedelta.parse(datetime.timedelta(0)),
        responses=(FetchableTopicResponse(topic="t", partitions=(PartitionData(
            partition_index=i32(0), error_code=ErrorCode.none, high_watermark=i64(1),
            aborted_transactions=None, records=records.slice(100, 40_000)),)),),
    )
    request = make_request(correlation_id=3)
    send = request.build_response_send(response)
    assert isinstance(send, MultiRecordsSend)
    wire = send_bytes(send)
    header, body = decode_response(wire[4:], ApiKeys.FETCH, 4)
    assert header.correlation_id == 3
    assert bytes(body.responses[0].partitions[0].records) == content[100:40_100]
    records.close()


def test_request_queue_is_bounded() -> None:
    channel = RequestChannel(queue_size=2)
    assert channel.send_request(make_request(1))
    assert channel.send_request(make_request(2))
    assert not channel.send_request(make_request(3), timeout_ms=10)
    assert channel.request_queue_size == 2
    taken = []
    blocked = threading.Thread(target=lambda: taken.append(channel.send_request(make_request(4))))
    blocked.start()
    assert channel.receive_request(1000).correlation_id == 1
    blocked.join(10)
    assert taken == [True]
    assert [channel.receive_request(1000).correlation_id for _ in range(2)] == [2, 4]
    assert channel.receive_request(10) is None
    assert channel.receive_request(0) is None


def test_shutdown_request_and_clear() -> None:
    channel = RequestChannel(queue_size=10)
    channel.send_request(make_request(1))
    channel.send_shutdown_request()
    assert channel.receive_request(1000).correlation_id == 1
    assert channel.receive_request(1000) is ShutdownRequest is RequestChannel.ShutdownRequest
    channel.send_request(make_request(2))
    channel.clear()
    assert channel.request_queue_size == 0
    with pytest.raises(ValueError):
        RequestChannel(queue_size=0)


def test_responses_route_to_their_processor() -> None:
    class Recorder:
        """Anything with an id and enqueue_response can receive responses."""

        def __init__(self, id: int) -> None:
            self.id = id
            self.responses = []

        def enqueue_response(self, response) -> None:
            self.responses.append(response)

    channel = RequestChannel(queue_size=10)
    p0, p1 = Recorder(0), Recorder(1)
    channel.add_processor(p0)
    channel.add_processor(p1)
    request = make_request(processor=1)
    channel.send_response(request, api_versions_response(3))
    channel.send_no_op_response(request)
    channel.close_connection(request)
    assert p0.responses == []
    kinds = [type(r).__name__ for r in p1.responses]
    assert kinds == ["SendResponse", "NoOpResponse", "CloseConnectionResponse"]
    assert isinstance(p1.responses[0], SendResponse)
    channel.remove_processor(1)
    channel.send_response(NoOpResponse(request))  # no processor any more: dropped
    assert len(p1.responses) == 3
