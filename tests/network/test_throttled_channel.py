"""A connection throttled by a client quota (KIP-219) over real sockets: its answer comes at
once, and nothing more is read from it until the throttle ends."""
from __future__ import annotations

import threading
import time

from kafka_py.network.request_channel import EndThrottlingResponse, StartThrottlingResponse
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.messages import decode_response
from kafka_py.server.client_quota_manager import ClientQuotaManager, ClientQuotaManagerConfig, QuotaType

from .conftest import answer_api_versions, api_versions_frame, wait_until


def _correlation_id(client) -> int:
    header, _ = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)
    return header.correlation_id


def test_throttled_connection_is_answered_then_not_read_until_the_throttle_ends(make_server) -> None:
    throttled = {}
    lock = threading.Lock()

    def respond(handler, request):
        if request.correlation_id == 1:
            with lock:
                throttled["request"] = request
            handler.channel.send_response(StartThrottlingResponse(request))
        answer_api_versions(handler.channel, request)

    server, handler = make_server(respond=respond)
    client = make_server.client(server)
    client.send(api_versions_frame(1) + api_versions_frame(2))
    assert _correlation_id(client) == 1
    # Another connection of the same Processor pool is served meanwhile.
    other = make_server.client(server)
    assert other.api_versions(50)[0].correlation_id == 50
    time.sleep(0.3)
    connection_id = throttled["request"].context.connection_id
    assert [e[2] for e in handler.received() if e[1] == connection_id] == [1]
    handler.channel.send_response(EndThrottlingResponse(throttled["request"]))
    assert _correlation_id(client) == 2
    assert [e[2] for e in handler.received() if e[1] == connection_id] == [1, 2]


def test_throttle_that_ends_before_the_answer_is_written_unmutes_on_the_answer(make_server) -> None:
    def respond(handler, request):
        if request.correlation_id == 1:
            handler.channel.send_response(StartThrottlingResponse(request))
            handler.channel.send_response(EndThrottlingResponse(request))
        answer_api_versions(handler.channel, request)

    server, handler = make_server(respond=respond)
    client = make_server.client(server)
    client.send(api_versions_frame(1) + api_versions_frame(2))
    assert [_correlation_id(client), _correlation_id(client)] == [1, 2]


def test_quota_manager_throttle_mutes_for_its_time_and_a_closed_connection_is_harmless(make_server) -> None:
    manager = ClientQuotaManager(ClientQuotaManagerConfig(), QuotaType.PRODUCE)
    ended = threading.Event()

    def respond(handler, request):
        if request.correlation_id in (1, 10):
            def callback(response):
                handler.channel.send_response(response)
                if isinstance(response, EndThrottlingResponse) and request.correlation_id == 10:
                    ended.set()
            manager.throttle(request, 300, callback)
        answer_api_versions(handler.channel, request)

    try:
        server, handler = make_server(respond=respond)
        client = make_server.client(server)
        client.send(api_versions_frame(1) + api_versions_frame(2))
        assert [_correlation_id(client), _correlation_id(client)] == [1, 2]
        # A connection closed while throttled: the end of its throttle finds nothing to unmute.
        gone = make_server.client(server)
        gone.send(api_versions_frame(10))
        assert _correlation_id(gone) == 10
        gone.close()
        assert ended.wait(10)
        assert client.api_versions(3)[0].correlation_id == 3
        wait_until(lambda: all(p.thread.is_alive() for p in server.processors))
    finally:
        manager.shutdown()
