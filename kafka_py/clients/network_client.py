"""Port of clients/src/main/java/org/apache/kafka/clients/NetworkClient.java (Kafka 2.8.2), cut
down to what a broker's own senders use: one connection to one node, one request in flight.

In Kafka every inter-broker sender (a replica fetcher's ReplicaFetcherBlockingSend, the
controller's RequestSendThread, KafkaServer's controlled shutdown) drives a NetworkClient
with a single destination and at most one request in flight, through the blocking helpers
of NetworkClientUtils. kafka-py keeps that split: this class owns the connection and moves
frames (``connect``, ``send``, ``poll``, ``disconnect``), and
kafka_py/clients/network_client_utils.py has ``await_ready`` and ``send_and_receive``.

Requests and responses are encoded and decoded with kafka_py.clients.common.protocol (``encode_request``,
``decode_response``), or, for a ``PreparedRequest`` (a replica fetcher's Fetch), by the
request itself, which writes its own frame and reads its own answer from plain values; the
response to a request is read as one frame into one buffer, so the ``records`` of a fetch
response stay a view of it.

Waiting. The socket is non-blocking and every wait (for a connect, for room to write, for
bytes to read) is on an epoll selector: never ``select()``, which fails for descriptors
above 1023, and a broker holding thousands of segment files hands out exactly those. The
selector also watches a wake-up pipe, so ``initiate_close`` from another thread ends any
wait at once: shutting a fetcher down never waits out a slow connect or a long poll. That
is also the only thing another thread may do to a client; everything else happens on the
thread that owns it, so the socket needs no lock.

Timeouts: ``connect`` takes its own (Kafka passes replica.socket.timeout.ms or
controller.socket.timeout.ms to awaitReady); a request must be answered within
``request_timeout_ms`` of being sent, or the connection is dropped, as Kafka's
NetworkClient drops a connection whose request timed out.

Security. Given a ClientChannelBuilder (network/channel_builders.py, the inter-broker
listener's), a connection is made ready as Kafka's KafkaChannel.prepare makes it: the TLS
handshake is driven step by step over the non-blocking socket (each SSLWantRead/WantWrite
a wait on the selector), then the SASL exchange of a SaslClientAuthenticator
(kafka_py/clients/common/security/sasl_client_authenticator.py) runs as ordinary requests on the
connection, all within the connect timeout. A refused login raises the
AuthenticationException (logged as Kafka's NetworkClient logs it: "failed authentication
due to: ..."), a failed TLS handshake an SslAuthenticationException; both drop the
connection. When the broker grants a session lifetime (``connections.max.reauth.ms``,
KIP-368), the client re-authenticates on the same connection before sending the first
request past 85-95 % of it, as Kafka's clients do.
"""
from __future__ import annotations

import abc
import errno
import itertools
import logging
import os
import selectors
import socket
import ssl
import struct
import threading
import time as _time
from dataclasses import dataclass
from typing import Any, Optional

from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.headers import RequestHeader, ResponseHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request
from kafka_py.clients.common.security.errors import AuthenticationException, SslAuthenticationException
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

USE_DEFAULT_BUFFER_SIZE = -1  # Selectable.USE_DEFAULT_BUFFER_SIZE: leave the kernel's default
# The reconnectBackoffMs Kafka builds the broker's channel NetworkClients with (TransactionMarker-
# ChannelManager's, BrokerToControllerChannelManager's): after a failed connection or request, a
# sender waits this long before trying that destination again.
RECONNECT_BACKOFF_MS = 50

_SIZE = struct.Struct(">i")


class DisconnectException(ConnectionError):
    """The connection went away before the response was read: closed or reset by the peer,
    or dropped because the request timed out (Kafka's DisconnectException)."""


class ClientClosedException(ConnectionError):
    """The client was closed (``initiate_close``) while the caller waited on it."""


class _ConnectDeadline(Exception):
    """Authentication of a new connection ran past the connect timeout (connect returns False)."""


class PreparedRequest(abc.ABC):
    """A request body that writes its own frame and reads its own answer, from and to plain
    values (Kafka's request builders and ``parseResponse``, for the one request sent per
    round on a hot path: a replica fetcher's Fetch)."""

    @abc.abstractmethod
    def encode_frame(self, correlation_id: int, client_id: Optional[str]) -> bytes:
        """The whole size-prefixed frame, request header included."""

    @abc.abstractmethod
    def read_response(self, body: memoryview) -> Any:
        """The answer read from its bytes after the response header; raises if malformed."""


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """One request to send (clients/.../ClientRequest.java)."""

    destination: str
    api_key: ApiKeys
    api_version: int
    body: Any
    correlation_id: int
    client_id: str
    created_time_ms: int

    def make_header(self) -> RequestHeader:
        return RequestHeader.for_request(self.api_key, self.api_version, self.correlation_id, self.client_id)


@dataclass(frozen=True, slots=True)
class ClientResponse:
    """The answer to a ClientRequest (clients/.../ClientResponse.java), always a whole response:
    a disconnection is raised instead of being returned."""

    request_header: RequestHeader
    destination: str
    request_latency_ms: int
    response_body: Any


class _Waker:
    """A pipe whose read end becomes readable, for good, once ``wake`` is called: it only ever
    signals that the client is closing, so it never needs draining."""

    def __init__(self) -> None:
        self.read_fd, self._write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self._write_fd, False)

    def wake(self) -> None:
        try:
            os.write(self._write_fd, b"\x01")
        except (BlockingIOError, OSError):
            pass  # already readable, or closed: either way nobody is left to wake

    def close(self) -> None:
        for fd in (self.read_fd, self._write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


class NetworkClient:
    """A blocking-capable client of one node over one connection (see the module docstring)."""

    def __init__(self, node: Node, client_id: str, request_timeout_ms: int, *,
                 socket_send_buffer: int = USE_DEFAULT_BUFFER_SIZE,
                 socket_receive_buffer: int = USE_DEFAULT_BUFFER_SIZE,
                 time: Time = Time.SYSTEM, channel_builder: Any = None) -> None:
        self.node = node
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.socket_send_buffer = socket_send_buffer
        self.socket_receive_buffer = socket_receive_buffer
        self.time = time
        self._closing = threading.Event()
        self._waker = _Waker()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._waker.read_fd, selectors.EVENT_READ)
        self._sock: Optional[socket.socket] = None
        # TLS and SASL of the listener connected to (None: PLAINTEXT).
        self.channel_builder = channel_builder
        self._authenticator: Any = None
        # monotonic time after which the next request first re-authenticates (KIP-368)
        self._reauthenticate_at: Optional[float] = None
        self._in_flight: Optional[ClientRequest] = None
        self._correlation_ids = itertools.count()
        self._closed = False

    def __repr__(self) -> str:
        return f"NetworkClient(node={self.node.host}:{self.node.port} (id: {self.node.id}), client_id={self.client_id})"

    # ------------------------------------------------------------------ state

    @property
    def active(self) -> bool:
        """False once ``initiate_close`` has been called (Kafka's NetworkClient.active)."""
        return not self._closing.is_set()

    def is_ready(self) -> bool:
        """Connected, and no request waiting for its answer."""
        return self.active and self._sock is not None and self._in_flight is None

    def fileno(self) -> int:
        """The connection's descriptor, or -1 when not connected."""
        sock = self._sock
        return -1 if sock is None else sock.fileno()

    # ------------------------------------------------------------------ connecting

    def connect(self, timeout_ms: int) -> bool:
        """Connect unless connected: True once connected, False if ``timeout_ms`` passed first.

        A refused or failed connection raises OSError (Kafka's awaitReady throws IOException
        when the connection fails); ``initiate_close`` raises ClientClosedException.
        """
        self._ensure_active()
        if self._sock is not None:
            return True
        deadline = _time.monotonic() + timeout_ms / 1000.0
        last_error: OSError = OSError(f"No address found for {self.node.host}")
        for family, kind, proto, _, address in socket.getaddrinfo(self.node.host or "localhost", self.node.port,
                                                                  type=socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            try:
                self._configure(sock)
                code = sock.connect_ex(address)
                if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                    raise OSError(code, f"Connection to {self.node.host}:{self.node.port} failed: "
                                        f"{os.strerror(code)}")
                if code != 0:
                    if not self._wait(sock, selectors.EVENT_WRITE, deadline):
                        self._close_socket(sock)
                        return False
                    code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if code != 0:
                        raise OSError(code, f"Connection to {self.node.host}:{self.node.port} failed: "
                                            f"{os.strerror(code)}")
            except BaseException as e:
                self._close_socket(sock)
                if not isinstance(e, OSError) or isinstance(e, ClientClosedException):
                    raise
                last_error = e
                continue
            if self.channel_builder is None:
                self._sock = sock
            elif not self._prepare(sock, deadline):
                return False
            logger.debug("Connected to node %s for %s", self.node.id, self.client_id)
            return True
        raise last_error

    # ------------------------------------------------------------------ TLS and SASL

    def _prepare(self, sock: socket.socket, deadline: float) -> bool:
        """TLS handshake and SASL authentication of a fresh connection (Kafka's
        KafkaChannel.prepare): True when ready, False when ``deadline`` passed first."""
        builder = self.channel_builder
        try:
            if builder.ssl_context is not None:
                # out of the selector under its old identity: the TLS socket takes the descriptor
                try:
                    self._selector.unregister(sock)
                except (KeyError, ValueError):
                    pass
                sock = builder.wrap(sock, self.node.host)
                if not self._tls_handshake(sock, deadline):
                    self._close_socket(sock)
                    return False
            self._sock = sock
            self._reauthenticate_at = None
            self._authenticator = builder.new_authenticator(self.node.host)
            if self._authenticator is not None and not self._authenticate(deadline, reauthenticating=False):
                self.disconnect()
                return False
        except AuthenticationException as e:
            logger.error("Connection to node %s (%s:%s) failed authentication due to: %s", self.node.id,
                         self.node.host, self.node.port, e)
            if self._sock is sock:
                self.disconnect()
            else:
                self._close_socket(sock)
            raise
        except BaseException:
            if self._sock is sock:
                self.disconnect()
            else:
                self._close_socket(sock)
            raise
        return True

    def _tls_handshake(self, sock: ssl.SSLSocket, deadline: float) -> bool:
        while True:
            try:
                sock.do_handshake()
                return True
            except ssl.SSLWantReadError:
                events = selectors.EVENT_READ
            except ssl.SSLWantWriteError:
                events = selectors.EVENT_WRITE
            except ssl.SSLError as e:
                raise SslAuthenticationException(f"SSL handshake failed: {e}") from e
            if not self._wait(sock, events, deadline):
                return False

    def _authenticate(self, deadline: float, reauthenticating: bool) -> bool:
        """One SASL exchange over the connection; False if ``deadline`` passed first."""

        def exchange(api_key: ApiKeys, api_version: int, body: Any) -> Any:
            request = self.new_client_request(api_key, api_version, body)
            request_deadline = min(deadline, self._request_deadline(request))
            self._send(request, request_deadline, deadline_is_connect=True)
            return self._poll(request_deadline, deadline_is_connect=True).response_body

        try:
            lifetime_ms = self._authenticator.authenticate(exchange, reauthenticating)
        except _ConnectDeadline:
            return False
        if lifetime_ms > 0:
            delay_ms = self._authenticator.reauthentication_delay_ms(lifetime_ms)
            self._reauthenticate_at = _time.monotonic() + delay_ms / 1000.0
            logger.debug("%s to node %s: session lifetime %d ms, re-authenticating in %.0f ms",
                         "Re-authenticated" if reauthenticating else "Authenticated", self.node.id, lifetime_ms,
                         delay_ms)
        else:
            self._reauthenticate_at = None
        return True

    def _maybe_reauthenticate(self) -> None:
        """Before a request: re-authenticate when the session is due (KIP-368). A refusal (the
        user was deleted, its password changed) drops the connection and raises."""
        due = self._reauthenticate_at
        if due is None or _time.monotonic() < due:
            return
        deadline = _time.monotonic() + self.request_timeout_ms / 1000.0
        try:
            ok = self._authenticate(deadline, reauthenticating=True)
        except AuthenticationException as e:
            logger.error("Connection to node %s (%s:%s) failed re-authentication due to: %s", self.node.id,
                         self.node.host, self.node.port, e)
            self.disconnect()
            raise
        if not ok:
            self.disconnect()
            raise DisconnectException(f"Re-authentication with node {self.node.id} timed out after "
                                      f"{self.request_timeout_ms} ms")

    def _configure(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        # buffer sizes must be set before the connect to take effect on the TCP window
        if self.socket_send_buffer != USE_DEFAULT_BUFFER_SIZE:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.socket_send_buffer)
        if self.socket_receive_buffer != USE_DEFAULT_BUFFER_SIZE:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.socket_receive_buffer)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ------------------------------------------------------------------ requests

    def new_client_request(self, api_key: ApiKeys, api_version: int, body: Any) -> ClientRequest:
        correlation_id = next(self._correlation_ids) & 0x7FFFFFFF
        return ClientRequest(self.node.id_string, api_key, api_version, body, correlation_id, self.client_id,
                             self.time.milliseconds())

    def send(self, request: ClientRequest) -> None:
        """Write the whole request; the connection must be ready (one request in flight)."""
        self._ensure_active()
        if self._sock is not None and self._in_flight is None and self._reauthenticate_at is not None:
            self._maybe_reauthenticate()
        self._send(request, self._request_deadline(request))

    def _send(self, request: ClientRequest, deadline: float, deadline_is_connect: bool = False) -> None:
        sock = self._sock
        if sock is None:
            raise DisconnectException(f"Attempt to send a request to node {self.node.id} which is not connected")
        if self._in_flight is not None:
            raise RuntimeError(f"Attempt to send a request to node {self.node.id} with a request in flight")
        body = request.body
        if isinstance(body, PreparedRequest):
            frame = body.encode_frame(request.correlation_id, request.client_id)
        else:
            frame = encode_request(request.make_header(), body)
        self._in_flight = request
        view = memoryview(frame)
        while view:
            events = selectors.EVENT_WRITE
            try:
                sent = sock.send(view)
            except (BlockingIOError, ssl.SSLWantWriteError):
                sent = 0
            except ssl.SSLWantReadError:
                sent = 0
                events = selectors.EVENT_READ
            except OSError as e:
                self.disconnect()
                raise DisconnectException(f"Connection to node {self.node.id} failed while sending: {e}") from e
            if sent:
                view = view[sent:]
            elif not self._wait(sock, events, deadline):
                self._timed_out(request, deadline_is_connect)

    def poll(self) -> ClientResponse:
        """Read the response to the request in flight; raises DisconnectException if the
        connection drops or the request times out first."""
        self._ensure_active()
        request = self._in_flight
        if request is None or self._sock is None:
            raise RuntimeError(f"No request in flight to node {self.node.id}")
        return self._poll(self._request_deadline(request))

    def _poll(self, deadline: float, deadline_is_connect: bool = False) -> ClientResponse:
        request = self._in_flight
        sock = self._sock
        size = _SIZE.unpack(self._receive_exactly(sock, 4, deadline, request, deadline_is_connect))[0]
        if size < 0:
            self.disconnect()
            raise DisconnectException(f"Invalid response size {size} from node {self.node.id}")
        frame = self._receive_exactly(sock, size, deadline, request, deadline_is_connect)
        self._in_flight = None
        try:
            prepared = request.body
            if isinstance(prepared, PreparedRequest):
                view = memoryview(frame)
                response_header, offset = ResponseHeader.parse(
                    view, request.api_key.response_header_version(request.api_version))
                body = prepared.read_response(view[offset:])
            else:
                response_header, body = decode_response(frame, request.api_key, request.api_version)
        except Exception:
            self.disconnect()
            raise
        if response_header.correlation_id != request.correlation_id:
            # the stream is out of step with our requests: nothing read from it can be trusted
            self.disconnect()
            raise DisconnectException(f"Correlation id for response ({response_header.correlation_id}) does not "
                                      f"match request ({request.correlation_id}), request header: "
                                      f"{request.make_header()}")
        return ClientResponse(request.make_header(), request.destination,
                              self.time.milliseconds() - request.created_time_ms, body)

    def _request_deadline(self, request: ClientRequest) -> float:
        elapsed_ms = max(0, self.time.milliseconds() - request.created_time_ms)
        return _time.monotonic() + max(0, self.request_timeout_ms - elapsed_ms) / 1000.0

    def _timed_out(self, request: ClientRequest, deadline_is_connect: bool) -> None:
        if deadline_is_connect:
            # authentication did not finish within the connect timeout: the caller reports it
            self.disconnect()
            raise _ConnectDeadline()
        self._request_timed_out(request)

    def _request_timed_out(self, request: ClientRequest) -> None:
        self.disconnect()
        raise DisconnectException(f"Disconnecting from node {self.node.id} due to request timeout: no response to "
                                  f"{request.api_key.api_name} (correlation id {request.correlation_id}) within "
                                  f"{self.request_timeout_ms} ms")

    def _receive_exactly(self, sock: socket.socket, size: int, deadline: float, request: ClientRequest,
                         deadline_is_connect: bool = False) -> bytearray:
        buffer = bytearray(size)
        view = memoryview(buffer)
        received = 0
        while received < size:
            try:
                n = sock.recv_into(view[received:])
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError) as e:
                # (a TLS read may need to write first: a key update, say)
                events = selectors.EVENT_WRITE if isinstance(e, ssl.SSLWantWriteError) else selectors.EVENT_READ
                if not self._wait(sock, events, deadline):
                    self._timed_out(request, deadline_is_connect)
                continue
            except OSError as e:
                self.disconnect()
                raise DisconnectException(f"Connection to node {self.node.id} failed while reading: {e}") from e
            if n == 0:
                self.disconnect()
                raise DisconnectException(f"Connection to node {self.node.id} was closed by the peer")
            received += n
        return buffer

    # ------------------------------------------------------------------ waiting

    def _wait(self, sock: socket.socket, events: int, deadline: float) -> bool:
        """Wait until ``sock`` is ready for ``events``: False at ``deadline``, and
        ClientClosedException as soon as ``initiate_close`` wakes the selector."""
        selector = self._selector
        try:
            key = selector.get_key(sock)
        except KeyError:
            selector.register(sock, events)
        else:
            if key.events != events:
                selector.modify(sock, events)
        while True:
            self._ensure_active()
            remaining = deadline - _time.monotonic()
            if remaining <= 0:
                return False
            ready = selector.select(remaining)
            self._ensure_active()
            if any(key.fileobj is sock for key, _ in ready):
                return True

    def _ensure_active(self) -> None:
        if self._closing.is_set():
            raise ClientClosedException(f"Client {self.client_id} was closed")

    # ------------------------------------------------------------------ closing

    def disconnect(self) -> None:
        """Drop the connection (Kafka's ``close(nodeId)``); the next ``connect`` opens a new one."""
        sock, self._sock = self._sock, None
        self._in_flight = None
        self._reauthenticate_at = None
        if sock is not None:
            self._close_socket(sock)

    def _close_socket(self, sock: socket.socket) -> None:
        # Out of the selector first: epoll forgets a closed descriptor by itself, but the
        # selector's own map would not, and the next socket given that number would be
        # taken for this one and never reported ready.
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError, OSError):
            pass
        sock.close()

    def initiate_close(self) -> None:
        """From any thread: end the owner's current and future waits (Kafka's initiateClose)."""
        self._closing.set()
        self._waker.wake()

    def close(self) -> None:
        """Release the socket, selector and pipe; only once the owning thread is done with them."""
        self.initiate_close()
        if self._closed:
            return
        self._closed = True
        self.disconnect()
        self._selector.close()
        self._waker.close()


__all__ = ["NetworkClient", "PreparedRequest", "ClientRequest", "ClientResponse", "DisconnectException",
           "ClientClosedException", "USE_DEFAULT_BUFFER_SIZE"]
