"""Fuzz target: a request frame (header and body, the bytes after the size prefix) through
``decode_request``, for every API key and version the broker serves.

Contract (kafka_py/clients/common/protocol/messages.py): the request decodes, or InvalidRequestException
(unknown API, API not served, malformed header or body) or UnsupportedVersionException is
raised; the Processor closes the connection on either. A decoded request also encodes back
(the broker logs and answers what it decoded).
"""
from __future__ import annotations

from typing import Iterable

from kafka_py.clients.common.errors import InvalidRequestException, UnsupportedVersionException
from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS
from kafka_py.clients.common.protocol.messages import decode_request, encode_request, is_unsupported_api_versions_request

_EXPECTED = (InvalidRequestException, UnsupportedVersionException)


def one_input(data: bytes) -> None:
    try:
        header, body = decode_request(data)
    except _EXPECTED:
        return
    # What decoded is a request the broker's own encoder accepts (an ApiVersions request of
    # a version not served is not decoded: it stands as an empty v0 request, answered so).
    if not is_unsupported_api_versions_request(header):
        encode_request(header, body)


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.clients.common.protocol.headers import RequestHeader
    from kafka_py.clients.common.protocol.messages import request_schema
    from tests.protocol.builders import build

    for api in sorted(IMPLEMENTED_APIS, key=lambda a: a.id):
        for version in api.supported_versions():
            header = RequestHeader.for_request(api, version, 7, "fuzz-seed")
            frame = encode_request(header, build(request_schema(api, version)))
            yield f"{api.name.lower()}-v{version}", frame[4:]
