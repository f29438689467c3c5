"""Port of core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala (Kafka 2.8.2).

The transaction coordinator's store: the metadata of the transactional ids this broker
coordinates, made durable in the compacted internal topic __transaction_state.

* a transactional id belongs to partition ``abs(hashCode(id)) % transaction.state.log.num.partitions``
  (Java's String.hashCode, as every Kafka client and broker computes it); this broker
  coordinates the ids of the __transaction_state partitions it leads;
* every change of an id's metadata is one record (transaction_log.py), appended with acks=-1
  as the coordinator; the cached metadata changes only once the record is replicated
  (``append_transaction_to_log`` then calls ``TransactionMetadata.complete_transition_to``);
* on becoming leader of a partition the manager reads it from the start on its scheduler
  (last value per key wins, a tombstone removes), answering COORDINATOR_LOAD_IN_PROGRESS for its
  ids meanwhile; transactions found in PrepareCommit/PrepareAbort get their markers sent again
  (the coordinator died between EndTxn and the last marker). On losing the leadership the
  manager drops the partition's ids. The leader epoch of the partition is the *coordinator
  epoch*, written into every marker so that partition leaders fence an older coordinator;
* ``timed_out_transactions`` lists Ongoing transactions older than their timeout (the
  coordinator aborts them), and every ``transaction.remove.expired.transaction.cleanup.interval.ms``
  ids idle for ``transactional.id.expiration.ms`` in Empty/Complete* get a tombstone.

Lock order, as Kafka's: ``state_lock`` (read or write) before any metadata's lock; never the
state lock's read side while holding a metadata lock; no ReplicaManager append while holding
a metadata lock.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple, Union

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata_manager import java_string_hash_code
from kafka_py.core.coordinator.transaction import transaction_log
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.core.coordinator.transaction.transaction_metadata import (
    Dead,
    Ongoing,
    PrepareAbort,
    PrepareCommit,
    TransactionMetadata,
    TxnTransitMetadata,
)
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.default_record_batch import SimpleRecord
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.kafka_scheduler import Scheduler
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.reentrant_read_write_lock import ReentrantReadWriteLock
from kafka_py.clients.common.utils.time import Time
from kafka_py.clients.common.utils.utils import utils_abs

logger = logging.getLogger(__name__)

DEFAULT_TRANSACTIONS_MAX_TIMEOUT_MS = 15 * 60 * 1000
DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS = 7 * 24 * 3600 * 1000
DEFAULT_ABORT_TIMED_OUT_TRANSACTIONS_INTERVAL_MS = 10 * 1000
DEFAULT_REMOVE_EXPIRED_TRANSACTIONAL_IDS_INTERVAL_MS = 3600 * 1000
DEFAULT_REQUEST_TIMEOUT_MS = 30000
# room for one tombstone batch of expired ids (Kafka sizes it by the topic's max.message.bytes)
_TOMBSTONE_BATCH_BYTES = 16384
# Kafka's TransactionStateManager.MetricsGroup and LoadTimeSensor
METRICS_GROUP = "transaction-coordinator-metrics"
LOAD_TIME_SENSOR = "TransactionsPartitionLoadTime"


def _coordinator_metric_name(attribute: str):
    """``kafka.server:type=transaction-coordinator-metrics`` / ``attribute`` (a Kafka-metrics
    attribute, as the JmxReporter names it)."""
    from kafka_py.core.metrics.yammer import MetricName

    return MetricName("kafka.server", METRICS_GROUP, "", None, f"kafka.server:type={METRICS_GROUP}", (),
                      attribute=attribute)


class TransactionResult:
    """org.apache.kafka.common.requests.TransactionResult: the outcome a marker carries."""

    ABORT = False
    COMMIT = True


@dataclass(frozen=True)
class TransactionConfig:
    transactional_id_expiration_ms: int = DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS
    transaction_max_timeout_ms: int = DEFAULT_TRANSACTIONS_MAX_TIMEOUT_MS
    transaction_log_num_partitions: int = transaction_log.DEFAULT_NUM_PARTITIONS
    transaction_log_replication_factor: int = transaction_log.DEFAULT_REPLICATION_FACTOR
    transaction_log_segment_bytes: int = transaction_log.DEFAULT_SEGMENT_BYTES
    transaction_log_load_buffer_size: int = transaction_log.DEFAULT_LOAD_BUFFER_SIZE
    transaction_log_min_insync_replicas: int = transaction_log.DEFAULT_MIN_IN_SYNC_REPLICAS
    abort_timed_out_transactions_interval_ms: int = DEFAULT_ABORT_TIMED_OUT_TRANSACTIONS_INTERVAL_MS
    remove_expired_transactional_ids_interval_ms: int = DEFAULT_REMOVE_EXPIRED_TRANSACTIONAL_IDS_INTERVAL_MS
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS

    @classmethod
    def from_kafka_config(cls, config) -> "TransactionConfig":
        return cls(
            transactional_id_expiration_ms=config.transactional_id_expiration_ms,
            transaction_max_timeout_ms=config.transaction_max_timeout_ms,
            transaction_log_num_partitions=config.transaction_topic_partitions,
            transaction_log_replication_factor=config.transaction_topic_replication_factor,
            transaction_log_segment_bytes=config.transaction_topic_segment_bytes,
            transaction_log_load_buffer_size=config.transactions_load_buffer_size,
            transaction_log_min_insync_replicas=config.transaction_topic_min_isr,
            abort_timed_out_transactions_interval_ms=(
                config.transaction_abort_timed_out_transaction_cleanup_interval_ms),
            remove_expired_transactional_ids_interval_ms=(
                config.transaction_remove_expired_transactional_id_cleanup_interval_ms),
            request_timeout_ms=config.request_timeout_ms,
        )


@dataclass(frozen=True, slots=True)
class TransactionalIdAndProducerIdEpoch:
    transactional_id: str
    producer_id: int
    producer_epoch: int

    def __str__(self) -> str:
        return (f"(transactionalId={self.transactional_id}, producerId={self.producer_id}, "
                f"producerEpoch={self.producer_epoch})")


@dataclass(frozen=True, slots=True)
class TransactionPartitionAndLeaderEpoch:
    txn_partition_id: int
    coordinator_epoch: int


@dataclass(frozen=True, slots=True)
class CoordinatorEpochAndTxnMetadata:
    coordinator_epoch: int
    transaction_metadata: TransactionMetadata


@dataclass(frozen=True, slots=True)
class TransactionalIdCoordinatorEpochAndMetadata:
    transactional_id: str
    coordinator_epoch: int
    transit_metadata: TxnTransitMetadata


@dataclass
class TxnMetadataCacheEntry:
    """The ids of one __transaction_state partition, loaded at ``coordinator_epoch``."""

    coordinator_epoch: int
    metadata_per_transactional_id: Dict[str, TransactionMetadata] = field(default_factory=dict)
    # guards the map's changes (readers of the cache hold only the state lock's read side)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self, transactional_id: str) -> Optional[TransactionMetadata]:
        with self.lock:
            return self.metadata_per_transactional_id.get(transactional_id)

    def put_if_not_exists(self, transactional_id: str, metadata: TransactionMetadata) -> TransactionMetadata:
        with self.lock:
            return self.metadata_per_transactional_id.setdefault(transactional_id, metadata)

    def remove(self, transactional_id: str) -> None:
        with self.lock:
            self.metadata_per_transactional_id.pop(transactional_id, None)

    def values(self) -> List[TransactionMetadata]:
        with self.lock:
            return list(self.metadata_per_transactional_id.values())

    def __str__(self) -> str:
        return (f"TxnMetadataCacheEntry(coordinatorEpoch={self.coordinator_epoch}, "
                f"numTransactionalEntries={len(self.metadata_per_transactional_id)})")


SendTxnMarkersCallback = Callable[[int, bool, TransactionMetadata, TxnTransitMetadata], None]
GetResult = Union[Errors, Optional[CoordinatorEpochAndTxnMetadata]]


class TransactionStateManager:
    """The transactional ids of the __transaction_state partitions this broker leads, and that log."""

    def __init__(self, broker_id: int, scheduler: Scheduler, replica_manager, config: TransactionConfig,
                 time: Time = Time.SYSTEM) -> None:
        self.broker_id = broker_id
        self.scheduler = scheduler
        self.replica_manager = replica_manager
        self.config = config
        self.time = time
        self.logger = IdentLogger(logger, f"[Transaction State Manager {broker_id}]: ")
        self._shutting_down = threading.Event()
        self.state_lock = ReentrantReadWriteLock()
        # guarded by state_lock
        self.loading_partitions: Set[TransactionPartitionAndLeaderEpoch] = set()
        self.transaction_metadata_cache: Dict[int, TxnMetadataCacheEntry] = {}
        self._retrieve_transaction_topic_partition_count: Callable[[], int] = \
            lambda: config.transaction_log_num_partitions
        self.transaction_topic_partition_count = config.transaction_log_num_partitions
        # the last load of each partition, for the load-time metrics Kafka keeps (max/avg over 30 s)
        self.partition_load_times_ms: List[int] = []
        self._register_load_time_metrics()

    # ------------------------------------------------------------------ metrics

    def _register_load_time_metrics(self) -> None:
        """Kafka's PartitionLoadTime sensor: ``partition-load-time-max`` and ``-avg`` of the loads
        of the last 30 to 60 s (two 30 s samples), attributes of the MBean
        ``kafka.server:type=transaction-coordinator-metrics``. The newest manager's gauges replace
        an earlier one's (one coordinator per broker process)."""
        from kafka_py.clients.common.sensor import Avg, KafkaMetric, Max, MetricConfig, Sensor
        from kafka_py.core.metrics.kafka_metrics_group import default_registry

        self.partition_load_sensor = Sensor(LOAD_TIME_SENSOR)
        self._load_time_gauges = []
        registry = default_registry()
        for attribute, stat in (("partition-load-time-max", Max()), ("partition-load-time-avg", Avg())):
            metric = self.partition_load_sensor.add(KafkaMetric(attribute, stat, MetricConfig()))
            name = _coordinator_metric_name(attribute)
            registry.remove_metric(name)
            gauge = registry.new_gauge(name, lambda m=metric: self.partition_load_sensor.measure(
                m, self.time.milliseconds()))
            self._load_time_gauges.append((name, gauge))

    def remove_load_time_metrics(self) -> None:
        from kafka_py.core.metrics.kafka_metrics_group import default_registry

        registry = default_registry()
        for name, gauge in self._load_time_gauges:
            if registry.get(name) is gauge:
                registry.remove_metric(name)
        self._load_time_gauges = []

    # ------------------------------------------------------------------ lifecycle

    def startup(self, retrieve_transaction_topic_partition_count: Callable[[], int],
                enable_transactional_id_expiration: bool = True) -> None:
        self._retrieve_transaction_topic_partition_count = retrieve_transaction_topic_partition_count
        self.transaction_topic_partition_count = int(retrieve_transaction_topic_partition_count())
        if enable_transactional_id_expiration:
            self.enable_transactional_id_expiration()

    def shutdown(self) -> None:
        self._shutting_down.set()
        with self.state_lock.write():
            self.loading_partitions.clear()
            self.transaction_metadata_cache.clear()
        self.remove_load_time_metrics()
        self.logger.info("Shutdown complete")

    def enable_transactional_id_expiration(self) -> None:
        interval = self.config.remove_expired_transactional_ids_interval_ms
        self.scheduler.schedule("transactionalId-expiration", self.remove_expired_transactional_ids,
                                delay_ms=interval, period_ms=interval)

    # ------------------------------------------------------------------ ownership

    def partition_for(self, transactional_id: str) -> int:
        return utils_abs(java_string_hash_code(transactional_id)) % self.transaction_topic_partition_count

    def add_loading_partition(self, partition_id: int, coordinator_epoch: int) -> None:
        with self.state_lock.write():
            self.loading_partitions.add(TransactionPartitionAndLeaderEpoch(partition_id, coordinator_epoch))

    def is_loading(self) -> bool:
        with self.state_lock.read():
            return bool(self.loading_partitions)

    def owned_partitions(self) -> Set[int]:
        with self.state_lock.read():
            return set(self.transaction_metadata_cache)

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        return 0 < txn_timeout_ms <= self.config.transaction_max_timeout_ms

    def transaction_topic_configs(self) -> Dict[str, str]:
        """The configs __transaction_state is created with: compacted, uncompressed, no unclean
        elections, its own min ISR and segment size."""
        return {
            "unclean.leader.election.enable": "false",
            "compression.type": "uncompressed",
            "cleanup.policy": "compact",
            "min.insync.replicas": str(self.config.transaction_log_min_insync_replicas),
            "segment.bytes": str(self.config.transaction_log_segment_bytes),
        }

    # ------------------------------------------------------------------ the cache

    def get_transaction_state(self, transactional_id: str) -> GetResult:
        """The id's metadata and coordinator epoch, None if unknown, or an error (NOT_COORDINATOR,
        COORDINATOR_LOAD_IN_PROGRESS)."""
        return self._get_and_maybe_add_transaction_state(transactional_id, None)

    def put_transaction_state_if_not_exists(self, txn_metadata: TransactionMetadata
                                            ) -> Union[Errors, CoordinatorEpochAndTxnMetadata]:
        result = self._get_and_maybe_add_transaction_state(txn_metadata.transactional_id, txn_metadata)
        if result is None:
            raise RuntimeError(f"Unexpected empty transaction metadata returned while putting {txn_metadata}")
        return result

    def _get_and_maybe_add_transaction_state(self, transactional_id: str,
                                             created: Optional[TransactionMetadata]) -> GetResult:
        with self.state_lock.read():
            partition_id = self.partition_for(transactional_id)
            if any(p.txn_partition_id == partition_id for p in self.loading_partitions):
                return Errors.COORDINATOR_LOAD_IN_PROGRESS
            entry = self.transaction_metadata_cache.get(partition_id)
            if entry is None:
                return Errors.NOT_COORDINATOR
            metadata = entry.get(transactional_id)
            if metadata is None and created is not None:
                metadata = entry.put_if_not_exists(transactional_id, created)
            if metadata is None:
                return None
            return CoordinatorEpochAndTxnMetadata(entry.coordinator_epoch, metadata)

    def timed_out_transactions(self) -> List[TransactionalIdAndProducerIdEpoch]:
        """Ongoing transactions open for longer than their timeout (a best-effort look, without
        the metadata locks: the abort takes them and checks again)."""
        now = self.time.milliseconds()
        result = []
        with self.state_lock.read():
            for entry in self.transaction_metadata_cache.values():
                for metadata in entry.values():
                    if (metadata.pending_state is None and metadata.state is Ongoing
                            and metadata.txn_start_timestamp + metadata.txn_timeout_ms < now):
                        result.append(TransactionalIdAndProducerIdEpoch(
                            metadata.transactional_id, metadata.producer_id, metadata.producer_epoch))
        return result

    # ------------------------------------------------------------------ expiry of ids

    def _should_expire(self, metadata: TransactionMetadata, current_time_ms: int) -> bool:
        return (metadata.state.is_expiration_allowed
                and metadata.txn_last_update_timestamp <= current_time_ms - self.config.transactional_id_expiration_ms)

    def remove_expired_transactional_ids(self) -> None:
        with self.state_lock.read():
            for partition_id, entry in list(self.transaction_metadata_cache.items()):
                self._remove_expired_transactional_ids(
                    TopicPartition(TRANSACTION_STATE_TOPIC_NAME, partition_id), entry)

    def _remove_expired_transactional_ids(self, transaction_partition: TopicPartition,
                                          entry: TxnMetadataCacheEntry) -> None:
        with self.state_lock.read():
            if self.replica_manager.get_log_config(transaction_partition) is None:
                self.logger.warning("Transaction expiration for partition %s failed because the log config was not "
                                    "available, which likely means the partition is not online or is no longer local.",
                                    transaction_partition)
                return
            current_time_ms = self.time.milliseconds()
            expired: List[TransactionalIdCoordinatorEpochAndMetadata] = []
            tombstones: List[SimpleRecord] = []
            size = 0
            for metadata in entry.values():
                with metadata.lock:
                    if metadata.pending_state is None and self._should_expire(metadata, current_time_ms):
                        key = transaction_log.key_to_bytes(metadata.transactional_id)
                        tombstones.append(SimpleRecord(key, None, current_time_ms))
                        size += len(key) + 16
                        expired.append(TransactionalIdCoordinatorEpochAndMetadata(
                            metadata.transactional_id, entry.coordinator_epoch, metadata.prepare_dead()))
                if size >= _TOMBSTONE_BATCH_BYTES:
                    self._write_tombstones_for_expired_transactional_ids(transaction_partition, expired, tombstones)
                    expired, tombstones, size = [], [], 0
            if expired:
                self._write_tombstones_for_expired_transactional_ids(transaction_partition, expired, tombstones)

    def _write_tombstones_for_expired_transactional_ids(
            self, transaction_partition: TopicPartition,
            expired_for_partition: List[TransactionalIdCoordinatorEpochAndMetadata],
            tombstones: List[SimpleRecord]) -> None:
        def remove_from_cache_callback(responses: Mapping[TopicPartition, object]) -> None:
            for tp, response in responses.items():
                with self.state_lock.read():
                    entry = self.transaction_metadata_cache.get(tp.partition)
                    if entry is None:
                        continue
                    for expired in expired_for_partition:
                        metadata = entry.get(expired.transactional_id)
                        if metadata is None:
                            continue
                        with metadata.lock:
                            if (entry.coordinator_epoch == expired.coordinator_epoch
                                    and metadata.pending_state is Dead
                                    and metadata.producer_epoch == expired.transit_metadata.producer_epoch
                                    and response.error is Errors.NONE):
                                entry.remove(expired.transactional_id)
                            else:
                                self.logger.warning(
                                    "Failed to remove expired transactionalId: %s from cache. Tombstone append "
                                    "error code: %s, pendingState: %s, producerEpoch: %d, expected producerEpoch: "
                                    "%d, coordinatorEpoch: %d, expected coordinatorEpoch: %d",
                                    expired.transactional_id, response.error, metadata.pending_state,
                                    metadata.producer_epoch, expired.transit_metadata.producer_epoch,
                                    entry.coordinator_epoch, expired.coordinator_epoch)
                                metadata.pending_state = None

        records = MemoryRecords.with_records(tombstones, compression=transaction_log.ENFORCED_COMPRESSION_TYPE)
        with self.state_lock.read():
            self.replica_manager.append_records(
                timeout_ms=self.config.request_timeout_ms,
                required_acks=transaction_log.ENFORCED_REQUIRED_ACKS,
                internal_topics_allowed=True,
                origin=AppendOrigin.COORDINATOR,
                entries_per_partition={transaction_partition: records},
                response_callback=remove_from_cache_callback)

    # ------------------------------------------------------------------ loading

    def _load_transaction_metadata(self, topic_partition: TopicPartition,
                                   coordinator_epoch: int) -> Dict[str, TransactionMetadata]:
        loaded: Dict[str, TransactionMetadata] = {}
        log = self.replica_manager.get_log(topic_partition)
        if log is None:
            self.logger.warning("Attempted to load transaction metadata from %s, but found no log",
                                topic_partition)
            return loaded

        def log_end_offset() -> int:
            # -1 once the leadership moved away mid-load: that ends the loop
            end = self.replica_manager.get_log_end_offset(topic_partition)
            return -1 if end is None else end

        def still_loading() -> bool:
            with self.state_lock.read():
                return TransactionPartitionAndLeaderEpoch(topic_partition.partition, coordinator_epoch) in \
                    self.loading_partitions

        buffer = bytearray(0)
        load_buffer_size = self.config.transaction_log_load_buffer_size
        curr_offset = log.log_start_offset
        read_at_least_one_record = True
        try:
            while (curr_offset < log_end_offset() and read_at_least_one_record
                   and not self._shutting_down.is_set() and still_loading()):
                fetch_data_info = log.read(curr_offset, load_buffer_size, FetchIsolation.LOG_END,
                                           min_one_message=True)
                records = fetch_data_info.records
                if isinstance(records, MemoryRecords):
                    mem_records = records
                    size = records.size_in_bytes
                else:
                    size = records.size_in_bytes()
                    needed = max(load_buffer_size, size)
                    if len(buffer) < needed:
                        if load_buffer_size < needed:
                            self.logger.warning("Loaded transaction metadata from %s with buffer larger (%d bytes) than "
                                                "configured transaction.state.log.load.buffer.size (%d bytes)",
                                                topic_partition, needed, load_buffer_size)
                        buffer = bytearray(needed)
                    mem_records = records.read_into(buffer, 0)
                read_at_least_one_record = size > 0
                for batch in mem_records.batches():
                    for record in batch:
                        if record.key is None:
                            raise KafkaException("Transaction state log's key should not be null")
                        txn_key = transaction_log.read_txn_record_key(record.key)
                        transactional_id = txn_key.transactional_id
                        metadata = transaction_log.read_txn_record_value(transactional_id, record.value)
                        if metadata is None:
                            loaded.pop(transactional_id, None)
                        else:
                            loaded[transactional_id] = metadata
                    curr_offset = batch.next_offset
        except Exception:  # noqa: BLE001 - Kafka logs and goes on with what was loaded
            self.logger.exception("Error loading transactions from transaction log %s",
                                  topic_partition)
        return loaded

    def add_loaded_transactions_to_cache(self, txn_topic_partition: int, coordinator_epoch: int,
                                         loaded_transactions: Dict[str, TransactionMetadata]) -> None:
        """Replace the partition's cache entry; the caller holds the state lock's write side."""
        previous = self.transaction_metadata_cache.get(txn_topic_partition)
        self.transaction_metadata_cache[txn_topic_partition] = TxnMetadataCacheEntry(coordinator_epoch,
                                                                                     dict(loaded_transactions))
        if previous is not None:
            self.logger.warning("Unloaded transaction metadata %s from %d as part of loading metadata at epoch %d",
                                previous, txn_topic_partition, coordinator_epoch)

    def load_transactions_for_txn_topic_partition(self, partition_id: int, coordinator_epoch: int,
                                                  send_txn_markers: SendTxnMarkersCallback) -> None:
        """Become the coordinator of the partition's ids: load them on the scheduler, then send the
        markers of transactions that were left half-completed."""
        topic_partition = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, partition_id)
        partition_and_leader_epoch = TransactionPartitionAndLeaderEpoch(partition_id, coordinator_epoch)
        with self.state_lock.write():
            self.loading_partitions.add(partition_and_leader_epoch)
        schedule_start_ms = self.time.milliseconds()

        def load_transactions() -> None:
            scheduler_time_ms = self.time.milliseconds() - schedule_start_ms
            self.logger.info("Loading transaction metadata from %s at epoch %d", topic_partition,
                             coordinator_epoch)
            self._validate_transaction_topic_partition_count_is_stable()
            loaded = self._load_transaction_metadata(topic_partition, coordinator_epoch)
            total_ms = self.time.milliseconds() - schedule_start_ms
            self.partition_load_times_ms = (self.partition_load_times_ms + [total_ms])[-100:]
            self.partition_load_sensor.record(total_ms, self.time.milliseconds(), False)
            self.logger.info("Finished loading %d transaction metadata from %s in %d milliseconds, of which %d "
                             "milliseconds was spent in the scheduler.", len(loaded), topic_partition,
                             total_ms, scheduler_time_ms)
            pending_completion: List[Tuple[int, bool, TransactionMetadata, TxnTransitMetadata]] = []
            with self.state_lock.write():
                if partition_and_leader_epoch not in self.loading_partitions:
                    return
                self.add_loaded_transactions_to_cache(partition_id, coordinator_epoch, loaded)
                for metadata in loaded.values():
                    with metadata.lock:
                        # a transaction whose markers may not all be written: finish it
                        if metadata.state is PrepareAbort:
                            pending_completion.append((coordinator_epoch, TransactionResult.ABORT, metadata,
                                                       metadata.prepare_complete(self.time.milliseconds())))
                        elif metadata.state is PrepareCommit:
                            pending_completion.append((coordinator_epoch, TransactionResult.COMMIT, metadata,
                                                       metadata.prepare_complete(self.time.milliseconds())))
                # no longer loading before the markers go out, so their completion's log write
                # is not refused with COORDINATOR_LOAD_IN_PROGRESS
                self.loading_partitions.discard(partition_and_leader_epoch)
                for epoch, result, metadata, transit in pending_completion:
                    send_txn_markers(epoch, result, metadata, transit)
            self.logger.info("Completed loading transaction metadata from %s for coordinator epoch %d",
                             topic_partition, coordinator_epoch)

        self.scheduler.schedule(f"load-txns-for-partition-{topic_partition}", load_transactions)

    def remove_transactions_for_txn_topic_partition(self, partition_id: int,
                                                    coordinator_epoch: Optional[int] = None) -> None:
        """Stop coordinating the partition's ids (became follower, or the replica was deleted)."""
        topic_partition = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, partition_id)
        with self.state_lock.write():
            if coordinator_epoch is None:
                self.loading_partitions = {p for p in self.loading_partitions if p.txn_partition_id != partition_id}
            else:
                self.loading_partitions.discard(TransactionPartitionAndLeaderEpoch(partition_id, coordinator_epoch))
            entry = self.transaction_metadata_cache.pop(partition_id, None)
        if entry is not None:
            self.logger.info("Unloaded transaction metadata %s for %s on become-follower transition",
                             entry, topic_partition)
        else:
            self.logger.info("No cached transaction metadata found for %s during become-follower transition",
                             topic_partition)

    def _validate_transaction_topic_partition_count_is_stable(self) -> None:
        previous = self.transaction_topic_partition_count
        current = int(self._retrieve_transaction_topic_partition_count())
        if previous != current:
            raise KafkaException(f"Transaction topic number of partitions has changed from {previous} to {current}")

    # ------------------------------------------------------------------ writes

    def append_transaction_to_log(self, transactional_id: str, coordinator_epoch: int,
                                  new_metadata: TxnTransitMetadata, response_callback: Callable[[Errors], None],
                                  retry_on_error: Callable[[Errors], bool] = lambda e: False) -> None:
        """Write ``new_metadata`` (prepared, pending) to the id's partition with acks=-1; once
        replicated, complete the transition in the cache and call back with NONE, else call back
        with the coordinator error a client understands (and drop the pending state unless
        ``retry_on_error`` says the caller will retry)."""
        key = transaction_log.key_to_bytes(transactional_id)
        value = transaction_log.value_to_bytes(new_metadata)
        timestamp = self.time.milliseconds()
        records = MemoryRecords.with_records([SimpleRecord(key, value, timestamp)],
                                             compression=transaction_log.ENFORCED_COMPRESSION_TYPE)
        topic_partition = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, self.partition_for(transactional_id))

        def update_cache_callback(response_status: Mapping[TopicPartition, object]) -> None:
            if len(response_status) != 1 or topic_partition not in response_status:
                raise RuntimeError(f"Append status {dict(response_status)} should only have one partition "
                                   f"{topic_partition}")
            status = response_status[topic_partition]
            error = status.error
            if error is Errors.NONE:
                crash_point("transaction_state_manager.append.after_append")
                response_error = Errors.NONE
            else:
                self.logger.debug("Appending %s's new metadata %s failed due to %s",
                                  transactional_id, new_metadata, error.exception_name)
                if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                             Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT):
                    response_error = Errors.COORDINATOR_NOT_AVAILABLE
                elif error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
                    response_error = Errors.NOT_COORDINATOR
                elif error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE):
                    response_error = Errors.UNKNOWN_SERVER_ERROR
                else:
                    response_error = error

            current = self.get_transaction_state(transactional_id)
            if response_error is Errors.NONE:
                if isinstance(current, Errors):
                    self.logger.info("Accessing the cached transaction metadata for %s returns %s error; aborting "
                                     "transition to the new metadata and setting the error in the callback",
                                     transactional_id, current)
                    response_error = current
                elif current is None:
                    self.logger.info("The cached coordinator metadata does not exist in the cache anymore for %s after "
                                     "appended its new metadata %s to the transaction log (txn topic partition %d) while "
                                     "it was %d before appending; aborting transition to the new metadata and returning "
                                     "NOT_COORDINATOR in the callback", transactional_id, new_metadata,
                                     topic_partition.partition, coordinator_epoch)
                    response_error = Errors.NOT_COORDINATOR
                else:
                    metadata = current.transaction_metadata
                    with metadata.lock:
                        if current.coordinator_epoch != coordinator_epoch:
                            self.logger.info("The cached coordinator epoch for %s has changed to %d after appended its "
                                             "new metadata %s to the transaction log (txn topic partition %d) while it "
                                             "was %d before appending; aborting transition to the new metadata and "
                                             "returning NOT_COORDINATOR in the callback",
                                             transactional_id, current.coordinator_epoch, new_metadata,
                                             topic_partition.partition, coordinator_epoch)
                            response_error = Errors.NOT_COORDINATOR
                        else:
                            metadata.complete_transition_to(new_metadata)
                            self.logger.debug("Updating %s's transaction state to %s with coordinator epoch %d "
                                              "succeeded", transactional_id, new_metadata,
                                              coordinator_epoch)
            elif isinstance(current, CoordinatorEpochAndTxnMetadata):
                metadata = current.transaction_metadata
                with metadata.lock:
                    if current.coordinator_epoch == coordinator_epoch:
                        if retry_on_error(response_error):
                            self.logger.info("TransactionalId %s append transaction log for %s transition failed due "
                                             "to %s, not resetting pending state %s but just returning the error in the "
                                             "callback to let the caller retry", transactional_id,
                                             new_metadata, response_error, metadata.pending_state)
                        else:
                            self.logger.info("TransactionalId %s append transaction log for %s transition failed due "
                                             "to %s, resetting pending state from %s, aborting state transition and "
                                             "returning %s in the callback", transactional_id,
                                             new_metadata, response_error, metadata.pending_state, response_error)
                            metadata.pending_state = None
                    else:
                        self.logger.info("TransactionalId %s append transaction log for %s transition failed due to %s, "
                                         "aborting state transition and returning the error in the callback since the "
                                         "coordinator epoch has changed from %d to %d",
                                         transactional_id, new_metadata, response_error, current.coordinator_epoch,
                                         coordinator_epoch)
            else:
                self.logger.info("TransactionalId %s append transaction log for %s transition failed due to %s, "
                                 "aborting state transition and returning the error in the callback since the metadata "
                                 "is not available (%s)", transactional_id, new_metadata, response_error,
                                 current)
            response_callback(response_error)

        # Hold the read lock until the local append returns: an unload and reload of the
        # partition in between could otherwise let a write of the old coordinator epoch land
        # after writes of the new one.
        with self.state_lock.read():
            current = self.get_transaction_state(transactional_id)
            if isinstance(current, Errors):
                response_callback(current)
                return
            if current is None:
                response_callback(Errors.NOT_COORDINATOR)
                return
            with current.transaction_metadata.lock:
                same_epoch = current.coordinator_epoch == coordinator_epoch
            if not same_epoch:
                response_callback(Errors.NOT_COORDINATOR)
                return
            self.replica_manager.append_records(
                timeout_ms=new_metadata.txn_timeout_ms,
                required_acks=transaction_log.ENFORCED_REQUIRED_ACKS,
                internal_topics_allowed=True,
                origin=AppendOrigin.COORDINATOR,
                entries_per_partition={topic_partition: records},
                response_callback=update_cache_callback)


__all__ = [
    "CoordinatorEpochAndTxnMetadata", "TransactionConfig", "TransactionPartitionAndLeaderEpoch",
    "TransactionResult", "TransactionStateManager", "TransactionalIdAndProducerIdEpoch", "TxnMetadataCacheEntry",
]
