"""Port of core/src/main/scala/kafka/raft/RaftManager.scala (Kafka 2.8.2, with Kafka 3.0.0's
MetadataLogConfig): the RaftManager
trait and KafkaRaftManager with its RaftIoThread.

KafkaRaftManager puts a KRaft node's raft client together: the metadata log
(KafkaMetadataLog, ``<metadata.log.dir>/@metadata-0``), the quorum-state file beside it
(FileBasedStateStore, ``quorum-state``), the network channel to the other voters
(KafkaNetworkChannel, over the controller listener's security protocol), the expiration
service on a timing wheel, and the KafkaRaftClient itself, initialized from what the log and
the quorum-state file hold. ``startup`` gives the channel the voters' addresses and starts the
``<prefix>-io-thread``, which does nothing but ``poll`` the client.

Inbound raft requests arrive through ``handle_request`` (ControllerApis calls it on a request
handler thread): the request joins the client's message queue and the returned future
completes with the response body once the io thread has handled it.

Shutdown first asks the client to shut down gracefully (a leader resigns, so the others
elect at once instead of waiting out the election timeout), waits for the io thread to end,
then closes the channel and the log.
"""
from __future__ import annotations

import logging
import os
from abc import ABC, abstractmethod
from typing import Any, Generic, Optional, Sequence, TypeVar

from kafka_py.core.cluster.broker import ListenerName, Node, SecurityProtocol
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_files import log_dir_name
from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.raft.file_based_state_store import FileBasedStateStore
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.core.raft.kafka_metadata_log import KafkaMetadataLog, MetadataLogConfig
from kafka_py.core.raft.kafka_network_channel import KafkaNetworkChannel
from kafka_py.raft.kafka_raft_client import MAX_BATCH_SIZE_BYTES, MAX_FETCH_SIZE_BYTES, KafkaRaftClient
from kafka_py.raft.raft_client import Listener
from kafka_py.raft.raft_config import (
    NON_ROUTABLE_ADDRESS,
    InetAddressSpec,
    RaftConfig,
    UnknownAddressSpec,
    parse_voter_connections,
)
from kafka_py.raft.raft_request import RaftRequest
from kafka_py.raft.record_serde import RecordSerde
from kafka_py.core.raft.timing_wheel_expiration_service import TimingWheelExpirationService
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.timer.system_timer import SystemTimer

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How long the io thread's shutdown gives the client to resign gracefully.
GRACEFUL_SHUTDOWN_TIMEOUT_MS = 5000


def raft_config_of(config: Any) -> RaftConfig:
    """RaftConfig(KafkaConfig): the controller.quorum.* values KafkaConfig parsed."""
    return RaftConfig(
        voter_connections=parse_voter_connections(config.quorum_voters),
        request_timeout_ms=config.quorum_request_timeout_ms,
        retry_backoff_ms=config.quorum_retry_backoff_ms,
        election_timeout_ms=config.quorum_election_timeout_ms,
        election_backoff_max_ms=config.quorum_election_backoff_ms,
        fetch_timeout_ms=config.quorum_fetch_timeout_ms,
        append_linger_ms=config.quorum_linger_ms,
    )


class RaftIoThread(ShutdownableThread):
    def __init__(self, client: KafkaRaftClient, thread_name_prefix: str, log_prefix: str = "") -> None:
        super().__init__(f"{thread_name_prefix}-io-thread", is_interruptible=False)
        self.logger.ident = f"{log_prefix}[{thread_name_prefix}-io-thread]: "
        self._client = client

    def do_work(self) -> None:
        self._client.poll()

    def initiate_shutdown(self) -> bool:
        if not super().initiate_shutdown():
            return False

        def done(_value: Any, exception: Optional[BaseException]) -> None:
            if exception is not None:
                self.logger.error("Graceful shutdown of RaftClient failed", exc_info=exception)
            else:
                self.logger.info("Completed graceful shutdown of RaftClient")

        self._client.shutdown(GRACEFUL_SHUTDOWN_TIMEOUT_MS).when_complete(done)
        return True

    @property
    def is_running(self) -> bool:
        # Polling goes on after the shutdown was asked for, until the client has resigned.
        return self._client.is_running() and not self.is_thread_failed


class RaftManager(ABC, Generic[T]):
    @abstractmethod
    def handle_request(self, header: RequestHeader, request: Any, created_time_ms: int) -> CompletableFuture[Any]:
        ...

    @abstractmethod
    def register(self, listener: Listener[T]) -> None:
        ...

    @abstractmethod
    def schedule_atomic_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        ...

    @abstractmethod
    def schedule_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        ...


class KafkaRaftManager(RaftManager[T], Generic[T]):
    def __init__(self, meta_properties: Any, config: Any, record_serde: RecordSerde[T],
                 topic_partition: TopicPartition, time: Time = Time.SYSTEM,
                 thread_name_prefix: Optional[str] = None,
                 metrics_registry: Optional[MetricsRegistry] = None) -> None:
        self.meta_properties = meta_properties
        self.config = config
        self._record_serde = record_serde
        self._topic_partition = topic_partition
        self._time = time
        self._raft_config = raft_config_of(config)
        self._thread_name_prefix = thread_name_prefix or "kafka-raft"
        self._log_prefix = f"[RaftManager nodeId={config.node_id}] "
        self.logger = IdentLogger(logger, self._log_prefix)
        self._metrics_registry = metrics_registry

        self._scheduler = KafkaScheduler(1, f"{self._thread_name_prefix}-scheduler")
        self._scheduler.startup()
        self._expiration_service: Optional[TimingWheelExpirationService] = None
        self._metadata_log: Optional[KafkaMetadataLog] = None
        self._net_channel: Optional[KafkaNetworkChannel] = None
        try:
            self.data_dir = self._create_data_dir()
            self._metadata_log = self._build_metadata_log()
            self._net_channel = self._build_network_channel()
            self._raft_client = self._build_raft_client()
        except BaseException:
            self._close_resources()
            raise
        self._raft_io_thread = RaftIoThread(self._raft_client, self._thread_name_prefix, self._log_prefix)

    @property
    def kafka_raft_client(self) -> KafkaRaftClient[T]:
        return self._raft_client

    @property
    def metadata_log(self) -> KafkaMetadataLog:
        assert self._metadata_log is not None
        return self._metadata_log

    def startup(self) -> None:
        # The voters' addresses as configured (the client has them too; a voter known by id
        # only, 0.0.0.0:0, gets its address later).
        for voter_id, spec in self._raft_config.quorum_voter_connections().items():
            if isinstance(spec, InetAddressSpec):
                self._net_channel.update_endpoint(voter_id, spec)
            elif isinstance(spec, UnknownAddressSpec):
                self.logger.info("Skipping channel update for destination ID: %d because of non-routable "
                                 "endpoint: %s:%d", voter_id, *NON_ROUTABLE_ADDRESS)
            else:
                self.logger.warning("Unexpected address spec (type: %s) for channel update for destination ID: %d",
                                    type(spec).__name__, voter_id)
        self._net_channel.start()
        self._raft_io_thread.start()

    def shutdown(self) -> None:
        self._raft_io_thread.shutdown()
        self._raft_client.close()
        self._close_resources()

    def _close_resources(self) -> None:
        self._scheduler.shutdown()
        if self._net_channel is not None:
            self._net_channel.close()
        if self._expiration_service is not None:
            self._expiration_service.shutdown()
        if self._metadata_log is not None:
            self._metadata_log.close()
            self._metadata_log = None

    # ---- RaftManager --------------------------------------------------------------------
    def register(self, listener: Listener[T]) -> None:
        self._raft_client.register(listener)

    def schedule_atomic_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        return self._append(epoch, records, True)

    def schedule_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        return self._append(epoch, records, False)

    def _append(self, epoch: int, records: Sequence[T], is_atomic: bool) -> Optional[int]:
        if is_atomic:
            offset = self._raft_client.schedule_atomic_append(epoch, records)
        else:
            offset = self._raft_client.schedule_append(epoch, records)
        return offset

    def handle_request(self, header: RequestHeader, request: Any, created_time_ms: int) -> CompletableFuture[Any]:
        inbound_request = RaftRequest.Inbound(header.correlation_id, request, created_time_ms)
        self._raft_client.handle(inbound_request)
        response: CompletableFuture[Any] = CompletableFuture()

        def done(outbound: Any, exception: Optional[BaseException]) -> None:
            if exception is not None:
                response.complete_exceptionally(exception)
            else:
                response.complete(outbound.data())

        inbound_request.completion.when_complete(done)
        return response

    # ---- building ------------------------------------------------------------------------
    def _build_raft_client(self) -> KafkaRaftClient[T]:
        self._expiration_service = TimingWheelExpirationService(SystemTimer("raft-expiration-executor"))
        quorum_state_store = FileBasedStateStore(os.path.join(self.data_dir, "quorum-state"))
        client = KafkaRaftClient(self._record_serde, self._net_channel, self._metadata_log, quorum_state_store,
                                 self._time, self._expiration_service, str(self.meta_properties.cluster_id),
                                 self.config.node_id, self._raft_config, metrics_registry=self._metrics_registry)
        client.initialize()
        return client

    def _build_network_channel(self) -> KafkaNetworkChannel:
        from kafka_py.clients.network_client import NetworkClient
        from kafka_py.network.channel_builders import create_client_channel_builder

        config = self.config
        controller_listener_name = ListenerName.normalised(config.controller_listener_names[0])
        security_protocol = config.listener_security_protocol_map.get(controller_listener_name)
        if security_protocol is None:
            security_protocol = SecurityProtocol.for_name(controller_listener_name.value)
        channel_builder = create_client_channel_builder(config, controller_listener_name.value, security_protocol,
                                                        config.sasl_mechanism_controller_protocol)
        client_id = f"raft-client-{config.node_id}"

        def new_client(node: Node) -> NetworkClient:
            return NetworkClient(node, client_id, config.quorum_request_timeout_ms,
                                 socket_receive_buffer=config.socket_receive_buffer_bytes, time=self._time,
                                 channel_builder=channel_builder)

        return KafkaNetworkChannel(self._time, new_client, config.quorum_request_timeout_ms,
                                   self._thread_name_prefix, self._log_prefix)

    def _create_data_dir(self) -> str:
        data_dir = os.path.join(os.path.abspath(self.config.metadata_log_dir), log_dir_name(self._topic_partition))
        os.makedirs(data_dir, exist_ok=True)
        return data_dir

    def _build_metadata_log(self) -> KafkaMetadataLog:
        return KafkaMetadataLog.apply(self._topic_partition, self.data_dir, self._time, self._scheduler,
                                      MetadataLogConfig.from_config(self.config, MAX_BATCH_SIZE_BYTES,
                                                                    MAX_FETCH_SIZE_BYTES))


__all__ = ["RaftManager", "KafkaRaftManager", "RaftIoThread", "raft_config_of"]
