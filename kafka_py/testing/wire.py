"""The few admin requests ``KafkaCluster`` sends its brokers, written by hand.

Metadata v1, CreateTopics v1 and DeleteTopics v1 are enough to see the brokers a broker
knows, the leader and ISR of each partition, and to make and remove topics; SaslHandshake v1
and SaslAuthenticate v0 carry a SCRAM login (RFC 5802's client side), with which a cluster
checks that each broker knows the user it created. They are encoded here with ``struct`` rather than through kafka_py.clients.common.protocol, whose generated
message classes take the test process most of a second to import: a fixture's cost is
the test run's, and these three old versions are small and frozen.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import socket
import ssl
import struct
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

METADATA, CREATE_TOPICS, DELETE_TOPICS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 3, 19, 20, 17, 36
NONE_ERROR = 0
TOPIC_ALREADY_EXISTS = 36
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_CONTROLLER = 41
SASL_AUTHENTICATION_FAILED = 58
SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


@dataclass
class PartitionInfo:
    error_code: int
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]


@dataclass
class TopicInfo:
    error_code: int
    name: str
    internal: bool
    partitions: list[PartitionInfo] = field(default_factory=list)


@dataclass
class MetadataInfo:
    brokers: dict[int, tuple[str, int]]
    controller_id: int
    topics: dict[str, TopicInfo]


def _string(value: Optional[str]) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    data = value.encode()
    return struct.pack(">h", len(data)) + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def string(self) -> Optional[str]:
        size = self.take(">h")
        if size < 0:
            return None
        value = self.data[self.pos:self.pos + size].decode()
        self.pos += size
        return value

    def int32s(self) -> list[int]:
        return [self.take(">i") for _ in range(self.take(">i"))]


class WireClient:
    """One blocking connection to a broker's listener: PLAINTEXT, or TLS with ``ssl_context``."""

    def __init__(self, host: str, port: int, timeout: float = 10.0,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if ssl_context is not None:
            try:
                self.sock = ssl_context.wrap_socket(self.sock, server_hostname=host)
            except BaseException:
                self.sock.close()
                raise
        self._correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "WireClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, api_key: int, version: int, body: bytes) -> _Reader:
        self._correlation_id += 1
        header = struct.pack(">hhi", api_key, version, self._correlation_id) + _string("kafka-py-testing")
        frame = header + body
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", self._recv_exactly(4))[0]
        reader = _Reader(self._recv_exactly(size))
        if reader.take(">i") != self._correlation_id:
            raise ConnectionError("response to another request")
        return reader

    def _recv_exactly(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self.sock.recv(size - len(chunks))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            chunks += chunk
        return bytes(chunks)

    def metadata(self, topics: Optional[Iterable[str]] = ()) -> MetadataInfo:
        """Metadata v1: the brokers, the controller and ``topics`` (None: every topic)."""
        if topics is None:
            body = struct.pack(">i", -1)
        else:
            names = list(topics)
            body = struct.pack(">i", len(names)) + b"".join(_string(t) for t in names)
        r = self.request(METADATA, 1, body)
        brokers = {}
        for _ in range(r.take(">i")):
            node_id, host, port, _rack = r.take(">i"), r.string(), r.take(">i"), r.string()
            brokers[node_id] = (host, port)
        controller_id = r.take(">i")
        topics_found = {}
        for _ in range(r.take(">i")):
            topic = TopicInfo(r.take(">h"), r.string(), bool(r.take(">b")))
            for _ in range(r.take(">i")):
                topic.partitions.append(PartitionInfo(r.take(">h"), r.take(">i"), r.take(">i"), r.int32s(), r.int32s()))
            topics_found[topic.name] = topic
        return MetadataInfo(brokers, controller_id, topics_found)

    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     config: Mapping[str, str], timeout_ms: int) -> tuple[int, Optional[str]]:
        """CreateTopics v1 of one topic: (error code, error message)."""
        body = struct.pack(">i", 1) + _string(name) + struct.pack(">ihi", partitions, replication_factor, 0)
        body += struct.pack(">i", len(config)) + b"".join(_string(k) + _string(v) for k, v in config.items())
        body += struct.pack(">ib", timeout_ms, 0)
        r = self.request(CREATE_TOPICS, 1, body)
        r.take(">i")  # one topic
        r.string()
        return r.take(">h"), r.string()

    def delete_topic(self, name: str, timeout_ms: int) -> int:
        """DeleteTopics v1 of one topic: its error code."""
        r = self.request(DELETE_TOPICS, 1, struct.pack(">i", 1) + _string(name) + struct.pack(">i", timeout_ms))
        r.take(">i")  # throttle time
        r.take(">i")  # one topic
        r.string()
        return r.take(">h")

    def scram_login(self, mechanism: str, username: str, password: str) -> tuple[int, Optional[str]]:
        """Authenticate with SCRAM (SaslHandshake v1, then SaslAuthenticate v0 twice): (error
        code, error message); NONE_ERROR once the broker accepted the proof and its own
        signature checked out."""
        r = self.request(SASL_HANDSHAKE, 1, _string(mechanism))
        error = r.take(">h")
        if error != NONE_ERROR:
            return error, f"mechanism {mechanism} not enabled"
        digest = SCRAM_HASHES[mechanism]
        name = username.replace("=", "=3D").replace(",", "=2C")
        client_first_bare = f"n={name},r={secrets.token_urlsafe(18)}"
        error, message, server_first = self._authenticate(("n,," + client_first_bare).encode())
        if error != NONE_ERROR:
            return error, message
        fields = dict(part.split("=", 1) for part in server_first.decode().split(","))
        salted = hashlib.pbkdf2_hmac(digest, password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
        client_key = hmac.digest(salted, b"Client Key", digest)
        without_proof = f"c=biws,r={fields['r']}"
        auth_message = f"{client_first_bare},{server_first.decode()},{without_proof}".encode()
        signature = hmac.digest(hashlib.new(digest, client_key).digest(), auth_message, digest)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        error, message, server_final = self._authenticate(
            f"{without_proof},p={base64.b64encode(proof).decode()}".encode())
        if error != NONE_ERROR:
            return error, message
        expected = hmac.digest(hmac.digest(salted, b"Server Key", digest), auth_message, digest)
        if server_final.decode() != "v=" + base64.b64encode(expected).decode():
            return SASL_AUTHENTICATION_FAILED, "the broker's signature does not match"
        return NONE_ERROR, None

    def _authenticate(self, token: bytes) -> tuple[int, Optional[str], bytes]:
        r = self.request(SASL_AUTHENTICATE, 0, struct.pack(">i", len(token)) + token)
        error, message = r.take(">h"), r.string()
        size = r.take(">i")
        return error, message, r.data[r.pos:r.pos + max(size, 0)]
