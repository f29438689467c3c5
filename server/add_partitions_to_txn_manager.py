"""Port of core/src/main/scala/kafka/server/AddPartitionsToTxnManager.scala (Kafka 3.6+, KIP-890
part 1), which Kafka 2.8.2 does not have: a partition leader asks the transaction coordinator
whether partitions are part of a producer's ongoing transaction before it takes the
transaction's first batch on them.

Kafka 2.8 appends a transactional batch to any partition the producer writes to. If the
partition was never added to the transaction (AddPartitionsToTxn), the coordinator writes no
marker there when the transaction ends, and the partition's last stable offset stays at that
batch for good: every ``read_committed`` consumer of the partition stops before it. So the
Produce handler (``TxnRequestHandlers.verify_transactional_produce``) verifies a partition
first when the producer has no transaction open on it at the batch's epoch (a partition's
producer state, ``Log.maybe_start_transaction_verification``; later batches of the same
transaction need no verification), and this class asks the coordinator:

* the coordinator is found as clients find it: the leader of partition
  ``abs(hashCode(id)) % partitions`` of ``__transaction_state`` in the metadata cache, at its
  address on the inter-broker listener; none (no leader, or the topic not there yet):
  COORDINATOR_NOT_AVAILABLE;
* when this broker's own transaction coordinator has the id (it leads that partition), it is
  asked directly, on the calling thread, without a request;
* otherwise the question goes to a sender thread of the destination broker: one
  DescribeTransactions request (key 65, Kafka 3.0's, KIP-664) at a time per broker, over one
  connection of the inter-broker listener (its TLS and SASL,
  kafka_py/clients/network_client.py), carrying every transactional id waiting for that
  broker; the callbacks of the produce requests waiting on an id are called on that thread
  when the answer arrives. A lost connection or a request timeout answers them
  NETWORK_EXCEPTION.

The wire form. Kafka 3.6 sends AddPartitionsToTxn v4 with ``verifyOnly`` set (a broker-only
batched form); Kafka 2.8's AddPartitionsToTxn (v0-3) has no such flag, and giving it a v4
would change what clients negotiate. DescribeTransactions changes nothing for clients: it
reads the id's producer id, epoch, state and the partitions of its ongoing transaction, and
``verification_errors`` decides here what the coordinator decides in Kafka 3.6
(``TransactionCoordinator.handleVerifyPartitionsInTransaction``).

Errors, for the Produce answer (``produce_error``, Kafka's mapping in
``ReplicaManager.handleProduceAppend``): a partition not in the ongoing transaction, or a
producer id the coordinator does not have for the id, is INVALID_TXN_STATE; an epoch older
than the coordinator's INVALID_PRODUCER_EPOCH; an id the coordinator does not know
INVALID_PRODUCER_ID_MAPPING; anything that says the answer cannot be had now (the
coordinator moving, loading, unreachable, or the transaction completing) is
NOT_ENOUGH_REPLICAS, which every producer retries without refreshing its metadata. Nothing is
appended in any of these cases.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from kafka_py.clients.network_client import RECONNECT_BACKOFF_MS, NetworkClient
from kafka_py.clients.network_client_utils import NodeConnection
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction.transaction_coordinator import TransactionDescription
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.network.channel_builders import inter_broker_client_channel_builder
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

DESCRIBE_TRANSACTIONS_VERSION = 0
# An idle sender sleeps until a verification arrives (it wakes it); this only bounds a lost wake-up.
IDLE_WAIT_MS = 1000

VERIFICATION_FAILURE_RATE_METRIC_NAME = "VerificationFailureRate"
VERIFICATION_TIME_MS_METRIC_NAME = "VerificationTimeMs"

AppendCallback = Callable[[Dict[TopicPartition, Errors]], None]

_ONGOING = "Ongoing"
_COMPLETING = frozenset({"PrepareCommit", "PrepareAbort"})
# The coordinator cannot answer now: the producer is told to retry (NOT_ENOUGH_REPLICAS).
_RETRIABLE = frozenset({Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION, Errors.COORDINATOR_LOAD_IN_PROGRESS,
                        Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT})


def verification_errors(description: TransactionDescription, producer_id: int, producer_epoch: int,
                        partitions: Iterable[TopicPartition]) -> Dict[TopicPartition, Errors]:
    """The partitions of ``partitions`` that the coordinator's description of the id does not let
    the producer write to, with why; a partition not in the result is verified."""
    error = description.error
    if error is not Errors.NONE:
        if error is Errors.TRANSACTIONAL_ID_NOT_FOUND:
            error = Errors.INVALID_PRODUCER_ID_MAPPING
        elif error in (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED):
            # the broker itself may not ask: the write cannot be shown to be in the transaction
            error = Errors.INVALID_TXN_STATE
        return {tp: error for tp in partitions}
    if description.producer_id != producer_id:
        error = Errors.INVALID_TXN_STATE
    elif producer_epoch < description.producer_epoch:
        error = Errors.INVALID_PRODUCER_EPOCH
    elif producer_epoch > description.producer_epoch:
        error = Errors.INVALID_TXN_STATE
    elif description.state in _COMPLETING:
        error = Errors.CONCURRENT_TRANSACTIONS
    elif description.state != _ONGOING:
        error = Errors.INVALID_TXN_STATE
    else:
        ongoing = description.topic_partitions
        return {tp: Errors.INVALID_TXN_STATE for tp in partitions if tp not in ongoing}
    return {tp: error for tp in partitions}


def produce_error(error: Errors) -> Tuple[Errors, Optional[str]]:
    """A verification error as the Produce answer gives it, with its message."""
    if error is Errors.INVALID_TXN_STATE:
        return error, "Partition was not added to the transaction"
    if error in _RETRIABLE:
        # retried by every producer (old ones do not retry all of these) without a metadata refresh
        return Errors.NOT_ENOUGH_REPLICAS, ("Unable to verify the partition has been added to the transaction. "
                                            f"Underlying error: {error.name}")
    return error, None


def description_from_response(state) -> TransactionDescription:
    """A DescribeTransactionsResponse's TransactionState as a TransactionDescription."""
    error = Errors.for_code(int(state.error_code))
    if error is not Errors.NONE:
        return TransactionDescription(str(state.transactional_id), error)
    return TransactionDescription(
        str(state.transactional_id), error, str(state.transaction_state), 0, -1, int(state.producer_id),
        int(state.producer_epoch),
        frozenset(TopicPartition(str(t.topic), int(p)) for t in state.topics for p in t.partitions))


@dataclass(slots=True)
class _PendingVerification:
    producer_id: int
    producer_epoch: int
    partitions: Tuple[TopicPartition, ...]
    callback: AppendCallback
    start_ms: int


class _VerificationSender(ShutdownableThread):
    """The DescribeTransactions requests to one broker, one in flight."""

    def __init__(self, manager: "AddPartitionsToTxnManager", node: Node) -> None:
        super().__init__(name=f"AddPartitionsToTxnSenderThread-{manager.broker_id}-to-{node.id}", daemon=True)
        self.manager = manager
        self.node = node
        self._cond = threading.Condition()
        self._pending: Dict[str, List[_PendingVerification]] = {}
        self._connection = NodeConnection(manager.new_network_client)

    def add(self, node: Node, transactional_id: str, pending: _PendingVerification) -> bool:
        """Queue a verification; False once the sender is shutting down (nothing queued)."""
        with self._cond:
            if not self.is_running:
                return False
            self.node = node  # the broker may have come back at another address
            self._pending.setdefault(transactional_id, []).append(pending)
            self._cond.notify()
        return True

    def initiate_shutdown(self) -> bool:
        if not super().initiate_shutdown():
            return False
        with self._cond:
            self._cond.notify()
        self._connection.initiate_close()
        return True

    def do_work(self) -> None:
        with self._cond:
            if not self._pending and self.is_running:
                self._cond.wait(IDLE_WAIT_MS / 1000.0)
            batch, self._pending = self._pending, {}
            node = self.node
        if not batch:
            return
        if not self.is_running:
            self._answer_all(batch, Errors.NETWORK_EXCEPTION)
            return
        request = self.manager.describe_transactions_request(list(batch))
        try:
            response = self._connection.send_and_receive(node, ApiKeys.DESCRIBE_TRANSACTIONS,
                                                         DESCRIBE_TRANSACTIONS_VERSION, request,
                                                         self.manager.request_timeout_ms)
        except Exception as e:  # noqa: BLE001 - a lost connection: every waiting produce is told to retry
            self.manager.logger.warning("DescribeTransactions to broker %d failed: %s", node.id, e)
            self._answer_all(batch, Errors.NETWORK_EXCEPTION)
            if self.is_running:
                self.pause(RECONNECT_BACKOFF_MS)
            return
        answered = {str(state.transactional_id): description_from_response(state)
                    for state in response.transaction_states}
        for transactional_id, waiting in batch.items():
            description = answered.get(transactional_id)
            if description is None:
                description = TransactionDescription(transactional_id, Errors.UNKNOWN_SERVER_ERROR)
            for pending in waiting:
                self.manager.complete(pending, verification_errors(description, pending.producer_id,
                                                                   pending.producer_epoch, pending.partitions))

    def _answer_all(self, batch: Mapping[str, List[_PendingVerification]], error: Errors) -> None:
        for waiting in batch.values():
            for pending in waiting:
                self.manager.complete(pending, {tp: error for tp in pending.partitions})

    def drain(self) -> None:
        """After the thread has stopped: answer what is still queued, so no produce waits for ever."""
        with self._cond:
            batch, self._pending = self._pending, {}
        self._answer_all(batch, Errors.NETWORK_EXCEPTION)
        self._connection.close()


class AddPartitionsToTxnManager(KafkaMetricsGroup):
    """Verifies with the transaction coordinator that partitions are in a producer's transaction."""

    def __init__(self, config, metadata_cache, txn_coordinator, time: Time = Time.SYSTEM,
                 network_client_factory: Optional[Callable[[Node], NetworkClient]] = None) -> None:
        self.broker_id = config.broker_id
        self.config = config
        self.metadata_cache = metadata_cache
        self.txn_coordinator = txn_coordinator
        self.time = time
        self.logger = IdentLogger(logger, f"[AddPartitionsToTxnManager broker={self.broker_id}] ")
        self.inter_broker_listener_name = config.inter_broker_listener_name
        self.request_timeout_ms = config.request_timeout_ms
        self._network_client_factory = network_client_factory
        self._lock = threading.Lock()
        self._senders: Dict[int, _VerificationSender] = {}
        self._shut_down = False
        self.verification_failure_rate = self.new_meter(VERIFICATION_FAILURE_RATE_METRIC_NAME, "failures")
        self.verification_time_ms = self.new_histogram(VERIFICATION_TIME_MS_METRIC_NAME)

    # ------------------------------------------------------------------ connections

    def new_network_client(self, node: Node) -> NetworkClient:
        if self._network_client_factory is not None:
            return self._network_client_factory(node)
        return NetworkClient(node, f"broker-{self.broker_id}-txn-verification", self.request_timeout_ms,
                             socket_receive_buffer=self.config.socket_receive_buffer_bytes, time=self.time,
                             channel_builder=inter_broker_client_channel_builder(self.config))

    @staticmethod
    def describe_transactions_request(transactional_ids: Sequence[str]):
        return request_schema(ApiKeys.DESCRIBE_TRANSACTIONS, DESCRIBE_TRANSACTIONS_VERSION)(
            transactional_ids=tuple(transactional_ids))

    def coordinator_node(self, transactional_id: str) -> Optional[Node]:
        """The id's coordinator on the inter-broker listener, None when it has no reachable leader."""
        partition = self.txn_coordinator.partition_for(transactional_id)
        node = self.metadata_cache.get_partition_leader_endpoint(TRANSACTION_STATE_TOPIC_NAME, partition,
                                                                 self.inter_broker_listener_name)
        if node is None or node.id < 0 or node.is_empty():
            return None
        return node

    # ------------------------------------------------------------------ verification

    def verify_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                           partitions: Sequence[TopicPartition], callback: AppendCallback) -> None:
        """Call ``callback`` once with the partitions that are not verified and their errors (an
        empty dict: all verified): at once when this broker coordinates the id or nobody can be
        asked, else from the destination's sender thread when the coordinator answers."""
        pending = _PendingVerification(producer_id, producer_epoch, tuple(partitions), callback,
                                       self.time.milliseconds())
        local = self.txn_coordinator.handle_describe_transactions(transactional_id)
        if local.error not in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE):
            # this broker coordinates the id (or is loading it): no request to itself
            self.complete(pending, verification_errors(local, producer_id, producer_epoch, partitions))
            return
        node = self.coordinator_node(transactional_id)
        if node is None:
            self.complete(pending, {tp: Errors.COORDINATOR_NOT_AVAILABLE for tp in partitions})
            return
        if node.id == self.broker_id:
            # the metadata names this broker, whose coordinator does not have the partition (yet)
            self.complete(pending, {tp: local.error for tp in partitions})
            return
        sender = self._sender_for(node)
        if sender is None or not sender.add(node, transactional_id, pending):
            self.complete(pending, {tp: Errors.NETWORK_EXCEPTION for tp in partitions})

    def _sender_for(self, node: Node) -> Optional[_VerificationSender]:
        with self._lock:
            if self._shut_down:
                return None
            sender = self._senders.get(node.id)
            if sender is None:
                sender = self._senders[node.id] = _VerificationSender(self, node)
                sender.start()
            return sender

    def complete(self, pending: _PendingVerification, errors: Dict[TopicPartition, Errors]) -> None:
        if errors:
            self.verification_failure_rate.mark(len(errors))
        self.verification_time_ms.update(self.time.milliseconds() - pending.start_ms)
        try:
            pending.callback(errors)
        except Exception:  # noqa: BLE001 - the other waiting produce requests must still be answered
            self.logger.exception("Error completing a transaction verification")

    # ------------------------------------------------------------------ lifecycle

    def shutdown(self) -> None:
        with self._lock:
            self._shut_down = True
            senders = list(self._senders.values())
            self._senders.clear()
        for sender in senders:
            sender.initiate_shutdown()
        for sender in senders:
            sender.await_shutdown()
            sender.drain()
        self.remove_metric(VERIFICATION_FAILURE_RATE_METRIC_NAME)
        self.remove_metric(VERIFICATION_TIME_MS_METRIC_NAME)
