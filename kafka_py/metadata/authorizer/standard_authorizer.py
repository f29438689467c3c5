"""Port of metadata/src/main/java/org/apache/kafka/metadata/authorizer/StandardAuthorizer.java,
ClusterMetadataAuthorizer.java and AclMutator.java (Kafka 3.5.0).

The authorizer of a KRaft node, ``authorizer.class.name=org.apache.kafka.metadata.authorizer.
StandardAuthorizer``. Its ACLs are not read from anywhere: they are AccessControlEntryRecords
and RemoveAccessControlEntryRecords of the metadata log, handed to ``add_acl``/``remove_acl``
as they commit (a broker's BrokerMetadataListener, a controller's ControllerMetadataPublisher)
and replaced whole by ``load_snapshot`` when a snapshot is loaded. Each node keeps its own
copy, so every broker and controller authorizes on its own.

Changes go the other way, to the active controller: ``create_acls``/``delete_acls`` hand the
bindings to the AclMutator (the QuorumController, set by the ControllerServer), whose
AclControlManager turns them into records; they return once the records have committed. A
broker never calls them: it forwards CreateAcls and DeleteAcls to the controller in an
Envelope. Without a mutator they fail with NOT_CONTROLLER, as Kafka's do.

Until the node has read the metadata log up to its high watermark, the ACLs it holds may be
missing some that are committed (a Deny among them), so it decides nothing but for super users:
anyone else's request gets AuthorizerNotReadyException, as in Kafka 3.5. Whoever knows that the
node has caught up calls ``complete_initial_load`` (the AclPublisher, told by the controller's
MetadataLoader or by the BrokerServer once its registration has caught up). ``start`` returns a
future per endpoint: done at once for the early-start listeners (``early.start.listeners``, by
default the controller listeners, which the quorum itself needs to catch up), done with the
initial load for the others, whose requests the SocketServer only starts processing then.

The decisions are AclAuthorizer's: the same index over the ACLs, the same rules (super users,
``allow.everyone.if.no.acl.found``, a Deny beats any Allow, the operations an Allow implies),
the same audit lines on ``kafka.authorizer.logger``; only where the ACLs come from differs.
"""
from __future__ import annotations

import concurrent.futures
import logging
import uuid
from typing import Any, Mapping, Optional, Protocol, Sequence

from kafka_py.clients.common.errors import AuthorizerNotReadyException
from kafka_py.metadata.authorizer.standard_acl import StandardAcl
from kafka_py.metadata.authorizer.standard_authorizer_data import StandardAuthorizerData
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer import ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, SUPER_USERS_PROP
from kafka_py.core.security.authorizer.acl import AclBinding, AclBindingFilter, parse_kafka_principal
from kafka_py.core.security.authorizer.acl_authorizer import AclAuthorizer
from kafka_py.core.security.authorizer.authorizer import AclCreateResult, AclDeleteResult, AuthorizationResult

logger = logging.getLogger(__name__)

STANDARD_AUTHORIZER_CLASS_NAME = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# How long create_acls/delete_acls wait for the controller to commit the change.
ACL_MUTATION_TIMEOUT_S = 60.0


class AclMutator(Protocol):
    """What changes ACLs: the active controller. Each call's future holds one result per
    binding (or filter), once the change has committed."""

    def create_acls(self, request_context: Any, acl_bindings: Sequence[AclBinding]) -> concurrent.futures.Future:
        ...

    def delete_acls(self, request_context: Any,
                    acl_binding_filters: Sequence[AclBindingFilter]) -> concurrent.futures.Future:
        ...


class ClusterMetadataAuthorizer:
    """An authorizer whose ACLs live in the metadata log."""

    def set_acl_mutator(self, acl_mutator: AclMutator) -> None:
        raise NotImplementedError

    def add_acl(self, acl_id: uuid.UUID, acl: StandardAcl) -> None:
        raise NotImplementedError

    def remove_acl(self, acl_id: uuid.UUID) -> None:
        raise NotImplementedError

    def load_snapshot(self, acls: Mapping[uuid.UUID, StandardAcl]) -> None:
        raise NotImplementedError

    def complete_initial_load(self, exception: Optional[BaseException] = None) -> None:
        raise NotImplementedError


def parse_super_users(value: Any) -> frozenset[str]:
    """``super.users``: principals separated by ``;``."""
    from kafka_py.server.kafka_config import ConfigException

    users: set[str] = set()
    if isinstance(value, str) and value.strip():
        for text in value.split(";"):
            if not text.strip():
                continue
            try:
                users.add(parse_kafka_principal(text.strip()))
            except ValueError as e:
                raise ConfigException(SUPER_USERS_PROP, value, str(e)) from None
    return frozenset(users)


def parse_early_start_listeners(props: Mapping[str, Any]) -> frozenset[str]:
    """``early.start.listeners`` (Kafka 3.x), by default ``controller.listener.names``: the
    listeners whose requests are served before the ACLs are loaded."""
    value = props.get("early.start.listeners")
    if value is None:
        value = props.get("controller.listener.names") or ""
    if isinstance(value, (list, tuple, set, frozenset)):
        names = [str(v) for v in value]
    else:
        names = str(value).split(",")
    return frozenset(name.strip() for name in names if name.strip())


def parse_allow_everyone(value: Any) -> bool:
    from kafka_py.server.kafka_config import ConfigException

    if isinstance(value, str):
        if value.strip().lower() not in ("true", "false"):
            raise ConfigException(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, value,
                                  "Expected value to be either true or false")
        return value.strip().lower() == "true"
    return bool(value)


class StandardAuthorizer(AclAuthorizer, ClusterMetadataAuthorizer):
    """Kafka's ``org.apache.kafka.metadata.authorizer.StandardAuthorizer``."""

    def __init__(self) -> None:
        super().__init__()
        self.data = StandardAuthorizerData()
        self._acl_mutator: Optional[AclMutator] = None
        # Set once, never cleared: read without the lock on every decision.
        self._loading_complete = False
        self.initial_load_future: concurrent.futures.Future = concurrent.futures.Future()
        self._early_start_listeners: frozenset[str] = frozenset()

    # ------------------------------------------------------------------ life cycle

    def configure(self, configs: Mapping[str, Any], zk_client_factory: Any = None) -> None:
        props = {k: v for k, v in configs.items() if v is not None}
        self.super_users = parse_super_users(props.get(SUPER_USERS_PROP))
        self.should_allow_everyone_if_no_acl_is_found = parse_allow_everyone(
            props.get(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, False))
        logger.debug("Set super.users=%s, allow.everyone.if.no.acl.found=%s", sorted(self.super_users),
                     self.should_allow_everyone_if_no_acl_is_found)
        self._early_start_listeners = parse_early_start_listeners(props)

    def start(self, server_info: Any = None) -> dict[Any, concurrent.futures.Future]:
        """One future per endpoint of ``server_info``: the early-start listeners' done now, the
        others' once the initial load completes."""
        done: concurrent.futures.Future = concurrent.futures.Future()
        done.set_result(None)
        endpoints = getattr(getattr(server_info, "broker", None), "end_points", ()) or ()
        return {endpoint: done if endpoint.listener_name.value in self._early_start_listeners
                else self.initial_load_future for endpoint in endpoints}

    def complete_initial_load(self, exception: Optional[BaseException] = None) -> None:
        """The node has read the metadata log up to its high watermark (or, with ``exception``,
        never will: startup waiting on ``start``'s futures fails with it)."""
        if exception is not None:
            if not self.initial_load_future.done():
                logger.error("Failed to complete initial ACL load process: %r", exception)
                self.initial_load_future.set_exception(exception)
            return
        if self._loading_complete:
            return
        self._loading_complete = True
        logger.info("Completed initial ACL load process.")
        if not self.initial_load_future.done():
            self.initial_load_future.set_result(None)

    @property
    def loading_complete(self) -> bool:
        return self._loading_complete

    def close(self) -> None:
        self.complete_initial_load(concurrent.futures.TimeoutError(
            "The authorizer was closed before the initial load could complete."))

    # ------------------------------------------------------------------ the metadata log's side

    def set_acl_mutator(self, acl_mutator: AclMutator) -> None:
        self._acl_mutator = acl_mutator

    def acl_mutator_or_exception(self) -> AclMutator:
        if self._acl_mutator is None:
            raise Errors.NOT_CONTROLLER.exception("The current node is not the active controller.")
        return self._acl_mutator

    def add_acl(self, acl_id: uuid.UUID, acl: StandardAcl) -> None:
        with self._lock:
            self.data.add_acl(acl_id, acl)
            self._index = self.data.index

    def remove_acl(self, acl_id: uuid.UUID) -> None:
        with self._lock:
            self.data.remove_acl(acl_id)
            self._index = self.data.index

    def load_snapshot(self, acls: Mapping[uuid.UUID, StandardAcl]) -> None:
        with self._lock:
            self.data.load_snapshot(acls)
            self._index = self.data.index
        logger.info("Loaded %d ACL(s) from a metadata snapshot", self.data.acl_count())

    def acl_count(self) -> int:
        return self.data.acl_count()

    # ------------------------------------------------------------------ decisions

    # AclAuthorizer answers super users before it looks at any ACL; every path that reads the
    # ACLs for anyone else comes through one of these two.
    def _acls_allow(self, principal: str, host: str, operation: Any, resource_type: Any, name: str) -> bool:
        if not self._loading_complete:
            raise AuthorizerNotReadyException()
        return super()._acls_allow(principal, host, operation, resource_type, name)

    def authorize_by_resource_type(self, request_context: Any, op: Any, resource_type: Any) -> AuthorizationResult:
        if not self._loading_complete and request_context.principal not in self.super_users:
            raise AuthorizerNotReadyException()
        return super().authorize_by_resource_type(request_context, op, resource_type)

    # ------------------------------------------------------------------ changes, through the controller

    def create_acls(self, request_context: Any, acl_bindings: Sequence[AclBinding]) -> list[AclCreateResult]:
        return self._wait(self.acl_mutator_or_exception().create_acls(request_context, acl_bindings))

    def delete_acls(self, request_context: Any,
                    acl_binding_filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        return self._wait(self.acl_mutator_or_exception().delete_acls(request_context, acl_binding_filters))

    @staticmethod
    def _wait(future: concurrent.futures.Future) -> Any:
        try:
            return future.result(timeout=ACL_MUTATION_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            raise Errors.REQUEST_TIMED_OUT.exception(
                f"The ACL change did not commit within {ACL_MUTATION_TIMEOUT_S:.0f} s") from None


__all__ = ["AclMutator", "ClusterMetadataAuthorizer", "STANDARD_AUTHORIZER_CLASS_NAME", "StandardAuthorizer",
           "parse_allow_everyone", "parse_early_start_listeners", "parse_super_users"]
