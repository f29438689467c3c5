"""An in-process way to a QuorumController for the broker-side KRaft tests: a
ControllerConnection (server/broker_to_controller_channel_manager.py) that answers each
request by calling the controller in this process, the part of ControllerApis the broker
needs (registration, heartbeats, AlterIsr, AllocateProducerIds, and forwarded admin
requests in an Envelope), so the brokers' real BrokerToControllerChannelManagers,
BrokerLifecycleManager and ForwardingManager run unchanged against a real controller."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable, Mapping

from kio.schema.envelope.v0.response import EnvelopeResponse

from kafka_py.clients.common.errors import ApiException
from kafka_py.metadata.controller.controller_messages import make, response_module
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import decode_request, encode_response_chunks_for, response_schema

WAIT_S = 30


def _error_of(e: BaseException) -> Errors:
    return Errors.for_exception(e)


class InProcessControllerConnection:
    def __init__(self, controllers: Callable[[], Mapping[int, Any]]) -> None:
        self.controllers = controllers
        self._lock = threading.Lock()
        self._aborted = False
        self.sent: list[ApiKeys] = []

    # -- ControllerConnection

    def send_and_receive(self, node: Any, api_key: ApiKeys, api_version: int, request: Any) -> Any:
        with self._lock:
            if self._aborted:
                raise ConnectionError("the channel to the controller is closed")
            self.sent.append(api_key)
        controller = self.controllers().get(node.id)
        if controller is None:
            raise ConnectionError(f"no controller {node.id}")
        if api_key is ApiKeys.ENVELOPE:
            return self._envelope(controller, request)
        response_cls = response_schema(api_key, int(type(request).__version__))
        try:
            return self._call(controller, api_key, request).result(timeout=WAIT_S)
        except ApiException as e:
            return make(response_cls, error_code=_error_of(e).error_code)

    def disconnect(self) -> None:
        pass

    def abort(self) -> None:
        with self._lock:
            self._aborted = True

    def close(self) -> None:
        self.abort()

    # -- ControllerApis' handlers, reduced

    @staticmethod
    def _call(controller: Any, api_key: ApiKeys, body: Any) -> Future:
        if api_key is ApiKeys.BROKER_REGISTRATION:
            return controller.register_broker(body)
        if api_key is ApiKeys.BROKER_HEARTBEAT:
            return controller.process_broker_heartbeat(body)
        if api_key is ApiKeys.ALTER_ISR:
            return controller.alter_isr(body)
        if api_key is ApiKeys.ALLOCATE_PRODUCER_IDS:
            return controller.allocate_producer_ids(body)
        if api_key is ApiKeys.CREATE_TOPICS:
            return controller.create_topics(body)
        if api_key is ApiKeys.CREATE_PARTITIONS:
            return controller.create_partitions(body)
        if api_key is ApiKeys.INCREMENTAL_ALTER_CONFIGS:
            return controller.incremental_alter_configs(body)
        if api_key is ApiKeys.ALTER_CONFIGS:
            return controller.legacy_alter_configs(body)
        if api_key is ApiKeys.ALTER_CLIENT_QUOTAS:
            return controller.alter_client_quotas(body)
        if api_key is ApiKeys.ELECT_LEADERS:
            return controller.elect_leaders(body)
        if api_key is ApiKeys.ALTER_PARTITION_REASSIGNMENTS:
            return controller.alter_partition_reassignments(body)
        if api_key is ApiKeys.DELETE_TOPICS:
            return InProcessControllerConnection._delete_topics(controller, body)
        raise Errors.INVALID_REQUEST.exception(f"{api_key.name} is not served here")

    @staticmethod
    def _delete_topics(controller: Any, body: Any) -> Future:
        module = response_module(body)
        names = [t.name for t in getattr(body, "topics", ())] or list(getattr(body, "topic_names", ()))
        ids = controller.find_topic_ids(names).result(timeout=WAIT_S)
        found = {n: r.result for n, r in ids.items() if r.is_result()}
        errors = controller.delete_topics(list(found.values())).result(timeout=WAIT_S) if found else {}
        results = []
        for name in names:
            if name not in found:
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                api_error = errors.get(found[name])
                error = Errors.NONE if api_error is None else api_error.error
            results.append(make(module.DeletableTopicResult, name=name, error_code=error.error_code))
        future: Future = Future()
        future.set_result(make(module.DeleteTopicsResponse, responses=tuple(results)))
        return future

    def _envelope(self, controller: Any, envelope: Any) -> Any:
        header, body = decode_request(bytes(envelope.request_data))
        try:
            response = self._call(controller, header.api_key, body).result(timeout=WAIT_S)
        except ApiException as e:
            if _error_of(e) is Errors.NOT_CONTROLLER:
                return EnvelopeResponse(response_data=None, error_code=Errors.NOT_CONTROLLER.error_code)
            raise
        frame = b"".join(bytes(c) for c in encode_response_chunks_for(header, response))
        # the inner frame without its size prefix: the envelope carries header and body
        return EnvelopeResponse(response_data=frame[4:], error_code=Errors.NONE.error_code)
