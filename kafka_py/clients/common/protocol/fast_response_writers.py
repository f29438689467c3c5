"""The choice between the hand-written answer writers (kafka_py/clients/common/protocol/fast_*_response.py)
and the generic (kio) one, for ``messages.encode_response_chunks``: beside the serialization
of clients/src/main/java/org/apache/kafka/common/requests/AbstractResponse.java (Kafka
2.8.2), with no counterpart in Kafka's source as code.

Only kio's own classes of the Produce (v3+), Fetch (v4+) and Metadata versions the broker
serves, and this project's generated classes of Fetch v0-v3 (the old consumers' answers, as
many as a current consumer's), have a hand-written writer. Anything unusual goes back to the generic writer: a
Fetch v12 partition with a tagged field set (diverging epoch, current leader, snapshot id),
or a value the layouts do not expect; ``encode_response_chunks`` returns None then, and the
generic writer gives the same bytes or the same error as it always did.
"""
from __future__ import annotations

import struct
import sys
from typing import Any, Callable, Optional

from kio.index import load_response_schema

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.fast_fetch_response import fetch_response_writer
from kafka_py.clients.common.protocol.fast_fields import I32, FallBack
from kafka_py.clients.common.protocol.fast_metadata_response import metadata_response_writer
from kafka_py.clients.common.protocol.fast_produce_response import produce_response_writer
from kafka_py.clients.common.protocol.schema.index import schema_index
from kafka_py.clients.common.protocol.schema_imports import load_schema

# The writer of each response class met so far: (kind, writer), or None for a class the
# generic writer handles. Filled on the first answer of each class rather than at import:
# registering every Produce, Fetch and Metadata version up front imported 57 kio schema
# modules (about a fifth of a broker's start, docs/kraft.md) for versions most brokers
# never answer.
_WRITERS: dict[type, Optional[tuple[str, Callable]]] = {}


def _writer_entry(response_type: type) -> Optional[tuple[str, Callable]]:
    """The (kind, writer) of a response class, or None: only kio's own classes of the
    Produce (v3+), Fetch (v4+) and Metadata versions the broker serves, and the generated
    classes of Fetch v0-v3, have one."""
    api_key = getattr(response_type, "__api_key__", None)
    version = getattr(response_type, "__version__", None)
    if api_key == ApiKeys.PRODUCE.id:
        api, first = ApiKeys.PRODUCE, 3
    elif api_key == ApiKeys.FETCH.id:
        api, first = ApiKeys.FETCH, 0
    elif api_key == ApiKeys.METADATA.id:
        api, first = ApiKeys.METADATA, 0
    else:
        return None
    if version not in api.schema_versions() or version < first:
        return None
    generated = schema_index.get(api.id, {}).get(version)
    if generated is not None:
        # a version kio lacks: the class must be the one generated for it
        if generated[1] != f"{response_type.__module__}:{response_type.__qualname__}":
            return None
    elif load_response_schema(api.id, version) is not response_type:
        return None  # this project's schema of the same message, or a look-alike
    if api is ApiKeys.PRODUCE:
        return "produce", produce_response_writer(version)
    if api is ApiKeys.METADATA:
        return "metadata", metadata_response_writer(version)
    partition_type = sys.modules[response_type.__module__].PartitionData
    return "fetch", fetch_response_writer(version, partition_type)


def _register_writer(response_type: type) -> Optional[tuple[str, Callable]]:
    if response_type not in _WRITERS:
        _WRITERS[response_type] = _writer_entry(response_type)
    return _WRITERS[response_type]


def _writer_for(response_type: type) -> Optional[tuple[str, Callable]]:
    try:
        return _WRITERS[response_type]
    except KeyError:
        # Under the schema import lock: the check may import a schema module, and two
        # threads meeting a new class at once build its writer once.
        return load_schema(_register_writer, response_type)


def encode_response_chunks(header_bytes: bytes, response: Any) -> Optional[list[Any]]:
    """The size-prefixed frame of a Produce, Fetch or Metadata response as chunks (bytes and
    uncopied records values), as ``messages.encode_response_chunks`` builds it; None when this
    response needs the generic writer (see the module docstring)."""
    entry = _writer_for(type(response))
    if entry is None:
        return None
    kind, write = entry
    out = bytearray(b"\0\0\0\0")
    out += header_bytes
    chunks: list[Any] = []
    try:
        if kind in ("produce", "metadata"):
            write(response, out)
        else:
            out = write(response, out, chunks)
    except (FallBack, AttributeError, TypeError, ValueError, struct.error, OverflowError):
        # Built by hand with unexpected types or out-of-range values: the generic writer
        # gives the same bytes or the same error as before.
        return None
    if out or not chunks:
        chunks.append(out)
    size = -4
    for chunk in chunks:
        size += len(chunk)
    I32.pack_into(chunks[0], 0, size)
    # Encoded parts (the even places: every records chunk closes one) go out as bytes, as
    # the generic path hands them over; records values are passed on untouched.
    for i in range(0, len(chunks), 2):
        chunks[i] = bytes(chunks[i])
    return chunks


__all__ = ["encode_response_chunks"]
