"""BrokerToControllerRequestThread over real loopback sockets: a request in flight to a
controller that went silent (cut off by the network: no answer, no reset) is given up and
sent to the controller the node provider names next as soon as it names it, well before
request.timeout.ms; while the provider keeps naming the silent one, the request waits."""
from __future__ import annotations

import datetime
import socket
import threading

import pytest
from kio.schema.broker_heartbeat.v0.request import BrokerHeartbeatRequest
from kio.schema.broker_heartbeat.v0.response import BrokerHeartbeatResponse

from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import encode_response
from kafka_py.server.broker_to_controller_channel_manager import (BrokerToControllerQueueItem,
                                                                   BrokerToControllerRequestThread,
                                                                   NetworkClientControllerConnection)
from kafka_py.clients.common.utils.time import Time

# Far longer than the test may take: an answer within it can only come from the watch.
REQUEST_TIMEOUT_MS = 600_000


class SilentController:
    """Listens and completes TCP handshakes (the kernel's backlog) but never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=8)
        self.node = Node(1, "127.0.0.1", self.sock.getsockname()[1])

    def close(self) -> None:
        self.sock.close()


class AnsweringController:
    """Answers every BrokerHeartbeat it is sent, on its own thread; counts them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=8)
        self.node = Node(2, "127.0.0.1", self.sock.getsockname()[1])
        self.answered = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            while True:
                size = conn.recv(4, socket.MSG_WAITALL)
                if len(size) < 4:
                    return
                frame = conn.recv(int.from_bytes(size, "big"), socket.MSG_WAITALL)
                header, _ = RequestHeader.parse(memoryview(frame))  # (only the header: no broker parses 63)
                response = BrokerHeartbeatResponse(throttle_time=datetime.timedelta(0), error_code=Errors.NONE.error_code,
                                                   is_caught_up=True, is_fenced=False, should_shut_down=False)
                # counted before it is sent: the client may read the count as soon as it has the answer
                self.answered += 1
                conn.sendall(encode_response(header.to_response_header(), response))

    def close(self) -> None:
        self.sock.close()


class SwitchableProvider:
    def __init__(self, node: Node) -> None:
        self.node = node

    def get(self) -> Node:
        return self.node


class Completion:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.response = None

    def on_complete(self, response) -> None:
        self.response = response
        self.done.set()

    def on_timeout(self) -> None:
        self.done.set()


@pytest.fixture
def controllers():
    silent, answering = SilentController(), AnsweringController()
    yield silent, answering
    silent.close()
    answering.close()


def heartbeat_item(completion: Completion) -> BrokerToControllerQueueItem:
    request = BrokerHeartbeatRequest(broker_id=3, broker_epoch=7, current_metadata_offset=0,
                                     want_fence=False, want_shut_down=False)
    return BrokerToControllerQueueItem(Time.SYSTEM.milliseconds(), ApiKeys.BROKER_HEARTBEAT, request, completion)


def test_a_request_waiting_on_a_silent_controller_goes_to_the_new_one_once_it_is_named(controllers):
    silent, answering = controllers
    provider = SwitchableProvider(silent.node)
    connection = NetworkClientControllerConnection("test-channel", 10_000, REQUEST_TIMEOUT_MS)
    thread = BrokerToControllerRequestThread(connection, provider, Time.SYSTEM, "test-to-controller",
                                             retry_timeout_ms=float("inf"))
    thread.start()
    try:
        completion = Completion()
        thread.enqueue(heartbeat_item(completion))
        # named controller silent: the request stays in flight
        assert not completion.done.wait(1.5)
        assert answering.answered == 0

        provider.node = answering.node
        assert completion.done.wait(30), "the request was not moved to the controller named next"
        assert completion.response is not None and completion.response.api_key is ApiKeys.BROKER_HEARTBEAT
        assert answering.answered == 1

        # and the channel goes on with the new controller
        second = Completion()
        thread.enqueue(heartbeat_item(second))
        assert second.done.wait(30) and second.response is not None
        assert answering.answered == 2
    finally:
        thread.initiate_shutdown()
        thread.await_shutdown()
        connection.close()
