"""Fuzz target: frames read over TLS (network/ssl_transport_layer.py under network/selector.py's
KafkaChannel, as SecureKafkaChannel), with a real TLS 1.3 session made in memory between the broker's transport and
a client ``ssl.SSLObject``, the ciphertext reaching the broker in reads of any size.

The first byte sets the receive limit, the second the size of every socket read, the third
what the client sends:

* mode 0, frames: the rest is a plaintext stream the client encrypts (in writes of a size the
  third byte also sets). Contract: exactly the frames a sequential reading of the stream finds,
  and a bad size prefix refused with InvalidReceiveException, as over PLAINTEXT.
* mode 1, tampered records: the same, then one byte of the ciphertext flipped at a position
  the input gives. Contract: the frames read are a prefix of the stream's, and what is raised
  is an ssl.SSLError (or another OSError) or InvalidReceiveException, which close the
  connection; nothing else.
* mode 2, a hostile handshake: the rest goes to the broker as the client's first flight.
  Contract: the handshake raises ssl.SSLError (or asks for more bytes), nothing else, and no
  frame is ever read.
"""
from __future__ import annotations

import datetime
import functools
import os
import ssl
import struct
import tempfile
from typing import Iterable

from kafka_py.network.secure_selector import SecureKafkaChannel
from kafka_py.network.selector import KafkaChannel
from kafka_py.network.ssl_transport_layer import SslTransportLayer
from kafka_py.clients.common.protocol.framing import InvalidReceiveException
from tests.fuzz.fuzz_frames import _expected

_SCRATCH_SIZE = 64
_HANDSHAKE_ROUNDS = 20


class _Socket:
    """The broker's side of a connection: ``recv_into`` hands out what arrived, ``read_size``
    bytes at a time (BlockingIOError when nothing has); ``send`` collects what the broker writes."""

    def __init__(self, read_size: int) -> None:
        self.inbound = bytearray()
        self.outbound = bytearray()
        self.read_size = read_size
        self.closed = False

    def setblocking(self, flag: bool) -> None:
        pass

    def fileno(self) -> int:
        return -1

    def recv_into(self, buffer: memoryview) -> int:
        if not self.inbound:
            if self.closed:
                return 0
            raise BlockingIOError()
        n = min(len(buffer), self.read_size, len(self.inbound))
        buffer[:n] = self.inbound[:n]
        del self.inbound[:n]
        return n

    def send(self, data) -> int:
        self.outbound += bytes(data)
        return len(data)


@functools.lru_cache(maxsize=1)
def _contexts() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a fresh self-signed P-256 certificate, and a client that trusts it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
                   .sign(key, hashes.SHA256()))
    directory = tempfile.mkdtemp(prefix="fuzz-tls-")
    cert_path, key_path = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.minimum_version = ssl.TLSVersion.TLSv1_3
    server.load_cert_chain(cert_path, key_path)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.load_verify_locations(cert_path)
    return server, client


def _connect(sock: _Socket) -> tuple[SslTransportLayer, ssl.SSLObject, ssl.MemoryBIO]:
    """Both ends' handshakes, driven in turn until done (a bounded number of rounds)."""
    server_context, client_context = _contexts()
    transport = SslTransportLayer(server_context, sock)  # type: ignore[arg-type]
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    client_done = False
    for _ in range(_HANDSHAKE_ROUNDS):
        if not client_done:
            try:
                client.do_handshake()
                client_done = True
            except ssl.SSLWantReadError:
                pass
        sock.inbound += outgoing.read()
        try:
            server_done = transport.handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            server_done = False
        incoming.write(bytes(sock.outbound))
        sock.outbound.clear()
        if client_done and server_done:
            return transport, client, outgoing
    raise AssertionError("the in-memory TLS handshake did not complete")


def _read_all(channel: KafkaChannel, limit: int) -> bool:
    """Read until the socket has nothing more; True when a bad size prefix was refused."""
    scratch = memoryview(bytearray(_SCRATCH_SIZE))
    try:
        while True:
            try:
                if not channel.read(scratch, limit):
                    return False
            except BlockingIOError:
                return False
    except InvalidReceiveException:
        return True


def one_input(data: bytes) -> None:
    if len(data) < 3:
        return
    limit = 16 + data[0] * 8
    read_size = 1 + data[1] % 512
    mode, write_size = data[2] % 3, 1 + data[2] // 3 * 4
    payload = data[3:]
    sock = _Socket(read_size)
    if mode == 2:
        transport = SslTransportLayer(_contexts()[0], sock)  # type: ignore[arg-type]
        sock.inbound += payload
        sock.closed = True
        try:
            transport.handshake()
        except (ssl.SSLError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        raise AssertionError(f"a handshake of {len(payload)} hostile bytes completed")
    transport, client, outgoing = _connect(sock)
    stream, flip_at = payload, None
    if mode == 1 and len(payload) >= 2:
        flip_at, stream = int.from_bytes(payload[:2], "big"), payload[2:]
    for start in range(0, len(stream), write_size):
        client.write(stream[start:start + write_size])
    ciphertext = bytearray(outgoing.read())
    if flip_at is not None and ciphertext:
        ciphertext[flip_at % len(ciphertext)] ^= 0x41
    sock.inbound += ciphertext
    # as the broker's SecureSelector makes it: reads and writes through the transport
    channel = SecureKafkaChannel("fuzz", sock, "127.0.0.1", 1, transport, None)  # type: ignore[arg-type]
    frames, bad_size = _expected(stream, limit)
    if flip_at is None:
        refused = _read_all(channel, limit)
        got = [bytes(f) for f in channel.frames]
        if refused != bad_size or got != frames:
            raise AssertionError(f"read {got!r} (refused={refused}), expected {frames!r} (refused={bad_size})")
        return
    try:
        _read_all(channel, limit)
    except OSError:  # ssl.SSLError among them: the Selector closes the connection
        pass
    got = [bytes(f) for f in channel.frames]
    if got != frames[:len(got)]:
        raise AssertionError(f"read {got!r} from a tampered stream whose frames are {frames!r}")


def seeds() -> Iterable[tuple[str, bytes]]:
    def frame(body: bytes) -> bytes:
        return struct.pack(">i", len(body)) + body

    api_versions = bytes.fromhex("0012000300000001000474657374000000")
    yield "one-frame", bytes([8, 63, 0]) + frame(api_versions)
    yield "frames-small-reads-and-writes", bytes([8, 4, 3]) + frame(api_versions) + frame(b"x" * 300)
    yield "too-large", bytes([0, 100, 0]) + struct.pack(">i", 10_000) + b"z" * 8
    yield "tampered-record", bytes([8, 200, 1]) + b"\x00\x10" + frame(api_versions) * 3
    yield "tampered-header", bytes([8, 7, 1]) + b"\x00\x00" + frame(b"y" * 50)
    yield "garbage-handshake", bytes([8, 5, 2]) + b"\x16\x03\x01\x00\x05hello"
    yield "plaintext-instead-of-tls", bytes([8, 9, 2]) + frame(api_versions)
