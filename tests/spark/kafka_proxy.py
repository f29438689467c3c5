"""A Kafka protocol proxy between a client and a real cluster, for the tests of reads through
the brokers (no Kafka counterpart; Kafka's own tests use toxiproxy-like set-ups the same way).

``KafkaProxy(bootstrap)`` listens on a loopback port for the bootstrap broker, and on one
more for each broker that a Metadata answer names: every Metadata answer passing through
it is rewritten to name the proxies' ports instead of the brokers', so a client given
``proxy.bootstrap_servers`` sends everything, to every broker, through it. Requests and
answers are passed on frame by frame over real sockets; the cluster does the rest. Besides
passing them on it can:

* play an older (or newer) broker: ``api_ranges`` maps an API to the (oldest, newest)
  versions to advertise; ApiVersions answers say those ranges, an ApiVersions request newer
  than its range is answered UNSUPPORTED_VERSION in v0 as brokers since Kafka 2.4 answer it
  (KIP-511), and any other request outside its range closes the connection, as a broker that
  cannot parse it does;
* fail like a network under a reader: with ``cut_after_bytes`` a connection is closed in the
  middle of the first Fetch answer that would take the bytes sent to the client on it past
  that many, or halfway through it if they are past already (answers to other requests pass whole, so a read is planned and then loses its
  fetches);
* answer like a broken broker: with ``garble_fetch_answers`` every Fetch answer keeps its
  correlation id and loses the rest of its body, a whole frame that does not parse.

``requests`` lists every (api key, version) seen; ``cuts`` counts the connections cut and
``garbled`` the answers garbled.
"""
from __future__ import annotations

import dataclasses
import socket
import struct
import threading
from typing import Mapping, Optional

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import ResponseHeader
from kafka_py.clients.common.protocol.messages import encode_response, parse_response

_SIZE = struct.Struct(">i")
_REQUEST_HEAD = struct.Struct(">hhi")
_UNSUPPORTED_API_VERSIONS = struct.Struct(">ihihhh")


def _read_exactly(sock: socket.socket, n: int) -> Optional[bytes]:
    chunks = bytearray()
    while len(chunks) < n:
        try:
            chunk = sock.recv(n - len(chunks))
        except OSError:
            return None
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _read_frame(sock: socket.socket) -> Optional[bytes]:
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    return _read_exactly(sock, _SIZE.unpack(head)[0])


class KafkaProxy:
    """See the module docstring; ``close()`` ends every listener and connection."""

    def __init__(self, bootstrap: str, api_ranges: Optional[Mapping[ApiKeys, tuple[int, int]]] = None,
                 cut_after_bytes: Optional[int] = None, garble_fetch_answers: bool = False) -> None:
        self.api_ranges = {api.id: r for api, r in (api_ranges or {}).items()}
        self.cut_after_bytes = cut_after_bytes
        self.garble_fetch_answers = garble_fetch_answers
        self.garbled = 0
        self.requests: list[tuple[int, int]] = []
        self.cuts = 0
        self._lock = threading.Lock()
        self._listeners: dict[tuple[str, int], socket.socket] = {}
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False
        host, _, port = bootstrap.split(",")[0].rpartition(":")
        self.bootstrap_servers = f"127.0.0.1:{self._listen((host, int(port)))}"

    def __enter__(self) -> "KafkaProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sockets = [*self._listeners.values(), *self._sockets]
            self._sockets.clear()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for thread in self._threads:
            thread.join(10)

    def versions_sent(self, api: ApiKeys) -> set[int]:
        with self._lock:
            return {version for key, version in self.requests if key == api.id}

    # ------------------------------------------------------------------ plumbing

    def _start(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        with self._lock:
            self._threads.append(thread)

    def _listen(self, target: tuple[str, int]) -> int:
        """The port proxying ``target``, listening from now on."""
        with self._lock:
            listener = self._listeners.get(target)
            if listener is None:
                listener = socket.socket()
                listener.bind(("127.0.0.1", 0))
                listener.listen(64)
                self._listeners[target] = listener
                start = True
            else:
                start = False
        if start:
            self._start(self._accept, listener, target)
        return listener.getsockname()[1]

    def _accept(self, listener: socket.socket, target: tuple[str, int]) -> None:
        while not self._closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                broker = socket.create_connection(target, 10)
            except OSError:
                client.close()
                continue
            broker.settimeout(None)  # an idle connection stays open, as a broker's does
            with self._lock:
                if self._closed:
                    client.close()
                    broker.close()
                    return
                self._sockets.update((client, broker))
            connection = _Connection(self, client, broker)
            self._start(connection.requests)
            self._start(connection.answers)


class _Connection:
    """One client connection and its connection to the broker."""

    def __init__(self, proxy: KafkaProxy, client: socket.socket, broker: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.broker = broker
        self.in_flight: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
        self.sent_to_client = 0
        self.write_lock = threading.Lock()
        self.lock = threading.Lock()

    def close(self) -> None:
        for sock in (self.client, self.broker):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        with self.proxy._lock:
            self.proxy._sockets.difference_update((self.client, self.broker))

    def requests(self) -> None:
        proxy = self.proxy
        while True:
            frame = _read_frame(self.client)
            if frame is None or len(frame) < _REQUEST_HEAD.size:
                break
            api_key, version, correlation_id = _REQUEST_HEAD.unpack_from(frame)
            with proxy._lock:
                proxy.requests.append((api_key, version))
            served = proxy.api_ranges.get(api_key)
            if served is not None and not served[0] <= version <= served[1]:
                if api_key != ApiKeys.API_VERSIONS.id:
                    break  # a request this broker cannot parse: the connection ends
                answer = _UNSUPPORTED_API_VERSIONS.pack(correlation_id, Errors.UNSUPPORTED_VERSION.error_code, 1,
                                                        api_key, *served)
                if not self._to_client(_SIZE.pack(len(answer)) + answer):
                    break
                continue
            with self.lock:
                self.in_flight[correlation_id] = (api_key, version)
            try:
                self.broker.sendall(_SIZE.pack(len(frame)) + frame)
            except OSError:
                break
        self.close()

    def answers(self) -> None:
        while True:
            frame = _read_frame(self.broker)
            if frame is None or len(frame) < 4:
                break
            (correlation_id,) = struct.unpack_from(">i", frame)
            with self.lock:
                api_key, version = self.in_flight.pop(correlation_id, (-1, -1))
            if api_key == ApiKeys.METADATA.id:
                frame = self._metadata(frame, version)
            elif api_key == ApiKeys.API_VERSIONS.id and self.proxy.api_ranges:
                frame = self._api_versions(frame, version)
            elif api_key == ApiKeys.FETCH.id and self.proxy.garble_fetch_answers:
                frame = frame[:7]  # the correlation id, the header's tags, two bytes of the body
                with self.proxy._lock:
                    self.proxy.garbled += 1
            if not self._to_client(_SIZE.pack(len(frame)) + frame, api_key == ApiKeys.FETCH.id):
                break
        self.close()

    def _to_client(self, data: bytes, may_cut: bool = False) -> bool:
        limit = self.proxy.cut_after_bytes
        with self.write_lock:
            try:
                if may_cut and limit is not None and self.sent_to_client + len(data) > limit:
                    # a network that fails in the middle of an answer (halfway, if the limit
                    # was passed before it)
                    self.client.sendall(data[:max(0, limit - self.sent_to_client) or len(data) // 2])
                    with self.proxy._lock:
                        self.proxy.cuts += 1
                    return False
                self.client.sendall(data)
            except OSError:
                return False
            self.sent_to_client += len(data)
            return True

    def _metadata(self, frame: bytes, version: int) -> bytes:
        api = ApiKeys.METADATA
        header, offset = ResponseHeader.parse(memoryview(frame), api.response_header_version(version))
        body = parse_response(api.id, version, memoryview(frame)[offset:])
        brokers = tuple(dataclasses.replace(b, host="127.0.0.1",
                                            port=type(b.port)(self.proxy._listen((str(b.host), int(b.port)))))
                        for b in body.brokers)
        return encode_response(header, dataclasses.replace(body, brokers=brokers))[4:]

    def _api_versions(self, frame: bytes, version: int) -> bytes:
        api = ApiKeys.API_VERSIONS
        header, offset = ResponseHeader.parse(memoryview(frame), api.response_header_version(version))
        if struct.unpack_from(">h", frame, offset)[0] != 0:
            return frame  # an error answer is passed on as it is
        body = parse_response(api.id, version, memoryview(frame)[offset:])
        keys = []
        for key in body.api_keys:
            served = self.proxy.api_ranges.get(int(key.api_key))
            if served is not None:
                key = dataclasses.replace(key, min_version=type(key.min_version)(served[0]),
                                          max_version=type(key.max_version)(served[1]))
            keys.append(key)
        return encode_response(header, dataclasses.replace(body, api_keys=tuple(keys)))[4:]
