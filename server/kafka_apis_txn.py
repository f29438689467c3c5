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
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional

from kio.schema.add_offsets_to_txn.v3.response import AddOffsetsToTxnResponse
from kio.schema.add_partitions_to_txn.v3.response import AddPartitionsToTxnPartitionResult
from kio.schema.add_partitions_to_txn.v3.response import AddPartitionsToTxnResponse, AddPartitionsToTxnTopicResult
from kio.schema.end_txn.v3.response import EndTxnResponse
from kio.schema.init_producer_id.v4.response import InitProducerIdResponse
from kio.schema.txn_offset_commit.v3.response import TxnOffsetCommitResponse, TxnOffsetCommitResponsePartition
from kio.schema.txn_offset_commit.v3.response import TxnOffsetCommitResponseTopic

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_py.core.coordinator.transaction.transaction_coordinator import InitProducerIdResult, ProducerIdAndEpoch
from kafka_py.core.coordinator.transaction.transaction_marker_channel_manager import TxnMarkerEntry
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.verification_guard import SENTINEL as VERIFICATION_SENTINEL
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.schema.describe_transactions.v0.response import DescribeTransactionsResponse
from kafka_py.clients.common.protocol.schema.describe_transactions.v0.response import TopicData as TransactionTopicData
from kafka_py.clients.common.protocol.schema.describe_transactions.v0.response import TransactionState
from kafka_py.clients.common.protocol.schema.write_txn_markers.v1.response import WritableTxnMarkerPartitionResult
from kafka_py.clients.common.protocol.schema.write_txn_markers.v1.response import WritableTxnMarkerResult
from kafka_py.clients.common.protocol.schema.write_txn_markers.v1.response import WritableTxnMarkerTopicResult
from kafka_py.clients.common.protocol.schema.write_txn_markers.v1.response import WriteTxnMarkersResponse
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    BASE_SEQUENCE_OFFSET,
    CURRENT_MAGIC_VALUE,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.server.add_partitions_to_txn_manager import produce_error
from kafka_py.server.delayed_produce import PartitionResponse
from kafka_py.server.kafka_apis_common import (
    NO_THROTTLE,
    error_response_of,
    millis,
    partition_errors_by_topic,
    topics_of,
)
from kafka_py.server.kafka_apis_group import offsets_to_commit
from kafka_py.core.utils.logging import IdentLogger

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)

RECORD_BATCH_MAGIC_V2 = 2
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
def _describe_transactions_state(transactional_id: str, error: Errors) -> TransactionState:
    return TransactionState(error_code=error.error_code, transactional_id=transactional_id, transaction_state="",
                            transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=NO_PRODUCER_ID,
                            producer_epoch=NO_PRODUCER_EPOCH, topics=())


def _txn_error_response(response: type, error: Errors) -> Any:
    """An AddOffsetsToTxn or EndTxn answer: nothing but the error."""
    return response(throttle_time=NO_THROTTLE, error_code=error.error_code)


def _add_partitions_to_txn_response(errors: Iterable[tuple[TopicPartition, Errors]]) -> AddPartitionsToTxnResponse:
    return AddPartitionsToTxnResponse(throttle_time=NO_THROTTLE, results_by_topic_v3_and_below=tuple([
        AddPartitionsToTxnTopicResult(name=topic, results_by_partition=tuple([
            AddPartitionsToTxnPartitionResult(partition_index=index, partition_error_code=error.error_code)
            for index, error in parts]))
        for topic, parts in topics_of(errors)]))


def _write_txn_markers_response(errors: Iterable[tuple[int, Iterable[tuple[TopicPartition, Errors]]]]
                                ) -> WriteTxnMarkersResponse:
    return WriteTxnMarkersResponse(markers=tuple([
        WritableTxnMarkerResult(producer_id=producer_id, topics=tuple([
            WritableTxnMarkerTopicResult(name=topic, partitions=tuple([
                WritableTxnMarkerPartitionResult(partition_index=index, error_code=error.error_code)
                for index, error in parts]))
            for topic, parts in topics_of(partition_errors)]))
        for producer_id, partition_errors in errors]))


def _txn_offset_commit_response(errors: Iterable[tuple[TopicPartition, Errors]]) -> TxnOffsetCommitResponse:
    return TxnOffsetCommitResponse(throttle_time=NO_THROTTLE, topics=partition_errors_by_topic(
        TxnOffsetCommitResponseTopic, TxnOffsetCommitResponsePartition, errors))


class TxnRequestHandlers:
    """The transaction API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis
        self.logger = IdentLogger(logger, apis.logger.ident)

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
            self.apis.send_response(request, InitProducerIdResponse(
                throttle_time=NO_THROTTLE, error_code=error.error_code, producer_id=result.producer_id,
                producer_epoch=result.producer_epoch))

        expected = (None if producer_id == NO_PRODUCER_ID
                    else ProducerIdAndEpoch(producer_id, producer_epoch))
        if self._no_coordinator(request):
            return
        self._coordinator.handle_init_producer_id(body.transactional_id, millis(body.transaction_timeout),
                                                  expected, self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ Produce

    def verify_transactional_produce(
            self, transactional_id: str, entries: Mapping[TopicPartition, MemoryRecords],
            callback: Callable[[dict[TopicPartition, PartitionResponse], Optional[dict[TopicPartition, Any]]], None]
    ) -> None:
        """Transaction verification of a transactional produce (KIP-890 part 1): for each
        partition whose batch is the first of the producer's transaction there (no transaction
        of the producer open on it at the batch's epoch), the coordinator is asked whether the
        partition is part of the ongoing transaction (server/add_partitions_to_txn_manager.py).

        ``callback(refused, guards)`` is called once, on this thread when nothing has to be
        asked of another broker, else on the thread that gets the coordinator's answer:
        ``refused`` holds the partitions not to append, with their answer; ``guards`` the
        verification guard of each verified partition, for ReplicaManager.append_records
        (None: verification is off and the log checks nothing). Read from the batch headers;
        transactional batches of more than one producer raise INVALID_PRODUCER_ID_MAPPING's
        exception (the whole request fails with it)."""
        manager = self.apis.add_partitions_to_txn_manager
        if manager is None:
            callback({}, None)
            return
        producer: Optional[tuple[int, int]] = None
        first_sequences: dict[TopicPartition, int] = {}
        for tp, records in entries.items():
            buffer = records.buffer
            if len(buffer) < RECORD_BATCH_OVERHEAD:
                continue  # the log refuses it
            (attributes,) = _INT16.unpack_from(buffer, ATTRIBUTES_OFFSET)
            if not attributes & TRANSACTIONAL_FLAG_MASK:
                continue
            (producer_id,) = _INT64.unpack_from(buffer, PRODUCER_ID_OFFSET)
            (producer_epoch,) = _INT16.unpack_from(buffer, PRODUCER_EPOCH_OFFSET)
            if producer is None:
                producer = (producer_id, producer_epoch)
            elif producer != (producer_id, producer_epoch):
                raise Errors.INVALID_PRODUCER_ID_MAPPING.exception_class(
                    "Transactional records contained more than one producer ID")
            (first_sequences[tp],) = _INT32.unpack_from(buffer, BASE_SEQUENCE_OFFSET)
        refused: dict[TopicPartition, PartitionResponse] = {}
        guards: dict[TopicPartition, Any] = {}
        if producer is None:
            callback(refused, guards)
            return
        producer_id, producer_epoch = producer
        replica_manager = self.apis.replica_manager
        for tp, sequence in first_sequences.items():
            try:
                guard = replica_manager.get_partition_or_exception(tp).maybe_start_transaction_verification(
                    producer_id, sequence, producer_epoch)
            except Exception as e:  # noqa: BLE001 - not led here (or gone): that partition's answer
                refused[tp] = PartitionResponse(Errors.for_exception(e))
                continue
            if guard is not VERIFICATION_SENTINEL:
                guards[tp] = guard
        if not guards:
            callback(refused, guards)
            return

        def verified(errors: dict[TopicPartition, Errors]) -> None:
            for tp, error in errors.items():
                answer, message = produce_error(error)
                refused[tp] = PartitionResponse(answer, error_message=message)
            callback(refused, guards)

        manager.verify_transaction(transactional_id, producer_id, producer_epoch, list(guards), verified)

    # ------------------------------------------------------------------ DescribeTransactions

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_TRANSACTIONS)
    def describe_transactions_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return DescribeTransactionsResponse(throttle_time_ms=0, transaction_states=tuple([
            _describe_transactions_state(str(t), error) for t in request.body.transactional_ids]))

    def handle_describe_transactions_request(self, request: Request) -> None:
        """DescribeTransactions (Kafka 3.0): each id needs Describe on it, and only the topics the
        principal may describe are listed. A broker (ClusterAction on the cluster, which brokers
        need for replication anyway) may describe every id and topic: partition leaders ask it
        before taking a transaction's first batch."""
        helper = self.apis.auth_helper
        broker = self.apis.authorizer is not None and helper.authorize(
            request.context, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
        states = []
        for transactional_id in request.body.transactional_ids:
            transactional_id = str(transactional_id)
            if not broker and not self._authorize(request, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                                                  transactional_id):
                states.append(_describe_transactions_state(transactional_id,
                                                           Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
                continue
            if self._coordinator is None:
                states.append(_describe_transactions_state(transactional_id, Errors.COORDINATOR_NOT_AVAILABLE))
                continue
            description = self._coordinator.handle_describe_transactions(transactional_id)
            partitions = sorted(description.topic_partitions, key=lambda tp: (tp.topic, tp.partition))
            if not broker and partitions:
                describable = set(helper.filter_by_authorized(request.context, AclOperation.DESCRIBE,
                                                              ResourceType.TOPIC, {tp.topic for tp in partitions}))
                partitions = [tp for tp in partitions if tp.topic in describable]
            states.append(TransactionState(
                error_code=description.error.error_code, transactional_id=transactional_id,
                transaction_state=description.state, transaction_timeout_ms=description.timeout_ms,
                transaction_start_time_ms=description.start_time_ms, producer_id=description.producer_id,
                producer_epoch=description.producer_epoch,
                topics=tuple([TransactionTopicData(topic=topic, partitions=tuple([index for index, _ in parts]))
                              for topic, parts in topics_of((tp, None) for tp in partitions)])))
        self.apis.send_response(request, DescribeTransactionsResponse(throttle_time_ms=0,
                                                                      transaction_states=tuple(states)))

    # ------------------------------------------------------------------ AddPartitionsToTxn

    @staticmethod
    @error_response_of(ApiKeys.ADD_PARTITIONS_TO_TXN)
    def add_partitions_to_txn_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _add_partitions_to_txn_response((TopicPartition(t.name, int(p)), error)
                                               for t in request.body.v3_and_below_topics
                                               for p in t.partitions)

    def handle_add_partitions_to_txn_request(self, request: Request) -> None:
        body = request.body
        transactional_id = body.v3_and_below_transactional_id
        partitions_to_add = [TopicPartition(t.name, int(p)) for t in body.v3_and_below_topics for p in t.partitions]
        version = request.api_version

        def send(errors: dict[TopicPartition, Errors]) -> None:
            self.apis.send_response(request, _add_partitions_to_txn_response(errors.items()))

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

    @staticmethod
    @error_response_of(ApiKeys.ADD_OFFSETS_TO_TXN)
    def add_offsets_to_txn_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _txn_error_response(AddOffsetsToTxnResponse, error)

    def handle_add_offsets_to_txn_request(self, request: Request) -> None:
        body = request.body
        transactional_id = body.transactional_id
        group_id = body.group_id
        version = request.api_version

        def send(error: Errors) -> None:
            self.apis.send_response(request, _txn_error_response(AddOffsetsToTxnResponse, error))

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

    @staticmethod
    @error_response_of(ApiKeys.END_TXN)
    def end_txn_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _txn_error_response(EndTxnResponse, error)

    def handle_end_txn_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version

        def send(error: Errors) -> None:
            self.apis.send_response(request, _txn_error_response(EndTxnResponse, error))

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

    @staticmethod
    @error_response_of(ApiKeys.WRITE_TXN_MARKERS)
    def write_txn_markers_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _write_txn_markers_response(
            (m.producer_id, [(TopicPartition(t.name, int(p)), error) for t in m.topics for p in t.partition_indexes])
            for m in request.body.markers)

    def handle_write_txn_markers_request(self, request: Request) -> None:
        self.apis.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        markers = [TxnMarkerEntry(int(m.producer_id), int(m.producer_epoch), int(m.coordinator_epoch),
                                  bool(m.transaction_result),
                                  tuple(TopicPartition(t.name, int(p)) for t in m.topics for p in t.partition_indexes))
                   for m in request.body.markers]

        def send_response(errors: dict[int, dict[TopicPartition, Errors]]) -> None:
            self.apis.send_response(request, _write_txn_markers_response(
                (pid, errs.items()) for pid, errs in errors.items()))

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
                        self.logger.exception("Received an exception while trying to update the offsets cache on "
                                              "transaction marker append")
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
            if producer_id < 0:
                # A marker ends a producer's transaction; without a producer id there is none to
                # end, and Kafka's MemoryRecordsBuilder refuses to build the control batch (an
                # IllegalArgumentException that fails the whole request). Each partition gets
                # CORRUPT_MESSAGE, the error WriteTxnMarkersResponse lists for a marker that
                # cannot be written and one a coordinator does not retry.
                self.logger.warning("Refusing the %s marker of producer id %d for partitions %s: not a valid "
                                    "producer id", "COMMIT" if marker.transaction_result else "ABORT",
                                    producer_id, ", ".join(map(str, marker.partitions)))
                update_errors(producer_id, {tp: Errors.CORRUPT_MESSAGE for tp in marker.partitions})
                one_done()
                continue
            for tp in marker.partitions:
                log = replica_manager.local_log(tp)
                if log is None:
                    current_errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif log.config.record_version < CURRENT_MAGIC_VALUE:
                    # a topic of message format v0/v1 has no place for a control batch
                    current_errors[tp] = Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT
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

    @staticmethod
    @error_response_of(ApiKeys.TXN_OFFSET_COMMIT)
    def txn_offset_commit_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _txn_offset_commit_response((TopicPartition(t.name, int(p.partition_index)), error)
                                           for t in request.body.topics for p in t.partitions)

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
                    self.logger.debug("TxnOffsetCommit with correlation id %d from client %s on partition %s failed "
                                      "due to %s", request.correlation_id,
                                      request.header.client_id, tp, error.exception_name)
            if version < 2:
                # 0.11-2.0 clients do not know COORDINATOR_LOAD_IN_PROGRESS here (KAFKA-7296)
                combined = {tp: Errors.COORDINATOR_NOT_AVAILABLE if e is Errors.COORDINATOR_LOAD_IN_PROGRESS else e
                            for tp, e in combined.items()}
            self.apis.send_response(request, _txn_offset_commit_response(combined.items()))

        if not to_commit:
            send_response_callback({})
            return
        # (partitions' leader epochs from v2; the group's generation, member and instance id from
        # v3, KIP-447)
        offsets = offsets_to_commit(to_commit, self.apis.time.milliseconds(), None, version >= 2, False)
        member_id, group_instance_id, generation_id = "", None, -1
        if version >= 3:
            member_id, group_instance_id, generation_id = body.member_id or "", body.group_instance_id, int(
                body.generation_id)
        group_coordinator.handle_txn_commit_offsets(
            body.group_id, int(body.producer_id), int(body.producer_epoch), member_id,
            group_instance_id, generation_id, offsets,
            self.apis.answering(request, send_response_callback))


def _is_internal(topic: str) -> bool:
    from kafka_py.server.metadata_cache import is_internal

    return is_internal(topic)


__all__ = ["TxnRequestHandlers"]
