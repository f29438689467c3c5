"""Port of core/src/main/scala/kafka/server/ControllerApis.scala (Kafka 2.8.2, with the
handlers Kafka 3.0 adds: FetchSnapshot, CreatePartitions, ElectLeaders, AlterConfigs,
AlterPartitionReassignments, ListPartitionReassignments, AllocateProducerIds, UpdateFeatures).

The request handler of a KRaft controller's listener. The raft APIs (Vote, BeginQuorumEpoch,
EndQuorumEpoch, DescribeQuorum, Fetch, FetchSnapshot) go to the RaftManager, whose io thread
answers them; the metadata APIs (broker registration and heartbeats, AlterIsr, the topic,
config, quota, reassignment and feature APIs, AllocateProducerIds) go to the QuorumController,
which answers once their records have committed, or with NOT_CONTROLLER on a standby. Both
complete futures on their own threads; the answer is sent from there, so no handler thread
waits.

An Envelope (KIP-590) carries a request a broker forwards for a client: the inner request is
read with the envelope's connection, listener and security protocol but the client's
principal and address, handled as if it had arrived itself, and its answer goes back wrapped
in an EnvelopeResponse. Only forwardable APIs may travel so (INVALID_REQUEST otherwise); an
inner request that does not parse is UNSUPPORTED_VERSION, as in Kafka.

ApiVersions lists what this listener serves (server/api_version_manager.py). A request of an
API it does not serve never gets here: the Processor closes its connection.

Authorization: with no authorizer every check passes, as in a broker without one. With the
StandardAuthorizer (``authorizer.class.name``, Kafka 3.2+) every request, and each request an
Envelope carries, is authorized with the principal it was made by: the envelope needs
CLUSTER_ACTION for the forwarding broker, the request inside it what the client needs.

ACLs and SCRAM credentials (Kafka 3.2 and 3.5): CreateAcls and DeleteAcls go through the same
handlers as a broker's (server/kafka_apis_acls.py, so the same checks and answers), whose
authorizer hands the change to the QuorumController's AclControlManager;
AlterUserScramCredentials goes to its ScramControlManager. Both need Alter on the cluster.
"""
from __future__ import annotations

import logging
import random
import struct
import uuid
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.errors import ApiException, InvalidRequestException, UnsupportedVersionException
from kafka_py.network.request_channel import Request, RequestContext
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity, new_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.fast_fields import uvarint
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import encode_response_chunks_for, response_schema
from kafka_py.raft import raft_util
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.server.api_version_manager import ApiVersionManager
from kafka_py.server.auth_helper import AuthHelper
from kafka_py.server.kafka_apis_common import error_response
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    from kafka_py.network.request_channel import RequestChannel
    from kafka_py.core.raft.raft_manager import RaftManager

logger = logging.getLogger(__name__)

ZERO_UUID = uuid.UUID(int=0)
NO_CONTROLLER_ID = -1

# ApiKeys.forwardable of Kafka 2.8.2: what a broker may forward in an Envelope; with Kafka
# 3.x's ElectLeaders and ListPartitionReassignments, which its KRaft brokers always forward.
FORWARDABLE_APIS = frozenset({
    ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS, ApiKeys.ALTER_CONFIGS,
    ApiKeys.CREATE_PARTITIONS, ApiKeys.CREATE_DELEGATION_TOKEN, ApiKeys.RENEW_DELEGATION_TOKEN,
    ApiKeys.EXPIRE_DELEGATION_TOKEN, ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.ALTER_PARTITION_REASSIGNMENTS,
    ApiKeys.ALTER_CLIENT_QUOTAS, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, ApiKeys.UPDATE_FEATURES,
    ApiKeys.UNREGISTER_BROKER, ApiKeys.ELECT_LEADERS, ApiKeys.LIST_PARTITION_REASSIGNMENTS,
})


# ---------------------------------------------------------------------------- KIP-590 principals

def serialize_principal(principal: str, token_authenticated: bool = False) -> bytes:
    """DefaultKafkaPrincipalBuilder.serialize: DefaultPrincipalData v0 (flexible), prefixed with
    its version as a 2-byte short. ``principal`` is ``Type:Name``."""
    principal_type, _, name = principal.partition(":")
    out = bytearray(struct.pack(">h", 0))
    for text in (principal_type, name):
        data = text.encode("utf-8")
        out += uvarint(len(data) + 1) + data
    out += b"\x01" if token_authenticated else b"\x00"
    out += b"\x00"  # no tagged fields
    return bytes(out)


def deserialize_principal(data: bytes) -> str:
    """The ``Type:Name`` principal of serialized DefaultPrincipalData; ValueError if malformed."""
    view = memoryview(bytes(data))
    if len(view) < 2:
        raise ValueError("principal data too short")
    (version,) = struct.unpack_from(">h", view, 0)
    if version != 0:
        raise ValueError(f"unknown DefaultPrincipalData version {version}")
    pos = 2
    texts = []
    for _ in range(2):
        length, pos = _read_uvarint(view, pos)
        if length == 0 or pos + length - 1 > len(view):
            raise ValueError("bad principal string")
        texts.append(bytes(view[pos:pos + length - 1]).decode("utf-8"))
        pos += length - 1
    if pos >= len(view):
        raise ValueError("principal data truncated")
    return f"{texts[0]}:{texts[1]}"


def _read_uvarint(view: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(view) or shift > 28:
            raise ValueError("bad varint")
        b = view[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _client_address(raw: bytes) -> str:
    """InetAddress.getByAddress: 4 or 16 bytes."""
    import ipaddress

    data = bytes(raw)
    if len(data) not in (4, 16):
        raise InvalidRequestException("Failed to parse client address from envelope")
    return str(ipaddress.ip_address(data))


class EnvelopedRequest(Request):
    """A request forwarded inside an Envelope (Kafka's Request with ``envelope`` set): its answer
    is wrapped into the envelope's response."""

    __slots__ = ("envelope",)

    def __init__(self, envelope: Request, context: RequestContext, buffer: memoryview, body: Any) -> None:
        super().__init__(envelope.processor, context, envelope.start_time_ns, buffer, body)
        self.envelope = envelope


# ---------------------------------------------------------------------------- ControllerApis

class ControllerApis:
    def __init__(self, request_channel: "RequestChannel", authorizer: Optional[Any], quotas: Any, time: Time,
                 supported_features: dict, controller: Any, raft_manager: "RaftManager", config: Any,
                 meta_properties: Any, controller_nodes: Sequence[Node],
                 api_version_manager: ApiVersionManager) -> None:
        self.request_channel = request_channel
        self.authorizer = authorizer
        self.quotas = quotas
        self.time = time
        self.supported_features = supported_features
        self.controller = controller
        self.raft_manager = raft_manager
        self.config = config
        self.meta_properties = meta_properties
        self.controller_nodes = list(controller_nodes)
        self.api_version_manager = api_version_manager
        self.auth_helper = AuthHelper(authorizer)
        self.logger = IdentLogger(logger, f"[ControllerApis id={config.node_id}] ")
        self._handlers: dict[ApiKeys, Callable[[Request], None]] = {
            ApiKeys.FETCH: self.handle_fetch,
            ApiKeys.FETCH_SNAPSHOT: self.handle_fetch_snapshot,
            ApiKeys.METADATA: self.handle_metadata_request,
            ApiKeys.CREATE_TOPICS: self.handle_create_topics,
            ApiKeys.DELETE_TOPICS: self.handle_delete_topics,
            ApiKeys.API_VERSIONS: self.handle_api_versions_request,
            ApiKeys.ALTER_CONFIGS: self.handle_legacy_alter_configs,
            ApiKeys.VOTE: self.handle_vote,
            ApiKeys.BEGIN_QUORUM_EPOCH: self.handle_begin_quorum_epoch,
            ApiKeys.END_QUORUM_EPOCH: self.handle_end_quorum_epoch,
            ApiKeys.DESCRIBE_QUORUM: self.handle_describe_quorum,
            ApiKeys.ALTER_ISR: self.handle_alter_isr_request,
            ApiKeys.BROKER_REGISTRATION: self.handle_broker_registration,
            ApiKeys.BROKER_HEARTBEAT: self.handle_broker_heartbeat_request,
            ApiKeys.UNREGISTER_BROKER: self.handle_unregister_broker,
            ApiKeys.ALTER_CLIENT_QUOTAS: self.handle_alter_client_quotas,
            ApiKeys.INCREMENTAL_ALTER_CONFIGS: self.handle_incremental_alter_configs,
            ApiKeys.ALTER_PARTITION_REASSIGNMENTS: self.handle_alter_partition_reassignments,
            ApiKeys.LIST_PARTITION_REASSIGNMENTS: self.handle_list_partition_reassignments,
            ApiKeys.ENVELOPE: self.handle_envelope_request,
            ApiKeys.SASL_HANDSHAKE: self.handle_sasl_handshake_request,
            ApiKeys.SASL_AUTHENTICATE: self.handle_sasl_authenticate_request,
            ApiKeys.ALLOCATE_PRODUCER_IDS: self.handle_allocate_producer_ids_request,
            ApiKeys.CREATE_PARTITIONS: self.handle_create_partitions,
            ApiKeys.ELECT_LEADERS: self.handle_elect_leaders,
            ApiKeys.UPDATE_FEATURES: self.handle_update_features,
            ApiKeys.CREATE_ACLS: self.handle_create_acls,
            ApiKeys.DELETE_ACLS: self.handle_delete_acls,
            ApiKeys.ALTER_USER_SCRAM_CREDENTIALS: self.handle_alter_user_scram_credentials,
        }
        self._acl_handlers: Optional[Any] = None

    # ---- dispatch ---------------------------------------------------------------------------
    def handle(self, request: Request) -> None:
        try:
            handler = self._handlers.get(request.api_key)
            if handler is None:
                raise Errors.UNSUPPORTED_VERSION.exception_class(f"Unsupported ApiKey {request.api_key}")
            handler(request)
        except Exception as e:  # noqa: BLE001 - every failure becomes the request's error answer
            self.handle_error(request, e)
        finally:
            if request.api_local_complete_time_ns < 0:
                request.api_local_complete_time_ns = self.time.nanoseconds()

    def handle_error(self, request: Request, e: BaseException) -> None:
        """RequestHandlerHelper.handleError: the request's error response, or a closed connection."""
        error = Errors.for_exception(e)
        if error is Errors.UNKNOWN_SERVER_ERROR and not isinstance(e, ApiException):
            self.logger.error("Error when handling request: %r", request, exc_info=e)
        else:
            self.logger.debug("Error %s when handling request %r: %s", error.name, request, e)
        try:
            response = self._error_response(request, error, str(e) or None)
        except Exception:  # noqa: BLE001 - a request too broken to mirror is closed instead
            self.logger.debug("No error response for %r", request, exc_info=True)
            response = None
        if response is None:
            self.close_connection(request)
        else:
            self.send_response(request, response)

    def _error_response(self, request: Request, error: Errors, message: Optional[str]) -> Any:
        api = request.api_key
        if api in (ApiKeys.VOTE, ApiKeys.BEGIN_QUORUM_EPOCH, ApiKeys.END_QUORUM_EPOCH, ApiKeys.FETCH,
                   ApiKeys.FETCH_SNAPSHOT):
            return raft_util.error_response(api, error)
        if api is ApiKeys.DESCRIBE_QUORUM:
            return raft_util.describe_quorum_top_level_error_response(error)
        if api is ApiKeys.ENVELOPE:
            return self._envelope_response(request, None, error)
        response = error_response(request, error, message)
        if response is not None:
            return response
        # The KRaft APIs: a top-level error code is all their error answers carry.
        return build_entity(response_schema(api, request.api_version), {"error_code": error.error_code})

    def send_response(self, request: Request, response: Any) -> None:
        """Answer ``request`` (from any thread); a forwarded request's answer goes back in its envelope."""
        if isinstance(request, EnvelopedRequest):
            self._send_enveloped_response(request, response)
            return
        try:
            self.request_channel.send_response(request, response)
        except Exception:  # noqa: BLE001 - an answer that cannot be encoded closes the connection
            self.logger.error("Failed to encode the response to %r", request, exc_info=True)
            self.request_channel.close_connection(request)

    def close_connection(self, request: Request) -> None:
        target = request.envelope if isinstance(request, EnvelopedRequest) else request
        self.request_channel.close_connection(target)

    def _completing(self, request: Request, build: Callable[[Any], Any]) -> Callable[[Future], None]:
        """A done-callback of a controller future: ``build(result)`` answers, a failure is the
        request's error answer."""

        def done(future: Future) -> None:
            try:
                exception = future.exception()
                if exception is not None:
                    self.handle_error(request, exception)
                else:
                    self.send_response(request, build(future.result()))
            except Exception as e:  # noqa: BLE001
                self.handle_error(request, e)

        return done

    def _controller_call(self, request: Request, call: Callable[[], Future],
                         build: Callable[[Any], Any] = lambda response: response) -> None:
        call().add_done_callback(self._completing(request, build))

    # ---- Envelope (KIP-590) ------------------------------------------------------------------
    def handle_envelope_request(self, request: Request) -> None:
        if not self.auth_helper.authorize(request.context, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER,
                                          CLUSTER_NAME):
            raise Errors.CLUSTER_AUTHORIZATION_FAILED.exception_class(
                f"Principal {request.context.principal} does not have required CLUSTER_ACTION for envelope")
        envelope = request.body
        try:
            principal = deserialize_principal(bytes(envelope.request_principal or b""))
        except ValueError as e:
            raise Errors.PRINCIPAL_DESERIALIZATION_FAILURE.exception_class(
                "Failed to deserialize client principal from envelope") from e
        client_address = _client_address(envelope.client_host_address)
        buffer = memoryview(bytes(envelope.request_data))
        try:
            header, offset = RequestHeader.parse(buffer)
        except Exception as e:  # noqa: BLE001
            raise UnsupportedVersionException("Failed to parse request header from envelope") from e
        if header.api_key not in FORWARDABLE_APIS:
            raise InvalidRequestException(f"API {header.api_key.name} is not enabled or is not eligible for "
                                          "forwarding")
        from kafka_py.clients.common.protocol.messages import decode_request

        try:
            _, body = decode_request(buffer, self.api_version_manager)
        except Exception as e:  # noqa: BLE001
            raise UnsupportedVersionException(f"Failed to parse forwarded request with header {header}") from e
        context = RequestContext(header, request.context.connection_id, client_address,
                                 request.context.listener_name, request.context.security_protocol,
                                 principal=principal, from_privileged_listener=request.context.from_privileged_listener)
        self.handle(EnvelopedRequest(request, context, buffer, body))

    def _envelope_response(self, envelope: Request, response_data: Optional[bytes], error: Errors) -> Any:
        return new_entity(response_schema(ApiKeys.ENVELOPE, envelope.api_version),
                          response_data=response_data, error_code=error.error_code)

    def _send_enveloped_response(self, request: EnvelopedRequest, response: Any) -> None:
        from kafka_py.clients.common.protocol.entities import to_version

        header = request.header
        if response.__version__ != header.api_version:
            response = to_version(response, header.api_version)
        chunks = encode_response_chunks_for(header, response)
        frame = b"".join(bytes(c) for c in chunks)
        # The inner frame without its size prefix: the envelope carries header and body.
        self.send_response(request.envelope, self._envelope_response(request.envelope, frame[4:], Errors.NONE))

    # ---- SASL after authentication -------------------------------------------------------------
    def handle_sasl_handshake_request(self, request: Request) -> None:
        self.send_response(request, new_entity(response_schema(ApiKeys.SASL_HANDSHAKE, 1),
                                               error_code=Errors.ILLEGAL_SASL_STATE.error_code, mechanisms=()))

    def handle_sasl_authenticate_request(self, request: Request) -> None:
        self.send_response(request, new_entity(
            response_schema(ApiKeys.SASL_AUTHENTICATE, 2), error_code=Errors.ILLEGAL_SASL_STATE.error_code,
            error_message="SaslAuthenticate request received after successful authentication", auth_bytes=b""))

    # ---- ApiVersions and Metadata -------------------------------------------------------------
    def handle_api_versions_request(self, request: Request) -> None:
        if request.context.is_unsupported_api_versions_request:
            # KIP-511: the client learns the versions both sides know from this v0 answer.
            from kafka_py.clients.common.protocol.messages import unsupported_api_versions_response

            self.send_response(request, unsupported_api_versions_response())
            return
        body = request.body
        if request.api_version >= 3 and not _valid_client_software(body):
            self.send_response(request, self.api_version_manager.api_version_response(
                0, error=Errors.INVALID_REQUEST))
            return
        self.send_response(request, self.api_version_manager.api_version_response(request.api_version))

    def handle_metadata_request(self, request: Request) -> None:
        body = request.body
        from kio.schema.metadata.v11.response import MetadataResponse, MetadataResponseBroker

        brokers = tuple(MetadataResponseBroker(node_id=node.id, host=node.host, port=node.port, rack=node.rack)
                        for node in self.controller_nodes)
        controller_id = self.config.node_id if self.controller.is_active() else NO_CONTROLLER_ID
        if getattr(body, "include_cluster_authorized_operations", False):
            if self.auth_helper.authorize(request.context, AclOperation.DESCRIBE, ResourceType.CLUSTER,
                                          CLUSTER_NAME):
                cluster_authorized_operations = self.auth_helper.authorized_operations(
                    request, ResourceType.CLUSTER, CLUSTER_NAME)
            else:
                cluster_authorized_operations = 0
        else:
            cluster_authorized_operations = -2147483648
        self.send_response(request, new_entity(
            MetadataResponse, brokers=brokers, cluster_id=str(self.meta_properties.cluster_id),
            controller_id=controller_id, topics=(), cluster_authorized_operations=cluster_authorized_operations))

    # ---- the raft APIs ------------------------------------------------------------------------
    def _handle_raft_request(self, request: Request) -> None:
        future = self.raft_manager.handle_request(request.header, request.body, self.time.milliseconds())

        def done(response: Any, exception: Optional[BaseException]) -> None:
            if exception is not None:
                self.handle_error(request, exception)
            else:
                self.send_response(request, response)

        future.when_complete(done)

    def handle_fetch(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_fetch_snapshot(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_vote(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_begin_quorum_epoch(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_end_quorum_epoch(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._handle_raft_request(request)

    def handle_describe_quorum(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.DESCRIBE)
        self._handle_raft_request(request)

    # ---- broker lifecycle ----------------------------------------------------------------------
    def handle_broker_registration(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._controller_call(request, lambda: self.controller.register_broker(request.body))

    def handle_broker_heartbeat_request(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._controller_call(request, lambda: self.controller.process_broker_heartbeat(request.body))

    def handle_unregister_broker(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        self._controller_call(request, lambda: self.controller.unregister_broker(request.body))

    def handle_alter_isr_request(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._controller_call(request, lambda: self.controller.alter_isr(request.body))

    def handle_allocate_producer_ids_request(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        self._controller_call(request, lambda: self.controller.allocate_producer_ids(request.body))

    # ---- topics --------------------------------------------------------------------------------
    def handle_create_topics(self, request: Request) -> None:
        body = request.body
        if self.auth_helper.authorize(request.context, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
            authorized, unauthorized = body, []
        else:
            allowed = [t for t in body.topics
                       if self.auth_helper.authorize(request.context, AclOperation.CREATE, ResourceType.TOPIC, t.name)]
            unauthorized = [t.name for t in body.topics if t not in allowed]
            authorized = _replace(body, topics=tuple(allowed))

        def build(response: Any) -> Any:
            if not unauthorized:
                return response
            module = _module_of(response)
            extra = tuple(_make(module.CreatableTopicResult, name=name,
                                error_code=Errors.TOPIC_AUTHORIZATION_FAILED.error_code) for name in unauthorized)
            return _replace(response, topics=tuple(response.topics) + extra)

        self._controller_call(request, lambda: self.controller.create_topics(authorized), build)

    def handle_delete_topics(self, request: Request) -> None:
        body = request.body
        if not self.config.delete_topic_enable:
            if request.api_version < 3:
                raise InvalidRequestException("Topic deletion is disabled.")
            raise Errors.TOPIC_DELETION_DISABLED.exception_class(Errors.TOPIC_DELETION_DISABLED.message)
        has_cluster_auth = self.auth_helper.authorize(request.context, AclOperation.DELETE, ResourceType.CLUSTER,
                                                      CLUSTER_NAME)
        results = self.delete_topics(request, has_cluster_auth)
        from kafka_py.clients.common.protocol.schema_imports import import_schema_module

        module = import_schema_module(f"kio.schema.delete_topics.v{request.api_version}.response")
        self.send_response(request, _make(module.DeleteTopicsResponse, responses=tuple(
            _make(module.DeletableTopicResult, name=name, topic_id=topic_id, error_code=error.error_code,
                  error_message=message) for name, topic_id, error, message in results)))

    def delete_topics(self, request: Request, has_cluster_auth: bool) -> list[tuple[Optional[str], uuid.UUID,
                                                                                      Errors, Optional[str]]]:
        """Kafka's deleteTopics: names and ids checked for duplicates, ids resolved to names,
        authorization per topic, then one deletion of everything allowed. The answers are
        shuffled so their order tells nothing about topics the caller may not see."""
        body = request.body
        responses: list[tuple[Optional[str], uuid.UUID, Errors, Optional[str]]] = []

        def append(name: Optional[str], topic_id: uuid.UUID, error: Errors, message: Optional[str] = None) -> None:
            responses.append((name, topic_id, error, message))

        provided_names: set[str] = set()
        duplicate_names: set[str] = set()
        provided_ids: set[uuid.UUID] = set()
        duplicate_ids: set[uuid.UUID] = set()

        def add_name(name: str) -> None:
            if name in duplicate_names or name in provided_names:
                duplicate_names.add(name)
                provided_names.discard(name)
            else:
                provided_names.add(name)

        for name in getattr(body, "topic_names", ()) or ():
            add_name(name)
        for topic in getattr(body, "topics", ()) or ():
            topic_id = topic.topic_id if topic.topic_id is not None else ZERO_UUID
            if topic.name is None:
                if topic_id == ZERO_UUID:
                    append(None, ZERO_UUID, Errors.INVALID_REQUEST, "Neither topic name nor id were specified.")
                elif topic_id in duplicate_ids or topic_id in provided_ids:
                    duplicate_ids.add(topic_id)
                    provided_ids.discard(topic_id)
                else:
                    provided_ids.add(topic_id)
            elif topic_id == ZERO_UUID:
                add_name(topic.name)
            else:
                append(topic.name, topic_id, Errors.INVALID_REQUEST, "You may not specify both topic name and topic id.")
        for name in duplicate_names:
            append(name, ZERO_UUID, Errors.INVALID_REQUEST, "Duplicate topic name.")
        for topic_id in duplicate_ids:
            append(None, topic_id, Errors.INVALID_REQUEST, "Duplicate topic id.")

        to_authenticate = set(provided_names)
        id_to_name: dict[uuid.UUID, str] = {}
        for topic_id, name_or_error in self.controller.find_topic_names(provided_ids).result().items():
            if name_or_error.is_error():
                append(None, topic_id, name_or_error.error.error, name_or_error.error.message)
            else:
                to_authenticate.add(name_or_error.result)
                id_to_name[topic_id] = name_or_error.result
        if has_cluster_auth:
            describable = deletable = to_authenticate
        else:
            context = request.context
            describable = {n for n in to_authenticate
                           if self.auth_helper.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, n)}
            deletable = {n for n in to_authenticate
                         if self.auth_helper.authorize(context, AclOperation.DELETE, ResourceType.TOPIC, n)}
        for topic_id, name in list(id_to_name.items()):
            if name not in deletable:
                append(name if name in describable else None, topic_id, Errors.TOPIC_AUTHORIZATION_FAILED)
                del id_to_name[topic_id]
        for name, id_or_error in self.controller.find_topic_ids(provided_names).result().items():
            if name not in describable:
                append(name, ZERO_UUID, Errors.TOPIC_AUTHORIZATION_FAILED)
            elif id_or_error.is_error():
                append(name, ZERO_UUID, id_or_error.error.error, id_or_error.error.message)
            elif name in deletable:
                topic_id = id_or_error.result
                if topic_id in duplicate_ids or topic_id in id_to_name:
                    # Named and given by id at once: said only to whoever may delete it.
                    duplicate_ids.add(topic_id)
                    id_to_name.pop(topic_id, None)
                    append(name, topic_id, Errors.INVALID_REQUEST,
                           "The provided topic name maps to an ID that was already supplied.")
                else:
                    id_to_name[topic_id] = name
            else:
                append(name, ZERO_UUID, Errors.TOPIC_AUTHORIZATION_FAILED)
        for topic_id, error in self.controller.delete_topics(set(id_to_name)).result().items():
            append(id_to_name.get(topic_id), topic_id, error.error, error.message)
        random.shuffle(responses)
        return responses

    def handle_create_partitions(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        self._controller_call(request, lambda: self.controller.create_partitions(request.body))

    def handle_elect_leaders(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        self._controller_call(request, lambda: self.controller.elect_leaders(request.body))

    def handle_alter_partition_reassignments(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        self._controller_call(request, lambda: self.controller.alter_partition_reassignments(request.body))

    def handle_list_partition_reassignments(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.DESCRIBE)
        self._controller_call(request, lambda: self.controller.list_partition_reassignments(request.body))

    # ---- configs, quotas, features ---------------------------------------------------------------
    def handle_legacy_alter_configs(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER_CONFIGS)
        self._controller_call(request, lambda: self.controller.legacy_alter_configs(request.body))

    def handle_incremental_alter_configs(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER_CONFIGS)
        self._controller_call(request, lambda: self.controller.incremental_alter_configs(request.body))

    def handle_alter_client_quotas(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER_CONFIGS)
        self._controller_call(request, lambda: self.controller.alter_client_quotas(request.body))

    def handle_update_features(self, request: Request) -> None:
        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        self._controller_call(request, lambda: self.controller.update_features(request.body))

    # ---- ACLs and SCRAM credentials ------------------------------------------------------------
    def _acl_request_handlers(self) -> Any:
        if self._acl_handlers is None:
            from kafka_py.server.kafka_apis_acls import AclRequestHandlers

            self._acl_handlers = AclRequestHandlers(_AclApisView(self))
        return self._acl_handlers

    def handle_create_acls(self, request: Request) -> None:
        self._acl_request_handlers().handle_create_acls_request(request)

    def handle_delete_acls(self, request: Request) -> None:
        self._acl_request_handlers().handle_delete_acls_request(request)

    def handle_alter_user_scram_credentials(self, request: Request) -> None:
        import kafka_py.server.kafka_apis_security  # noqa: F401 - its error answer

        self.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        self._controller_call(request, lambda: self.controller.alter_user_scram_credentials(request.body))


class _AclApisView:
    """What AclRequestHandlers uses of KafkaApis, answering through ControllerApis (so a
    forwarded request's answer, or closed connection, goes back through its envelope)."""

    def __init__(self, apis: ControllerApis) -> None:
        self._apis = apis
        self.auth_helper = apis.auth_helper
        self.authorizer = apis.authorizer
        self.logger = apis.logger
        self.request_channel = self

    def send_response(self, request: Request, response: Any) -> None:
        self._apis.send_response(request, response)

    def send_error_response(self, request: Request, error: Errors, message: Optional[str] = None) -> None:
        self._apis.send_response(request, self._apis._error_response(request, error, message))

    def close_connection(self, request: Request) -> None:
        self._apis.close_connection(request)


# ---------------------------------------------------------------------------- helpers

def _valid_client_software(body: Any) -> bool:
    """ApiVersionsRequest.isValid (v3+): the client software name and version are well-formed."""
    import re

    pattern = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
    name = getattr(body, "client_software_name", "") or ""
    version = getattr(body, "client_software_version", "") or ""
    return bool(pattern.fullmatch(name)) and bool(pattern.fullmatch(version))


def _module_of(entity: Any):
    import sys

    return sys.modules[type(entity).__module__]


def _make(cls: type, **values: Any) -> Any:
    from kafka_py.metadata.controller.controller_messages import make

    return make(cls, **values)


def _replace(entity: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(entity, **changes)


__all__ = ["ControllerApis", "EnvelopedRequest", "FORWARDABLE_APIS", "serialize_principal", "deserialize_principal"]
