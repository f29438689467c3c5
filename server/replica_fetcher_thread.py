"""Port of core/src/main/scala/kafka/server/ReplicaFetcherThread.scala (Kafka 2.8.2).

The follower side of replication: an AbstractFetcherThread (server/abstract_fetcher_thread.py)
whose source broker is the leader of the partitions it holds, and whose local side is the
ReplicaManager's logs.

* requests go through a ReplicaFetcherBlockingSend (one connection to the leader), with
  replica_id = this broker, so the leader reads up to its log end and records this
  follower's position (which moves its high watermark);
* request versions follow inter.broker.protocol.version as in Kafka: Fetch 12 from 2.7-IV1
  (it carries ``last_fetched_epoch``, and truncation happens on fetch), 11 from 2.3-IV1,
  ...; OffsetForLeaderEpoch 4 from 2.8-IV0, 3 from 2.3-IV1, ...; ListOffsets 6 / 5 / ...;
* fetches go through a FetchSessionHandler (kafka_py/clients/fetch_session_handler.py):
  the first fetch lists every partition and asks the leader for an incremental fetch
  session (KIP-227); from then on a fetch lists only the partitions whose fetch offset, log
  start offset or epochs changed, and the partitions left out of the fetch (backing off,
  truncating, throttled, removed) as forgotten; the leader answers only the partitions with
  news. An answer with a session error (FETCH_SESSION_ID_NOT_FOUND after an eviction,
  INVALID_FETCH_SESSION_EPOCH) is dropped and the next fetch, at once, is a full one, as in
  Kafka; a failed request makes the next fetch a full one too;
* a Fetch request is written, and its answer read, from plain values (``FetchRequestSpec``
  over kafka_py/clients/common/protocol/fast_fetch_request.py and fast_fetch_response.py): only the partition headers are parsed, and each
  partition's records stay a view of the response frame;
* ``process_partition_data`` appends the leader's batches as they are
  (``Partition.append_records_to_follower_or_future_replica`` → ``Log.append_as_follower``:
  offsets and epochs kept, CRCs checked), then takes the leader's high watermark, bounded by
  its own log end, and the leader's log start offset;
* truncation goes through ``Partition.truncate_to`` / ``truncate_fully_and_start_at``.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from kafka_py.clients.fetch_session_handler import FetchSessionHandler
from kafka_py.clients.network_client import PreparedRequest
from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.clients.fetch_session_handler import FINAL_EPOCH, INVALID_SESSION_ID
from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_append_info import LogAppendInfo, LogStartOffsetIncrementReason
from kafka_py.log.log_config import ApiVersion, api_version
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.fast_fetch_request import encode_fetch_request
from kafka_py.clients.common.protocol.fast_fetch_response import FetchAnswer, read_fetch_response
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.protocol.requests import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    PartitionData,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.abstract_fetcher_thread import (
    AbstractFetcherThread,
    EpochData,
    FailedPartitions,
    OffsetAndEpoch,
    OffsetTruncationState,
    PartitionFetchState,
    ReplicaFetch,
    ResultWithPartitions,
)
from kafka_py.server.replica_fetcher_blocking_send import BlockingSend, ReplicaFetcherBlockingSend
from kafka_py.server.quota_factory import UNBOUNDED_QUOTA
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.server.replication_quota_manager import ReplicaQuota
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # the replica manager imports this module (through its fetcher managers)
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)

NO_EPOCH = -1
_SESSION_ERRORS = (Errors.FETCH_SESSION_ID_NOT_FOUND, Errors.INVALID_FETCH_SESSION_EPOCH)


def _first_version(ibp: ApiVersion, table: tuple[tuple[str, int], ...]) -> int:
    for since, version in table:
        if ibp >= api_version(since):
            return version
    return 0


_FETCH_VERSIONS = (("2.7-IV1", 12), ("2.3-IV1", 11), ("2.1-IV2", 10), ("2.0-IV1", 8), ("1.1-IV0", 7),
                   ("0.11.0-IV1", 5), ("0.11.0-IV0", 4), ("0.10.1-IV1", 3), ("0.10.0-IV0", 2), ("0.9.0", 1))
_OFFSET_FOR_LEADER_EPOCH_VERSIONS = (("2.8-IV0", 4), ("2.3-IV1", 3), ("2.1-IV1", 2), ("2.0-IV0", 1))
_LIST_OFFSETS_VERSIONS = (("2.8-IV0", 6), ("2.2-IV1", 5), ("2.1-IV1", 4), ("2.0-IV1", 3), ("0.11.0-IV0", 2),
                          ("0.10.1-IV2", 1))


def fetch_request_version(ibp: ApiVersion) -> int:
    return _first_version(ibp, _FETCH_VERSIONS)


def offset_for_leader_epoch_request_version(ibp: ApiVersion) -> int:
    return _first_version(ibp, _OFFSET_FOR_LEADER_EPOCH_VERSIONS)


def list_offset_request_version(ibp: ApiVersion) -> int:
    return _first_version(ibp, _LIST_OFFSETS_VERSIONS)


def is_truncation_on_fetch_supported(ibp: ApiVersion) -> bool:
    """ApiVersion.isTruncationOnFetchSupported: the leader answers diverging epochs (KIP-595's fetch)."""
    return ibp >= api_version("2.7-IV1")


class FetchRequestSpec(PreparedRequest):
    """A Fetch request of a replica fetcher (Kafka's FetchRequest.Builder): its values, written
    to the wire by kafka_py.clients.common.protocol.fast_fetch_request and its answer read by
    kafka_py.clients.common.protocol.fast_fetch_response, with no kio objects on the way (the same bytes as kio's, tests/protocol/test_fast_fetch_codec.py).

    ``topics``: (topic, partitions), each partition a tuple (partition, current_leader_epoch,
    fetch_offset, last_fetched_epoch, log_start_offset, partition_max_bytes); ``forgotten``:
    (topic, [partition, ...]), the partitions an incremental fetch drops from its session.
    """

    __slots__ = ("version", "replica_id", "max_wait_ms", "min_bytes", "max_bytes", "isolation_level",
                 "session_id", "session_epoch", "topics", "rack_id", "forgotten")

    def __init__(self, version: int, replica_id: int, max_wait_ms: int, min_bytes: int, max_bytes: int,
                 topics: list, isolation_level: int = 0, session_id: int = INVALID_SESSION_ID,
                 session_epoch: int = FINAL_EPOCH, rack_id: str = "", forgotten: Sequence = ()) -> None:
        self.version = version
        self.replica_id = replica_id
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.isolation_level = isolation_level
        self.session_id = session_id
        self.session_epoch = session_epoch
        self.topics = topics
        self.rack_id = rack_id
        self.forgotten = forgotten

    def encode_frame(self, correlation_id: int, client_id: Optional[str]) -> bytes:
        return encode_fetch_request(self.version, correlation_id, client_id, self.replica_id, self.max_wait_ms,
                                    self.min_bytes, self.max_bytes, self.isolation_level, self.session_id,
                                    self.session_epoch, self.topics, self.rack_id, self.forgotten)

    def read_response(self, body: memoryview) -> FetchAnswer:
        return read_fetch_response(self.version, body)

    def __repr__(self) -> str:
        parts = ", ".join(f"{topic}-{p[0]}@{p[2]}" for topic, partitions in self.topics for p in partitions)
        forgotten = ", ".join(f"{topic}-{p}" for topic, partitions in self.forgotten for p in partitions)
        return (f"Fetch(v{self.version}, replica_id={self.replica_id}, session={self.session_id}/"
                f"{self.session_epoch}, [{parts}], forgotten=[{forgotten}])")


class ReplicaFetcherThread(AbstractFetcherThread):
    def __init__(self, name: str, fetcher_id: int, source_broker: BrokerEndPoint, broker_config: Any,
                 failed_partitions: FailedPartitions, replica_mgr: ReplicaManager, time: Time = Time.SYSTEM,
                 quota: ReplicaQuota = UNBOUNDED_QUOTA,
                 leader_endpoint_blocking_send: Optional[BlockingSend] = None) -> None:
        super().__init__(name, name, source_broker, failed_partitions,
                         fetch_back_off_ms=broker_config.replica_fetch_backoff_ms, is_interruptible=False, time=time)
        self.fetcher_id = fetcher_id
        self.broker_config = broker_config
        self.replica_mgr = replica_mgr
        self.quota = quota
        self.replica_id: int = broker_config.broker_id
        self.logger.ident = (f"[ReplicaFetcher replicaId={self.replica_id}, leaderId={source_broker.id}, "
                             f"fetcherId={fetcher_id}] ")
        self.leader_endpoint: BlockingSend = leader_endpoint_blocking_send or ReplicaFetcherBlockingSend(
            source_broker, broker_config, time, fetcher_id, f"broker-{self.replica_id}-fetcher-{fetcher_id}",
            self.logger.ident)
        ibp = broker_config.inter_broker_protocol_version
        self.fetch_request_version = fetch_request_version(ibp)
        self.offset_for_leader_epoch_request_version = offset_for_leader_epoch_request_version(ibp)
        self.list_offset_request_version = list_offset_request_version(ibp)
        self._max_wait = broker_config.replica_fetch_wait_max_ms
        self._min_bytes = broker_config.replica_fetch_min_bytes
        self._max_bytes = broker_config.replica_fetch_response_max_bytes
        self._fetch_size = broker_config.replica_fetch_max_bytes
        self._is_offset_for_leader_epoch_supported = ibp >= api_version("0.11.0-IV2")
        self._is_truncation_on_fetch_supported = is_truncation_on_fetch_supported(ibp)
        self.fetch_session_handler = FetchSessionHandler(source_broker.id, self.logger.ident)

    @property
    def is_offset_for_leader_epoch_supported(self) -> bool:
        return self._is_offset_for_leader_epoch_supported

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        return self._is_truncation_on_fetch_supported

    # ------------------------------------------------------------------ the local log

    def _local_log(self, topic_partition: TopicPartition):
        return self.replica_mgr.local_log_or_exception(topic_partition)

    def latest_epoch(self, topic_partition: TopicPartition) -> Optional[int]:
        return self._local_log(topic_partition).latest_epoch

    def log_start_offset(self, topic_partition: TopicPartition) -> int:
        return self._local_log(topic_partition).log_start_offset

    def log_end_offset(self, topic_partition: TopicPartition) -> int:
        return self._local_log(topic_partition).log_end_offset

    def end_offset_for_epoch(self, topic_partition: TopicPartition, epoch: int) -> Optional[OffsetAndEpoch]:
        found = self._local_log(topic_partition).end_offset_for_epoch(epoch)
        return None if found is None else OffsetAndEpoch(found[0], found[1])

    # ------------------------------------------------------------------ lifecycle

    def initiate_shutdown(self) -> bool:
        just_shutdown = super().initiate_shutdown()
        if just_shutdown:
            # wakes a connect or a long poll to the leader at once; the connection itself is
            # closed once the thread has stopped using it (await_shutdown)
            try:
                self.leader_endpoint.initiate_close()
            except Exception:  # noqa: BLE001 - must not fail the caller's shutdown
                self.logger.exception("Failed to initiate shutdown of leader endpoint %s after initiating replica "
                                      "fetcher thread shutdown", self.leader_endpoint)
        return just_shutdown

    def await_shutdown(self) -> None:
        super().await_shutdown()
        try:
            self.leader_endpoint.close()
        except Exception:  # noqa: BLE001
            self.logger.exception("Failed to close leader endpoint %s after shutting down replica fetcher thread",
                                  self.leader_endpoint)

    # ------------------------------------------------------------------ appending

    def process_partition_data(self, topic_partition: TopicPartition, fetch_offset: int,
                               partition_data: FetchPartitionData) -> Optional[LogAppendInfo]:
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        log = partition.local_log_or_exception()
        records = _to_memory_records(partition_data.records)
        self._maybe_warn_if_oversized_records(records, topic_partition)
        if fetch_offset != log.log_end_offset:
            raise RuntimeError(f"Offset mismatch for partition {topic_partition}: fetched offset = {fetch_offset}, "
                               f"log end offset = {log.log_end_offset}.")
        log_append_info = partition.append_records_to_follower_or_future_replica(records, is_future=False)
        # a follower's HW is the leader's, but never past what it holds itself
        log.update_high_watermark(partition_data.high_watermark)
        log.maybe_increment_log_start_offset(partition_data.log_start_offset,
                                             LogStartOffsetIncrementReason.LEADER_OFFSET_INCREMENTED)
        if self.quota.is_throttled(topic_partition):
            self.quota.record(records.size_in_bytes)
        self.replica_mgr.broker_topic_stats.update_replication_bytes_in(records.size_in_bytes)
        if partition.is_reassigning and partition.is_adding_local_replica:
            self.replica_mgr.broker_topic_stats.update_reassignment_bytes_in(records.size_in_bytes)
        return log_append_info

    def _maybe_warn_if_oversized_records(self, records: MemoryRecords, topic_partition: TopicPartition) -> None:
        # from Fetch v3 on (KIP-74) the leader always sends at least one whole batch
        if self.fetch_request_version <= 2 and records.size_in_bytes > 0 and records.valid_bytes() <= 0:
            self.logger.error("Replication is failing due to a message that is greater than replica.fetch.max.bytes "
                              "for partition %s. This generally occurs when the max.message.bytes has been overridden "
                              "to exceed this value and a suitably large message has also been sent. To fix this "
                              "problem increase replica.fetch.max.bytes in your broker config to be equal or larger "
                              "than your settings for max.message.bytes, both at a broker and topic level.",
                              topic_partition)

    def truncate(self, topic_partition: TopicPartition, truncation_state: OffsetTruncationState) -> None:
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        log = partition.local_log_or_exception()
        partition.truncate_to(truncation_state.offset, is_future=False)
        if truncation_state.offset < log.high_watermark:
            self.logger.warning("Truncating %s to offset %d below high watermark %d", topic_partition,
                                truncation_state.offset, log.high_watermark)
        # a replica moving between log dirs: its future log truncates too, once the offset is final
        alter_log_dirs_manager = getattr(self.replica_mgr, "replica_alter_log_dirs_manager", None)
        if truncation_state.truncation_completed and alter_log_dirs_manager is not None:
            alter_log_dirs_manager.mark_partitions_for_truncation(self.replica_id, topic_partition,
                                                                  truncation_state.offset)

    def truncate_fully_and_start_at(self, topic_partition: TopicPartition, offset: int) -> None:
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        partition.truncate_fully_and_start_at(offset, is_future=False)

    # ------------------------------------------------------------------ Fetch

    def build_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]) -> ResultWithPartitions:
        partitions_with_error: set[TopicPartition] = set()
        # the session's partitions are the handler's own dict, read before the next build
        builder = self.fetch_session_handler.new_builder(copy_session_partitions=False)
        for tp, fetch_state in partition_map.items():
            # a replica is left out of the fetch while it must be throttled
            if not fetch_state.is_ready_for_fetch or self._should_follower_throttle(fetch_state, tp):
                continue
            try:
                log_start_offset = self.log_start_offset(tp)
            except KafkaStorageException:
                # the log dir failed; the ReplicaManager removes the partition from this thread soon
                partitions_with_error.add(tp)
                continue
            except Exception as e:  # noqa: BLE001 - the partition is going away; back it off
                self.logger.debug("Leaving %s out of the fetch: %s", tp, e)
                partitions_with_error.add(tp)
                continue
            last_fetched_epoch = fetch_state.last_fetched_epoch if self._is_truncation_on_fetch_supported else None
            builder.add(tp, PartitionData(fetch_state.fetch_offset, log_start_offset, self._fetch_size,
                                          fetch_state.current_leader_epoch, last_fetched_epoch))
        fetch_data = builder.build()
        if not fetch_data.session_partitions and not fetch_data.to_forget:
            return ResultWithPartitions(None, frozenset(partitions_with_error))
        topics: dict[str, list[tuple[int, int, int, int, int, int]]] = {}
        for tp, data in fetch_data.to_send.items():
            last_fetched_epoch = NO_EPOCH if data.last_fetched_epoch is None else data.last_fetched_epoch
            topics.setdefault(tp.topic, []).append((tp.partition, data.current_leader_epoch, data.fetch_offset,
                                                    last_fetched_epoch, data.log_start_offset, data.max_bytes))
        forgotten: dict[str, list[int]] = {}
        for tp in fetch_data.to_forget:
            forgotten.setdefault(tp.topic, []).append(tp.partition)
        metadata = fetch_data.metadata
        request = FetchRequestSpec(self.fetch_request_version, self.replica_id, self._max_wait, self._min_bytes,
                                   self._max_bytes, list(topics.items()), session_id=metadata.session_id,
                                   session_epoch=metadata.epoch, forgotten=list(forgotten.items()))
        return ResultWithPartitions(ReplicaFetch(fetch_data.session_partitions, request),
                                    frozenset(partitions_with_error))

    def fetch_from_leader(self, fetch_request: FetchRequestSpec) -> dict[TopicPartition, FetchPartitionData]:
        session_handler = self.fetch_session_handler
        try:
            response: FetchAnswer = self.leader_endpoint.send_request(ApiKeys.FETCH, fetch_request.version,
                                                                      fetch_request).response_body
        except Exception as e:
            session_handler.handle_error(e)
            raise
        result: dict[TopicPartition, FetchPartitionData] = {}
        for topic, partitions in response.responses:
            for p in partitions:
                tp = TopicPartition(topic, p.partition_index)
                diverging = p.diverging_epoch
                diverging_epoch = None
                if diverging is not None and diverging[0] >= 0:
                    diverging_epoch = EpochEndOffset(Errors.NONE, tp.partition, diverging[0], diverging[1])
                records = p.records
                result[tp] = FetchPartitionData(
                    Errors.for_code(p.error_code), p.high_watermark, p.log_start_offset,
                    records if records is not None else MemoryRecords.EMPTY.buffer, diverging_epoch,
                    p.last_stable_offset)
        error = Errors.for_code(response.error_code)
        if not session_handler.handle_response(error, response.session_id, response.throttle_time_ms, result):
            if error is not Errors.NONE and error not in _SESSION_ERRORS:
                # Kafka drops such an answer too; raising backs the partitions off instead of
                # asking again at once
                raise error.exception_class(f"Fetch from broker {self.source_broker.id} failed: {error.name}")
            # the session is gone or the answer does not fit it: the next fetch, at once, is a full one
            return {}
        return result

    def _should_follower_throttle(self, fetch_state: PartitionFetchState, topic_partition: TopicPartition) -> bool:
        """Throttle only a replica out of sync, so throttling never keeps one from rejoining the ISR."""
        return (not fetch_state.is_replica_in_sync and self.quota.is_throttled(topic_partition)
                and self.quota.is_quota_exceeded())

    # ------------------------------------------------------------------ ListOffsets

    def fetch_earliest_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int) -> int:
        return self._fetch_offset_from_leader(topic_partition, current_leader_epoch, EARLIEST_TIMESTAMP)

    def fetch_latest_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int) -> int:
        return self._fetch_offset_from_leader(topic_partition, current_leader_epoch, LATEST_TIMESTAMP)

    def _fetch_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int,
                                  earliest_or_latest: int) -> int:
        version = self.list_offset_request_version
        body = build_entity(request_schema(ApiKeys.LIST_OFFSETS, version), {
            "replica_id": self.replica_id, "isolation_level": 0,
            "topics": [{"name": topic_partition.topic, "partitions": [{
                "partition_index": topic_partition.partition, "current_leader_epoch": current_leader_epoch,
                "timestamp": earliest_or_latest}]}]})
        response = self.leader_endpoint.send_request(ApiKeys.LIST_OFFSETS, version, body).response_body
        for topic in response.topics:
            if topic.name != topic_partition.topic:
                continue
            for p in topic.partitions:
                if int(p.partition_index) != topic_partition.partition:
                    continue
                error = Errors.for_code(int(p.error_code))
                if error is not Errors.NONE:
                    raise error.exception_class(error.message)
                if version >= 1:
                    return int(p.offset)
                return int(p.old_style_offsets[0])
        raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception_class(
            f"ListOffsets response from broker {self.source_broker.id} lacks {topic_partition}")

    # ------------------------------------------------------------------ OffsetsForLeaderEpoch

    def fetch_epoch_end_offsets(self, partitions: Mapping[TopicPartition, EpochData]
                                ) -> dict[TopicPartition, EpochEndOffset]:
        if not partitions:
            self.logger.debug("Skipping leaderEpoch request since all partitions do not have an epoch")
            return {}
        topics: dict[str, list[dict[str, int]]] = {}
        for tp, epoch_data in partitions.items():
            topics.setdefault(tp.topic, []).append({"partition": epoch_data.partition,
                                                    "current_leader_epoch": epoch_data.current_leader_epoch,
                                                    "leader_epoch": epoch_data.leader_epoch})
        version = self.offset_for_leader_epoch_request_version
        body = build_entity(request_schema(ApiKeys.OFFSET_FOR_LEADER_EPOCH, version), {
            "replica_id": self.replica_id,
            "topics": [{"topic": topic, "partitions": parts} for topic, parts in topics.items()]})
        self.logger.debug("Sending offset for leader epoch request %s", body)
        try:
            response = self.leader_endpoint.send_request(ApiKeys.OFFSET_FOR_LEADER_EPOCH, version,
                                                         body).response_body
        except Exception as e:  # noqa: BLE001 - every partition then retries after a back-off
            self.logger.warning("Error when sending leader epoch request for %s: %s",
                                sorted(map(str, partitions)), e)
            error = Errors.for_exception(e)
            return {tp: EpochEndOffset(error, tp.partition) for tp in partitions}
        result: dict[TopicPartition, EpochEndOffset] = {}
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.topic, int(p.partition))
                result[tp] = EpochEndOffset(Errors.for_code(int(p.error_code)), tp.partition,
                                            int(getattr(p, "leader_epoch", UNDEFINED_EPOCH)),
                                            int(getattr(p, "end_offset", UNDEFINED_EPOCH_OFFSET)))
        return result


def _to_memory_records(records: Any) -> MemoryRecords:
    # a fetch response's records are a view of the response frame: appended without a copy
    if isinstance(records, MemoryRecords):
        return records
    return MemoryRecords(records)


__all__ = ["ReplicaFetcherThread", "FetchRequestSpec", "fetch_request_version",
           "offset_for_leader_epoch_request_version", "list_offset_request_version",
           "is_truncation_on_fetch_supported"]
