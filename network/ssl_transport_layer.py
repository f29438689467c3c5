"""Port of clients/src/main/java/org/apache/kafka/common/network/SslTransportLayer.java
(Kafka 2.8.2): TLS over a non-blocking socket, driven by the Processor's selector.

The socket is wrapped with ``ssl.SSLContext.wrap_socket(..., do_handshake_on_connect=False)``
while it is non-blocking, so OpenSSL never waits: ``handshake()`` runs one step of the
handshake and reports which readiness (read or write) the next step needs, and reads
and writes report "nothing now" as BlockingIOError, which the Selector and the Sends
already treat as a full or empty socket.

The transport stands in for the socket in a KafkaChannel (``recv_into``, ``send``,
``sendmsg``, ``close``), so the receive code and the Sends are the PLAINTEXT ones. Three
things differ from a plain socket:

* OpenSSL decrypts whole TLS records, so bytes can be waiting inside it that epoll
  knows nothing about. ``recv_into`` drains them while the buffer has room, and
  ``pending()`` tells the selector to read again without waiting for readiness
  (Kafka's ``hasBytesBuffered``).
* A TLS write that could not finish must be retried with the same bytes. The
  transport keeps the chunk it was writing and writes it again on the next call; the
  caller, which had not advanced, passes the same bytes again anyway.
* A file region (a fetch) cannot go through ``sendfile``: the kernel would send the
  plaintext. ``transfer_from`` reads the region in bounded chunks with ``pread`` and
  writes them through TLS, as Kafka's ``SslTransportLayer.transferFrom`` does.
"""
from __future__ import annotations

import socket
import ssl
from typing import Any, Optional, Sequence

# At most this much plaintext per TLS write: large enough for a few full TLS records,
# small enough that one connection does not hold the Processor for long.
MAX_WRITE_CHUNK = 256 * 1024
FILE_CHUNK = 64 * 1024

_WANT = (ssl.SSLWantReadError, ssl.SSLWantWriteError)


class SslTransportLayer:
    __slots__ = ("_sock", "fd", "handshake_complete", "_retry", "_file_buffer", "peer_certificate")

    def __init__(self, context: ssl.SSLContext, sock: socket.socket) -> None:
        sock.setblocking(False)
        # wrap_socket takes the descriptor over (``sock`` is detached from it).
        self._sock: ssl.SSLSocket = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        self.fd = self._sock.fileno()
        self.handshake_complete = False
        # The chunk a TLS write stopped in: OpenSSL must be given it again.
        self._retry: Optional[memoryview | bytes] = None
        self._file_buffer: Optional[bytearray] = None
        self.peer_certificate: Optional[dict] = None

    # ---- handshake ------------------------------------------------------------------
    def handshake(self) -> bool:
        """One handshake step: True once complete; otherwise raises BlockingIOError subclasses
        SSLWantReadError / SSLWantWriteError say what to wait for. SSLError: a failed handshake."""
        self._sock.do_handshake()
        self.handshake_complete = True
        self.peer_certificate = self._sock.getpeercert() or None
        return True

    @property
    def protocol_version(self) -> Optional[str]:
        return self._sock.version()

    # ---- reads ----------------------------------------------------------------------
    def recv_into(self, buffer: memoryview) -> int:
        sock = self._sock
        try:
            n = sock.recv_into(buffer)
        except _WANT:
            raise BlockingIOError() from None
        if n == 0:
            return 0
        size = len(buffer)
        # Decrypted bytes left in OpenSSL would wait for a readiness event that may never come.
        while n < size and sock.pending():
            try:
                got = sock.recv_into(buffer[n:])
            except _WANT:
                break
            if got == 0:
                break
            n += got
        return n

    def pending(self) -> int:
        return self._sock.pending()

    # ---- writes ---------------------------------------------------------------------
    def _write(self, chunk: memoryview | bytes) -> int:
        try:
            n = self._sock.send(chunk)
        except _WANT:
            self._retry = chunk
            raise BlockingIOError() from None
        self._retry = None
        return n

    def send(self, data: Any) -> int:
        if self._retry is not None:
            return self._write(self._retry)
        view = memoryview(data)
        if view.nbytes > MAX_WRITE_CHUNK:
            view = view[:MAX_WRITE_CHUNK]
        return self._write(view)

    def sendmsg(self, buffers: Sequence[Any]) -> int:
        if self._retry is not None:
            return self._write(self._retry)
        # One TLS write of the buffers joined (up to the chunk limit): fewer, fuller records.
        parts = []
        total = 0
        for b in buffers:
            view = memoryview(b)
            if total + view.nbytes > MAX_WRITE_CHUNK:
                view = view[:MAX_WRITE_CHUNK - total]
            parts.append(view)
            total += view.nbytes
            if total >= MAX_WRITE_CHUNK:
                break
        return self._write(b"".join(parts))

    def transfer_from(self, file_records: Any, position: int, count: int) -> int:
        """Write up to ``count`` bytes of a segment file from ``position``; 0 when the socket is full."""
        if self._retry is not None:
            try:
                return self._write(self._retry)
            except BlockingIOError:
                return 0
        if self._file_buffer is None:
            self._file_buffer = bytearray(FILE_CHUNK)
        size = min(count, FILE_CHUNK)
        view = memoryview(self._file_buffer)[:size]
        got = file_records._pread_into(view, position)
        if got == 0:
            raise EOFError(f"Size of FileRecords has been truncated: nothing to send at position {position}")
        # The retry (if any) must survive the next read into the shared buffer: copy then.
        chunk = view[:got]
        try:
            return self._write(chunk)
        except BlockingIOError:
            self._retry = bytes(chunk)
            return 0

    # ---- lifecycle ------------------------------------------------------------------
    def close(self) -> None:
        # No close_notify exchange: the peer may be gone, and a blocking unwrap would
        # stall the Processor. Kafka also closes without waiting for the peer's reply.
        try:
            self._sock.close()
        except OSError:
            pass
