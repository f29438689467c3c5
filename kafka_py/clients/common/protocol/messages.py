"""Port of clients/src/main/java/org/apache/kafka/common/requests/AbstractRequest.java,
AbstractResponse.java and RequestContext.java's parsing and serialization (Kafka 2.8.2).

Request and response bodies are kio's message classes, or kafka_py.clients.common.protocol.schema's
for the inter-broker APIs kio lacks. This module finds the class for an api key and
version, reads bodies with kafka_py.clients.common.protocol.codec and writes whole size-prefixed
frames (size, header, body), all as pure functions over bytes.

Errors: an unknown api key, an API this broker does not serve, or a malformed body
raise InvalidRequestException; a known, served API at a version outside what the
broker supports raises UnsupportedVersionException. The network layer closes the
connection on either, as Kafka's SocketServer does, except for an ApiVersions
request of an unsupported version, which is answered (KIP-511; see
``is_unsupported_api_versions_request``).
"""
from __future__ import annotations

import datetime
import io
import logging
import struct
from dataclasses import fields
from functools import cache, lru_cache
from pkgutil import resolve_name
from typing import Any

from kio.index import load_request_schema
from kio.index import load_response_schema
from kio.schema.api_versions.v0.request import ApiVersionsRequest as ApiVersionsRequestV0
from kio.schema.api_versions.v0.response import ApiVersion as ApiVersionV0
from kio.schema.api_versions.v0.response import ApiVersionsResponse as ApiVersionsResponseV0
from kio.serial import entity_writer
from kio.static.primitive import i16

from kafka_py.clients.common.errors import InvalidRequestException
from kafka_py.clients.common.errors import UnsupportedVersionException
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.api_keys import api_versions_response_keys
from kafka_py.clients.common.protocol.codec import ChunkWriter
from kafka_py.clients.common.protocol.codec import SchemaException
from kafka_py.clients.common.protocol.codec import as_buffer
from kafka_py.clients.common.protocol.codec import read_entity
from kafka_py.clients.common.protocol.codec import write_entity_chunks
from kafka_py.clients.common.protocol import fast_response_writers
from kafka_py.clients.common.protocol.fast_produce_request import produce_request_reader
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.framing import size_prefix
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.headers import ResponseHeader
from kafka_py.clients.common.protocol.schema.index import schema_index as _local_schemas
from kafka_py.clients.common.protocol.schema_imports import load_schema

logger = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")


def _api_for(api_key: int) -> ApiKeys:
    if not ApiKeys.has_id(api_key):
        raise InvalidRequestException(f"Unknown API key {api_key}")
    return ApiKeys(api_key)


@cache
def _schema(api: ApiKeys, api_version: int, response: bool) -> type:
    local = _local_schemas.get(api.id)
    if local is not None and api_version in local:
        request_path, response_path = local[api_version]
        return load_schema(resolve_name, response_path if response else request_path)
    loader = load_response_schema if response else load_request_schema
    return load_schema(loader, api.id, api_version)


def _check_schema_version(api: ApiKeys, api_version: int) -> None:
    versions = api.schema_versions()
    if api_version not in versions:
        raise UnsupportedVersionException(
            f"{api.name} version {api_version} is not supported"
            + (f" (versions {versions.start}-{versions[-1]})" if versions else "")
        )


def request_schema(api_key: int, api_version: int) -> type:
    """The request class for an api key and version that 2.8.2 and kio (or we) define."""
    api = _api_for(api_key)
    _check_schema_version(api, api_version)
    return _schema(api, api_version, False)


def response_schema(api_key: int, api_version: int) -> type:
    """The response class for an api key and version that 2.8.2 and kio (or we) define."""
    api = _api_for(api_key)
    _check_schema_version(api, api_version)
    return _schema(api, api_version, True)


def _check_served(api: ApiKeys, api_version: int) -> None:
    if not api.implemented:
        raise InvalidRequestException(f"Received request api key {api.name} which is not enabled")
    if not api.is_version_supported(api_version):
        versions = api.supported_versions()
        raise UnsupportedVersionException(
            f"{api.name} version {api_version} is not supported "
            f"(versions {versions.start}-{versions[-1]})"
        )


def parse_request(api_key: int, api_version: int, body: bytes | bytearray | memoryview) -> Any:
    """Read a request body of a served API and supported version.

    ``records`` fields come back as memoryviews into ``body``. Bytes after the body
    are ignored, as in Kafka.
    """
    entry = _served_request_schemas.get((api_key, api_version))
    if entry is None:
        api = _api_for(api_key)
        _check_served(api, api_version)
        schema = _schema(api, api_version, False)
        entry = _served_request_schemas[(api_key, api_version)] = (schema, produce_request_reader(schema))
    schema, read_by_hand = entry
    if read_by_hand is not None:
        # Produce v3-v9, one per produce request: read by hand into the same objects;
        # None when only the generic reader can tell what the bytes hold.
        request = read_by_hand(as_buffer(body))
        if request is not None:
            return request
    try:
        request, _ = read_entity(schema, body)
    except SchemaException as e:
        raise InvalidRequestException(
            f"Error getting request for apiKey: {ApiKeys(api_key).name}, apiVersion: {api_version}: {e}"
        ) from e
    return request


# (api key id, version) -> (request class, its hand-written reader or None), filled on first
# use for served APIs and versions only: every request after the first of its kind is one
# dict lookup away from its reader.
_served_request_schemas: dict[tuple[int, int], tuple[type, Any]] = {}


def parse_response(api_key: int, api_version: int, body: bytes | bytearray | memoryview) -> Any:
    """Read a response body (the broker's client side: controller, replica fetcher)."""
    schema = response_schema(api_key, api_version)
    try:
        response, _ = read_entity(schema, body)
    except SchemaException as e:
        raise InvalidRequestException(
            f"Error reading response for apiKey: {ApiKeys(api_key).name}, "
            f"apiVersion: {api_version}: {e}"
        ) from e
    return response


def is_unsupported_api_versions_request(header: RequestHeader) -> bool:
    """An ApiVersions request of a version this broker lacks: answered, never parsed."""
    api_versions = ApiKeys.API_VERSIONS
    return header.api_key is api_versions and not api_versions.is_version_supported(
        header.api_version
    )


def decode_request(frame: bytes | bytearray | memoryview,
                   api_version_manager: Any = None) -> tuple[RequestHeader, Any]:
    """Header and body of one request frame (the bytes after the size prefix).

    An ApiVersions request of an unsupported version is not parsed: its body may
    be in a layout this broker does not know. It yields an empty v0 request, and
    the handler answers with ``unsupported_api_versions_response()``.

    ``api_version_manager`` (server/api_version_manager.py) is the listener's when it serves
    its own set of APIs (the KRaft controller's); without one, the broker's IMPLEMENTED_APIS.
    """
    view = as_buffer(frame)
    header, offset = RequestHeader.parse(view)
    if is_unsupported_api_versions_request(header):
        return header, ApiVersionsRequestV0()
    if api_version_manager is not None:
        return header, _parse_listener_request(api_version_manager, header, view[offset:])
    return header, parse_request(header.api_key, header.api_version, view[offset:])


def _parse_listener_request(api_version_manager: Any, header: RequestHeader, body: memoryview) -> Any:
    """parse_request against the APIs and versions a listener's ApiVersionManager enables
    (Kafka's Processor checks ``apiVersionManager.isApiEnabled`` before parsing)."""
    api = header.api_key
    if not api_version_manager.is_api_enabled(api):
        raise InvalidRequestException(f"Received request api key {api.name} which is not enabled")
    versions = api_version_manager.supported_versions(api)
    if header.api_version not in versions:
        raise UnsupportedVersionException(
            f"{api.name} version {header.api_version} is not supported (versions {versions.start}-{versions[-1]})")
    try:
        request, _ = read_entity(_schema(api, header.api_version, False), body)
    except SchemaException as e:
        raise InvalidRequestException(
            f"Error getting request for apiKey: {api.name}, apiVersion: {header.api_version}: {e}") from e
    return request


def decode_response(
    frame: bytes | bytearray | memoryview, api_key: int, api_version: int
) -> tuple[ResponseHeader, Any]:
    """Header and body of one response frame to a request of ``api_key``/``api_version``."""
    api = _api_for(api_key)
    view = as_buffer(frame)
    header, offset = ResponseHeader.parse(view, api.response_header_version(api_version))
    return header, parse_response(api_key, api_version, view[offset:])


def _expected_header_version(entity: Any, response: bool) -> int:
    return _header_version_of(type(entity), response)


@cache
def _header_version_of(entity_type: type, response: bool) -> int:
    api = ApiKeys(int(entity_type.__api_key__))
    version = int(entity_type.__version__)
    if response:
        return api.response_header_version(version)
    return api.request_header_version(version)


def encode_request(header: RequestHeader, request: Any) -> bytes:
    """A size-prefixed request frame: size, header, body."""
    if int(header.api_key) != int(request.__api_key__) or header.api_version != int(
        request.__version__
    ):
        raise ValueError(
            f"header is for api {header.api_key} v{header.api_version} but the request is "
            f"{type(request).__name__} v{request.__version__}"
        )
    if header.header_version != _expected_header_version(request, response=False):
        raise ValueError(
            f"{type(request).__name__} v{request.__version__} needs request header "
            f"v{_expected_header_version(request, response=False)}, not v{header.header_version}"
        )
    return _encode(header.to_bytes(), request)


def encode_response(header: ResponseHeader, response: Any) -> bytes:
    """A size-prefixed response frame: size, header, body.

    ``header`` is normally ``request_header.to_response_header()``; its version must
    be the one Kafka uses for this response (v0 for every ApiVersions response).
    """
    _check_response_header(header, response)
    return _encode(header.to_bytes(), response)


def encode_response_chunks(header: ResponseHeader, response: Any) -> list[Any]:
    """A response frame as chunks, for responses that carry file regions.

    The first chunk is ``bytes`` starting with the size prefix and header. Records
    fields holding large byte strings or non-bytes objects (anything whose len() is
    its size, such as a file slice to ``sendfile``) appear as chunks of their own,
    uncopied; see ``codec.ChunkWriter``.
    """
    _check_response_header(header, response)
    # Produce and Fetch answers, one per request on the hot paths, have a hand-written
    # writer giving the same bytes.
    chunks = fast_response_writers.encode_response_chunks(header.to_bytes(), response)
    if chunks is not None:
        return chunks
    writer = ChunkWriter()
    writer.write(header.to_bytes())
    write_entity_chunks(response, writer)
    chunks = writer.getvalue()
    chunks[0] = size_prefix(writer.size) + chunks[0]
    return chunks


_CORRELATION_ID = struct.Struct(">i")


def encode_response_chunks_for(request_header: RequestHeader, response: Any) -> list[Any]:
    """``encode_response_chunks(request_header.to_response_header(), response)``, with the
    response header written straight from the request's correlation id when its version
    is the one the response needs (the case of every well-formed answer)."""
    header_version = _header_version_of(type(response), True)
    if header_version == _response_header_version(request_header.api_key, request_header.api_version):
        header_bytes = _CORRELATION_ID.pack(request_header.correlation_id)
        if header_version:
            header_bytes += b"\0"  # no tagged fields
        chunks = fast_response_writers.encode_response_chunks(header_bytes, response)
        if chunks is not None:
            return chunks
    return encode_response_chunks(request_header.to_response_header(), response)


@lru_cache(maxsize=1024)  # bounded: ApiVersions requests reach here with any version
def _response_header_version(api: ApiKeys, api_version: int) -> int:
    return api.response_header_version(api_version)


def _check_response_header(header: ResponseHeader, response: Any) -> None:
    expected = _expected_header_version(response, response=True)
    if header.header_version != expected:
        raise ValueError(
            f"{type(response).__name__} v{response.__version__} needs response header "
            f"v{expected}, not v{header.header_version}"
        )


def _encode(header_bytes: bytes, entity: Any) -> bytes:
    out = io.BytesIO()
    out.write(b"\0\0\0\0")
    out.write(header_bytes)
    entity_writer(type(entity))(out, entity)
    frame = out.getbuffer()
    _SIZE.pack_into(frame, 0, len(frame) - 4)
    del frame
    return out.getvalue()


def api_versions_response(
    version: int, error: Errors = Errors.NONE, throttle_time_ms: int = 0
) -> Any:
    """This broker's ApiVersions response of ``version``, listing every served API.

    A response carrying an error is built as version 0 whatever ``version`` says:
    clients read an ApiVersions body with an error as v0 (kafka-python always,
    Kafka's Java client as its fallback).
    """
    if error is not Errors.NONE:
        version = 0
    schema = response_schema(ApiKeys.API_VERSIONS, version)
    values: dict[str, Any] = {
        "error_code": error.error_code,
        "api_keys": api_versions_response_keys(version),
    }
    if "throttle_time" in {f.name for f in fields(schema)}:
        values["throttle_time"] = datetime.timedelta(milliseconds=throttle_time_ms)
    return schema(**values)


def unsupported_api_versions_response() -> ApiVersionsResponseV0:
    """The v0 answer to an ApiVersions request of an unsupported version (KIP-511).

    It carries UNSUPPORTED_VERSION and the ApiVersions range, so the client can
    retry with a version both sides know.
    """
    versions = ApiKeys.API_VERSIONS.supported_versions()
    return ApiVersionsResponseV0(
        error_code=Errors.UNSUPPORTED_VERSION.error_code,
        api_keys=(
            ApiVersionV0(
                api_key=i16(ApiKeys.API_VERSIONS.id),
                min_version=i16(versions.start),
                max_version=i16(versions[-1]),
            ),
        ),
    )
