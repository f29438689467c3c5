"""A TransactionCoordinator over a real storage stack (LogManager, ReplicaManager on a tmp dir)
with a manual clock.

The TransactionStateManager and the coordinator's own tasks (timeouts, id expiry) run on a
``MockScheduler``: loads, unloads and periodic tasks run synchronously when the clock moves.
Every change really goes to __transaction_state through ReplicaManager.append_records and is
read back from the log on election. The partitions a transaction writes to are not hosted by
any broker of this one-broker stack, so the marker sender finds no leader for them and
completes the transaction without sending anything (what it does for deleted partitions);
markers written to real partition leaders are exercised by the integration tests.
"""
from __future__ import annotations

import itertools
import threading
from typing import Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction.transaction_coordinator import ProducerIdAndEpoch, TransactionCoordinator
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.core.coordinator.transaction.transaction_marker_channel_manager import TransactionMarkerChannelManager
from kafka_py.core.coordinator.transaction.transaction_state_manager import TransactionConfig, TransactionStateManager
from kafka_py.core.utils.kafka_scheduler import MockScheduler
from kafka_py.clients.common.utils.time import MockTime
from tests.coordinator.coordinator_harness import InternalTopicHarness, Result


class SequentialProducerIds:
    """Producer ids without ZooKeeper (the ZooKeeper-backed ProducerIdManager has its own tests)."""

    def __init__(self, start: int = 1000) -> None:
        self._ids = itertools.count(start)
        self._lock = threading.Lock()

    def generate_producer_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def shutdown(self) -> None:
        pass


class TxnCoordinatorHarness(InternalTopicHarness):
    """One broker's TransactionCoordinator over real logs in ``log_dir``."""

    internal_topic = TRANSACTION_STATE_TOPIC_NAME

    def __init__(self, log_dir: str, num_partitions: int = 1, time: Optional[MockTime] = None,
                 **overrides: str) -> None:
        super().__init__(log_dir, num_partitions, time, {
            "transaction.state.log.num.partitions": str(num_partitions),
            "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1"},
            overrides, "txn-coordinator-test-scheduler-")
        self.mock_scheduler = MockScheduler(self.time)
        txn_config = TransactionConfig.from_kafka_config(self.config)
        self.state_manager = TransactionStateManager(0, self.mock_scheduler, self.replica_manager, txn_config,
                                                     self.time)
        self.channel_manager = TransactionMarkerChannelManager(0, self.config, self.metadata_cache,
                                                               self.state_manager, self.time)
        self.producer_ids = SequentialProducerIds()
        self.coordinator = TransactionCoordinator(0, txn_config, self.mock_scheduler, self.producer_ids,
                                                  self.state_manager, self.channel_manager, self.time)
        self.coordinator.startup(lambda: num_partitions)

    # ------------------------------------------------------------------ partitions

    def resign(self, *partitions: int, epoch: int = 2) -> None:
        """What a LeaderAndIsr making this broker a follower triggers."""
        partitions = partitions or tuple(range(self.num_partitions))
        for p in partitions:
            self.coordinator.on_resignation(p, epoch)

    def reelect(self, *partitions: int, epoch: int = 3) -> None:
        """What a LeaderAndIsr making this broker the leader again triggers (the log stays)."""
        partitions = partitions or tuple(range(self.num_partitions))
        for p in partitions:
            self.coordinator.on_election(p, epoch)

    def txn_log(self, transactional_id: str):
        return self.replica_manager.get_log(
            TopicPartition(TRANSACTION_STATE_TOPIC_NAME, self.coordinator.partition_for(transactional_id)))

    def tick(self, ms: int) -> None:
        self.time.sleep(ms)
        self.mock_scheduler.tick()

    # ------------------------------------------------------------------ requests

    def init_producer_id(self, transactional_id: Optional[str], timeout_ms: int = 60_000,
                         expected: Optional[tuple[int, int]] = None):
        result = Result()
        self.coordinator.handle_init_producer_id(
            transactional_id, timeout_ms, None if expected is None else ProducerIdAndEpoch(*expected), result)
        return result.value

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int, *partitions: TopicPartition):
        result = Result()
        self.coordinator.handle_add_partitions_to_transaction(transactional_id, producer_id, epoch, partitions,
                                                              result)
        return result.value

    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool):
        result = Result()
        self.coordinator.handle_end_transaction(transactional_id, producer_id, epoch, commit, result)
        return result.value

    def metadata(self, transactional_id: str):
        current = self.state_manager.get_transaction_state(transactional_id)
        return None if current is None else current.transaction_metadata
