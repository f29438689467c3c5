"""Port of core/src/main/scala/kafka/log/OffsetMap.scala.

The cleaner's key -> latest offset map. ``SkimpyOffsetMap`` keeps Kafka's
design: a fixed block of memory holding ``slots`` entries of (digest of the
key, 8-byte offset), open addressing with Kafka's probe sequence, no deletes.
Storing a digest instead of the key bounds the memory whatever the key sizes;
two keys with the same digest would be treated as one, which with MD5 is
accepted as negligible, as in Kafka.

The block is an anonymous private mapping rather than a bytearray: pages are
zero until touched, so a large ``log.cleaner.dedupe.buffer.size`` costs
resident memory only for the entries actually used, and ``clear()`` hands the
pages back (MADV_DONTNEED) instead of writing zeros over all of them.
"""
from __future__ import annotations

import hashlib
import logging
import mmap
import struct
from abc import ABC, abstractmethod

from kafka_py.clients.common.utils.utils import to_int32, utils_abs

logger = logging.getLogger(__name__)

__all__ = ["OffsetMap", "SkimpyOffsetMap"]

_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")

# Kafka names algorithms as Java's MessageDigest does; hashlib spells them differently.
_HASHLIB_NAMES = {"MD2": "md2", "MD5": "md5", "SHA-1": "sha1", "SHA1": "sha1", "SHA-256": "sha256",
                  "SHA-384": "sha384", "SHA-512": "sha512"}


def _anonymous_block(size: int) -> mmap.mmap:
    # private, so that MADV_DONTNEED really drops the pages (a shared mapping would keep them)
    return mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)


class OffsetMap(ABC):
    """Kafka's OffsetMap trait."""

    @property
    @abstractmethod
    def slots(self) -> int: ...

    @abstractmethod
    def put(self, key: bytes, offset: int) -> None: ...

    @abstractmethod
    def get(self, key: bytes) -> int: ...

    @abstractmethod
    def update_latest_offset(self, offset: int) -> None: ...

    @abstractmethod
    def clear(self) -> None: ...

    @property
    @abstractmethod
    def size(self) -> int: ...

    @property
    @abstractmethod
    def latest_offset(self) -> int: ...

    @property
    def utilization(self) -> float:
        return self.size / self.slots if self.slots else 0.0


class SkimpyOffsetMap(OffsetMap):
    """A fixed-memory hash table from key digest to offset (not thread safe).

    ``memory`` bytes hold ``memory // (digest size + 8)`` entries.
    """

    def __init__(self, memory: int, hash_algorithm: str = "MD5"):
        name = _HASHLIB_NAMES.get(hash_algorithm.upper(), hash_algorithm.lower())
        try:
            hashlib.new(name)
        except (ValueError, TypeError) as e:
            raise ValueError(f"Unknown hash algorithm {hash_algorithm} for the offset map") from e
        self._new_digest = getattr(hashlib, name, None) or (lambda data=b"": hashlib.new(name, data))
        self.hash_size = self._new_digest().digest_size
        if self.hash_size < 4:
            raise ValueError(f"Hash algorithm {hash_algorithm} is too short for the offset map")
        self.memory = memory
        self.hash_algorithm = hash_algorithm
        self.bytes_per_entry = self.hash_size + 8
        self._slots = memory // self.bytes_per_entry
        self._empty_entry = bytes(self.bytes_per_entry)
        self._bytes = _anonymous_block(memory)
        self._entries = 0
        self._lookups = 0
        self._probes = 0
        self._last_offset = -1

    @property
    def slots(self) -> int:
        return self._slots

    @property
    def size(self) -> int:
        """Entries put in (overwrites of a key do not count twice)."""
        return self._entries

    @property
    def latest_offset(self) -> int:
        return self._last_offset

    @property
    def collision_rate(self) -> float:
        return (self._probes - self._lookups) / self._lookups if self._lookups else 0.0

    def update_latest_offset(self, offset: int) -> None:
        self._last_offset = offset

    def _hash(self, key) -> bytes:
        return self._new_digest(key).digest()

    def _position_of(self, hash_: bytes, attempt: int) -> int:
        """Byte position of the ``attempt``-th probe: successive ints of the digest, then linear steps."""
        hs = self.hash_size
        probe = to_int32(_INT.unpack_from(hash_, min(attempt, hs - 4))[0] + max(0, attempt - hs + 4))
        self._probes += 1
        return (utils_abs(probe) % self._slots) * self.bytes_per_entry

    def _is_empty(self, position: int) -> bool:
        return self._bytes[position:position + self.bytes_per_entry] == self._empty_entry

    def put(self, key, offset: int) -> None:
        """Map ``key`` to ``offset`` (replacing an earlier offset for the same key)."""
        if self._entries >= self._slots:
            raise ValueError("Attempt to add a new entry to a full offset map.")
        self._lookups += 1
        hash_ = self._hash(key)
        hs = self.hash_size
        buf = self._bytes
        attempt = 0
        pos = self._position_of(hash_, attempt)
        while not self._is_empty(pos):
            if buf[pos:pos + hs] == hash_:
                _LONG.pack_into(buf, pos + hs, offset)
                self._last_offset = offset
                return
            attempt += 1
            pos = self._position_of(hash_, attempt)
        buf[pos:pos + hs] = hash_
        _LONG.pack_into(buf, pos + hs, offset)
        self._last_offset = offset
        self._entries += 1

    def get(self, key) -> int:
        """The offset stored for ``key``, or -1."""
        self._lookups += 1
        hash_ = self._hash(key)
        hs = self.hash_size
        buf = self._bytes
        # once probing turns linear, a full map could be walked forever; bound it
        max_attempts = self._slots + hs - 4
        attempt = 0
        while True:
            if attempt >= max_attempts:
                return -1
            pos = self._position_of(hash_, attempt)
            if self._is_empty(pos):
                return -1
            if buf[pos:pos + hs] == hash_:
                return _LONG.unpack_from(buf, pos + hs)[0]
            attempt += 1

    def clear(self) -> None:
        """Forget every entry."""
        self._entries = 0
        self._lookups = 0
        self._probes = 0
        self._last_offset = -1
        try:
            # private anonymous pages read back as zeros after this, without being written
            self._bytes.madvise(mmap.MADV_DONTNEED)
        except (AttributeError, OSError, ValueError):
            self._bytes.close()
            self._bytes = _anonymous_block(self.memory)

    def close(self) -> None:
        self._bytes.close()

    def __repr__(self) -> str:
        return f"SkimpyOffsetMap(slots={self._slots}, entries={self._entries}, latestOffset={self._last_offset})"
