"""Kafka's wire protocol, sans-IO: clients/.../common/protocol and common/requests.

Pure functions over bytes; nothing here touches a socket.

- ``errors.Errors``: every error code of Kafka 2.8.2.
- ``api_keys.ApiKeys``: every API, its versions, what this broker serves.
- ``headers``: request headers v0-v2 and response headers v0-v1.
- ``framing``: the 4-byte size prefix; an incremental ``FrameDecoder``.
- ``messages``: request/response bodies as kio message classes.
- ``codec``: the bounds-checked reader behind ``messages``.
- ``schema``: the inter-broker messages kio lacks (LeaderAndIsr, StopReplica,
  UpdateMetadata, ControlledShutdown), in kio's style.
"""
from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys, api_versions_response_keys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.framing import FrameDecoder, InvalidReceiveException, encode_frame
from kafka_py.clients.common.protocol.headers import RequestHeader, ResponseHeader, parse_request_header
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_response_chunks,
    is_unsupported_api_versions_request,
    parse_request,
    parse_response,
    request_schema,
    response_schema,
    unsupported_api_versions_response,
)

__all__ = (
    "IMPLEMENTED_APIS",
    "ApiKeys",
    "Errors",
    "FrameDecoder",
    "InvalidReceiveException",
    "RequestHeader",
    "ResponseHeader",
    "api_versions_response",
    "api_versions_response_keys",
    "decode_request",
    "decode_response",
    "encode_frame",
    "encode_request",
    "encode_response",
    "encode_response_chunks",
    "is_unsupported_api_versions_request",
    "parse_request",
    "parse_request_header",
    "parse_response",
    "request_schema",
    "response_schema",
    "unsupported_api_versions_response",
)
