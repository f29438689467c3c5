"""A stand-in broker for controller tests: a real TCP server that decodes the controller's
requests with kafka_py.clients.common.protocol.messages, records them and answers with valid responses, plus
a real registration at /brokers/ids/<id> in ZooKeeper (its own session, so closing it is a
broker failure as the controller sees it)."""
from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Any, Callable

from kafka_py.core.cluster.broker import Broker, SecurityProtocol
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import decode_request, encode_response
from kafka_py.clients.common.protocol.schema.leader_and_isr.v4 import response as lai_v4
from kafka_py.clients.common.protocol.schema.leader_and_isr.v5 import response as lai_v5
from kafka_py.clients.common.protocol.schema.stop_replica.v3 import response as sr_v3
from kafka_py.clients.common.protocol.schema.update_metadata.v6 import response as um_v6
from kafka_py.clients.common.protocol.schema.update_metadata.v7 import response as um_v7
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.zk.zk_data import BrokerInfo

_SIZE = struct.Struct(">i")


class FakeBroker:
    def __init__(self, broker_id: int, zk_connect: str, listen: bool = True, port: int = 0) -> None:
        self.broker_id = broker_id
        self.zk_connect = zk_connect
        self.requests: list[tuple[RequestHeader, Any]] = []
        self.stop_replica_error = Errors.NONE
        self.leader_and_isr_error = Errors.NONE
        # Requests to read and then drop the connection on, unanswered (a broker crash mid-request).
        self.drop_next = 0
        self.dropped: list[RequestHeader] = []
        self.connection_count = 0
        self._cond = threading.Condition()
        self._closed = False
        self._connections: list[socket.socket] = []
        self._server: socket.socket | None = None
        self.zk: KafkaZkClient | None = None
        self.broker_epoch: int | None = None
        if port == 0:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        self.port = port
        if listen:
            self.listen()

    # -- TCP side --------------------------------------------------------------------------

    def listen(self) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen()
        self._server = server
        threading.Thread(target=self._accept_loop, daemon=True, name=f"fake-broker-{self.broker_id}").start()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self._connections.append(conn)
            with self._cond:
                self.connection_count += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while True:
                size_bytes = self._recv(conn, 4)
                if size_bytes is None:
                    return
                frame = self._recv(conn, _SIZE.unpack(size_bytes)[0])
                if frame is None:
                    return
                header, body = decode_request(frame)
                with self._cond:
                    if self.drop_next > 0:
                        self.drop_next -= 1
                        self.dropped.append(header)
                        return
                response = self._respond(header, body)
                with self._cond:
                    self.requests.append((header, body))
                    self._cond.notify_all()
                conn.sendall(encode_response(header.to_response_header(), response))
        except OSError:
            return
        finally:
            conn.close()

    @staticmethod
    def _recv(conn: socket.socket, size: int) -> bytes | None:
        data = bytearray()
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return bytes(data)

    def _respond(self, header: RequestHeader, body: Any) -> Any:
        none = Errors.NONE.error_code
        if header.api_key is ApiKeys.LEADER_AND_ISR:
            if header.api_version == 4:
                return lai_v4.LeaderAndIsrResponse(error_code=none, partition_errors=tuple(
                    lai_v4.LeaderAndIsrPartitionError(topic_name=t.topic_name, partition_index=p.partition_index,
                                                      error_code=self.leader_and_isr_error.error_code)
                    for t in body.topic_states for p in t.partition_states))
            assert header.api_version == 5
            return lai_v5.LeaderAndIsrResponse(error_code=none, topics=tuple(
                lai_v5.LeaderAndIsrTopicError(topic_id=t.topic_id, partition_errors=tuple(
                    lai_v5.LeaderAndIsrPartitionError(partition_index=p.partition_index,
                                                      error_code=self.leader_and_isr_error.error_code)
                    for p in t.partition_states))
                for t in body.topic_states))
        if header.api_key is ApiKeys.UPDATE_METADATA:
            schema = um_v7 if header.api_version == 7 else um_v6
            return schema.UpdateMetadataResponse(error_code=none)
        if header.api_key is ApiKeys.STOP_REPLICA:
            assert header.api_version == 3
            return sr_v3.StopReplicaResponse(error_code=none, partition_errors=tuple(
                sr_v3.StopReplicaPartitionError(topic_name=t.topic_name, partition_index=p.partition_index,
                                                error_code=self.stop_replica_error.error_code)
                for t in body.topic_states for p in t.partition_states))
        raise AssertionError(f"unexpected request {header.api_key}")

    # -- ZooKeeper side --------------------------------------------------------------------

    @property
    def broker(self) -> Broker:
        return Broker.of(self.broker_id, "127.0.0.1", self.port, "PLAINTEXT", SecurityProtocol.PLAINTEXT)

    def register(self) -> int:
        self.zk = KafkaZkClient(self.zk_connect, session_timeout_ms=10000, name=f"fake-broker-{self.broker_id}")
        self.broker_epoch = self.zk.register_broker(BrokerInfo(self.broker))
        return self.broker_epoch

    def kill_session(self) -> None:
        """End the broker's ZooKeeper session: its registration disappears at once."""
        if self.zk is not None:
            self.zk.close()
            self.zk = None

    # -- inspection ------------------------------------------------------------------------

    def received(self, api_key: ApiKeys, predicate: Callable[[Any], bool] = lambda body: True) -> list[Any]:
        with self._cond:
            return [body for header, body in self.requests if header.api_key is api_key and predicate(body)]

    def wait_for(self, api_key: ApiKeys, predicate: Callable[[Any], bool] = lambda body: True,
                 timeout: float = 15.0) -> Any:
        """The first request of ``api_key`` matching ``predicate``, waiting for it to arrive."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for header, body in self.requests:
                    if header.api_key is api_key and predicate(body):
                        return body
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    kinds = [h.api_key.name for h, _ in self.requests]
                    raise AssertionError(f"broker {self.broker_id} got no matching {api_key.name}; got {kinds}")
                self._cond.wait(remaining)

    def headers(self) -> list[RequestHeader]:
        with self._cond:
            return [h for h, _ in self.requests]

    def clear(self) -> None:
        with self._cond:
            self.requests.clear()

    def close(self) -> None:
        self._closed = True
        self.kill_session()
        if self._server is not None:
            # close() alone does not wake a thread blocked in accept(); shutdown() does (EINVAL)
            try:
                self._server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._server.close()
        for conn in self._connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()


def wait_until(condition: Callable[[], Any], timeout: float = 15.0, message: str = "condition") -> Any:
    """Poll ``condition`` (ZooKeeper state has no event to wait on here) until truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        time.sleep(0.05)


# Helpers to read what a request says, whatever its nesting.

def lai_partitions(body: Any) -> dict[tuple[str, int], Any]:
    return {(t.topic_name, p.partition_index): p for t in body.topic_states for p in t.partition_states}


def um_partitions(body: Any) -> dict[tuple[str, int], Any]:
    return {(t.topic_name, p.partition_index): p for t in body.topic_states for p in t.partition_states}


def sr_partitions(body: Any) -> dict[tuple[str, int], Any]:
    return {(t.topic_name, p.partition_index): p for t in body.topic_states for p in t.partition_states}
