"""Port of clients/src/main/java/org/apache/kafka/common/network/Selector.java,
KafkaChannel.java and NetworkReceive.java (Kafka 2.8.2), server side: the PLAINTEXT
channel; TLS and SASL channels extend it in network/secure_selector.py.

One Selector belongs to one Processor thread and is only touched by it, except for
``wakeup()``, which any thread may call. It wraps a ``selectors.DefaultSelector``
(epoll) and keeps Kafka's contract with the Processor:

* ``poll(timeout_ms)`` reads and writes whatever the sockets allow and reports
  ``completed_receives`` (at most one frame per connection per poll),
  ``completed_sends`` and ``disconnected`` (connections the Selector closed itself:
  peer closed, I/O error, bad frame size, idle for ``connections.max.idle.ms``). The
  Processor drains those lists.
* ``mute(id)`` / ``unmute(id)``: a muted connection delivers no more frames. The
  Processor mutes a connection when it hands a request to the handlers and unmutes it
  when the response is written, so requests on one connection are handled one at a
  time and answered in order.

Receiving: each readable socket is read once per poll with ``recv_into``. Small
frames are read into a scratch buffer shared by the Selector's connections and copied
out; the rest of a frame that did not arrive whole is received straight into a
buffer of its own size, so a large produce request is copied at most once. Every
frame gets its own writable storage (the produce path assigns offsets in place).
Bytes of later frames already read stay with the connection until it is unmuted;
it is not read again until they are used up, which bounds what a pipelining client
can make the broker hold.

Interest in reads is dropped when a connection is muted and taken back when it is
unmuted, as Kafka's mute() and unmute() do with OP_READ: a client pipelining requests
would otherwise make every poll return for bytes the muted connection may not read yet.
Interest in writes is only registered while a send is left unfinished.
"""
from __future__ import annotations

import functools
import logging
import os
import selectors
import socket
import struct
from collections import OrderedDict, deque
from typing import Any, Callable, Iterator, Optional

from kafka_py.clients.common.sensor import Avg, CumulativeSum, KafkaMetric, Max, MetricConfig, Sensor
from kafka_py.clients.common.protocol.framing import InvalidReceiveException
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.network.send import Send
from kafka_py.network.channel_metadata_registry import (
    EMPTY_CLIENT_INFORMATION,
    ChannelMetadataRegistry,
    CipherInformation,
    ClientInformation,
    IntGaugeSuite,
)

logger = logging.getLogger(__name__)

EVENT_READ = selectors.EVENT_READ
EVENT_WRITE = selectors.EVENT_WRITE
UNLIMITED = -1
RECEIVE_CHUNK_SIZE = 64 * 1024

_SIZE = struct.Struct(">i")


class Waker:
    """Wakes a thread blocked in select: an eventfd (Linux) or a socket pair."""

    def __init__(self) -> None:
        self._closed = False
        if hasattr(os, "eventfd"):
            self._read_fd = self._write_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            self._pair: Optional[tuple[socket.socket, socket.socket]] = None
        else:
            a, b = socket.socketpair()
            a.setblocking(False)
            b.setblocking(False)
            self._pair = (a, b)
            self._read_fd = a.fileno()
            self._write_fd = b.fileno()

    def fileno(self) -> int:
        return self._read_fd

    def wakeup(self) -> None:
        if self._closed:
            return
        try:
            if self._pair is None:
                os.eventfd_write(self._write_fd, 1)
            else:
                self._pair[1].send(b"\0")
        except (BlockingIOError, OSError):
            # A full counter or pipe already means "wake up"; a closed one means
            # nobody is waiting any more.
            pass

    def drain(self) -> None:
        try:
            if self._pair is None:
                os.eventfd_read(self._read_fd)
            else:
                while self._pair[0].recv(4096):
                    pass
        except (BlockingIOError, OSError):
            pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pair is None:
            os.close(self._read_fd)
        else:
            self._pair[0].close()
            self._pair[1].close()


class KafkaChannel:
    """One client connection: its socket, receive state and the send in progress."""

    # Who is on the other end; a PLAINTEXT connection is always anonymous (the secure
    # channel of network/secure_selector.py sets its own per connection).
    principal = "User:ANONYMOUS"

    __slots__ = (
        "id", "sock", "fd", "socket_address", "remote_port", "send", "muted",
        "peer_closed", "events", "frames", "_pending", "_payload", "_filled", "metadata",
    )

    def __init__(self, channel_id: str, sock: socket.socket, address: str, port: int) -> None:
        self.id = channel_id
        self.sock = sock
        self.fd = sock.fileno()
        self.socket_address = address
        self.remote_port = port
        self.send: Optional[Send] = None
        self.muted = False
        self.peer_closed = False
        self.events = 0
        # Complete frames read but not yet handed to the Processor.
        self.frames: deque[memoryview] = deque()
        # Up to three bytes of a size prefix split across reads.
        self._pending = b""
        # The frame being received straight into its own storage.
        self._payload: Optional[bytearray] = None
        self._filled = 0
        # Its client software and TLS cipher, counted in the Selector's ``connections`` gauges.
        self.metadata: Optional[ChannelMetadataRegistry] = None

    @property
    def has_bytes_buffered(self) -> bool:
        return bool(self.frames)

    def read(self, scratch: memoryview, max_size: int) -> int:
        """Read once from the socket: the bytes read, 0 when the peer has closed its side."""
        payload = self._payload
        if payload is not None:
            n = self.sock.recv_into(memoryview(payload)[self._filled:])
            if n == 0:
                return 0
            self._filled += n
            if self._filled == len(payload):
                self.frames.append(memoryview(payload))
                self._payload = None
            return n
        kept = len(self._pending)
        if kept:
            scratch[:kept] = self._pending
        n = self.sock.recv_into(scratch[kept:])
        if n == 0:
            return 0
        # Cleared only now: a read that raised (nothing to read) must keep them.
        self._pending = b""
        self._split_frames(scratch[:kept + n], max_size)
        return n

    def _split_frames(self, data: memoryview, max_size: int) -> None:
        end = len(data)
        pos = 0
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(data, pos)
            if size < 0:
                raise InvalidReceiveException(f"Invalid receive (size = {size})")
            if max_size != UNLIMITED and size > max_size:
                raise InvalidReceiveException(
                    f"Invalid receive (size = {size} larger than {max_size})"
                )
            start = pos + 4
            available = end - start
            if available >= size:
                self.frames.append(memoryview(bytearray(data[start:start + size])))
                pos = start + size
            else:
                payload = bytearray(size)
                payload[:available] = data[start:end]
                self._payload = payload
                self._filled = available
                return
        if pos < end:
            self._pending = bytes(data[pos:end])

    def __repr__(self) -> str:
        return f"KafkaChannel(id={self.id}, muted={self.muted})"


def _measurement(sensor: Any, metric: Any, now: Callable[[], int]) -> Callable[[], float]:
    """A gauge's reading of one of a sensor's metrics."""
    return lambda: sensor.measure(metric, now())


class SelectorMetrics:
    """The authentication part of Selector.SelectorMetrics (Kafka 2.8.2), with the Processor's
    ``expired-connections-killed-count``, for one network thread: Kafka-metrics attributes of
    ``kafka.server:type=socket-server-metrics,listener=L,networkProcessor=N`` (the SocketServer
    registers them). Every listener's thread has them; only TLS and SASL connections
    (network/secure_selector.py) ever record, as a PLAINTEXT channel is ready from the start:

    * ``successful-authentication-rate|total``: TLS handshakes (SSL listeners) or SASL
      exchanges completed; ``successful-authentication-no-reauth-total``: those whose client
      cannot re-authenticate (no SaslAuthenticate v1+; every SSL one);
    * ``failed-authentication-rate|total``: a failed TLS handshake or SASL exchange (wrong
      password, unknown mechanism, a request out of turn), not a peer that just went away;
    * ``successful-reauthentication-rate|total``, ``failed-reauthentication-rate|total`` and
      ``reauthentication-latency-max|avg`` (ms from the client's SaslHandshake to the end)
      for KIP-368 re-authentications;
    * ``expired-connections-killed-count``: connections closed because their SASL session
      ended without a re-authentication;
    * ``connections`` by client software and by TLS cipher (``connections_by_client``,
      ``connections_by_cipher``: network/channel_metadata_registry.py), gauges made as keys
      appear, which the SocketServer registers through their ``bind``.

    Rates are per second over ``metrics.num.samples`` windows of ``metrics.sample.window.ms``;
    the network thread records, scrapes read (each sensor has its lock).

    The I/O metrics of Kafka's SelectorMetrics (``IO_METRICS``) are not recorded through
    sensors: the Selector keeps running totals (plain integer additions, those of a poll's
    reads added once per poll), and a read turns them into the rates, averages and ratios
    of the last one to two sample windows, as Kafka's windowed stats would report them
    (``IoWindows``). Bytes are those of the Kafka frames (decrypted for TLS), not those of a
    SASL exchange. The names are Kafka's, seen from the broker's side: ``request-*`` are the
    responses it sent, ``response-*`` the requests it read.
    """

    # Kafka's names of the I/O metrics, each read from the Selector's totals by IoWindows.read
    IO_METRICS = (
        "connection-close-rate", "connection-close-total", "connection-creation-rate", "connection-creation-total",
        "network-io-rate", "network-io-total", "outgoing-byte-rate", "outgoing-byte-total",
        "request-rate", "request-total", "request-size-avg", "request-size-max",
        "incoming-byte-rate", "incoming-byte-total", "response-rate", "response-total",
        "select-rate", "select-total", "io-wait-time-ns-avg", "io-wait-ratio", "io-waittime-total",
        "io-time-ns-avg", "io-ratio", "iotime-total",
    )

    def __init__(self, time: Time = Time.SYSTEM, samples: int = 2, window_ms: int = 30_000) -> None:
        self._time = time
        self._samples = max(1, samples)
        self._window_ms = max(1, window_ms)
        self.io: Optional[IoWindows] = None
        config = MetricConfig(samples, window_ms)

        def meter(base: str) -> Sensor:
            sensor = Sensor(base)
            sensor.add_meter(base, config)
            return sensor

        self.successful_authentication = meter("successful-authentication")
        self.successful_reauthentication = meter("successful-reauthentication")
        self.successful_authentication_no_reauth = Sensor("successful-authentication-no-reauth")
        self.successful_authentication_no_reauth.add(
            KafkaMetric("successful-authentication-no-reauth-total", CumulativeSum(), config))
        self.failed_authentication = meter("failed-authentication")
        self.failed_reauthentication = meter("failed-reauthentication")
        self.reauthentication_latency = Sensor("reauthentication-latency")
        self.reauthentication_latency.add(KafkaMetric("reauthentication-latency-max", Max(), config))
        self.reauthentication_latency.add(KafkaMetric("reauthentication-latency-avg", Avg(), config))
        self.expired_connections_killed = Sensor("expired-connections-killed")
        self.expired_connections_killed.add(KafkaMetric("expired-connections-killed-count", CumulativeSum(), config))
        self.connections_by_client: IntGaugeSuite[ClientInformation] = IntGaugeSuite("clients")
        self.connections_by_cipher: IntGaugeSuite[CipherInformation] = IntGaugeSuite("sslCiphers")
        self._sensors = (self.successful_authentication, self.successful_reauthentication,
                         self.successful_authentication_no_reauth, self.failed_authentication,
                         self.failed_reauthentication, self.reauthentication_latency,
                         self.expired_connections_killed)

    def record(self, sensor: Sensor, value: float = 1.0) -> None:
        sensor.record(value, self._time.milliseconds(), False)

    def value(self, attribute: str) -> float:
        """One attribute measured now (``failed-authentication-total``, ...)."""
        for sensor in self._sensors:
            for metric in sensor.metrics:
                if metric.name == attribute:
                    return sensor.measure(metric, self._time.milliseconds())
        raise KeyError(attribute)

    def bind(self, selector: "Selector") -> None:
        """The Selector whose running totals the I/O metrics read."""
        self.io = IoWindows(selector, self._time.nanoseconds, self._window_ms * 1_000_000, self._samples)

    def gauges(self) -> list[tuple[str, Callable[[], float]]]:
        """(attribute, read) for every metric, to register as gauges."""
        now = self._time.milliseconds
        gauges = [(metric.name, _measurement(sensor, metric, now))
                  for sensor in self._sensors for metric in sensor.metrics]
        io = self.io
        if io is not None:
            gauges += [(attribute, functools.partial(io.read, attribute)) for attribute in self.IO_METRICS]
        return gauges


class IoWindows:
    """The I/O metrics of one Selector, from its running totals: rates, averages and ratios
    over the current sample window and the one before it (Kafka's two 30 s samples, by
    default), the elapsed time counted as at least ``samples - 1`` windows as Kafka's Rate
    does, so a thread that just started does not report a burst as a huge rate.

    Windows roll when read: a window is closed by the first read after its end, so with a
    scraper reading at least once per window the figures are those of the last 30 to 60 s.
    ``request-size-max`` is the largest response of the two windows.
    """

    # The Selector's running totals, in the order of ``_totals``.
    _FIELDS = ("connections_closed", "connections_created", "io_operations", "bytes_sent", "sends_completed",
               "send_bytes_completed", "bytes_received", "receives_completed", "selects", "io_wait_time_ns",
               "io_time_ns")
    _INDEX = {name: i for i, name in enumerate(_FIELDS)}
    # Kafka's meter base name -> the total behind its ``-rate`` and ``-total``
    _READ = {
        "connection-close": "connections_closed", "connection-creation": "connections_created",
        "network-io": "io_operations", "outgoing-byte": "bytes_sent", "request": "sends_completed",
        "incoming-byte": "bytes_received", "response": "receives_completed", "select": "selects",
    }

    def __init__(self, selector: "Selector", clock_ns: Callable[[], int], window_ns: int, samples: int) -> None:
        import threading

        self._selector = selector
        self._clock = clock_ns
        self._window_ns = window_ns
        self._min_elapsed_ns = max(1, samples - 1) * window_ns
        self._lock = threading.Lock()
        now = clock_ns()
        totals = self._totals()
        self._window_start, self._window_totals = now, totals
        self._previous_start, self._previous_totals = now, totals
        self._previous_max = 0

    def _totals(self) -> tuple[int, ...]:
        s = self._selector
        return tuple(getattr(s, name) for name in self._FIELDS)

    def _window(self) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
        """(elapsed ns, totals now, their increase over the windows, largest response)."""
        now = self._clock()
        totals = self._totals()
        selector = self._selector
        with self._lock:
            if now - self._window_start >= self._window_ns:
                self._previous_start, self._previous_totals = self._window_start, self._window_totals
                self._window_start, self._window_totals = now, totals
                self._previous_max = selector.send_size_max
                selector.send_size_max = 0
            elapsed = max(now - self._previous_start, self._min_elapsed_ns)
            deltas = tuple(t - p for t, p in zip(totals, self._previous_totals))
            largest = max(self._previous_max, selector.send_size_max)
        return elapsed, totals, deltas, largest

    def read(self, attribute: str) -> float:
        elapsed, totals, deltas, largest = self._window()
        i = self._INDEX
        if attribute.endswith("-rate"):
            return deltas[i[self._READ[attribute[:-5]]]] * 1e9 / elapsed
        if attribute.endswith("-total"):
            base = attribute[:-6]
            if base == "io-waittime":
                return float(totals[i["io_wait_time_ns"]])
            if base == "iotime":
                return float(totals[i["io_time_ns"]])
            return float(totals[i[self._READ[base]]])
        if attribute == "request-size-max":
            return float(largest) if deltas[i["sends_completed"]] else float("nan")
        if attribute == "request-size-avg":
            return _avg(deltas[i["send_bytes_completed"]], deltas[i["sends_completed"]])
        if attribute == "io-wait-time-ns-avg":
            return _avg(deltas[i["io_wait_time_ns"]], deltas[i["selects"]])
        if attribute == "io-time-ns-avg":
            return _avg(deltas[i["io_time_ns"]], deltas[i["selects"]])
        if attribute == "io-wait-ratio":
            return deltas[i["io_wait_time_ns"]] / elapsed
        if attribute == "io-ratio":
            return deltas[i["io_time_ns"]] / elapsed
        raise KeyError(attribute)


def _avg(total: int, count: int) -> float:
    # Kafka's Avg of a window without samples is NaN.
    return total / count if count else float("nan")


class Selector:
    """A Processor's view of its connections (Kafka's ``org.apache.kafka.common.network.Selector``)."""

    def __init__(
        self,
        max_receive_size: int,
        connection_max_idle_ms: int,
        time: Time = Time.SYSTEM,
        log_prefix: str = "",
        metrics: Optional[SelectorMetrics] = None,
    ) -> None:
        # What the SocketServer publishes of this thread's connections (see SelectorMetrics).
        self.metrics = metrics if metrics is not None else SelectorMetrics(time)
        self._max_receive_size = max_receive_size
        self._idle_ns = connection_max_idle_ms * 1_000_000 if connection_max_idle_ms >= 0 else -1
        self._next_idle_check_ns = 0
        self._time = time
        # the Processor's prefix; a subclass's lines go to its own module's logger, as Kafka names loggers
        self.logger = IdentLogger(logging.getLogger(type(self).__module__), log_prefix)
        self._nio = selectors.DefaultSelector()
        self._waker = Waker()
        self._nio.register(self._waker.fileno(), EVENT_READ, None)
        self._channels: dict[str, KafkaChannel] = {}
        # Connections by last activity, oldest first (Kafka's IdleExpiryManager).
        self._lru: OrderedDict[str, int] = OrderedDict()
        # Unmuted connections holding complete frames: deliverable without a read.
        self._ready: set[str] = set()
        self._scratch = memoryview(bytearray(RECEIVE_CHUNK_SIZE))
        self.completed_receives: list[tuple[str, memoryview]] = []
        self.completed_sends: list[tuple[str, Send]] = []
        self.disconnected: list[tuple[str, str]] = []
        self._closed = False
        # Nanoseconds spent waiting in select (written by the owning thread only).
        self.io_wait_time_ns = 0
        # Running totals of the I/O metrics (SelectorMetrics.IO_METRICS), written by the
        # owning thread only: reads and writes, their bytes, frames read and responses
        # written, polls and the time spent in them after select, connections.
        self.io_operations = 0
        self.bytes_received = 0
        self.bytes_sent = 0
        self.receives_completed = 0
        self.sends_completed = 0
        self.send_bytes_completed = 0
        self.send_size_max = 0
        self.selects = 0
        self.io_time_ns = 0
        self.connections_created = 0
        self.connections_closed = 0
        self.metrics.bind(self)

    # ---- connections ------------------------------------------------------------
    def register(self, channel_id: str, sock: socket.socket, address: str, port: int) -> KafkaChannel:
        if channel_id in self._channels:
            raise ValueError(f"There is already a connection for id {channel_id}")
        return self._registered(KafkaChannel(channel_id, sock, address, port))

    def _registered(self, channel: KafkaChannel) -> KafkaChannel:
        """Watch a new channel: its reads, idle time, and its counts (Kafka's ``register``)."""
        self._channels[channel.id] = channel
        self._set_events(channel, EVENT_READ)
        self._lru[channel.id] = self._time.nanoseconds()
        self.connections_created += 1
        # Counted as unknown software until an ApiVersions request names it (it may never come).
        metrics = self.metrics
        channel.metadata = metadata = ChannelMetadataRegistry(metrics.connections_by_client,
                                                              metrics.connections_by_cipher)
        metadata.register_client_information(EMPTY_CLIENT_INFORMATION)
        return channel

    def channel(self, channel_id: str) -> Optional[KafkaChannel]:
        return self._channels.get(channel_id)

    def channels(self) -> list[KafkaChannel]:
        return list(self._channels.values())

    def __len__(self) -> int:
        return len(self._channels)

    def lowest_priority_channel(self) -> Optional[KafkaChannel]:
        """The connection to drop first when over a limit: the least recently active."""
        for channel_id in self._lru:
            return self._channels.get(channel_id)
        return None

    def close(self, channel_id: str) -> None:
        """Close a connection at the Processor's request; it is not reported as disconnected."""
        channel = self._channels.get(channel_id)
        if channel is not None:
            self._close_channel(channel)

    def _close_channel(self, channel: KafkaChannel) -> None:
        del self._channels[channel.id]
        self.connections_closed += 1
        if channel.metadata is not None:
            channel.metadata.close()
        self._lru.pop(channel.id, None)
        self._ready.discard(channel.id)
        if channel.events:
            try:
                self._nio.unregister(channel.fd)
            except (KeyError, ValueError, OSError):
                pass
            channel.events = 0
        try:
            channel.sock.close()
        except OSError:
            pass
        channel.frames.clear()
        channel.send = None

    def _disconnect(self, channel: KafkaChannel) -> None:
        self._close_channel(channel)
        self.disconnected.append((channel.id, channel.socket_address))

    def _fail(self, channel: KafkaChannel, error: BaseException) -> None:
        if isinstance(error, InvalidReceiveException):
            self.logger.warning("Unexpected error from %s (channelId=%s); closing connection: %s",
                                channel.socket_address, channel.id, error)
        elif isinstance(error, OSError):
            self.logger.debug("Connection with %s (channelId=%s) disconnected: %s",
                              channel.socket_address, channel.id, error)
        else:
            self.logger.warning("Unexpected error from %s (channelId=%s); closing connection",
                                channel.socket_address, channel.id, exc_info=error)
        self._disconnect(channel)

    # ---- muting -----------------------------------------------------------------
    def mute(self, channel_id: str) -> None:
        channel = self._channels.get(channel_id)
        if channel is not None:
            channel.muted = True
            # Frames it still holds wait for unmute(), which marks it ready again; left in
            # the ready set it would make the next poll return at once for nothing.
            self._ready.discard(channel_id)
            # As Kafka's mute() drops OP_READ: a client pipelining requests would otherwise
            # make every poll return for bytes this channel may not read yet.
            if channel.events & EVENT_READ:
                self._set_events(channel, channel.events & ~EVENT_READ)

    def unmute(self, channel_id: str) -> None:
        channel = self._channels.get(channel_id)
        if channel is None:
            return
        channel.muted = False
        if channel.frames:
            self._ready.add(channel_id)
        elif channel.peer_closed:
            if channel.send is None:
                self._disconnect(channel)
        elif not channel.events & EVENT_READ:
            self._set_events(channel, channel.events | EVENT_READ)

    def is_muted(self, channel_id: str) -> bool:
        channel = self._channels.get(channel_id)
        return channel is not None and channel.muted

    # ---- sends ------------------------------------------------------------------
    def send(self, channel_id: str, send: Send) -> None:
        """Start writing ``send``; as much as the socket takes is written at once."""
        channel = self._channels.get(channel_id)
        if channel is None:
            raise KeyError(f"Attempt to send to a closed connection {channel_id}")
        if channel.send is not None:
            raise RuntimeError(
                f"Attempt to begin a send operation with prior send operation still in progress, "
                f"connection id is {channel_id}"
            )
        channel.send = send
        try:
            self._write(channel, send)
        except Exception as e:  # noqa: BLE001 - any failure ends this connection only
            self._fail(channel, e)

    def _write(self, channel: KafkaChannel, send: Send) -> None:
        """Write what the socket takes of ``send``, the channel's pending send."""
        self.bytes_sent += send.write_to(channel.sock)
        self.io_operations += 1
        if send.completed:
            channel.send = None
            self.completed_sends.append((channel.id, send))
            size = send.size
            self.sends_completed += 1
            self.send_bytes_completed += size
            if size > self.send_size_max:
                self.send_size_max = size
            if channel.events & EVENT_WRITE:
                self._set_events(channel, channel.events & ~EVENT_WRITE)
        elif not channel.events & EVENT_WRITE:
            self._set_events(channel, channel.events | EVENT_WRITE)

    def _set_events(self, channel: KafkaChannel, events: int) -> None:
        if events == channel.events:
            return
        if channel.events == 0:
            self._nio.register(channel.fd, events, channel)
        elif events == 0:
            self._nio.unregister(channel.fd)
        else:
            self._nio.modify(channel.fd, events, channel)
        channel.events = events

    def _wanted_read(self, channel: KafkaChannel) -> bool:
        return not (channel.muted or channel.frames or channel.peer_closed)

    # ---- poll -------------------------------------------------------------------
    def wakeup(self) -> None:
        """Make a blocked (or the next) ``poll`` return at once; any thread may call it."""
        self._waker.wakeup()

    def poll(self, timeout_ms: int) -> None:
        if self._ready or self.completed_sends or self.disconnected:
            timeout_ms = 0
        start = self._time.nanoseconds()
        ready = self._nio.select(timeout_ms / 1000.0 if timeout_ms > 0 else 0)
        now = self._time.nanoseconds()
        # Kafka's io-wait time: what the Processor's IdlePercent is made of.
        self.io_wait_time_ns += now - start
        lru = self._lru
        received = reads = 0
        for key, mask in ready:
            channel: Optional[KafkaChannel] = key.data
            if channel is None:
                self._waker.drain()
                continue
            if self._channels.get(channel.id) is not channel:
                continue
            try:
                if mask & EVENT_WRITE and (send := channel.send) is not None:
                    self._write(channel, send)
                if mask & EVENT_READ:
                    if self._wanted_read(channel):
                        n = channel.read(self._scratch, self._max_receive_size)
                        if n:
                            received += n
                            reads += 1
                            if channel.frames:
                                self._ready.add(channel.id)
                        else:
                            self._on_peer_closed(channel)
                            continue
                    else:
                        self._set_events(channel, channel.events & ~EVENT_READ)
                lru[channel.id] = now
                lru.move_to_end(channel.id)
            except BlockingIOError:
                # A spurious readiness report: nothing to read after all.
                pass
            except Exception as e:  # noqa: BLE001 - any failure ends this connection only
                if channel.id in self._channels:
                    self._fail(channel, e)
        if self._ready:
            self._deliver_ready_frames()
        if self._idle_ns >= 0:
            self._close_idle_connections(now)
        self.bytes_received += received
        self.io_operations += reads
        self.selects += 1
        self.io_time_ns += self._time.nanoseconds() - now

    def _on_peer_closed(self, channel: KafkaChannel) -> None:
        # Frames already complete are still handled (their responses may go nowhere);
        # a partial frame is dropped.
        channel.peer_closed = True
        channel._payload = None
        channel._pending = b""
        if not channel.frames and not channel.muted and channel.send is None:
            self._disconnect(channel)
        else:
            self._set_events(channel, channel.events & ~EVENT_READ)

    def _deliver_ready_frames(self) -> None:
        for channel_id in list(self._ready):
            channel = self._channels.get(channel_id)
            if channel is None or channel.muted or not channel.frames:
                self._ready.discard(channel_id)
                continue
            self.completed_receives.append((channel_id, channel.frames.popleft()))
            if not channel.frames:
                self._ready.discard(channel_id)

    def _close_idle_connections(self, now: int) -> None:
        # Runs after every poll; until the oldest connection can have been idle long
        # enough there is nothing to look at. Activity only makes connections younger and
        # new ones start at "now", so this deadline is never late.
        if now < self._next_idle_check_ns:
            return
        lru = self._lru
        self._next_idle_check_ns = now + self._idle_ns
        while lru:
            channel_id, last_active = next(iter(lru.items()))
            if now - last_active < self._idle_ns:
                self._next_idle_check_ns = last_active + self._idle_ns
                return
            channel = self._channels.get(channel_id)
            if channel is None:
                lru.pop(channel_id, None)
                continue
            self.logger.debug("About to close the idle connection from %s due to being idle for %d millis",
                              channel_id, (now - last_active) // 1_000_000)
            self._disconnect(channel)

    # ---- lifecycle --------------------------------------------------------------
    def drain_completed_receives(self) -> list[tuple[str, memoryview]]:
        receives, self.completed_receives = self.completed_receives, []
        self.receives_completed += len(receives)
        return receives

    def drain_completed_sends(self) -> list[tuple[str, Send]]:
        sends, self.completed_sends = self.completed_sends, []
        return sends

    def drain_disconnected(self) -> list[tuple[str, str]]:
        disconnected, self.disconnected = self.disconnected, []
        return disconnected

    def close_all(self) -> None:
        """Close every connection and the selector itself."""
        if self._closed:
            return
        for channel in list(self._channels.values()):
            self._close_channel(channel)
        self._closed = True
        self._nio.close()
        self._waker.close()

    def __iter__(self) -> Iterator[KafkaChannel]:
        return iter(list(self._channels.values()))

    def __repr__(self) -> str:
        return f"Selector(channels={len(self._channels)})"
