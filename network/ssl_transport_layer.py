"""Port of clients/src/main/java/org/apache/kafka/common/network/SslTransportLayer.java
(Kafka 2.8.2): TLS over a non-blocking socket, driven by the Processor's selector.

As Kafka drives an SSLEngine over its own network buffers, the transport drives an
``ssl.SSLObject`` over two ``ssl.MemoryBIO``: ciphertext is read from the socket in large
pieces into the incoming BIO and written to the socket from the outgoing one, and OpenSSL
only ever sees memory. Nothing blocks: ``handshake()`` runs the handshake as far as the
socket allows and raises SSLWantReadError / SSLWantWriteError for the readiness the next
step needs; reads and writes report "nothing now" as BlockingIOError, which the Selector
and the Sends already treat as an empty or full socket.

The transport stands in for the socket in a KafkaChannel (``recv_into``, ``send``,
``sendmsg``, ``close``), so the receive code and the Sends are the PLAINTEXT ones. What
is particular to TLS, each handled here:

* Reads. A TLS record (at most 16 KiB of plaintext) is decrypted per ``SSLObject.read``;
  with the socket read straight by OpenSSL that is two system calls per record (header,
  body). Here ``recv_into`` fills the caller's buffer in one loop: records already in the
  incoming BIO are decrypted into it, and when it runs dry the socket is read once more,
  up to 256 KiB, into one preallocated buffer. A 1 MB produce request is a handful of
  socket reads, not 128. Bytes still waiting (decrypted, or whole records in the BIO)
  are invisible to epoll: ``pending()`` tells the selector to read again without waiting
  (Kafka's ``hasBytesBuffered``).
* Writes. Plaintext is encrypted into the outgoing BIO and the ciphertext written to the
  socket. When the socket takes only part of it, the rest is kept and the write reports
  BlockingIOError: the caller, which did not advance, passes the same bytes again, and
  the next write finishes the kept ciphertext and only then reports those bytes written,
  as Kafka's ``hasPendingWrites`` keeps a send from completing before its bytes left.
* File regions (fetches) cannot go through ``sendfile``: the kernel would send the
  plaintext. ``transfer_from`` reads the region with ``pread`` in 256 KiB pieces and
  encrypts them, as Kafka's ``SslTransportLayer.transferFrom`` does, up to 1 MiB a call.
"""
from __future__ import annotations

import socket
import ssl
from typing import Any, Optional, Sequence

from kafka_py.network.channel_metadata_registry import CipherInformation

# At most this much plaintext per TLS write: large enough for a few full TLS records,
# small enough that one connection does not hold the Processor for long.
MAX_WRITE_CHUNK = 256 * 1024
FILE_CHUNK = 256 * 1024
# A fetch's file region: at most this much per transfer_from call.
MAX_TRANSFER = 1024 * 1024
# One socket read of ciphertext.
READ_CHUNK = 256 * 1024


class SslTransportLayer:
    __slots__ = ("_sock", "fd", "handshake_complete", "_obj", "_incoming", "_outgoing", "_read_buffer",
                 "_starved", "_eof", "_out", "_retry_len", "_file_buffer", "peer_certificate")

    def __init__(self, context: ssl.SSLContext, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock = sock
        self.fd = sock.fileno()
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._obj: ssl.SSLObject = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self.handshake_complete = False
        self._read_buffer: Optional[bytearray] = None
        # True when the incoming BIO holds no whole record (the last socket read found nothing).
        self._starved = True
        self._eof = False
        # Ciphertext the socket did not take yet, and the plaintext length it stands for.
        self._out: Optional[memoryview] = None
        self._retry_len: Optional[int] = None
        self._file_buffer: Optional[bytearray] = None
        self.peer_certificate: Optional[dict] = None

    # ---- the socket side of the BIOs -----------------------------------------------------
    def _fill(self) -> bool:
        """One socket read into the incoming BIO; False when the socket had nothing."""
        if self._eof:
            return False
        buffer = self._read_buffer
        if buffer is None:
            buffer = self._read_buffer = bytearray(READ_CHUNK)
        try:
            n = self._sock.recv_into(buffer)
        except BlockingIOError:
            self._starved = True
            return False
        if n == 0:
            self._eof = True
            self._incoming.write_eof()
            return True
        self._incoming.write(memoryview(buffer)[:n])
        self._starved = False
        return True

    def _flush(self) -> bool:
        """Write the outgoing ciphertext; False when the socket did not take all of it."""
        out = self._out
        outgoing = self._outgoing
        sock = self._sock
        while True:
            if out is None:
                if not outgoing.pending:
                    self._out = None
                    return True
                out = memoryview(outgoing.read())
            while out:
                try:
                    n = sock.send(out)
                except BlockingIOError:
                    self._out = out
                    return False
                out = out[n:]
            out = None

    # ---- handshake ------------------------------------------------------------------
    def handshake(self) -> bool:
        """Advance the handshake: True once complete (and its last flight written); otherwise
        SSLWantReadError / SSLWantWriteError say what to wait for. SSLError: a failed handshake."""
        if self._out is not None and not self._flush():
            raise ssl.SSLWantWriteError()
        obj = self._obj
        while True:
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                if not self._flush():
                    raise ssl.SSLWantWriteError() from None
                if not self._fill():
                    raise
        # TLS 1.3 session tickets follow the server's Finished: they go out before anything else.
        if not self._flush():
            raise ssl.SSLWantWriteError()
        self.handshake_complete = True
        self.peer_certificate = obj.getpeercert() or None
        return True

    @property
    def protocol_version(self) -> Optional[str]:
        return self._obj.version()

    def cipher_information(self) -> CipherInformation:
        """The negotiated cipher suite (OpenSSL's name) and protocol, once the handshake is done."""
        cipher = self._obj.cipher()
        return CipherInformation.of(cipher[0] if cipher else None, self._obj.version())

    # ---- reads ----------------------------------------------------------------------
    def recv_into(self, buffer: memoryview) -> int:
        """Decrypt into ``buffer`` all it can hold of what has arrived; 0 at the end of the
        stream, BlockingIOError when nothing has."""
        obj = self._obj
        size = len(buffer)
        got = 0
        while got < size:
            try:
                # (given a buffer, read returns the count read into it; typeshed says bytes)
                n: int = obj.read(size - got, buffer[got:] if got else buffer)  # type: ignore[assignment]
            except ssl.SSLWantReadError:
                if not self._fill():
                    break
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                n = 0
            if n == 0:
                self._eof = True
                break
            got += n
        if self._outgoing.pending:
            # a post-handshake message of the client's asked for an answer (a key update)
            self._flush()
        if got == 0 and not self._eof:
            raise BlockingIOError()
        return got

    def pending(self) -> int:
        """Bytes that can be read without waiting for the socket: decrypted ones, or whole
        records in the incoming BIO."""
        return self._obj.pending() or (0 if self._starved else self._incoming.pending)

    # ---- writes ---------------------------------------------------------------------
    def _write(self, chunk: Any) -> int:
        if self._out is not None:
            if not self._flush():
                raise BlockingIOError()
            if self._retry_len is not None:
                # the ciphertext of the caller's bytes (passed again) is out now
                written, self._retry_len = self._retry_len, None
                return written
        length = len(chunk)
        if not length:
            return 0
        self._obj.write(chunk)
        if not self._flush():
            self._retry_len = length
            raise BlockingIOError()
        return length

    def send(self, data: Any) -> int:
        view = memoryview(data)
        if view.nbytes > MAX_WRITE_CHUNK:
            view = view[:MAX_WRITE_CHUNK]
        return self._write(view)

    def sendmsg(self, buffers: Sequence[Any]) -> int:
        if self._retry_len is not None:
            return self._write(b"")
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
        total = 0
        if self._out is not None:
            try:
                total = self._write(b"")
            except BlockingIOError:
                return 0
            if total:
                position += total
                count -= total
        if self._file_buffer is None:
            self._file_buffer = bytearray(FILE_CHUNK)
        buffer = memoryview(self._file_buffer)
        while count > 0 and total < MAX_TRANSFER:
            size = min(count, FILE_CHUNK)
            got = file_records._pread_into(buffer[:size], position)
            if got == 0:
                if total:
                    return total
                raise EOFError(f"Size of FileRecords has been truncated: nothing to send at position {position}")
            # Encrypted at once: the buffer is free again even if the socket takes only part.
            try:
                written = self._write(buffer[:got])
            except BlockingIOError:
                return total
            total += written
            position += written
            count -= written
        return total

    # ---- lifecycle ------------------------------------------------------------------
    def close(self) -> None:
        # No close_notify exchange: the peer may be gone, and waiting for its answer would
        # stall the Processor. Kafka also closes without waiting for the peer's reply.
        try:
            self._sock.close()
        except OSError:
            pass
