"""Port of the transaction handlers of core/src/main/scala/kafka/server/KafkaApis.scala (Kafka 2.8.2,
ZooKeeper mode): InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers and
TxnOffsetCommit.

Split from server/kafka_apis.py for size only; KafkaApis dispatches to
``TxnRequestHandlers``. The client APIs delegate to the TransactionCoordinator (and
TxnOffsetCommit to the GroupCoordinator), whose answers come through callbacks that may run
later on another thread (once __transaction_state has the change), guarded with
``KafkaApis.answering``. WriteTxnMarkers is the coordinator's request to a partition leader:
one control batch per (producer, partition), appended as the coordinator with acks=-1, the
answer sent once every append has completed; a marker written to a __consumer_offsets
partition also makes (or drops) the pending transactional offset commits of its producer.

Clients older than the PRODUCER_FENCED error (InitProducerId v0-3, AddPartitionsToTxn,
AddOffsetsToTxn and EndTxn v0-1) get INVALID_PRODUCER_EPOCH instead, as in Kafka.
"""
from __future__ import annotations

import logging
import struct
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional

from kafka_py.common.topic_partition import TopicPartition
from kafka_py.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_py.coordinator.transaction.transaction_coordinator import InitProducerIdResult, ProducerIdAndEpoch
from kafka_py.coordinator.transaction.transaction_marker_channel_manager import TxnMarkerEntry
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.network.request_channel import Request
from kafka_py.protocol.api_keys import ApiKeys
from kafka_py.protocol.errors import Errors
from kafka_py.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)
from kafka_py.record.memory_records import MemoryRecords
from kafka_py.security.authorizer.acl import AclOperation, ResourceType
from kafka_py.server.kafka_apis import _field, _millis, _topics_of, build_response
from kafka_py.server.kafka_apis_group import offsets_to_commit

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)

RECORD_BATCH_MAGIC_V2 = 2
_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")
TXN_APIS = frozenset({ApiKeys.ADD_PARTITIONS_TO_TXN, ApiKeys.ADD_OFFSETS_TO_TXN, ApiKeys.END_TXN,
                      ApiKeys.WRITE_TXN_MARKERS, ApiKeys.TXN_OFFSET_COMMIT})


def txn_error_response(request: Request, error: Errors) -> Any:
    """The error answer of a transaction API request (each request's getErrorResponse)."""
    body = request.body
    api = request.api_key
    if api is ApiKeys.ADD_PARTITIONS_TO_TXN:
        return build_response(request, {"throttle_time": 0, "results_by_topic_v3_and_below": [
            {"name": t.name, "results_by_partition": [{"partition_index": p, "partition_error_code": error}
                                                      for p in t.partitions]}
            for t in _field(body, "v3_and_below_topics", ())]})
    if api in (ApiKeys.ADD_OFFSETS_TO_TXN, ApiKeys.END_TXN):
        return build_response(request, {"throttle_time": 0, "error_code": error})
    if api is ApiKeys.TXN_OFFSET_COMMIT:
        return build_response(request, {"throttle_time": 0, "topics": [
            {"name": t.name, "partitions": [{"partition_index": p.partition_index, "error_code": error}
                                            for p in t.partitions]} for t in body.topics]})
    if api is ApiKeys.WRITE_TXN_MARKERS:
        return build_response(request, {"markers": [
            {"producer_id": m.producer_id, "topics": [
                {"name": t.name, "partitions": [{"partition_index": p, "error_code": error}
                                                for p in t.partition_indexes]} for t in m.topics]}
            for m in body.markers]})
    return None


class TxnRequestHandlers:
    """The transaction API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis

    @property
    def _coordinator(self) -> Any:
        return self.apis.txn_coordinator

    def _authorize(self, request: Request, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        return self.apis.auth_helper.authorize(request.context, operation, resource_type, name)

    def _no_coordinator(self, request: Request) -> bool:
        if self._coordinator is None:
            self.apis.send_error_response(request, Errors.COORDINATOR_NOT_AVAILABLE)
            return True
        return False

    # ------------------------------------------------------------------ InitProducerId

    def init_producer_id(self, request: Request, producer_id: int, producer_epoch: int) -> None:
        """The rest of KafkaApis.handle_init_producer_id_request, once the request is authorized and
        its producer id and epoch are both set or both unset."""
        body = request.body
        version = request.api_version

        def send_response_callback(result: InitProducerIdResult) -> None:
            error = result.error
            if version < 4 and error is Errors.PRODUCER_FENCED:
                error = Errors.INVALID_PRODUCER_EPOCH
            self.apis.send_response(request, build_response(request, {
                "throttle_time": 0, "error_code": error, "producer_id": result.producer_id,
                "producer_epoch": result.producer_epoch}))

        expected = (None if producer_id == NO_PRODUCER_ID
                    else ProducerIdAndEpoch(producer_id, producer_epoch))
        if self._no_coordinator(request):
            return
        self._coordinator.handle_init_producer_id(body.transactional_id, _millis(body.transaction_timeout),
                                                  expected, self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ Produce

    def verify_transactional_produce(self, transactional_id: str,
                                     entries: dict[TopicPartition, MemoryRecords]) -> dict[TopicPartition, Errors]:
        """The partitions of a transactional produce that are not part of the producer's ongoing
        transaction, with their error (TransactionCoordinator.verify_transactional_write); read
        from the batch headers only."""
        coordinator = self._coordinator
        if coordinator is None:
            return {}
        by_producer: dict[tuple[int, int], list[TopicPartition]] = {}
        for tp, records in entries.items():
            buffer = records.buffer
            if len(buffer) < RECORD_BATCH_OVERHEAD:
                continue  # the log refuses it
            (attributes,) = _INT16.unpack_from(buffer, ATTRIBUTES_OFFSET)
            if not attributes & TRANSACTIONAL_FLAG_MASK:
                continue
            (producer_id,) = _INT64.unpack_from(buffer, PRODUCER_ID_OFFSET)
            (producer_epoch,) = _INT16.unpack_from(buffer, PRODUCER_EPOCH_OFFSET)
            by_producer.setdefault((producer_id, producer_epoch), []).append(tp)
        errors: dict[TopicPartition, Errors] = {}
        for (producer_id, producer_epoch), partitions in by_producer.items():
            errors.update(coordinator.verify_transactional_write(transactional_id, producer_id, producer_epoch,
                                                                 partitions))
        return errors

    # ------------------------------------------------------------------ AddPartitionsToTxn

    def handle_add_partitions_to_txn_request(self, request: Request) -> None:
        body = request.body
        transactional_id = body.v3_and_below_transactional_id
        partitions_to_add = [TopicPartition(t.name, int(p)) for t in body.v3_and_below_topics for p in t.partitions]
        version = request.api_version

        def send(errors: dict[TopicPartition, Errors]) -> None:
            self.apis.send_response(request, build_response(request, {
                "throttle_time": 0, "results_by_topic_v3_and_below": [
                    {"name": topic, "results_by_partition": [{"partition_index": index, "partition_error_code": e}
                                                             for index, e in parts]}
                    for topic, parts in _topics_of(errors.items())]}))

        if not self._authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
            send({tp: Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for tp in partitions_to_add})
            return
        helper = self.apis.auth_helper
        authorized_topics = set(helper.filter_by_authorized(
            request.context, AclOperation.WRITE, ResourceType.TOPIC,
            [tp.topic for tp in partitions_to_add if not _is_internal(tp.topic)]))
        unauthorized: dict[TopicPartition, Errors] = {}
        non_existing: dict[TopicPartition, Errors] = {}
        authorized: list[TopicPartition] = []
        for tp in partitions_to_add:
            if tp.topic not in authorized_topics:
                unauthorized[tp] = Errors.TOPIC_AUTHORIZATION_FAILED
            elif not self.apis.metadata_cache.contains(tp):
                non_existing[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                authorized.append(tp)
        if unauthorized or non_existing:
            # one bad partition fails the whole request; the others were not attempted
            send({**unauthorized, **non_existing, **{tp: Errors.OPERATION_NOT_ATTEMPTED for tp in authorized}})
            return
        if self._no_coordinator(request):
            return

        def send_response_callback(error: Errors) -> None:
            if version < 2 and error is Errors.PRODUCER_FENCED:
                error = Errors.INVALID_PRODUCER_EPOCH
            send({tp: error for tp in partitions_to_add})

        self._coordinator.handle_add_partitions_to_transaction(
            transactional_id, int(body.v3_and_below_producer_id), int(body.v3_and_below_producer_epoch),
            authorized, self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ AddOffsetsToTxn

    def handle_add_offsets_to_txn_request(self, request: Request) -> None:
        body = request.body
        transactional_id = body.transactional_id
        group_id = body.group_id
        version = request.api_version

        def send(error: Errors) -> None:
            self.apis.send_response(request, build_response(request, {"throttle_time": 0, "error_code": error}))

        if not self._authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
            send(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return
        if not self._authorize(request, AclOperation.READ, ResourceType.GROUP, group_id):
            send(Errors.GROUP_AUTHORIZATION_FAILED)
            return
        group_coordinator = self.apis.group_coordinator
        if self._coordinator is None or group_coordinator is None:
            send(Errors.COORDINATOR_NOT_AVAILABLE)
            return
        offset_topic_partition = TopicPartition(GROUP_METADATA_TOPIC_NAME, group_coordinator.partition_for(group_id))

        def send_response_callback(error: Errors) -> None:
            if version < 2 and error is Errors.PRODUCER_FENCED:
                error = Errors.INVALID_PRODUCER_EPOCH
            send(error)

        self._coordinator.handle_add_partitions_to_transaction(
            transactional_id, int(body.producer_id), int(body.producer_epoch), [offset_topic_partition],
            self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ EndTxn

    def handle_end_txn_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version

        def send(error: Errors) -> None:
            self.apis.send_response(request, build_response(request, {"throttle_time": 0, "error_code": error}))

        if not self._authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
            send(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return
        if self._coordinator is None:
            send(Errors.COORDINATOR_NOT_AVAILABLE)
            return

        def send_response_callback(error: Errors) -> None:
            if version < 2 and error is Errors.PRODUCER_FENCED:
                error = Errors.INVALID_PRODUCER_EPOCH
            send(error)

        self._coordinator.handle_end_transaction(body.transactional_id, int(body.producer_id),
                                                 int(body.producer_epoch), bool(body.committed),
                                                 self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ WriteTxnMarkers

    def handle_write_txn_markers_request(self, request: Request) -> None:
        self.apis.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        markers = [TxnMarkerEntry(int(m.producer_id), int(m.producer_epoch), int(m.coordinator_epoch),
                                  bool(m.transaction_result),
                                  tuple(TopicPartition(t.name, int(p)) for t in m.topics for p in t.partition_indexes))
                   for m in request.body.markers]

        def send_response(errors: dict[int, dict[TopicPartition, Errors]]) -> None:
            self.apis.send_response(request, build_response(request, {"markers": [
                {"producer_id": pid, "topics": [
                    {"name": topic, "partitions": [{"partition_index": index, "error_code": e}
                                                   for index, e in parts]}
                    for topic, parts in _topics_of(errs.items())]}
                for pid, errs in errors.items()]}))

        self.write_txn_markers(markers, self.apis.answering(request, send_response))

    def write_txn_markers(self, markers: list[TxnMarkerEntry],
                          callback: Callable[[dict[int, dict[TopicPartition, Errors]]], None]) -> None:
        """Append each marker to its partitions (as the coordinator, acks=-1) and call ``callback``
        once with every partition's error by producer id, when the last append completes.

        What a WriteTxnMarkers request does; the transaction coordinator of this broker also
        calls it directly for the partitions this broker leads."""
        # producer id -> partition -> error; answered once every append has called back
        errors: dict[int, dict[TopicPartition, Errors]] = {}
        lock = threading.Lock()
        pending = [len(markers)]

        def answer() -> None:
            with lock:
                results = {pid: dict(errs) for pid, errs in errors.items()}
            callback(results)

        if not markers:
            answer()
            return

        def update_errors(producer_id: int, current: dict[TopicPartition, Errors]) -> None:
            with lock:
                errors.setdefault(producer_id, {}).update(current)

        def one_done() -> None:
            with lock:
                pending[0] -= 1
                done = pending[0] == 0
            if done:
                answer()

        def maybe_send_response_callback(producer_id: int, is_commit: bool):
            def on_appended(response_status: dict) -> None:
                update_errors(producer_id, {tp: status.error for tp, status in response_status.items()})
                successful_offsets_partitions = [tp for tp, status in response_status.items()
                                                 if tp.topic == GROUP_METADATA_TOPIC_NAME
                                                 and status.error is Errors.NONE]
                if successful_offsets_partitions and self.apis.group_coordinator is not None:
                    # the offsets of the transaction become visible (or are dropped) now
                    try:
                        self.apis.group_coordinator.schedule_handle_txn_completion(
                            producer_id, successful_offsets_partitions, is_commit)
                    except Exception:  # noqa: BLE001 - answered as an error for those partitions
                        logger.exception("%sReceived an exception while trying to update the offsets cache on "
                                         "transaction marker append", self.apis._log_ident)
                        update_errors(producer_id, {tp: Errors.UNKNOWN_SERVER_ERROR
                                                    for tp in successful_offsets_partitions})
                one_done()
            return on_appended

        replica_manager = self.apis.replica_manager
        timestamp = self.apis.time.milliseconds()
        for marker in markers:
            producer_id = marker.producer_id
            current_errors: dict[TopicPartition, Errors] = {}
            compatible: list[TopicPartition] = []
            for tp in marker.partitions:
                if replica_manager.local_log(tp) is None:
                    current_errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    compatible.append(tp)
            if current_errors:
                update_errors(producer_id, current_errors)
            if not compatible:
                one_done()
                continue
            end_txn_marker = EndTransactionMarker(
                ControlRecordType.COMMIT if marker.transaction_result else ControlRecordType.ABORT,
                marker.coordinator_epoch)
            control_records = {tp: MemoryRecords.with_end_transaction_marker(
                0, timestamp, NO_PARTITION_LEADER_EPOCH, producer_id, marker.producer_epoch, end_txn_marker)
                for tp in compatible}
            replica_manager.append_records(
                timeout_ms=self.apis.config.request_timeout_ms,
                required_acks=-1,
                internal_topics_allowed=True,
                origin=AppendOrigin.COORDINATOR,
                entries_per_partition=control_records,
                response_callback=maybe_send_response_callback(producer_id, marker.transaction_result))

    # ------------------------------------------------------------------ TxnOffsetCommit

    def handle_txn_offset_commit_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        if not self._authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
            self.apis.send_error_response(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return
        if not self._authorize(request, AclOperation.READ, ResourceType.GROUP, body.group_id):
            self.apis.send_error_response(request, Errors.GROUP_AUTHORIZATION_FAILED)
            return
        group_coordinator = self.apis.group_coordinator
        if group_coordinator is None:
            self.apis.send_error_response(request, Errors.COORDINATOR_NOT_AVAILABLE)
            return
        readable = set(self.apis.auth_helper.filter_by_authorized(
            request.context, AclOperation.READ, ResourceType.TOPIC, [t.name for t in body.topics]))
        unauthorized: dict[TopicPartition, Errors] = {}
        non_existing: dict[TopicPartition, Errors] = {}
        to_commit: dict[TopicPartition, Any] = {}
        for topic in body.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                if topic.name not in readable:
                    unauthorized[tp] = Errors.TOPIC_AUTHORIZATION_FAILED
                elif not self.apis.metadata_cache.contains(tp):
                    non_existing[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    to_commit[tp] = p

        def send_response_callback(authorized_errors: dict[TopicPartition, Errors]) -> None:
            combined = {**authorized_errors, **unauthorized, **non_existing}
            for tp, error in combined.items():
                if error is not Errors.NONE:
                    logger.debug("%sTxnOffsetCommit with correlation id %d from client %s on partition %s failed "
                                 "due to %s", self.apis._log_ident, request.correlation_id,
                                 request.header.client_id, tp, error.exception_name)
            if version < 2:
                # 0.11-2.0 clients do not know COORDINATOR_LOAD_IN_PROGRESS here (KAFKA-7296)
                combined = {tp: Errors.COORDINATOR_NOT_AVAILABLE if e is Errors.COORDINATOR_LOAD_IN_PROGRESS else e
                            for tp, e in combined.items()}
            self.apis.send_response(request, build_response(request, {"throttle_time": 0, "topics": [
                {"name": topic, "partitions": [{"partition_index": index, "error_code": e} for index, e in parts]}
                for topic, parts in _topics_of(combined.items())]}))

        if not to_commit:
            send_response_callback({})
            return
        offsets = offsets_to_commit(to_commit, self.apis.time.milliseconds(), None)
        group_coordinator.handle_txn_commit_offsets(
            body.group_id, int(body.producer_id), int(body.producer_epoch), _field(body, "member_id", "") or "",
            _field(body, "group_instance_id"), int(_field(body, "generation_id", -1)), offsets,
            self.apis.answering(request, send_response_callback))


def _is_internal(topic: str) -> bool:
    from kafka_py.server.metadata_cache import is_internal

    return is_internal(topic)


__all__ = ["TXN_APIS", "TxnRequestHandlers", "txn_error_response"]
