"""Port of clients/src/main/java/org/apache/kafka/common/network/ClientInformation.java,
CipherInformation.java, ChannelMetadataRegistry.java (Selector.SelectorChannelMetadataRegistry)
and clients/src/main/java/org/apache/kafka/common/metrics/internals/IntGaugeSuite.java
(Kafka 2.8.2): what the broker knows of the software and the TLS cipher of each connection,
and the ``connections`` gauges counting connections by them.

Each network thread's Selector keeps two suites of integer gauges in Kafka's
``socket-server-metrics`` group (MBean ``kafka.server:type=socket-server-metrics,...``):

* ``connections`` with tags ``clientSoftwareName``, ``clientSoftwareVersion``, ``listener``,
  ``networkProcessor``: every connection counts as ``unknown``/``unknown`` from the moment it is
  registered, and moves to the name and version of the ApiVersions request (v3+, KIP-511) it
  sends (the Processor, or a SASL listener's authenticator, looks at it); a client sending
  ApiVersions again with other values moves again.
* ``connections`` with tags ``cipher``, ``protocol``, ``listener``, ``networkProcessor``: a TLS
  connection counts under the cipher suite and protocol its handshake negotiated
  (``TLS_AES_256_GCM_SHA384``, ``TLSv1.3``). The cipher is OpenSSL's name for it: the same as
  Java's for TLS 1.3 suites; TLS 1.2 suites read as OpenSSL spells them
  (``ECDHE-RSA-AES256-GCM-SHA384`` where a Java broker says
  ``TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384``).

Closing a connection takes it off both counts. As in Kafka, a gauge whose count fell to zero
stays registered (reading 0) and is only dropped to make room when the suite already holds
``max_entries`` (100) gauges, so a scrape sees a client's count drop to zero when it leaves.

Counts change on the network thread that owns the connections (at connection, ApiVersions,
handshake and close: never per request); the registry hooks run under the suite's lock, so a
scrape (any thread) sees a gauge appear and disappear whole.
"""
from __future__ import annotations

import logging
import re
import threading
from typing import Any, Callable, Generic, NamedTuple, Optional, TypeVar

logger = logging.getLogger(__name__)

UNKNOWN_NAME_OR_VERSION = "unknown"
# ApiVersionsRequest.isValid: what a v3+ request may give as software name and version.
SOFTWARE_NAME_VERSION_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


class ClientInformation(NamedTuple):
    software_name: str
    software_version: str

    @classmethod
    def of(cls, software_name: Optional[str], software_version: Optional[str]) -> "ClientInformation":
        """An empty name or version reads as ``unknown``."""
        return cls(software_name or UNKNOWN_NAME_OR_VERSION, software_version or UNKNOWN_NAME_OR_VERSION)


EMPTY_CLIENT_INFORMATION = ClientInformation(UNKNOWN_NAME_OR_VERSION, UNKNOWN_NAME_OR_VERSION)


class CipherInformation(NamedTuple):
    cipher: str
    protocol: str

    @classmethod
    def of(cls, cipher: Optional[str], protocol: Optional[str]) -> "CipherInformation":
        return cls(cipher or UNKNOWN_NAME_OR_VERSION, protocol or UNKNOWN_NAME_OR_VERSION)


def client_information_of(api_version: int, body: Any) -> Optional[ClientInformation]:
    """The client software an ApiVersions request of ``api_version`` announces, or None when the
    request is not valid (v3+ with a name or version outside Kafka's pattern), as Kafka's
    ``ApiVersionsRequest.isValid``. Before v3 the request names none: ``unknown``."""
    name = getattr(body, "client_software_name", "") or ""
    version = getattr(body, "client_software_version", "") or ""
    if api_version >= 3:
        match = SOFTWARE_NAME_VERSION_PATTERN.fullmatch
        if not (match(name) and match(version)):
            return None
    return ClientInformation.of(name, version)


K = TypeVar("K")


class IntGaugeSuite(Generic[K]):
    """Integer gauges by key, one registry metric each (IntGaugeSuite). ``increment`` makes the
    gauge of a new key; ``decrement`` to zero leaves it readable until room is needed for a new
    key in a full suite. ``bind(add, remove)`` connects the suite to a registry: ``add(key,
    read)`` registers a gauge, ``remove(key)`` drops it; keys that exist already are added at
    once. Unbound, the suite only counts (a Selector outside a SocketServer)."""

    def __init__(self, name: str, max_entries: int = 100) -> None:
        self.name = name
        self.max_entries = max_entries
        self._counts: dict[K, int] = {}
        self._removable: dict[K, None] = {}  # keys at zero, oldest first
        self._lock = threading.Lock()
        self._add: Optional[Callable[[K, Callable[[], int]], None]] = None
        self._remove: Optional[Callable[[K], None]] = None

    def bind(self, add: Callable[[K, Callable[[], int]], None], remove: Callable[[K], None]) -> None:
        with self._lock:
            self._add, self._remove = add, remove
            for key in self._counts:
                add(key, self._reader(key))

    def _reader(self, key: K) -> Callable[[], int]:
        counts = self._counts
        return lambda: counts.get(key, 0)

    def increment(self, key: K) -> None:
        with self._lock:
            count = self._counts.get(key)
            if count is not None:
                if count == 0:
                    self._removable.pop(key, None)
                self._counts[key] = count + 1
                return
            if len(self._counts) >= self.max_entries:
                if not self._removable:
                    # Kafka logs this and does not count the key either
                    logger.debug("%s: unable to create a gauge for %s: the suite already holds %d",
                                 self.name, key, self.max_entries)
                    return
                evicted = next(iter(self._removable))
                del self._removable[evicted]
                del self._counts[evicted]
                if self._remove is not None:
                    self._remove(evicted)
            self._counts[key] = 1
            if self._add is not None:
                self._add(key, self._reader(key))

    def decrement(self, key: K) -> None:
        with self._lock:
            count = self._counts.get(key)
            if not count:
                return
            self._counts[key] = count - 1
            if count == 1:
                self._removable[key] = None

    def value(self, key: K) -> int:
        return self._counts.get(key, 0)

    def values(self) -> dict[K, int]:
        with self._lock:
            return dict(self._counts)

    def close(self) -> None:
        """Drop every gauge from the registry and forget the counts."""
        with self._lock:
            if self._remove is not None:
                for key in self._counts:
                    self._remove(key)
            self._counts.clear()
            self._removable.clear()
            self._add = self._remove = None


class ChannelMetadataRegistry:
    """One connection's client and cipher information (Selector's SelectorChannelMetadataRegistry):
    registering a value counts the connection under it and takes it off the previous one."""

    __slots__ = ("_by_client", "_by_cipher", "client_information", "cipher_information")

    def __init__(self, by_client: IntGaugeSuite[ClientInformation],
                 by_cipher: IntGaugeSuite[CipherInformation]) -> None:
        self._by_client = by_client
        self._by_cipher = by_cipher
        self.client_information: Optional[ClientInformation] = None
        self.cipher_information: Optional[CipherInformation] = None

    def register_client_information(self, information: ClientInformation) -> None:
        previous = self.client_information
        if previous is not None:
            if previous == information:
                return
            self._by_client.decrement(previous)
        self.client_information = information
        self._by_client.increment(information)

    def register_cipher_information(self, information: CipherInformation) -> None:
        previous = self.cipher_information
        if previous is not None:
            if previous == information:
                return
            self._by_cipher.decrement(previous)
        self.cipher_information = information
        self._by_cipher.increment(information)

    def close(self) -> None:
        if self.cipher_information is not None:
            self._by_cipher.decrement(self.cipher_information)
            self.cipher_information = None
        if self.client_information is not None:
            self._by_client.decrement(self.client_information)
            self.client_information = None
