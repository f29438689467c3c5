"""Port of the authentication half of
clients/src/main/java/org/apache/kafka/common/network/KafkaChannel.java (``prepare``,
``ready``, the principal) and of Selector.java's handling
of channels that are not ready yet (Kafka 2.8.2).

The Processors of SSL, SASL_PLAINTEXT and SASL_SSL listeners use ``SecureSelector``;
PLAINTEXT listeners keep the plain Selector, whose per-request path is untouched.

A ``SecureKafkaChannel`` goes through up to two stages before its frames reach the
Processor as requests:

1. TLS handshake (SSL, SASL_SSL): each readiness event runs one non-blocking step of
   ``SslTransportLayer.handshake``; the events the channel waits for follow what
   OpenSSL asked for. When it completes, an SSL channel's principal is the mapped
   distinguished name of the client's certificate (User:ANONYMOUS without one).
2. SASL (SASL_PLAINTEXT, SASL_SSL): frames go to the channel's SaslServerAuthenticator
   inside this network thread, as in Kafka; its answers are written here and never
   seen by the Processor. Frames are capped at ``sasl.server.max.receive.size`` until
   authentication completes.

A failed SASL exchange sends its error response, stops reading, and closes the
connection ``connection.failed.authentication.delay.ms`` later (reported to the
Processor as a disconnection, so the connection quota is given back). A failed TLS
handshake, a frame over the limit or a request SASL does not allow closes the
connection at once. Nothing of an unauthenticated connection reaches the handlers.

Sessions (KIP-368, ``connections.max.reauth.ms``). Where the authenticator granted a
session lifetime, each frame is looked at before it goes to the Processor, as Kafka's
Processor does in ``processCompletedReceives``: a SaslHandshake begins a re-authentication
(KafkaChannel.maybeBeginServerReauthentication; at most one a second, otherwise the
handshake goes on to KafkaApis, which refuses it): the channel goes back to
AUTHENTICATE with a fresh authenticator and its frames go to it until it completes or
fails. Any other frame after the session has expired closes the connection
(``serverAuthenticationSessionExpired``). The channel is not muted and has nothing in
flight at that point (the Processor unmutes it only after its last response was
written), so the re-authentication's answers cannot interleave with a response.
"""
from __future__ import annotations

import enum
import logging
import socket
import ssl
import struct
from typing import Any, Optional

from kafka_py.network.channel_builders import ChannelBuilder
from kafka_py.network.request_channel import ANONYMOUS_PRINCIPAL
from kafka_py.network.selector import EVENT_READ, EVENT_WRITE, KafkaChannel, Selector, SelectorMetrics
from kafka_py.network.send import ByteBufferSend, Send
from kafka_py.network.ssl_transport_layer import SslTransportLayer
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.security.sasl_server_authenticator import SaslServerAuthenticator
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

_API_KEY = struct.Struct(">h")
_SASL_HANDSHAKE = ApiKeys.SASL_HANDSHAKE.value
# KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS
MIN_REAUTH_INTERVAL_NS = 1_000_000_000


class ChannelState(enum.Enum):
    HANDSHAKE = 1
    AUTHENTICATE = 2
    READY = 3
    FAILED = 4


class SecureKafkaChannel(KafkaChannel):
    __slots__ = ("transport", "authenticator", "principal", "state", "last_reauthentication_start_ns")

    def __init__(self, channel_id: str, sock: socket.socket, address: str, port: int,
                 transport: Optional[SslTransportLayer], authenticator: Optional[SaslServerAuthenticator]) -> None:
        super().__init__(channel_id, sock, address, port)
        self.transport = transport
        self.authenticator = authenticator
        self.principal = ANONYMOUS_PRINCIPAL
        self.last_reauthentication_start_ns = 0
        if transport is not None:
            # Reads and writes go through TLS from now on; the descriptor stays the same.
            # SslTransportLayer has the socket methods the channel and the sends use.
            self.sock = transport  # type: ignore[assignment] # KafkaChannel.sock names the plain socket
            self.fd = transport.fd
            self.state = ChannelState.HANDSHAKE
        elif authenticator is not None:
            self.state = ChannelState.AUTHENTICATE
        else:
            self.state = ChannelState.READY


class SecureSelector(Selector):
    def __init__(self, max_receive_size: int, connection_max_idle_ms: int, time: Time,
                 log_prefix: str, channel_builder: ChannelBuilder,
                 metrics: Optional[SelectorMetrics] = None, api_version_manager: Any = None) -> None:
        super().__init__(max_receive_size, connection_max_idle_ms, time, log_prefix, metrics)
        self._builder = channel_builder
        # The listener's own API set (a KRaft node's), which an ApiVersions answered during
        # SASL lists too; None: the broker's IMPLEMENTED_APIS.
        self._api_version_manager = api_version_manager
        self._failed_delay_ns = channel_builder.failed_authentication_delay_ms * 1_000_000
        # TLS channels with decrypted bytes waiting inside OpenSSL: read without readiness.
        self._buffered: set[str] = set()
        # Channels that failed authentication, closed at these times (ns).
        self._delayed_closes: dict[str, int] = {}
        # Whether any connection of this listener can have a session that ends.
        self._sessions_expire = bool(channel_builder.sasl is not None
                                     and any(channel_builder.sasl.connections_max_reauth_ms.values()))

    # ---- connections ------------------------------------------------------------------
    def register(self, channel_id: str, sock: socket.socket, address: str, port: int) -> KafkaChannel:
        if channel_id in self._channels:
            raise ValueError(f"There is already a connection for id {channel_id}")
        transport = self._builder.build_transport(sock)
        channel = SecureKafkaChannel(channel_id, transport._sock if transport is not None else sock, address, port, transport,
                                     self._builder.build_authenticator(channel_id, self._time))
        self._registered(channel)
        if channel.authenticator is not None:
            # an ApiVersions request answered during SASL names the client software here
            channel.authenticator.metadata_registry = channel.metadata
            channel.authenticator.api_version_manager = self._api_version_manager
        return channel

    def _close_channel(self, channel: KafkaChannel) -> None:
        self._buffered.discard(channel.id)
        self._delayed_closes.pop(channel.id, None)
        super()._close_channel(channel)

    def unmute(self, channel_id: str) -> None:
        super().unmute(channel_id)
        channel = self._channels.get(channel_id)
        # (each channel of this selector is a SecureKafkaChannel: ``register`` makes them)
        if isinstance(channel, SecureKafkaChannel) and channel.transport is not None and channel.transport.pending():
            self._buffered.add(channel_id)

    # ---- poll -------------------------------------------------------------------------
    def poll(self, timeout_ms: int) -> None:
        if self._ready or self.completed_sends or self.disconnected or self._buffered:
            timeout_ms = 0
        elif self._delayed_closes:
            soonest = (min(self._delayed_closes.values()) - self._time.nanoseconds()) // 1_000_000
            timeout_ms = max(0, min(timeout_ms, soonest + 1))
        start = self._time.nanoseconds()
        ready = self._nio.select(timeout_ms / 1000.0 if timeout_ms > 0 else 0)
        now = self._time.nanoseconds()
        self.io_wait_time_ns += now - start
        for key, mask in ready:
            channel: Optional[SecureKafkaChannel] = key.data
            if channel is None:
                self._waker.drain()
                continue
            if self._channels.get(channel.id) is not channel:
                continue
            self._handle_event(channel, mask, now)
        if self._buffered:
            for channel_id in list(self._buffered):
                self._buffered.discard(channel_id)
                buffered = self._channels.get(channel_id)
                if isinstance(buffered, SecureKafkaChannel) and buffered.state is not ChannelState.FAILED:
                    self._handle_event(buffered, EVENT_READ, now)
        if self._ready:
            self._deliver_ready_frames()
        if self._delayed_closes:
            self._close_delayed(now)
        if self._idle_ns >= 0:
            self._close_idle_connections(now)
        self.selects += 1
        self.io_time_ns += self._time.nanoseconds() - now

    def _handle_event(self, channel: SecureKafkaChannel, mask: int, now: int) -> None:
        try:
            state = channel.state
            if state is ChannelState.READY:
                if mask & EVENT_WRITE and (send := channel.send) is not None:
                    self._write(channel, send)
                if mask & EVENT_READ:
                    if self._wanted_read(channel):
                        self._read(channel, self._max_receive_size)
                    else:
                        self._set_events(channel, channel.events & ~EVENT_READ)
            elif state is ChannelState.HANDSHAKE:
                self._handshake(channel)
            elif state is ChannelState.AUTHENTICATE:
                if mask & EVENT_WRITE and (send := channel.send) is not None:
                    self._write_authentication(channel, send, now)
                if mask & EVENT_READ and channel.send is None and self._wanted_read(channel):
                    self._read(channel, self._builder.max_authentication_receive_size)
                    self._authenticate(channel, now)
            elif (send := channel.send) is not None:  # FAILED: finish writing the error response
                self._write_authentication(channel, send, now)
            self._lru[channel.id] = now
            self._lru.move_to_end(channel.id)
        except BlockingIOError:
            pass
        except Exception as e:  # noqa: BLE001 - any failure ends this connection only
            if channel.id in self._channels:
                if (channel.state is ChannelState.HANDSHAKE and isinstance(e, ssl.SSLError)
                        and not isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError))):
                    # Kafka's SslAuthenticationException; a peer that just hung up is not one
                    self.metrics.record(self.metrics.failed_authentication)
                self._fail(channel, e)

    def _read(self, channel: SecureKafkaChannel, max_size: int) -> None:
        n = channel.read(self._scratch, max_size)
        if n:
            if channel.state is ChannelState.READY:
                # Kafka's byte metrics count the frames, not the SASL exchange.
                self.bytes_received += n
                self.io_operations += 1
            if channel.transport is not None and channel.transport.pending():
                self._buffered.add(channel.id)
            if channel.frames and channel.state is ChannelState.READY:
                self._ready.add(channel.id)
        else:
            self._on_peer_closed(channel)

    # ---- TLS handshake ----------------------------------------------------------------
    def _handshake(self, channel: SecureKafkaChannel) -> None:
        transport = channel.transport
        assert transport is not None  # HANDSHAKE is the first state of a TLS channel only
        try:
            transport.handshake()
        except ssl.SSLWantReadError:
            self._set_events(channel, EVENT_READ)
            return
        except ssl.SSLWantWriteError:
            self._set_events(channel, EVENT_WRITE)
            return
        channel.principal = self._builder.ssl_principal(transport.peer_certificate)
        metadata = channel.metadata
        assert metadata is not None  # set when the channel was registered
        metadata.register_cipher_information(transport.cipher_information())
        channel.state = ChannelState.AUTHENTICATE if channel.authenticator is not None else ChannelState.READY
        if channel.state is ChannelState.READY:
            # an SSL listener's connection is authenticated by its handshake (which cannot be redone)
            self.metrics.record(self.metrics.successful_authentication)
            self.metrics.record(self.metrics.successful_authentication_no_reauth)
        self.logger.debug("TLS handshake with %s complete (%s, principal %s)",
                          channel.socket_address, transport.protocol_version, channel.principal)
        self._set_events(channel, EVENT_READ)
        # A client may send its first request with its last handshake message: it can
        # already be decrypted and waiting in OpenSSL.
        if transport.pending():
            self._buffered.add(channel.id)

    # ---- SASL -------------------------------------------------------------------------
    def _authenticate(self, channel: SecureKafkaChannel, now: int) -> None:
        authenticator = channel.authenticator
        assert authenticator is not None  # AUTHENTICATE is a state of a SASL channel only
        while channel.frames and channel.send is None and channel.state is ChannelState.AUTHENTICATE:
            step = authenticator.handle_frame(channel.frames.popleft())
            if step.complete:
                principal = authenticator.principal
                assert principal is not None  # a complete exchange has its principal
                channel.principal = principal
                channel.state = ChannelState.READY
                self._record_authenticated(authenticator, now)
                self.logger.debug("%s %s as %s with %s (session lifetime %d ms)",
                                  "Re-authenticated" if authenticator.reauthenticating else "Authenticated",
                                  channel.socket_address, channel.principal, authenticator.mechanism,
                                  authenticator.session_lifetime_ms)
            if step.failure is not None:
                channel.state = ChannelState.FAILED
                self.metrics.record(self.metrics.failed_reauthentication if authenticator.reauthenticating
                                    else self.metrics.failed_authentication)
                self.logger.info("Failed %s with %s (channelId=%s) (%s)",
                                 "re-authentication" if authenticator.reauthenticating else "authentication",
                                 channel.socket_address, channel.id, step.failure)
                channel.frames.clear()
            if step.response is not None:
                channel.send = send = ByteBufferSend(step.response)
                self._write_authentication(channel, send, now)
            elif step.failure is not None:
                self._schedule_close(channel, now)
        if channel.state is ChannelState.READY and channel.frames and not channel.muted:
            self._ready.add(channel.id)

    def _record_authenticated(self, authenticator: SaslServerAuthenticator, now: int) -> None:
        metrics = self.metrics
        if authenticator.reauthenticating:
            metrics.record(metrics.successful_reauthentication)
            begin = authenticator.reauthentication_begin_ns
            if begin is not None:
                # as Kafka: at least 1 ms when it took any time at all
                latency_ns = max(0, now - begin)
                metrics.record(metrics.reauthentication_latency,
                               0 if latency_ns == 0 else max(1, round(latency_ns / 1_000_000)))
        else:
            metrics.record(metrics.successful_authentication)
            if not authenticator.connected_client_supports_reauthentication:
                metrics.record(metrics.successful_authentication_no_reauth)

    def _write_authentication(self, channel: SecureKafkaChannel, send: Send, now: int) -> None:
        """Write ``send``, the channel's SASL answer (``channel.send``)."""
        send.write_to(channel.sock)
        if not send.completed:
            if not channel.events & EVENT_WRITE:
                self._set_events(channel, channel.events | EVENT_WRITE)
            return
        channel.send = None
        if channel.state is ChannelState.FAILED:
            self._schedule_close(channel, now)
            return
        self._set_events(channel, EVENT_READ)
        if channel.frames:
            if channel.state is ChannelState.AUTHENTICATE:
                self._authenticate(channel, now)
            elif channel.state is ChannelState.READY and not channel.muted:
                self._ready.add(channel.id)

    def _schedule_close(self, channel: SecureKafkaChannel, now: int) -> None:
        # Nothing more is read from it; it is closed once the delay has passed, which
        # slows down a client guessing passwords.
        self._set_events(channel, 0)
        if self._failed_delay_ns <= 0:
            self._disconnect(channel)
        else:
            self._delayed_closes[channel.id] = now + self._failed_delay_ns

    # ---- sessions (KIP-368) ------------------------------------------------------------
    def _deliver_ready_frames(self) -> None:
        if not self._sessions_expire:
            super()._deliver_ready_frames()
            return
        now = self._time.nanoseconds()
        for channel_id in list(self._ready):
            channel = self._channels.get(channel_id)
            # (each channel of this selector is a SecureKafkaChannel: ``register`` makes them)
            if not isinstance(channel, SecureKafkaChannel) or channel.muted or not channel.frames:
                self._ready.discard(channel_id)
                continue
            authenticator = channel.authenticator
            if authenticator is not None and authenticator.session_expiration_ns is not None \
                    and channel.state is ChannelState.READY:
                frame = channel.frames[0]
                is_handshake = len(frame) >= 2 and _API_KEY.unpack_from(frame, 0)[0] == _SASL_HANDSHAKE
                if is_handshake and channel.send is None and \
                        self._maybe_begin_reauthentication(channel, authenticator, now):
                    continue
                if now - authenticator.session_expiration_ns > 0:
                    # Kafka: "Disconnecting expired channel"; the Processor gives the quota back.
                    self.logger.info("Closing the connection from %s (channelId=%s, %s): its SASL session expired "
                                     "%d ms ago without re-authentication", channel.socket_address,
                                     channel.id, channel.principal,
                                     (now - authenticator.session_expiration_ns) // 1_000_000)
                    self.metrics.record(self.metrics.expired_connections_killed)
                    self._disconnect(channel)
                    continue
            self.completed_receives.append((channel_id, channel.frames.popleft()))
            if not channel.frames:
                self._ready.discard(channel_id)

    def _maybe_begin_reauthentication(self, channel: SecureKafkaChannel, previous: SaslServerAuthenticator,
                                      now: int) -> bool:
        """KafkaChannel.maybeBeginServerReauthentication: swap in a fresh authenticator for
        ``previous``, the channel's, and feed it the SaslHandshake at the head of the channel's
        frames. False (the handshake goes to KafkaApis, which answers ILLEGAL_SASL_STATE) within
        a second of the last one."""
        if channel.last_reauthentication_start_ns and \
                now - channel.last_reauthentication_start_ns < MIN_REAUTH_INTERVAL_NS:
            return False
        channel.last_reauthentication_start_ns = now
        authenticator = self._builder.build_authenticator(channel.id, self._time)
        assert authenticator is not None  # the builder made the channel's first one: its listener has SASL
        authenticator.reauthenticate(previous, now)
        authenticator.metadata_registry = channel.metadata
        authenticator.api_version_manager = self._api_version_manager
        channel.authenticator = authenticator
        channel.state = ChannelState.AUTHENTICATE
        self._ready.discard(channel.id)
        self.logger.debug("Begin re-authentication of %s (channelId=%s, %s)",
                          channel.socket_address, channel.id, channel.principal)
        self._authenticate(channel, now)
        return True

    def _close_delayed(self, now: int) -> None:
        for channel_id, deadline in list(self._delayed_closes.items()):
            if deadline <= now:
                channel = self._channels.get(channel_id)
                self._delayed_closes.pop(channel_id, None)
                if channel is not None:
                    self._disconnect(channel)
