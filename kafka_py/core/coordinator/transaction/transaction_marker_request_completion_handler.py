"""Port of core/src/main/scala/kafka/coordinator/transaction/TransactionMarkerRequestCompletionHandler.scala
(Kafka 2.8.2).

What the marker sender does with the answer to one WriteTxnMarkers request (or with its loss):

* disconnected: every marker of the request is queued again, to whatever broker now leads
  its partitions, unless this broker no longer coordinates the transaction (or the
  coordinator epoch changed), in which case the markers are dropped;
* answered: a partition that wrote its marker leaves the transaction's pending set; a
  retriable error (not leader, not enough replicas, timeout, storage error, unknown
  partition) queues the partition again; INVALID_PRODUCER_EPOCH or
  TRANSACTION_COORDINATOR_FENCED mean a newer producer or coordinator has taken over, so the
  transaction's markers are dropped; UNSUPPORTED_FOR_MESSAGE_FORMAT/UNSUPPORTED_VERSION drop
  that partition. When nothing is left pending the completion is written.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, List

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction.transaction_state_manager import TransactionStateManager
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.logging import IdentLogger

if TYPE_CHECKING:  # the channel manager makes these handlers: only its types are named here
    from kafka_py.core.coordinator.transaction.transaction_marker_channel_manager import (
        TransactionMarkerChannelManager,
        TxnIdAndMarkerEntry,
    )

logger = logging.getLogger(__name__)

_FATAL = frozenset({Errors.CORRUPT_MESSAGE, Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE,
                    Errors.INVALID_REQUIRED_ACKS})
_RETRIABLE = frozenset({Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER,
                        Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                        Errors.REQUEST_TIMED_OUT, Errors.KAFKA_STORAGE_ERROR})
_SUPERSEDED = frozenset({Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTION_COORDINATOR_FENCED})
_UNSUPPORTED = frozenset({Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, Errors.UNSUPPORTED_VERSION})


def errors_by_producer_id(response: Any) -> dict[int, dict[TopicPartition, Errors]]:
    """WriteTxnMarkersResponse.errorsByProducerId."""
    result: dict[int, dict[TopicPartition, Errors]] = {}
    for marker in response.markers:
        errors = result.setdefault(int(marker.producer_id), {})
        for topic in marker.topics:
            for p in topic.partitions:
                errors[TopicPartition(topic.name, int(p.partition_index))] = Errors.for_code(int(p.error_code))
    return result


class TransactionMarkerRequestCompletionHandler:
    def __init__(self, broker_id: int, txn_state_manager: TransactionStateManager,
                 txn_marker_channel_manager: TransactionMarkerChannelManager,
                 txn_id_and_marker_entries: List[TxnIdAndMarkerEntry]) -> None:
        self.broker_id = broker_id
        self.txn_state_manager = txn_state_manager
        self.txn_marker_channel_manager = txn_marker_channel_manager
        self.txn_id_and_marker_entries = txn_id_and_marker_entries
        self.logger = IdentLogger(logger, f"[Transaction Marker Request Completion Handler {broker_id}]: ")

    def _current_state_or_cancel(self, transactional_id: str, txn_marker) -> Any:
        """The id's cache entry, or None after dropping its markers when this broker no longer
        coordinates it (or is loading its partition)."""
        current = self.txn_state_manager.get_transaction_state(transactional_id)
        if current is Errors.NOT_COORDINATOR:
            self.logger.info("I am no longer the coordinator for %s; cancel sending transaction markers %s to the "
                             "brokers", transactional_id, txn_marker)
            self.txn_marker_channel_manager.remove_markers_for_txn_id(transactional_id)
            return None
        if current is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            self.logger.info("I am loading the transaction partition that contains %s which means the current markers "
                             "have to be obsoleted; cancel sending transaction markers %s to the brokers",
                             transactional_id, txn_marker)
            self.txn_marker_channel_manager.remove_markers_for_txn_id(transactional_id)
            return None
        if isinstance(current, Errors):
            raise RuntimeError(f"Unhandled error {current.name} when fetching current transaction state")
        if current is None:
            raise RuntimeError(f"The coordinator still owns the transaction partition for {transactional_id}, but "
                               "there is no metadata in the cache; this is not expected")
        if current.coordinator_epoch != txn_marker.coordinator_epoch:
            self.logger.info("Transaction coordinator epoch for %s has changed from %d to %d; cancel sending "
                             "transaction markers %s to the brokers", transactional_id,
                             txn_marker.coordinator_epoch, current.coordinator_epoch, txn_marker)
            self.txn_marker_channel_manager.remove_markers_for_txn_id(transactional_id)
            return None
        return current

    def on_disconnected(self) -> None:
        for entry in self.txn_id_and_marker_entries:
            marker = entry.txn_marker_entry
            if self._current_state_or_cancel(entry.txn_id, marker) is None:
                continue
            # queued again, to the partitions' current leaders
            self.logger.debug("Re-enqueuing %s transaction markers for transactional id %s under coordinator epoch %d",
                              "COMMIT" if marker.transaction_result else "ABORT", entry.txn_id,
                              marker.coordinator_epoch)
            self.txn_marker_channel_manager.add_txn_markers_to_broker_queue(
                entry.txn_id, marker.producer_id, marker.producer_epoch, marker.transaction_result,
                marker.coordinator_epoch, marker.partitions)

    def on_response(self, response: Any) -> None:
        """A WriteTxnMarkers response."""
        self.on_complete(errors_by_producer_id(response))

    def on_complete(self, response_errors: dict[int, dict[TopicPartition, Errors]]) -> None:
        """Every marker's partition errors, by producer id."""
        for entry in self.txn_id_and_marker_entries:
            transactional_id = entry.txn_id
            marker = entry.txn_marker_entry
            errors = response_errors.get(marker.producer_id)
            if errors is None:
                raise RuntimeError(f"WriteTxnMarkerResponse does not contain expected error map for producer id "
                                   f"{marker.producer_id}")
            current = self._current_state_or_cancel(transactional_id, marker)
            if current is None:
                continue
            metadata = current.transaction_metadata
            retry_partitions: list[TopicPartition] = []
            abort_sending = False
            with metadata.lock:
                for tp, error in errors.items():
                    if error is Errors.NONE:
                        metadata.remove_partition(tp)
                    elif error in _FATAL:
                        raise RuntimeError(f"Received fatal error {error.exception_name} while sending txn marker "
                                           f"for {transactional_id}")
                    elif error in _RETRIABLE:
                        self.logger.info("Sending %s's transaction marker for partition %s has failed with error %s, "
                                         "retrying with current coordinator epoch %d", transactional_id,
                                         tp, error.exception_name, current.coordinator_epoch)
                        retry_partitions.append(tp)
                    elif error in _SUPERSEDED:
                        self.logger.info("Sending %s's transaction marker for partition %s has permanently failed with "
                                         "error %s with the current coordinator epoch %d; cancel sending any more "
                                         "transaction markers %s to the brokers", transactional_id, tp,
                                         error.exception_name, current.coordinator_epoch, marker)
                        self.txn_marker_channel_manager.remove_markers_for_txn_id(transactional_id)
                        abort_sending = True
                    elif error in _UNSUPPORTED:
                        self.logger.info("Sending %s's transaction marker from partition %s has failed with %s. This "
                                         "partition will be removed from the set of partitions waiting for completion",
                                         transactional_id, tp, error.name)
                        metadata.remove_partition(tp)
                    else:
                        raise RuntimeError(f"Unexpected error {error.exception_name} while sending txn marker for "
                                           f"{transactional_id}")
            if abort_sending:
                continue
            if retry_partitions:
                self.logger.debug("Re-enqueuing %s transaction markers for transactional id %s under coordinator epoch "
                                  "%d", "COMMIT" if marker.transaction_result else "ABORT",
                                  transactional_id, marker.coordinator_epoch)
                self.txn_marker_channel_manager.add_txn_markers_to_broker_queue(
                    transactional_id, marker.producer_id, marker.producer_epoch, marker.transaction_result,
                    marker.coordinator_epoch, retry_partitions)
            else:
                self.txn_marker_channel_manager.maybe_write_txn_completion(transactional_id)


__all__ = ["TransactionMarkerRequestCompletionHandler", "errors_by_producer_id"]
