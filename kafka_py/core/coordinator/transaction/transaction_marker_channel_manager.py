"""Port of core/src/main/scala/kafka/coordinator/transaction/TransactionMarkerChannelManager.scala (Kafka 2.8.2).

How the transaction coordinator gets the COMMIT/ABORT markers of a completed transaction
written: one WriteTxnMarkers request per partition leader, carrying every pending marker for
that broker, retried until each partition answers, then the completion (CompleteCommit /
CompleteAbort) written to __transaction_state.

* ``add_txn_markers_to_send`` (after PrepareCommit/PrepareAbort is logged, or after loading a
  partition that holds such a transaction) remembers the transaction as pending and queues one
  marker entry per destination broker, found from the metadata cache's partition leaders. A
  partition whose leader is not reachable right now goes to the unknown-broker queue, looked
  up again on every round; a partition the cluster no longer knows (deleted) needs no marker.
* Each destination broker has a queue (per __transaction_state partition, so a resigned
  partition's markers can be dropped at once) and a sender thread with one connection
  (kafka_py/clients/network_client.py, the inter-broker listener's security): it drains its
  queue into one WriteTxnMarkers request, waits for the answer and hands it to the
  TransactionMarkerRequestCompletionHandler. Kafka drives every destination from one
  InterBrokerSendThread over an asynchronous NetworkClient with one request in flight per
  node; a thread per destination over the blocking client gives the same: one request in
  flight per broker, brokers served independently.
* The markers for partitions this broker leads itself skip the socket: they go to
  ``local_marker_writer`` (KafkaApis' WriteTxnMarkers without the request, set by
  KafkaServer), which appends them exactly as the request would. Kafka sends a request to
  itself; on this broker that round trip (encode, socket, a network thread, a request
  handler, decode) cost as much as the append, and every commit pays it. The first attempt
  of a transaction's local markers is made at once on the calling thread
  (``add_txn_markers_to_send``, which the coordinator calls before answering EndTxn): when
  those partitions' ISR is this broker alone, the markers and the completion are written
  before the producer has its answer, so its next transaction does not find the previous
  one still completing (CONCURRENT_TRANSACTIONS, which clients back off from for 20-100 ms).
  Retries go through the queue and the broker's sender thread, with its back-off.
* Once a transaction has no partition left waiting, its completion is written; a write that
  fails with COORDINATOR_NOT_AVAILABLE (e.g. not enough replicas) is retried on the next round
  of the ``TxnMarkerSenderThread``.

After a coordinator failover or restart, the new coordinator loads the partition and sends
the markers of every PrepareCommit/PrepareAbort transaction again; partition leaders take a
marker they already have as a no-op (same producer epoch).
"""
from __future__ import annotations

import collections
import logging
import threading
from dataclasses import dataclass
from typing import Callable, Deque, Dict, Iterable, List, Optional, Tuple

from kafka_py.clients.network_client import RECONNECT_BACKOFF_MS, NetworkClient
from kafka_py.clients.network_client_utils import NodeConnection
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction.transaction_marker_request_completion_handler import (
    TransactionMarkerRequestCompletionHandler,
)
from kafka_py.core.coordinator.transaction.transaction_metadata import TransactionMetadata, TxnTransitMetadata
from kafka_py.core.coordinator.transaction.transaction_state_manager import (
    CoordinatorEpochAndTxnMetadata,
    TransactionStateManager,
)
from kafka_py.network.channel_builders import inter_broker_client_channel_builder
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

WRITE_TXN_MARKERS_REQUEST_VERSION = 1  # inter.broker.protocol.version 2.8-IV0 and later
# How often the sender thread looks again at the unknown-broker queue and the completion retries.
RETRY_BACKOFF_MS = 100
# An idle sender sleeps until markers arrive (they wake it); this only bounds a lost wake-up.
IDLE_WAIT_MS = 1000


@dataclass(frozen=True, slots=True)
class TxnMarkerEntry:
    """WriteTxnMarkersRequest.TxnMarkerEntry: one producer's marker for some partitions."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    transaction_result: bool  # True: COMMIT
    partitions: Tuple[TopicPartition, ...]

    def __str__(self) -> str:
        return (f"TxnMarkerEntry{{producerId={self.producer_id}, producerEpoch={self.producer_epoch}, "
                f"coordinatorEpoch={self.coordinator_epoch}, "
                f"result={'COMMIT' if self.transaction_result else 'ABORT'}, "
                f"partitions={[str(p) for p in self.partitions]}}}")


@dataclass(frozen=True, slots=True)
class TxnIdAndMarkerEntry:
    txn_id: str
    txn_marker_entry: TxnMarkerEntry


@dataclass(frozen=True, slots=True)
class PendingCompleteTxn:
    transactional_id: str
    coordinator_epoch: int
    txn_metadata: TransactionMetadata
    new_metadata: TxnTransitMetadata

    def __str__(self) -> str:
        return (f"PendingCompleteTxn(transactionalId={self.transactional_id}, "
                f"coordinatorEpoch={self.coordinator_epoch}, txnMetadata={self.txn_metadata!r}, "
                f"newMetadata={self.new_metadata})")


class TxnMarkerQueue:
    """The markers waiting for one destination broker, by __transaction_state partition."""

    def __init__(self, destination: Node) -> None:
        self.destination = destination
        self._markers_per_txn_topic_partition: Dict[int, Deque[TxnIdAndMarkerEntry]] = {}
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)

    def remove_markers_for_txn_topic_partition(self, partition: int) -> List[TxnIdAndMarkerEntry]:
        with self._lock:
            return list(self._markers_per_txn_topic_partition.pop(partition, ()))

    def add_markers(self, txn_topic_partition: int, txn_id_and_marker: TxnIdAndMarkerEntry) -> None:
        with self._lock:
            self._markers_per_txn_topic_partition.setdefault(txn_topic_partition,
                                                             collections.deque()).append(txn_id_and_marker)
            self._not_empty.notify_all()

    def drain(self) -> List[TxnIdAndMarkerEntry]:
        with self._lock:
            return self._drain_locked()

    def _drain_locked(self) -> List[TxnIdAndMarkerEntry]:
        drained: List[TxnIdAndMarkerEntry] = []
        for queue in self._markers_per_txn_topic_partition.values():
            drained.extend(queue)
            queue.clear()
        return drained

    def wait_and_drain(self, timeout_s: float, stop: threading.Event) -> List[TxnIdAndMarkerEntry]:
        """The queued markers, waiting up to ``timeout_s`` for some to arrive."""
        with self._lock:
            if not self._total_locked() and not stop.is_set():
                self._not_empty.wait(timeout_s)
            return self._drain_locked()

    def wake(self) -> None:
        with self._lock:
            self._not_empty.notify_all()

    def _total_locked(self) -> int:
        return sum(len(q) for q in self._markers_per_txn_topic_partition.values())

    @property
    def total_num_markers(self) -> int:
        with self._lock:
            return self._total_locked()

    def total_num_markers_for(self, txn_topic_partition: int) -> int:
        with self._lock:
            return len(self._markers_per_txn_topic_partition.get(txn_topic_partition, ()))


class _BrokerMarkerSender(ShutdownableThread):
    """Sends one destination broker's queued markers, one WriteTxnMarkers request at a time."""

    def __init__(self, manager: "TransactionMarkerChannelManager", broker_id: int, queue: TxnMarkerQueue) -> None:
        super().__init__(name=f"TxnMarkerSenderThread-{manager.broker_id}-to-{broker_id}", daemon=True)
        self.manager = manager
        self.broker_id = broker_id
        self.queue = queue
        self._connection = NodeConnection(manager.new_network_client)

    def initiate_shutdown(self) -> bool:
        if not super().initiate_shutdown():
            return False
        self.queue.wake()
        self._connection.initiate_close()
        return True

    def do_work(self) -> None:
        entries = self.queue.wait_and_drain(IDLE_WAIT_MS / 1000.0, self._shutdown_initiated)
        if not entries or not self.is_running:
            return
        node = self.queue.destination
        handler = self.manager.completion_handler(node.id, entries)
        local_writer = self.manager.local_marker_writer
        if node.id == self.manager.broker_id and local_writer is not None:
            self._write_locally(local_writer, handler, entries)
            return
        request = self.manager.build_write_txn_markers_request([e.txn_marker_entry for e in entries])
        try:
            response = self._connection.send_and_receive(node, ApiKeys.WRITE_TXN_MARKERS,
                                                         WRITE_TXN_MARKERS_REQUEST_VERSION, request,
                                                         self.manager.request_timeout_ms)
        except Exception as e:  # noqa: BLE001 - a disconnection: the markers are queued again
            if self.is_running:
                self.manager.logger.debug("WriteTxnMarkers to broker %d failed: %s", node.id, e)
            if self.is_running:
                self._handle(handler.on_disconnected)
                self.pause(RECONNECT_BACKOFF_MS)
            return
        self._handle(lambda: handler.on_response(response))

    def _write_locally(self, writer, handler, entries: List[TxnIdAndMarkerEntry]) -> None:
        done = threading.Event()
        result: list = []

        def on_complete(errors) -> None:
            result.append(errors)
            done.set()

        try:
            writer([e.txn_marker_entry for e in entries], on_complete)
        except Exception:  # noqa: BLE001 - as a lost request: queued again
            self.manager.logger.exception("Writing transaction markers locally failed")
            self._handle(handler.on_disconnected)
            self.pause(RECONNECT_BACKOFF_MS)
            return
        # one write in flight, as one request would be; the appends answer by request.timeout.ms
        while not done.wait(RETRY_BACKOFF_MS / 1000.0):
            if not self.is_running:
                return
        self._handle(lambda: handler.on_complete(result[0]))

    def _handle(self, action: Callable[[], None]) -> None:
        # an unexpected answer is logged; this broker's later markers must still go out
        try:
            action()
        except Exception:  # noqa: BLE001
            self.manager.logger.exception("Error handling the WriteTxnMarkers answer of broker %d",
                                          self.broker_id)

    def shutdown(self) -> None:
        super().shutdown()
        self._connection.close()


class TransactionMarkerChannelManager(ShutdownableThread):
    """Queues, sends and retries transaction markers; writes each transaction's completion."""

    def __init__(self, broker_id: int, config, metadata_cache, txn_state_manager: TransactionStateManager,
                 time: Time = Time.SYSTEM,
                 network_client_factory: Optional[Callable[[Node], NetworkClient]] = None) -> None:
        super().__init__(name=f"TxnMarkerSenderThread-{broker_id}", daemon=True)
        self.broker_id = broker_id
        self.config = config
        self.metadata_cache = metadata_cache
        self.txn_state_manager = txn_state_manager
        self.time = time
        self.logger.ident = f"[Transaction Marker Channel Manager {broker_id}]: "
        self.inter_broker_listener_name = config.inter_broker_listener_name
        self.request_timeout_ms = config.request_timeout_ms
        self._network_client_factory = network_client_factory
        # appends markers for this broker's own partitions without a request (see the module doc)
        self.local_marker_writer: Optional[Callable[[List[TxnMarkerEntry], Callable[[dict], None]], None]] = None
        self._lock = threading.Lock()
        self._markers_queue_per_broker: Dict[int, TxnMarkerQueue] = {}
        self._senders: Dict[int, _BrokerMarkerSender] = {}
        self.markers_queue_for_unknown_broker = TxnMarkerQueue(Node(-1, "", -1))
        self._txn_log_append_retry_queue: Deque[PendingCompleteTxn] = collections.deque()
        self._retry_lock = threading.Lock()
        self._transactions_with_pending_markers: Dict[str, PendingCompleteTxn] = {}
        self._pending_lock = threading.Lock()
        self._wakeup = threading.Event()

    @classmethod
    def create(cls, config, metadata_cache, txn_state_manager: TransactionStateManager, replica_manager=None,
               time: Time = Time.SYSTEM) -> "TransactionMarkerChannelManager":
        return cls(config.broker_id, config, metadata_cache, txn_state_manager, time)

    # ------------------------------------------------------------------ connections

    def new_network_client(self, node: Node) -> NetworkClient:
        if self._network_client_factory is not None:
            return self._network_client_factory(node)
        return NetworkClient(node, f"broker-{self.broker_id}-txn-marker-sender", self.request_timeout_ms,
                             socket_receive_buffer=self.config.socket_receive_buffer_bytes, time=self.time,
                             channel_builder=inter_broker_client_channel_builder(self.config))

    @staticmethod
    def build_write_txn_markers_request(markers: Iterable[TxnMarkerEntry]):
        from kafka_py.clients.common.protocol.schema.write_txn_markers.v1 import request as wtm

        def topics(partitions: Iterable[TopicPartition]):
            by_topic: Dict[str, List[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            return tuple(wtm.WritableTxnMarkerTopic(name=t, partition_indexes=tuple(ps))
                         for t, ps in by_topic.items())

        return wtm.WriteTxnMarkersRequest(markers=tuple(
            wtm.WritableTxnMarker(producer_id=m.producer_id, producer_epoch=m.producer_epoch,
                                  transaction_result=m.transaction_result, topics=topics(m.partitions),
                                  coordinator_epoch=m.coordinator_epoch)
            for m in markers))

    def completion_handler(self, broker_id: int, entries: List[TxnIdAndMarkerEntry]):
        return TransactionMarkerRequestCompletionHandler(broker_id, self.txn_state_manager, self, entries)

    # ------------------------------------------------------------------ queues

    def queue_for_broker(self, broker_id: int) -> Optional[TxnMarkerQueue]:
        with self._lock:
            return self._markers_queue_per_broker.get(broker_id)

    @property
    def queue_for_unknown_broker(self) -> TxnMarkerQueue:
        return self.markers_queue_for_unknown_broker

    def add_markers_for_broker(self, broker: Node, txn_topic_partition: int,
                               txn_id_and_marker: TxnIdAndMarkerEntry) -> None:
        with self._lock:
            queue = self._markers_queue_per_broker.get(broker.id)
            if queue is None:
                queue = self._markers_queue_per_broker[broker.id] = TxnMarkerQueue(broker)
            # a broker may come back on another address; the next request goes there
            queue.destination = broker
            sender = self._senders.get(broker.id)
            if sender is None and self.is_running:
                sender = self._senders[broker.id] = _BrokerMarkerSender(self, broker.id, queue)
                sender.start()
        queue.add_markers(txn_topic_partition, txn_id_and_marker)
        self.logger.debug("Added marker %s for transactional id %s to destination broker %d",
                          txn_id_and_marker.txn_marker_entry, txn_id_and_marker.txn_id, broker.id)

    @property
    def num_txns_with_pending_markers(self) -> int:
        with self._pending_lock:
            return len(self._transactions_with_pending_markers)

    @property
    def log_append_retry_queue_size(self) -> int:
        with self._retry_lock:
            return len(self._txn_log_append_retry_queue)

    # ------------------------------------------------------------------ the sender thread's round

    def retry_log_appends(self) -> None:
        with self._retry_lock:
            retries = list(self._txn_log_append_retry_queue)
            self._txn_log_append_retry_queue.clear()
        for pending in retries:
            self.logger.debug("Retry appending %s transaction log", pending)
            self._try_append_to_log(pending)

    def do_work(self) -> None:
        # every 100 ms while markers wait for a leader or a completion waits to be retried;
        # otherwise asleep until woken (a longer timeout only bounds a missed wake-up)
        busy = self.markers_queue_for_unknown_broker.total_num_markers or self.log_append_retry_queue_size
        self._wakeup.wait(RETRY_BACKOFF_MS / 1000.0 if busy else IDLE_WAIT_MS / 1000.0)
        self._wakeup.clear()
        if not self.is_running:
            return
        self.retry_log_appends()
        # markers whose leaders were unreachable: look them up again
        for entry in self.markers_queue_for_unknown_broker.drain():
            marker = entry.txn_marker_entry
            self.add_txn_markers_to_broker_queue(entry.txn_id, marker.producer_id, marker.producer_epoch,
                                                 marker.transaction_result, marker.coordinator_epoch,
                                                 marker.partitions)

    def wakeup(self) -> None:
        self._wakeup.set()

    # ------------------------------------------------------------------ completion

    def _write_txn_completion(self, pending: PendingCompleteTxn) -> None:
        transactional_id = pending.transactional_id
        coordinator_epoch = pending.coordinator_epoch
        self.logger.debug("Completed sending transaction markers for %s; begin transition to %s",
                          transactional_id, pending.new_metadata.txn_state)
        current = self.txn_state_manager.get_transaction_state(transactional_id)
        if current is Errors.NOT_COORDINATOR:
            self.logger.info("No longer the coordinator for %s with coordinator epoch %d; cancel appending %s to "
                             "transaction log", transactional_id, coordinator_epoch,
                             pending.new_metadata)
        elif current is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            self.logger.info("Loading the transaction partition that contains %s while my current coordinator epoch "
                             "is %d; so cancel appending %s to transaction log since the loading process will continue "
                             "the remaining work", transactional_id, coordinator_epoch,
                             pending.new_metadata)
        elif isinstance(current, Errors):
            raise RuntimeError(f"Unhandled error {current.name} when fetching current transaction state")
        elif current is None:
            message = (f"The coordinator still owns the transaction partition for {transactional_id}, but there is "
                       "no metadata in the cache; this is not expected")
            self.logger.critical("%s", message)
            raise RuntimeError(message)
        elif current.coordinator_epoch == coordinator_epoch:
            self.logger.debug("Sending %s's transaction markers for %r with coordinator epoch %d succeeded, trying to "
                              "append complete transaction log now", transactional_id,
                              pending.txn_metadata, coordinator_epoch)
            self._try_append_to_log(PendingCompleteTxn(transactional_id, coordinator_epoch, pending.txn_metadata,
                                                       pending.new_metadata))
        else:
            self.logger.info("The cached metadata %r has changed to %s after completed sending the markers with "
                             "coordinator epoch %d; abort transiting the metadata to %s as it may have been updated by "
                             "another process", pending.txn_metadata, current, coordinator_epoch,
                             pending.new_metadata)

    def add_txn_markers_to_send(self, coordinator_epoch: int, txn_result: bool, txn_metadata: TransactionMetadata,
                                new_metadata: TxnTransitMetadata) -> None:
        transactional_id = txn_metadata.transactional_id
        pending = PendingCompleteTxn(transactional_id, coordinator_epoch, txn_metadata, new_metadata)
        with self._pending_lock:
            self._transactions_with_pending_markers[transactional_id] = pending
        with txn_metadata.lock:
            producer_id = txn_metadata.producer_id
            producer_epoch = txn_metadata.producer_epoch
            partitions = tuple(txn_metadata.topic_partitions)
        self.add_txn_markers_to_broker_queue(transactional_id, producer_id, producer_epoch, txn_result,
                                             coordinator_epoch, partitions, write_local_now=True)
        self.maybe_write_txn_completion(transactional_id)

    @staticmethod
    def _has_pending_markers_to_write(txn_metadata: TransactionMetadata) -> bool:
        with txn_metadata.lock:
            return bool(txn_metadata.topic_partitions)

    def maybe_write_txn_completion(self, transactional_id: str) -> None:
        with self._pending_lock:
            pending = self._transactions_with_pending_markers.get(transactional_id)
        if pending is None or self._has_pending_markers_to_write(pending.txn_metadata):
            return
        with self._pending_lock:
            # only the caller that removes it writes the completion
            if self._transactions_with_pending_markers.get(transactional_id) is not pending:
                return
            del self._transactions_with_pending_markers[transactional_id]
        self._write_txn_completion(pending)

    def _try_append_to_log(self, txn_log_append: PendingCompleteTxn) -> None:
        def append_callback(error: Errors) -> None:
            if error is Errors.NONE:
                self.logger.debug("Completed transaction for %s with coordinator epoch %d, final state after commit: "
                                  "%s", txn_log_append.transactional_id,
                                  txn_log_append.coordinator_epoch, txn_log_append.txn_metadata.state)
            elif error is Errors.NOT_COORDINATOR:
                self.logger.info("No longer the coordinator for transactionalId: %s while trying to append to "
                                 "transaction log, skip writing to transaction log",
                                 txn_log_append.transactional_id)
            elif error is Errors.COORDINATOR_NOT_AVAILABLE:
                self.logger.info("Not available to append %s: possible causes include UNKNOWN_TOPIC_OR_PARTITION, "
                                 "NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND and REQUEST_TIMED_OUT; retry "
                                 "appending", txn_log_append)
                with self._retry_lock:
                    self._txn_log_append_retry_queue.append(txn_log_append)
                self.wakeup()
            elif error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                self.logger.info("Coordinator is loading the partition %d and hence cannot complete append of %s; skip "
                                 "writing to transaction log as the loading process should complete it",
                                 self.txn_state_manager.partition_for(txn_log_append.transactional_id), txn_log_append)
            else:
                message = (f"Unexpected error {error.exception_name} while appending to transaction log for "
                           f"{txn_log_append.transactional_id}")
                self.logger.critical("%s", message)
                raise RuntimeError(message)

        self.txn_state_manager.append_transaction_to_log(
            txn_log_append.transactional_id, txn_log_append.coordinator_epoch, txn_log_append.new_metadata,
            append_callback, lambda e: e is Errors.COORDINATOR_NOT_AVAILABLE)

    def add_txn_markers_to_broker_queue(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                        result: bool, coordinator_epoch: int,
                                        topic_partitions: Iterable[TopicPartition],
                                        write_local_now: bool = False) -> None:
        txn_topic_partition = self.txn_state_manager.partition_for(transactional_id)
        partitions_by_destination: Dict[Optional[Node], List[TopicPartition]] = {}
        for tp in topic_partitions:
            node = self.metadata_cache.get_partition_leader_endpoint(tp.topic, tp.partition,
                                                                     self.inter_broker_listener_name)
            partitions_by_destination.setdefault(node, []).append(tp)

        for broker, partitions in partitions_by_destination.items():
            if broker is not None:
                marker = TxnMarkerEntry(producer_id, producer_epoch, coordinator_epoch, result, tuple(partitions))
                txn_id_and_marker = TxnIdAndMarkerEntry(transactional_id, marker)
                if broker.id < 0 or broker.is_empty():
                    # the leader is known but not reachable now: looked up again on every round
                    self.markers_queue_for_unknown_broker.add_markers(txn_topic_partition, txn_id_and_marker)
                    if threading.current_thread() is not self:
                        # (the sender thread's own round puts them back for its next round)
                        self.wakeup()
                elif write_local_now and broker.id == self.broker_id and self.local_marker_writer is not None:
                    self._write_local_markers_now(txn_id_and_marker)
                else:
                    self.add_markers_for_broker(broker, txn_topic_partition, txn_id_and_marker)
                continue
            current = self.txn_state_manager.get_transaction_state(transactional_id)
            if isinstance(current, Errors):
                self.logger.info("Encountered %s trying to fetch transaction metadata for %s with coordinator epoch "
                                 "%d; cancel sending markers to its partition leaders", current.name,
                                 transactional_id, coordinator_epoch)
                with self._pending_lock:
                    self._transactions_with_pending_markers.pop(transactional_id, None)
            elif current is None:
                message = (f"The coordinator still owns the transaction partition for {transactional_id}, but "
                           "there is no metadata in the cache; this is not expected")
                self.logger.critical("%s", message)
                raise RuntimeError(message)
            elif current.coordinator_epoch != coordinator_epoch:
                self.logger.info("The cached metadata has changed to %s (old coordinator epoch is %d) since preparing to "
                                 "send markers; cancel sending markers to its partition leaders", current,
                                 coordinator_epoch)
                with self._pending_lock:
                    self._transactions_with_pending_markers.pop(transactional_id, None)
            else:
                # the cluster no longer knows these partitions: likely deleted, no marker needed
                self.logger.info("Couldn't find leader endpoint for partitions %s while trying to send transaction "
                                 "markers for %s, these partitions are likely deleted already and hence can be skipped",
                                 [str(p) for p in partitions], transactional_id)
                metadata = current.transaction_metadata
                with metadata.lock:
                    for tp in partitions:
                        metadata.remove_partition(tp)
                self.maybe_write_txn_completion(transactional_id)

    def _write_local_markers_now(self, entry: TxnIdAndMarkerEntry) -> None:
        handler = self.completion_handler(self.broker_id, [entry])

        def on_complete(errors) -> None:
            try:
                handler.on_complete(errors)
            except Exception:  # noqa: BLE001 - as the sender thread does with an answer
                self.logger.exception("Error handling the local markers of %s", entry.txn_id)

        try:
            self.local_marker_writer([entry.txn_marker_entry], on_complete)
        except Exception:  # noqa: BLE001 - as a lost request: queued for the sender thread
            self.logger.exception("Writing transaction markers locally failed")
            handler.on_disconnected()

    def remove_markers_for_txn_topic_partition(self, txn_topic_partition_id: int) -> None:
        for entry in self.markers_queue_for_unknown_broker.remove_markers_for_txn_topic_partition(
                txn_topic_partition_id):
            self.remove_markers_for_txn_id(entry.txn_id)
        with self._lock:
            queues = list(self._markers_queue_per_broker.values())
        for queue in queues:
            for entry in queue.remove_markers_for_txn_topic_partition(txn_topic_partition_id):
                self.remove_markers_for_txn_id(entry.txn_id)

    def remove_markers_for_txn_id(self, transactional_id: str) -> None:
        with self._pending_lock:
            self._transactions_with_pending_markers.pop(transactional_id, None)

    # ------------------------------------------------------------------ lifecycle

    def initiate_shutdown(self) -> bool:
        if not super().initiate_shutdown():
            return False
        self._wakeup.set()
        return True

    def shutdown(self) -> None:
        super().shutdown()
        with self._lock:
            senders = list(self._senders.values())
            self._senders.clear()
        for sender in senders:
            sender.initiate_shutdown()
        for sender in senders:
            sender.shutdown()
        with self._lock:
            self._markers_queue_per_broker.clear()


__all__ = [
    "PendingCompleteTxn", "TransactionMarkerChannelManager", "TxnIdAndMarkerEntry", "TxnMarkerEntry",
    "TxnMarkerQueue", "WRITE_TXN_MARKERS_REQUEST_VERSION",
]
