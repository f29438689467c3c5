"""Port of core/src/main/scala/kafka/server/ForwardingManager.scala (Kafka 2.8.2), with the
principal serde of clients/.../security/authenticator/DefaultKafkaPrincipalBuilder.java
(serialize / deserialize) that EnvelopeUtils relies on.

KIP-590: a KRaft broker does not change metadata itself. A client's CreateTopics,
DeleteTopics, CreatePartitions, AlterConfigs, IncrementalAlterConfigs, AlterClientQuotas,
AlterPartitionReassignments, ElectLeaders ... is wrapped whole (its header and body, as
received) in an Envelope request (API 58) with the client's principal and address, sent to
the active controller through a BrokerToControllerChannelManager, and the controller's
answer, carried in the EnvelopeResponse, is parsed at the client's version and returned to
the client as if the broker had answered.

* an UNSUPPORTED_VERSION envelope error (the controller does not speak the client's version:
  the controller changed since the client asked ApiVersions) closes the client's connection,
  so it reconnects and asks again;
* any other envelope error, a response that does not parse, or a version mismatch on the
  channel is answered UNKNOWN_SERVER_ERROR (a misconfiguration the client should not see
  as its own error);
* a request that waits longer than the channel's retry timeout is answered REQUEST_TIMED_OUT.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from kio.schema.default_principal_data.v0.data import DefaultPrincipalData
from kio.schema.envelope.v0.request import EnvelopeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.codec import read_entity, write_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import decode_response, encode_request

logger = logging.getLogger(__name__)

_PRINCIPAL_DATA_VERSION = 0

# The APIs a KRaft broker forwards (Kafka 2.8.2's maybeForwardToController, with 3.0's
# ElectLeaders and ListPartitionReassignments and the ACL and SCRAM APIs the controller
# serves since 3.2 and 3.5).
FORWARDED_APIS = frozenset((
    ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.CREATE_PARTITIONS, ApiKeys.ALTER_CONFIGS,
    ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.ALTER_CLIENT_QUOTAS, ApiKeys.ALTER_PARTITION_REASSIGNMENTS,
    ApiKeys.LIST_PARTITION_REASSIGNMENTS,
    ApiKeys.ELECT_LEADERS, ApiKeys.UPDATE_FEATURES, ApiKeys.UNREGISTER_BROKER,
    ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS,
))

# (the client's response, or None: close the client's connection)
ForwardedResponseCallback = Callable[[Optional[Any]], None]


def serialize_principal(principal: str, token_authenticated: bool = False) -> bytes:
    """DefaultKafkaPrincipalBuilder.serialize: the version (int16), then DefaultPrincipalData."""
    principal_type, _, name = principal.partition(":")
    data = DefaultPrincipalData(type_=principal_type, name=name, token_authenticated=token_authenticated)
    return _PRINCIPAL_DATA_VERSION.to_bytes(2, "big", signed=True) + write_entity(data)


def deserialize_principal(data: bytes) -> str:
    """DefaultKafkaPrincipalBuilder.deserialize: the principal as ``type:name``."""
    view = memoryview(data)
    version = int.from_bytes(view[:2], "big", signed=True)
    if version != _PRINCIPAL_DATA_VERSION:
        raise ValueError(f"Unsupported principal data version {version}")
    principal, _ = read_entity(DefaultPrincipalData, view[2:])
    return f"{principal.type_}:{principal.name}"


def _client_host_address(address: str) -> bytes:
    import ipaddress

    try:
        return ipaddress.ip_address(address).packed
    except ValueError:
        return b""


class ForwardingManager:
    def forward_request(self, request: Any, response_callback: ForwardedResponseCallback,
                        request_body: Any = None) -> None:
        raise NotImplementedError

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass


class ForwardingManagerImpl(ForwardingManager):
    def __init__(self, channel_manager: Any, error_response: Callable[[Any, Errors, Optional[str]], Any]) -> None:
        """``error_response(request, error, message)``: the client request's error answer
        (KafkaApis' per-API error responses, Kafka's getErrorResponse)."""
        self.channel_manager = channel_manager
        self.error_response = error_response

    def start(self) -> None:
        self.channel_manager.start()

    def shutdown(self) -> None:
        self.channel_manager.shutdown()

    def forward_request(self, request: Any, response_callback: ForwardedResponseCallback,
                        request_body: Any = None) -> None:
        """Send ``request`` (a network Request) to the active controller in an Envelope; with
        ``request_body``, that body under the request's own header instead of its bytes as
        received (Kafka's forwardRequest with a new request, for a request whose other part
        this broker answered itself)."""
        if request_body is None:
            request_data = bytes(request.buffer)
        else:
            # the frame without its size prefix, as the buffer holds it
            request_data = encode_request(request.header, request_body)[4:]
        envelope = EnvelopeRequest(request_data=request_data,
                                   request_principal=serialize_principal(request.context.principal),
                                   client_host_address=_client_host_address(request.context.client_address))
        self.channel_manager.send_request(ApiKeys.ENVELOPE, envelope,
                                          _ForwardingResponseHandler(self, request, response_callback))

    def parse_response(self, response_data: bytes, request: Any) -> Any:
        try:
            _header, body = decode_response(response_data, int(request.api_key), request.api_version)
            return body
        except Exception:  # noqa: BLE001 - the client gets an error answer instead
            logger.error("Failed to parse response from envelope for request with header %s", request.header,
                         exc_info=True)
            return self.error_response(request, Errors.UNKNOWN_SERVER_ERROR, None)


class _ForwardingResponseHandler:
    def __init__(self, manager: ForwardingManagerImpl, request: Any, response_callback: ForwardedResponseCallback
                 ) -> None:
        self.manager = manager
        self.request = request
        self.response_callback = response_callback

    def on_complete(self, client_response: Any) -> None:
        request = self.request
        if client_response.version_mismatch is not None:
            logger.debug("Returning UNKNOWN_SERVER_ERROR in response to request %r due to unexpected version error",
                         request, exc_info=client_response.version_mismatch)
            self.response_callback(self.manager.error_response(request, Errors.UNKNOWN_SERVER_ERROR, None))
            return
        envelope_response = client_response.response_body
        envelope_error = Errors.for_code(int(envelope_response.error_code))
        if envelope_error is Errors.UNSUPPORTED_VERSION:
            # the controller does not speak the client's version: let the client start over
            self.response_callback(None)
        elif envelope_error is not Errors.NONE or envelope_response.response_data is None:
            logger.debug("Forwarded request %r failed with an error in the envelope response %s", request,
                         envelope_error.name)
            self.response_callback(self.manager.error_response(request, Errors.UNKNOWN_SERVER_ERROR, None))
        else:
            self.response_callback(self.manager.parse_response(bytes(envelope_response.response_data), request))

    def on_timeout(self) -> None:
        logger.debug("Forwarding of the request %r failed due to timeout exception", self.request)
        self.response_callback(self.manager.error_response(self.request, Errors.REQUEST_TIMED_OUT, None))


__all__ = ["FORWARDED_APIS", "ForwardingManager", "ForwardingManagerImpl", "serialize_principal", "deserialize_principal"]
