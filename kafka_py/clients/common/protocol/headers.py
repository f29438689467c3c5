"""Port of clients/src/main/java/org/apache/kafka/common/requests/RequestHeader.java and
ResponseHeader.java (Kafka 2.8.2), with the wire layouts of RequestHeader.json and
ResponseHeader.json.

Request header v0: api_key int16, api_version int16, correlation_id int32.
v1 adds client_id (nullable string with an int16 length, even in v2: Kafka keeps it
in the legacy encoding so any broker can read it). v2 adds tagged fields.
Response header v0: correlation_id int32; v1 adds tagged fields.

2.8.2 defines no tagged fields in either header, so any that arrive are unknown;
they are kept as raw ``(tag, bytes)`` pairs and written back unchanged.

Parsing is written by hand (one struct call for the fixed part) because it runs for
every request; malformed input raises InvalidRequestException, never IndexError or
struct.error. A request header is also parsed in C where ``_headers.c`` is built
(setup.py): the same header for the common case, and None for anything else, which the
Python parse then reads or refuses (tests/protocol/test_headers.py holds the two alike).
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

from kafka_py.clients.common.errors import InvalidRequestException
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.codec import as_buffer

try:  # RequestHeader.parse's common case in C (_headers.c), built by setup.py
    from kafka_py.clients.common.protocol import _headers as _compiled
except ImportError:  # pragma: no cover - a checkout whose extension was not built
    _compiled = None

logger = logging.getLogger(__name__)

_V0 = struct.Struct(">hhi")
_V1 = struct.Struct(">hhih")
_KEY_AND_VERSION = struct.Struct(">hh")
_CORRELATION_ID = struct.Struct(">i")
_CORRELATION_ID_AND_LENGTH = struct.Struct(">ih")
_API_BY_ID = {api.id: api for api in ApiKeys}
# (api key id, api version) -> request header version, memoised: parse runs per request.
# Capped, so that clients sending garbage versions cannot grow it without limit.
_HEADER_VERSIONS: dict[tuple[int, int], int] = {}
_HEADER_VERSIONS_LIMIT = 4096

TaggedFields = tuple[tuple[int, bytes], ...]


def read_unsigned_varint(buffer: memoryview, offset: int) -> tuple[int, int]:
    """Read an unsigned varint; returns ``(value, new_offset)``."""
    value = 0
    shift = 0
    end = len(buffer)
    while True:
        if offset >= end:
            raise InvalidRequestException("buffer ends inside a varint")
        b = buffer[offset]
        offset += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, offset
        shift += 7
        if shift > 28:
            raise InvalidRequestException("varint is longer than 5 bytes")


def write_unsigned_varint(value: int, out: bytearray) -> None:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_tagged_fields(buffer: memoryview, offset: int) -> tuple[TaggedFields, int]:
    """Read a tagged-field section as raw ``(tag, bytes)`` pairs."""
    count, offset = read_unsigned_varint(buffer, offset)
    if count == 0:
        return (), offset
    if count > len(buffer) - offset:
        raise InvalidRequestException(f"{count} tagged fields cannot fit in the header")
    fields = []
    for _ in range(count):
        tag, offset = read_unsigned_varint(buffer, offset)
        size, offset = read_unsigned_varint(buffer, offset)
        if offset + size > len(buffer):
            raise InvalidRequestException(f"tagged field {tag} runs past the end of the buffer")
        fields.append((tag, bytes(buffer[offset:offset + size])))
        offset += size
    return tuple(fields), offset


def write_tagged_fields(fields: TaggedFields, out: bytearray) -> None:
    write_unsigned_varint(len(fields), out)
    for tag, data in sorted(fields):
        write_unsigned_varint(tag, out)
        write_unsigned_varint(len(data), out)
        out += data


@dataclass(frozen=True, slots=True)
class ResponseHeader:
    """The header of a response: the request's correlation id (v1 adds tagged fields)."""

    correlation_id: int
    header_version: int = 0
    tagged_fields: TaggedFields = ()

    def __post_init__(self) -> None:
        if self.header_version not in (0, 1):
            raise ValueError(f"unknown response header version {self.header_version}")

    def size(self) -> int:
        return len(self.to_bytes())

    def to_bytes(self) -> bytes:
        if self.header_version == 0:
            return _CORRELATION_ID.pack(self.correlation_id)
        out = bytearray(_CORRELATION_ID.pack(self.correlation_id))
        write_tagged_fields(self.tagged_fields, out)
        return bytes(out)

    @classmethod
    def parse(
        cls, buffer: bytes | bytearray | memoryview, header_version: int, offset: int = 0
    ) -> tuple[ResponseHeader, int]:
        """Parse a response header; returns it and the offset of the response body."""
        view = as_buffer(buffer)
        if len(view) - offset < 4 or offset < 0:
            raise InvalidRequestException("response header truncated")
        (correlation_id,) = _CORRELATION_ID.unpack_from(view, offset)
        offset += 4
        tagged: TaggedFields = ()
        if header_version >= 1:
            tagged, offset = read_tagged_fields(view, offset)
        return cls(correlation_id, header_version, tagged), offset


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """The header of a request. ``api_key`` is an ApiKeys member once parsed."""

    api_key: ApiKeys
    api_version: int
    correlation_id: int
    client_id: str | None = ""
    header_version: int = 1
    tagged_fields: TaggedFields = ()

    def __post_init__(self) -> None:
        if self.header_version not in (0, 1, 2):
            raise ValueError(f"unknown request header version {self.header_version}")
        if not isinstance(self.api_key, ApiKeys):
            object.__setattr__(self, "api_key", ApiKeys.for_id(self.api_key))

    @classmethod
    def for_request(
        cls, api_key: ApiKeys, api_version: int, correlation_id: int, client_id: str | None = ""
    ) -> RequestHeader:
        """A header with the version Kafka uses for this API version."""
        return cls(api_key, api_version, correlation_id, client_id,
                   api_key.request_header_version(api_version))

    def to_response_header(self) -> ResponseHeader:
        """The header of the response to this request (Kafka's ``toResponseHeader``)."""
        return ResponseHeader(
            self.correlation_id, self.api_key.response_header_version(self.api_version)
        )

    def size(self) -> int:
        return len(self.to_bytes())

    def to_bytes(self) -> bytes:
        if self.header_version == 0:
            return _V0.pack(self.api_key, self.api_version, self.correlation_id)
        if self.client_id is None:
            out = bytearray(_V1.pack(self.api_key, self.api_version, self.correlation_id, -1))
        else:
            client_id = self.client_id.encode()
            if len(client_id) > 0x7FFF:
                raise ValueError(f"client id of {len(client_id)} bytes is too long")
            out = bytearray(_V1.pack(self.api_key, self.api_version, self.correlation_id,
                                     len(client_id)))
            out += client_id
        if self.header_version == 2:
            write_tagged_fields(self.tagged_fields, out)
        return bytes(out)

    @classmethod
    def parse(
        cls, buffer: bytes | bytearray | memoryview, offset: int = 0
    ) -> tuple[RequestHeader, int]:
        """Parse a request header; returns it and the offset where the body starts.

        The header version follows from the api key and version in the first four
        bytes, for any version number, so a request with a version this broker
        does not support still yields a header it can answer. An unknown api key
        or a malformed header raises InvalidRequestException.
        """
        if _compiled is not None and cls is RequestHeader:
            parsed = _compiled.parse(cls, _API_BY_ID, _HEADER_VERSIONS, buffer, offset)
            if parsed is not None:
                return parsed
        view = as_buffer(buffer)
        available = len(view) - offset
        if offset < 0 or available < 4:
            raise InvalidRequestException("request header truncated: no api key and version")
        api_key_id, api_version = _KEY_AND_VERSION.unpack_from(view, offset)
        api_key = _API_BY_ID.get(api_key_id)
        if api_key is None:
            raise InvalidRequestException(f"Unknown API key {api_key_id}")
        header_version = _HEADER_VERSIONS.get((api_key_id, api_version))
        if header_version is None:
            header_version = api_key.request_header_version(api_version)
            if len(_HEADER_VERSIONS) < _HEADER_VERSIONS_LIMIT:
                _HEADER_VERSIONS[(api_key_id, api_version)] = header_version
        if header_version == 0:
            if available < _V0.size:
                raise InvalidRequestException("request header v0 truncated")
            correlation_id = _CORRELATION_ID.unpack_from(view, offset + 4)[0]
            return _parsed(cls, api_key, api_version, correlation_id, "", 0, ()), offset + _V0.size
        if available < _V1.size:
            raise InvalidRequestException(f"request header v{header_version} truncated")
        correlation_id, length = _CORRELATION_ID_AND_LENGTH.unpack_from(view, offset + 4)
        offset += _V1.size
        if length == -1:
            # As Kafka does: a null client id is read as an empty one.
            client_id = ""
        elif length < -1:
            raise InvalidRequestException(f"negative client id length {length}")
        elif len(view) - offset < length:
            raise InvalidRequestException("request header truncated inside the client id")
        else:
            try:
                client_id = str(view[offset:offset + length], "utf-8")
            except UnicodeDecodeError as e:
                raise InvalidRequestException(
                    f"Error parsing request header. Our best guess of the apiKey is: {api_key_id}"
                ) from e
            offset += length
        tagged: TaggedFields = ()
        if header_version == 2:
            tagged, offset = read_tagged_fields(view, offset)
        return _parsed(cls, api_key, api_version, correlation_id, client_id, header_version, tagged), offset


def _parsed(cls: type, api_key: ApiKeys, api_version: int, correlation_id: int, client_id: str,
            header_version: int, tagged: TaggedFields) -> RequestHeader:
    """A RequestHeader of values ``parse`` has already checked, made without the dataclass's
    ``__init__``: a frozen dataclass sets each field through ``object.__setattr__`` and then
    runs ``__post_init__``'s checks, several times the cost of the parse itself; the slots'
    own setters write the same fields."""
    header = _new_object(cls)
    _set_api_key(header, api_key)
    _set_api_version(header, api_version)
    _set_correlation_id(header, correlation_id)
    _set_client_id(header, client_id)
    _set_header_version(header, header_version)
    _set_tagged_fields(header, tagged)
    return header


_new_object = object.__new__
_set_api_key = RequestHeader.__dict__["api_key"].__set__
_set_api_version = RequestHeader.__dict__["api_version"].__set__
_set_correlation_id = RequestHeader.__dict__["correlation_id"].__set__
_set_client_id = RequestHeader.__dict__["client_id"].__set__
_set_header_version = RequestHeader.__dict__["header_version"].__set__
_set_tagged_fields = RequestHeader.__dict__["tagged_fields"].__set__


def parse_request_header(
    buffer: bytes | bytearray | memoryview, offset: int = 0
) -> tuple[RequestHeader, int]:
    """``RequestHeader.parse``: the header and the offset of the request body."""
    return RequestHeader.parse(buffer, offset)
