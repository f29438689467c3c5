"""Port of core/src/main/scala/kafka/coordinator/transaction/TransactionCoordinator.scala (Kafka 2.8.2).

The broker side of a transactional producer. For each transactional id it coordinates (the
ids of the __transaction_state partitions this broker leads, see TransactionStateManager):

* InitProducerId: a producer id and a new epoch, which fences every older producer instance
  of the id (their writes fail with PRODUCER_FENCED / INVALID_PRODUCER_EPOCH). A transaction
  left open by the older instance is aborted first (the answer is CONCURRENT_TRANSACTIONS
  until that is done; the producer retries). An idempotent producer (no transactional id)
  just gets a fresh id with epoch 0;
* AddPartitionsToTxn / AddOffsetsToTxn: the partitions the transaction writes to (the
  __consumer_offsets partition of a group, for offsets sent to the transaction), recorded in
  the log before the producer may write to them;
* EndTxn: PrepareCommit or PrepareAbort is written to the log, the producer is answered, and
  the TransactionMarkerChannelManager has every partition leader append the COMMIT or ABORT
  marker; once all are written, CompleteCommit/CompleteAbort is logged;
* every ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` a transaction open for
  longer than its ``transaction.timeout.ms`` is aborted, with the epoch bumped so that the
  hung producer is fenced.

Results are passed to callbacks, which may run later on another thread (once the log write
is replicated).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Tuple, Union

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.core.coordinator.transaction.transaction_marker_channel_manager import TransactionMarkerChannelManager
from kafka_py.core.coordinator.transaction.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    CompleteAbort,
    CompleteCommit,
    Dead,
    Empty,
    Ongoing,
    PrepareAbort,
    PrepareCommit,
    PrepareEpochFence,
    TransactionMetadata,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from kafka_py.core.coordinator.transaction.transaction_state_manager import (
    CoordinatorEpochAndTxnMetadata,
    TransactionConfig,
    TransactionalIdAndProducerIdEpoch,
    TransactionResult,
    TransactionStateManager,
)
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler, Scheduler
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InitProducerIdResult:
    producer_id: int
    producer_epoch: int
    error: Errors


@dataclass(frozen=True, slots=True)
class ProducerIdAndEpoch:
    producer_id: int
    epoch: int


@dataclass(frozen=True, slots=True)
class TransactionDescription:
    """One id's entry of a DescribeTransactions answer (DescribeTransactionsResponse's
    TransactionState); the rest is unset when ``error`` is not NONE."""

    transactional_id: str
    error: Errors
    state: str = ""  # Kafka's name of the TransactionState
    timeout_ms: int = 0
    start_time_ms: int = -1
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    topic_partitions: frozenset = frozenset()


def _init_transaction_error(error: Errors) -> InitProducerIdResult:
    return InitProducerIdResult(NO_PRODUCER_ID, NO_PRODUCER_EPOCH, error)


ApiResult = Union[Errors, Tuple[int, TxnTransitMetadata]]


class TransactionCoordinator:
    """Handles the transactional producer APIs for the transactional ids this broker coordinates."""

    def __init__(self, broker_id: int, txn_config: TransactionConfig, scheduler: Scheduler,
                 producer_id_generator, txn_manager: TransactionStateManager,
                 txn_marker_channel_manager: TransactionMarkerChannelManager, time: Time = Time.SYSTEM) -> None:
        self.broker_id = broker_id
        self.txn_config = txn_config
        self.scheduler = scheduler
        self.producer_id_generator = producer_id_generator
        self.txn_manager = txn_manager
        self.txn_marker_channel_manager = txn_marker_channel_manager
        self.time = time
        self.logger = IdentLogger(logger, f"[TransactionCoordinator id={broker_id}] ")
        self._is_active = threading.Event()

    @classmethod
    def create(cls, config, replica_manager, producer_id_generator, metadata_cache,
               time: Time = Time.SYSTEM) -> "TransactionCoordinator":
        """Kafka's TransactionCoordinator.apply: the coordinator and its parts from the broker config."""
        txn_config = TransactionConfig.from_kafka_config(config)
        scheduler = KafkaScheduler(1, thread_name_prefix="transaction-log-manager-")
        txn_manager = TransactionStateManager(config.broker_id, scheduler, replica_manager, txn_config, time)
        channel_manager = TransactionMarkerChannelManager.create(config, metadata_cache, txn_manager,
                                                                 replica_manager, time)
        return cls(config.broker_id, txn_config, scheduler, producer_id_generator, txn_manager, channel_manager,
                   time)

    @property
    def is_active(self) -> bool:
        return self._is_active.is_set()

    # ------------------------------------------------------------------ InitProducerId

    def handle_init_producer_id(self, transactional_id: Optional[str], transaction_timeout_ms: int,
                                expected_producer_id_and_epoch: Optional[ProducerIdAndEpoch],
                                response_callback: Callable[[InitProducerIdResult], None]) -> None:
        if transactional_id is None:
            # an idempotent producer: any broker hands out a fresh id
            producer_id = self.producer_id_generator.generate_producer_id()
            response_callback(InitProducerIdResult(producer_id, 0, Errors.NONE))
            return
        if not transactional_id:
            response_callback(_init_transaction_error(Errors.INVALID_REQUEST))
            return
        if not self.txn_manager.validate_transaction_timeout_ms(transaction_timeout_ms):
            response_callback(_init_transaction_error(Errors.INVALID_TRANSACTION_TIMEOUT))
            return

        current = self.txn_manager.get_transaction_state(transactional_id)
        if current is None:
            producer_id = self.producer_id_generator.generate_producer_id()
            created = TransactionMetadata(transactional_id, producer_id, NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
                                          NO_PRODUCER_EPOCH, transaction_timeout_ms, Empty, (), -1,
                                          self.time.milliseconds())
            current = self.txn_manager.put_transaction_state_if_not_exists(created)
        if isinstance(current, Errors):
            result: ApiResult = current
        else:
            metadata = current.transaction_metadata
            with metadata.lock:
                result = self._prepare_init_producer_id_transit(transactional_id, transaction_timeout_ms,
                                                                current.coordinator_epoch, metadata,
                                                                expected_producer_id_and_epoch)
        if isinstance(result, Errors):
            response_callback(_init_transaction_error(result))
            return
        coordinator_epoch, new_metadata = result
        if new_metadata.txn_state is PrepareEpochFence:
            # Abort the open transaction of the fenced instance first; the caller retries and
            # then gets the epoch bumped once more.
            def send_retriable_error_callback(error: Errors) -> None:
                response_callback(_init_transaction_error(
                    error if error is not Errors.NONE else Errors.CONCURRENT_TRANSACTIONS))

            self._end_transaction(transactional_id, new_metadata.producer_id, new_metadata.producer_epoch,
                                  TransactionResult.ABORT, False, send_retriable_error_callback)
            return

        def send_pid_response_callback(error: Errors) -> None:
            if error is Errors.NONE:
                self.logger.info("Initialized transactionalId %s with producerId %d and producer epoch %d on partition "
                                 "%s-%d", transactional_id, new_metadata.producer_id,
                                 new_metadata.producer_epoch, TRANSACTION_STATE_TOPIC_NAME,
                                 self.txn_manager.partition_for(transactional_id))
                response_callback(InitProducerIdResult(new_metadata.producer_id, new_metadata.producer_epoch,
                                                       Errors.NONE))
            else:
                self.logger.info("Returning %s error code to client for %s's InitProducerId request",
                                 error.name, transactional_id)
                response_callback(_init_transaction_error(error))

        self.txn_manager.append_transaction_to_log(transactional_id, coordinator_epoch, new_metadata,
                                                   send_pid_response_callback)

    def _prepare_init_producer_id_transit(self, transactional_id: str, transaction_timeout_ms: int,
                                          coordinator_epoch: int, metadata: TransactionMetadata,
                                          expected: Optional[ProducerIdAndEpoch]) -> ApiResult:
        def is_valid_producer_id(producer_id_and_epoch: ProducerIdAndEpoch) -> bool:
            # Fence the caller unless: the metadata was just created (a producer recovering from
            # UNKNOWN_PRODUCER_ID), its producer id is the current one (the epoch is checked when
            # bumping), or it is the previous one with an exhausted epoch (a retry of the rotation).
            return (metadata.producer_epoch == NO_PRODUCER_EPOCH
                    or producer_id_and_epoch.producer_id == metadata.producer_id
                    or (producer_id_and_epoch.producer_id == metadata.last_producer_id
                        and is_epoch_exhausted(producer_id_and_epoch.epoch)))

        if metadata.pending_transition_in_progress:
            return Errors.CONCURRENT_TRANSACTIONS
        if expected is not None and not is_valid_producer_id(expected):
            return Errors.PRODUCER_FENCED
        state = metadata.state
        if state in (PrepareAbort, PrepareCommit):
            return Errors.CONCURRENT_TRANSACTIONS
        if state in (CompleteAbort, CompleteCommit, Empty):
            if metadata.is_producer_epoch_exhausted and (expected is None or expected.epoch == metadata.producer_epoch):
                new_producer_id = self.producer_id_generator.generate_producer_id()
                return coordinator_epoch, metadata.prepare_producer_id_rotation(
                    new_producer_id, transaction_timeout_ms, self.time.milliseconds(), expected is not None)
            transit = metadata.prepare_increment_producer_epoch(
                transaction_timeout_ms, None if expected is None else expected.epoch, self.time.milliseconds())
            if isinstance(transit, Errors):
                return transit
            return coordinator_epoch, transit
        if state is Ongoing:
            # Bump the epoch to fence the current producer and abort its transaction; this
            # epoch is never handed out (the caller gets CONCURRENT_TRANSACTIONS and retries).
            return coordinator_epoch, metadata.prepare_fence_producer_epoch()
        message = (f"Found transactionalId {transactional_id} with state {state}. This is illegal as we should "
                   "never have transitioned to this state.")
        self.logger.critical("%s", message)
        raise RuntimeError(message)

    # ------------------------------------------------------------------ AddPartitionsToTxn

    def handle_add_partitions_to_transaction(self, transactional_id: Optional[str], producer_id: int,
                                             producer_epoch: int, partitions: Iterable[TopicPartition],
                                             response_callback: Callable[[Errors], None]) -> None:
        if not transactional_id:
            self.logger.debug("Returning INVALID_REQUEST error code to client for %s's AddPartitions request",
                              transactional_id)
            response_callback(Errors.INVALID_REQUEST)
            return
        partitions = frozenset(partitions)
        current = self.txn_manager.get_transaction_state(transactional_id)
        if current is None:
            result: ApiResult = Errors.INVALID_PRODUCER_ID_MAPPING
        elif isinstance(current, Errors):
            result = current
        else:
            metadata = current.transaction_metadata
            with metadata.lock:
                if metadata.producer_id != producer_id:
                    result = Errors.INVALID_PRODUCER_ID_MAPPING
                elif metadata.producer_epoch != producer_epoch:
                    result = Errors.PRODUCER_FENCED
                elif metadata.pending_transition_in_progress:
                    result = Errors.CONCURRENT_TRANSACTIONS
                elif metadata.state in (PrepareCommit, PrepareAbort):
                    result = Errors.CONCURRENT_TRANSACTIONS
                elif metadata.state is Ongoing and partitions <= metadata.topic_partitions:
                    # already part of the transaction: nothing to write
                    result = Errors.NONE
                else:
                    result = (current.coordinator_epoch,
                              metadata.prepare_add_partitions(partitions, self.time.milliseconds()))
        if isinstance(result, Errors):
            self.logger.debug("Returning %s error code to client for %s's AddPartitions request",
                              result.name, transactional_id)
            response_callback(result)
            return
        coordinator_epoch, new_metadata = result
        self.txn_manager.append_transaction_to_log(transactional_id, coordinator_epoch, new_metadata,
                                                   response_callback)

    # ------------------------------------------------------------------ DescribeTransactions

    def handle_describe_transactions(self, transactional_id: str) -> "TransactionDescription":
        """What DescribeTransactions (Kafka 3.0, KIP-664) tells of an id: its producer id and
        epoch, state, timeout, start time and the partitions of its ongoing transaction; an
        error when this broker does not coordinate it (NOT_COORDINATOR), is loading it
        (COORDINATOR_LOAD_IN_PROGRESS) or does not know it (TRANSACTIONAL_ID_NOT_FOUND). A
        partition leader asks it before taking the first transactional batch of a producer
        (server/add_partitions_to_txn_manager.py)."""
        if not self.is_active:
            return TransactionDescription(transactional_id, Errors.COORDINATOR_NOT_AVAILABLE)
        if not transactional_id:
            return TransactionDescription(transactional_id, Errors.INVALID_REQUEST)
        current = self.txn_manager.get_transaction_state(transactional_id)
        if isinstance(current, Errors):
            return TransactionDescription(transactional_id, current)
        if current is None:
            return TransactionDescription(transactional_id, Errors.TRANSACTIONAL_ID_NOT_FOUND)
        metadata = current.transaction_metadata
        with metadata.lock:
            if metadata.state is Dead:
                # being expired: as if already gone
                return TransactionDescription(transactional_id, Errors.TRANSACTIONAL_ID_NOT_FOUND)
            return TransactionDescription(
                transactional_id, Errors.NONE, str(metadata.state), metadata.txn_timeout_ms,
                metadata.txn_start_timestamp, metadata.producer_id, metadata.producer_epoch,
                frozenset(metadata.topic_partitions))

    # ------------------------------------------------------------------ leadership

    def on_election(self, txn_topic_partition_id: int, coordinator_epoch: int) -> None:
        """Became leader of a __transaction_state partition: load its ids."""
        self.logger.info("Elected as the txn coordinator for partition %d at epoch %d",
                         txn_topic_partition_id, coordinator_epoch)
        # anything left from an earlier term on this partition goes first
        self.txn_marker_channel_manager.remove_markers_for_txn_topic_partition(txn_topic_partition_id)
        self.txn_manager.load_transactions_for_txn_topic_partition(
            txn_topic_partition_id, coordinator_epoch, self.txn_marker_channel_manager.add_txn_markers_to_send)

    def on_resignation(self, txn_topic_partition_id: int, coordinator_epoch: Optional[int]) -> None:
        """No longer leader of a __transaction_state partition (``coordinator_epoch`` is None when the
        replica was deleted by a StopReplica)."""
        self.logger.info("Resigned as the txn coordinator for partition %d at epoch %s",
                         txn_topic_partition_id, coordinator_epoch)
        self.txn_manager.remove_transactions_for_txn_topic_partition(txn_topic_partition_id, coordinator_epoch)
        self.txn_marker_channel_manager.remove_markers_for_txn_topic_partition(txn_topic_partition_id)

    # ------------------------------------------------------------------ EndTxn

    def handle_end_transaction(self, transactional_id: Optional[str], producer_id: int, producer_epoch: int,
                               txn_marker_result: bool, response_callback: Callable[[Errors], None]) -> None:
        self._end_transaction(transactional_id, producer_id, producer_epoch, txn_marker_result, True,
                              response_callback)

    def _end_transaction(self, transactional_id: Optional[str], producer_id: int, producer_epoch: int,
                         txn_marker_result: bool, is_from_client: bool,
                         response_callback: Callable[[Errors], None]) -> None:
        if not transactional_id:
            response_callback(Errors.INVALID_REQUEST)
            return
        result_name = "COMMIT" if txn_marker_result else "ABORT"
        is_epoch_fence = False

        def invalid_state(state) -> Errors:
            self.logger.debug("TransactionalId: %s's state is %s, but received transaction marker result to send: %s",
                              transactional_id, state, result_name)
            return Errors.INVALID_TXN_STATE

        current = self.txn_manager.get_transaction_state(transactional_id)
        if current is None:
            pre_append: ApiResult = Errors.INVALID_PRODUCER_ID_MAPPING
        elif isinstance(current, Errors):
            pre_append = current
        else:
            metadata = current.transaction_metadata
            coordinator_epoch = current.coordinator_epoch
            with metadata.lock:
                state = metadata.state
                if metadata.producer_id != producer_id:
                    pre_append = Errors.INVALID_PRODUCER_ID_MAPPING
                # a client must match the epoch exactly; the coordinator itself (timeouts,
                # fencing) ends the transaction with the next epoch
                elif (is_from_client and producer_epoch != metadata.producer_epoch) \
                        or producer_epoch < metadata.producer_epoch:
                    pre_append = Errors.PRODUCER_FENCED
                elif metadata.pending_transition_in_progress and metadata.pending_state is not PrepareEpochFence:
                    pre_append = Errors.CONCURRENT_TRANSACTIONS
                elif state is Ongoing:
                    next_state = PrepareCommit if txn_marker_result else PrepareAbort
                    if next_state is PrepareAbort and metadata.pending_state is PrepareEpochFence:
                        # the fence goes straight on to the abort, with the bumped epoch
                        is_epoch_fence = True
                        metadata.pending_state = None
                        metadata.producer_epoch = producer_epoch
                        metadata.last_producer_epoch = NO_PRODUCER_EPOCH
                    pre_append = coordinator_epoch, metadata.prepare_abort_or_commit(next_state,
                                                                                     self.time.milliseconds())
                elif state is CompleteCommit:
                    pre_append = Errors.NONE if txn_marker_result else invalid_state(state)
                elif state is CompleteAbort:
                    pre_append = Errors.NONE if not txn_marker_result else invalid_state(state)
                elif state is PrepareCommit:
                    pre_append = Errors.CONCURRENT_TRANSACTIONS if txn_marker_result else invalid_state(state)
                elif state is PrepareAbort:
                    pre_append = Errors.CONCURRENT_TRANSACTIONS if not txn_marker_result else invalid_state(state)
                elif state is Empty:
                    pre_append = invalid_state(state)
                else:
                    message = (f"Found transactionalId {transactional_id} with state {state}. This is illegal as "
                               "we should never have transitioned to this state.")
                    self.logger.critical("%s", message)
                    raise RuntimeError(message)

        if isinstance(pre_append, Errors):
            self.logger.debug("Aborting append of %s to transaction log with coordinator and returning %s error to "
                              "client for %s's EndTransaction request", result_name, pre_append.name,
                              transactional_id)
            response_callback(pre_append)
            return
        coordinator_epoch, new_metadata = pre_append

        def send_txn_markers_callback(error: Errors) -> None:
            if error is not Errors.NONE:
                self.logger.info("Aborting sending of transaction markers and returning %s error to client for %s's "
                                 "EndTransaction request of %s, since appending %s to transaction log with coordinator "
                                 "epoch %d failed", error.name, transactional_id, result_name,
                                 new_metadata, coordinator_epoch)
                if is_epoch_fence:
                    state_now = self.txn_manager.get_transaction_state(transactional_id)
                    if state_now is None:
                        self.logger.warning("The coordinator still owns the transaction partition for %s, but there is "
                                            "no metadata in the cache; this is not expected",
                                            transactional_id)
                    elif isinstance(state_now, CoordinatorEpochAndTxnMetadata) \
                            and state_now.coordinator_epoch == coordinator_epoch:
                        # the bumped epoch was never handed out: the next fence reuses it
                        state_now.transaction_metadata.has_failed_epoch_fence = True
                        self.logger.warning("The coordinator failed to write an epoch fence transition for producer %s "
                                            "to the transaction log with error %s. The epoch was increased to %d but not "
                                            "returned to the client", transactional_id, error.name,
                                            new_metadata.producer_epoch)
                response_callback(error)
                return

            state_now = self.txn_manager.get_transaction_state(transactional_id)
            if state_now is None:
                message = (f"The coordinator still owns the transaction partition for {transactional_id}, but "
                           "there is no metadata in the cache; this is not expected")
                self.logger.critical("%s", message)
                raise RuntimeError(message)
            if isinstance(state_now, Errors):
                pre_send: Union[Errors, Tuple[TransactionMetadata, TxnTransitMetadata]] = state_now
            elif state_now.coordinator_epoch != coordinator_epoch:
                self.logger.debug("The transaction coordinator epoch has changed to %d after %s was successfully "
                                  "appended to the log for %s with old epoch %d",
                                  state_now.coordinator_epoch, result_name, transactional_id, coordinator_epoch)
                pre_send = Errors.NOT_COORDINATOR
            else:
                metadata = state_now.transaction_metadata
                with metadata.lock:
                    state = metadata.state
                    if metadata.producer_id != producer_id:
                        pre_send = Errors.INVALID_PRODUCER_ID_MAPPING
                    elif metadata.producer_epoch != producer_epoch:
                        pre_send = Errors.PRODUCER_FENCED
                    elif metadata.pending_transition_in_progress:
                        pre_send = Errors.CONCURRENT_TRANSACTIONS
                    elif state in (Empty, Ongoing, CompleteCommit, CompleteAbort):
                        pre_send = invalid_state(state)
                    elif state is PrepareCommit:
                        pre_send = ((metadata, metadata.prepare_complete(self.time.milliseconds()))
                                    if txn_marker_result else invalid_state(state))
                    elif state is PrepareAbort:
                        pre_send = ((metadata, metadata.prepare_complete(self.time.milliseconds()))
                                    if not txn_marker_result else invalid_state(state))
                    else:
                        message = (f"Found transactionalId {transactional_id} with state {state}. This is illegal "
                                   "as we should never have transitioned to this state.")
                        self.logger.critical("%s", message)
                        raise RuntimeError(message)
            if isinstance(pre_send, Errors):
                self.logger.info("Aborting sending of transaction markers after appended %s to transaction log and "
                                 "returning %s error to client for %s's EndTransaction request",
                                 result_name, pre_send.name, transactional_id)
                response_callback(pre_send)
                return
            txn_metadata, new_pre_send_metadata = pre_send
            # The decision is durable: the producer is answered whatever happens to the markers.
            # Kafka answers first; here the markers go first, because those of this broker's own
            # partitions may be written (and the transaction completed) at once, before the
            # producer starts its next transaction (see TransactionMarkerChannelManager).
            try:
                self.txn_marker_channel_manager.add_txn_markers_to_send(coordinator_epoch, txn_marker_result,
                                                                        txn_metadata, new_pre_send_metadata)
            finally:
                response_callback(Errors.NONE)

        self.txn_manager.append_transaction_to_log(transactional_id, coordinator_epoch, new_metadata,
                                                   send_txn_markers_callback)

    # ------------------------------------------------------------------ helpers

    def transaction_topic_configs(self) -> dict:
        return self.txn_manager.transaction_topic_configs()

    def partition_for(self, transactional_id: str) -> int:
        return self.txn_manager.partition_for(transactional_id)

    def _on_end_transaction_complete(self, txn_id_and_pid_epoch: TransactionalIdAndProducerIdEpoch
                                     ) -> Callable[[Errors], None]:
        def callback(error: Errors) -> None:
            if error is Errors.NONE:
                self.logger.info("Completed rollback of ongoing transaction for transactionalId %s due to timeout",
                                 txn_id_and_pid_epoch.transactional_id)
            elif error in (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.PRODUCER_FENCED,
                           Errors.CONCURRENT_TRANSACTIONS):
                self.logger.debug("Rollback of ongoing transaction for transactionalId %s has been cancelled due to "
                                  "error %s", txn_id_and_pid_epoch.transactional_id, error.name)
            else:
                self.logger.warning("Rollback of ongoing transaction for transactionalId %s failed due to error %s",
                                    txn_id_and_pid_epoch.transactional_id, error.name)
        return callback

    def abort_timed_out_transactions(self,
                                     on_complete: Optional[Callable[[TransactionalIdAndProducerIdEpoch],
                                                                    Callable[[Errors], None]]] = None) -> None:
        """Abort, fencing their producers, the transactions open longer than their timeout."""
        on_complete = on_complete or self._on_end_transaction_complete
        for txn_id_and_pid_epoch in self.txn_manager.timed_out_transactions():
            current = self.txn_manager.get_transaction_state(txn_id_and_pid_epoch.transactional_id)
            if isinstance(current, Errors):
                continue
            if current is None:
                self.logger.error("Could not find transaction metadata when trying to timeout transaction for %s",
                                  txn_id_and_pid_epoch)
                continue
            metadata = current.transaction_metadata
            with metadata.lock:
                if metadata.producer_id != txn_id_and_pid_epoch.producer_id:
                    self.logger.error("Found incorrect producerId when expiring transactionalId: %s. Expected "
                                      "producerId: %d. Found producerId: %d",
                                      txn_id_and_pid_epoch.transactional_id, txn_id_and_pid_epoch.producer_id,
                                      metadata.producer_id)
                    transit = None
                elif metadata.pending_transition_in_progress:
                    self.logger.debug("Skipping abort of timed out transaction %s since there is a pending state "
                                      "transition", txn_id_and_pid_epoch)
                    transit = None
                else:
                    transit = metadata.prepare_fence_producer_epoch()
            if transit is not None:
                self._end_transaction(metadata.transactional_id, transit.producer_id, transit.producer_epoch,
                                      TransactionResult.ABORT, False, on_complete(txn_id_and_pid_epoch))

    def _abort_timed_out_transactions_task(self) -> None:
        try:
            self.abort_timed_out_transactions()
        except Exception:  # noqa: BLE001 - the next round tries again
            self.logger.exception("Error aborting timed out transactions")

    # ------------------------------------------------------------------ lifecycle

    def startup(self, retrieve_transaction_topic_partition_count: Callable[[], int],
                enable_transactional_id_expiration: bool = True) -> None:
        self.logger.info("Starting up.")
        self.scheduler.startup()
        interval = self.txn_config.abort_timed_out_transactions_interval_ms
        self.scheduler.schedule("transaction-abort", self._abort_timed_out_transactions_task, delay_ms=interval,
                                period_ms=interval)
        self.txn_manager.startup(retrieve_transaction_topic_partition_count, enable_transactional_id_expiration)
        self.txn_marker_channel_manager.start()
        self._is_active.set()
        self.logger.info("Startup complete.")

    def shutdown(self) -> None:
        self.logger.info("Shutting down.")
        self._is_active.clear()
        self.scheduler.shutdown()
        self.producer_id_generator.shutdown()
        self.txn_manager.shutdown()
        self.txn_marker_channel_manager.shutdown()
        self.logger.info("Shutdown complete.")


__all__ = ["InitProducerIdResult", "ProducerIdAndEpoch", "TransactionCoordinator"]
