"""Port of core/src/main/scala/kafka/controller/ControllerChannelManager.scala.

The controller talks to every live broker, itself included, through one RequestSendThread per
broker. Each thread owns a NetworkClient (kafka_py/clients/network_client.py, the broker's one
blocking client) connected to the broker's control-plane (or, when none is configured,
inter-broker) listener, and a FIFO queue of control requests (LeaderAndIsr, UpdateMetadata,
StopReplica). It sends one request at a time through NetworkClientUtils' ``send_and_receive``
and waits for its response, so a broker sees the controller's requests in exactly the order
the controller made its decisions. Connecting waits at most controller.socket.timeout.ms, a
response at most request.timeout.ms. A failed connect or send drops the connection, backs off
100 ms and retries the same request until it succeeds or the broker is removed (it died, or
this controller resigned); its queue is then dropped. Removing a broker wakes its thread at
once, even in the middle of a connect.

Responses are handed to a callback on the send thread; the callbacks the request batch
installs only enqueue controller events, so all decisions stay on the event thread.

ControllerBrokerRequestBatch collects the requests one state change implies (per broker:
partition states for LeaderAndIsr and StopReplica, and the partitions and target brokers of
one UpdateMetadata) and sends them together. Versions follow inter.broker.protocol.version as
2.8.2 does: LeaderAndIsr v5 / UpdateMetadata v7 from 2.8-IV1 (topic ids), v4 / v6 below;
StopReplica v3 (per-partition leader epoch and delete flag). Protocol versions older than
2.4-IV1 are not supported by kafka-py's controller and get the 2.4 layouts.
"""
from __future__ import annotations

import logging
import queue
import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.clients.network_client import NetworkClient
from kafka_py.clients.network_client_utils import await_ready, is_ready, send_and_receive
from kafka_py.core.cluster.broker import Broker, ListenerName, Node
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.state_change_logger import StateChangeLogger
from kafka_py.log.log_config import api_version
from kafka_py.network.channel_builders import inter_broker_client_channel_builder
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import LeaderAndIsrPartitionState, UpdateMetadataPartitionState
from kafka_py.clients.common.protocol.schema_imports import import_schema_module
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.zk_data import ZERO_UUID, ReplicaAssignment

if TYPE_CHECKING:
    from kafka_py.controller.controller_context import ControllerContext
    from kafka_py.controller.controller_event_manager import ControllerEvent, ControllerEventManager

logger = logging.getLogger(__name__)

_BACKOFF_MS = 100

ResponseCallback = Callable[[Any], None]


# -- versions --------------------------------------------------------------------------------

def leader_and_isr_request_version(config: Any) -> int:
    return 5 if config.inter_broker_protocol_version >= api_version("2.8-IV1") else 4


def update_metadata_request_version(config: Any) -> int:
    return 7 if config.inter_broker_protocol_version >= api_version("2.8-IV1") else 6


def stop_replica_request_version(config: Any) -> int:
    return 3


def _schema_module(api: str, version: int, kind: str = "request") -> Any:
    return import_schema_module(f"kafka_py.clients.common.protocol.schema.{api}.v{version}.{kind}")


def _controller_listener(config: Any) -> ListenerName:
    # A dedicated control-plane listener (KIP-291) keeps controller requests out of the
    # data-plane queues; without one the inter-broker listener carries them.
    name = config.control_plane_listener_name
    return name if name is not None else config.inter_broker_listener_name


# -- the channel manager ---------------------------------------------------------------------

@dataclass(frozen=True)
class QueueItem:
    api_key: ApiKeys
    api_version: int
    request: Any
    callback: ResponseCallback | None
    enqueue_time_ms: int


@dataclass
class ControllerBrokerStateInfo:
    broker_node_id: int
    host: str
    port: int
    network_client: NetworkClient
    message_queue: "queue.Queue[QueueItem | None]"
    request_send_thread: "RequestSendThread"


class ControllerChannelManager:
    def __init__(self, controller_context: "ControllerContext", config: Any, time: Time = Time.SYSTEM,
                 state_change_logger: StateChangeLogger | None = None,
                 thread_name_prefix: str | None = None) -> None:
        self.controller_context = controller_context
        self.config = config
        self.time = time
        self.state_change_logger = state_change_logger or StateChangeLogger(config.broker_id, True)
        self.thread_name_prefix = thread_name_prefix
        self.broker_state_info: dict[int, ControllerBrokerStateInfo] = {}
        self._broker_lock = threading.Lock()
        self.logger = IdentLogger(logger, f"[Channel manager on controller {config.broker_id}]: ")

    def startup(self) -> None:
        with self._broker_lock:
            for broker in self.controller_context.live_or_shutting_down_brokers:
                self._add_new_broker(broker)
            for broker_id in list(self.broker_state_info):
                self._start_request_send_thread(broker_id)

    def shutdown(self) -> None:
        with self._broker_lock:
            for state in list(self.broker_state_info.values()):
                self._remove_existing_broker(state)

    @property
    def total_queue_size(self) -> int:
        with self._broker_lock:
            return sum(s.message_queue.qsize() for s in self.broker_state_info.values())

    def send_request(self, broker_id: int, api_key: ApiKeys, api_version: int, request: Any,
                     callback: ResponseCallback | None = None) -> None:
        with self._broker_lock:
            state = self.broker_state_info.get(broker_id)
            if state is None:
                self.logger.warning("Not sending request %s to broker %d, since it is offline.",
                                    type(request).__name__, broker_id)
                return
            state.message_queue.put(QueueItem(api_key, api_version, request, callback, self.time.milliseconds()))

    def add_broker(self, broker: Broker) -> None:
        with self._broker_lock:
            # startup() may already have started a thread for this broker.
            if broker.id not in self.broker_state_info:
                self._add_new_broker(broker)
                self._start_request_send_thread(broker.id)

    def remove_broker(self, broker_id: int) -> None:
        with self._broker_lock:
            state = self.broker_state_info.get(broker_id)
            if state is not None:
                self._remove_existing_broker(state)

    def _add_new_broker(self, broker: Broker) -> None:
        listener = _controller_listener(self.config)
        node = broker.node(listener)
        self.logger.debug("Controller %d trying to connect to broker %d", self.config.broker_id, broker.id)
        message_queue: queue.Queue[QueueItem | None] = queue.Queue()
        name = f"Controller-{self.config.broker_id}-to-broker-{broker.id}-send-thread"
        if self.thread_name_prefix:
            name = f"{self.thread_name_prefix}:{name}"
        # A bind-all listener registers no host; such a broker is reachable on this machine.
        host = node.host or "localhost"
        # the control-plane listener's security protocol, else the inter-broker one's
        network_client = NetworkClient(Node(broker.id, host, node.port),
                                       f"controller-{self.config.broker_id}-to-broker-{broker.id}",
                                       request_timeout_ms=self.config.request_timeout_ms, time=self.time,
                                       channel_builder=inter_broker_client_channel_builder(self.config,
                                                                                           control_plane=True))
        thread = RequestSendThread(self.config.broker_id, self.controller_context, message_queue, network_client,
                                   self.config, self.time, name)
        self.broker_state_info[broker.id] = ControllerBrokerStateInfo(broker.id, host, node.port, network_client,
                                                                      message_queue, thread)

    def _remove_existing_broker(self, state: ControllerBrokerStateInfo) -> None:
        try:
            # the thread is done with the client once it has stopped; only then is it closed
            state.request_send_thread.shutdown()
            state.network_client.close()
            while True:
                try:
                    state.message_queue.get_nowait()
                except queue.Empty:
                    break
            self.broker_state_info.pop(state.broker_node_id, None)
        except Exception:  # noqa: BLE001 - a broker that will not go away must not stop the others
            self.logger.exception("Error while removing broker by the controller")

    def _start_request_send_thread(self, broker_id: int) -> None:
        thread = self.broker_state_info[broker_id].request_send_thread
        if thread.ident is None and not thread.is_shutdown_initiated:
            thread.start()


class RequestSendThread(ShutdownableThread):
    """Sends one broker's queued control requests, one at a time, over its NetworkClient."""

    def __init__(self, controller_id: int, controller_context: "ControllerContext",
                 message_queue: "queue.Queue[QueueItem | None]", network_client: NetworkClient, config: Any,
                 time: Time, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.controller_id = controller_id
        self.controller_context = controller_context
        self.queue = message_queue
        self.network_client = network_client
        self.broker_id = network_client.node.id
        self.config = config
        self.time = time
        self.logger.ident = f"[RequestSendThread controllerId={controller_id}] "
        self._socket_timeout_ms = config.controller_socket_timeout_ms

    @property
    def broker_node(self) -> str:
        node = self.network_client.node
        return f"{node.host}:{node.port} (id: {node.id})"

    def initiate_shutdown(self) -> bool:
        if not super().initiate_shutdown():
            return False
        # Wake the thread wherever it blocks: on the queue, or inside a connect or a read.
        self.queue.put(None)
        self.network_client.initiate_close()
        return True

    def do_work(self) -> None:
        item = self.queue.get()
        if item is None:
            return
        response = None
        try:
            sent = False
            # Retry until sent: if the broker stays down, the controller's broker-change
            # handling removes it, which shuts this thread down and ends the loop.
            while self.is_running and not sent:
                try:
                    if not self._broker_ready():
                        self.pause(_BACKOFF_MS)
                        continue
                    response = send_and_receive(self.network_client, item.api_key, item.api_version,
                                                item.request).response_body
                    sent = True
                except Exception as e:  # noqa: BLE001 - any failure means reconnect and resend
                    if self.is_running:
                        self.logger.warning("Controller %d epoch %d fails to send request %s to broker %s. "
                                            "Reconnecting to broker.", self.controller_id,
                                            self.controller_context.epoch, type(item.request).__name__,
                                            self.broker_node, exc_info=e)
                    self.network_client.disconnect()
                    self.pause(_BACKOFF_MS)
            if response is not None:
                self.logger.debug("Received response %s for request %s sent to broker %s",
                                  response, item.api_key.api_name, self.broker_node)
                if item.callback is not None:
                    item.callback(response)
        except Exception:  # noqa: BLE001 - keep sending the next requests
            self.logger.exception("Controller %d fails to send a request to broker %s",
                                  self.controller_id, self.broker_node)
            # a connection that failed mid-request cannot be trusted with the next one
            self.network_client.disconnect()

    def _broker_ready(self) -> bool:
        """Connected, or connected now within controller.socket.timeout.ms."""
        try:
            if not is_ready(self.network_client):
                if not await_ready(self.network_client, self._socket_timeout_ms):
                    raise TimeoutError(f"Failed to connect within {self._socket_timeout_ms} ms")
                self.logger.info("Controller %d connected to %s for sending state change requests",
                                 self.controller_id, self.broker_node)
            return True
        except Exception as e:  # noqa: BLE001 - refused, timed out, or shutting down
            if self.is_running:
                self.logger.warning("Controller %d's connection to broker %s was unsuccessful: %s",
                                    self.controller_id, self.broker_node, e)
            self.network_client.disconnect()
            return False


# -- the request batch -----------------------------------------------------------------------

@dataclass(frozen=True)
class StopReplicaPartitionStateInfo:
    partition_index: int
    leader_epoch: int
    delete_partition: bool


class AbstractControllerBrokerRequestBatch:
    def __init__(self, config: Any, controller_context: "ControllerContext",
                 state_change_logger: StateChangeLogger) -> None:
        self.config = config
        self.controller_context = controller_context
        self.state_change_logger = state_change_logger
        self.controller_id: int = config.broker_id
        self.leader_and_isr_request_map: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        self.stop_replica_request_map: dict[int, dict[TopicPartition, StopReplicaPartitionStateInfo]] = {}
        self.update_metadata_request_broker_set: set[int] = set()
        self.update_metadata_request_partition_info_map: dict[TopicPartition, UpdateMetadataPartitionState] = {}

    def send_event(self, event: "ControllerEvent") -> None:
        raise NotImplementedError

    def send_request(self, broker_id: int, api_key: ApiKeys, api_version: int, request: Any,
                     callback: ResponseCallback | None = None) -> None:
        raise NotImplementedError

    def new_batch(self) -> None:
        # A non-empty batch here means an earlier state change never sent its requests.
        if self.leader_and_isr_request_map:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some LeaderAndIsr state changes {self.leader_and_isr_request_map} might be lost ")
        if self.stop_replica_request_map:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some StopReplica state changes {self.stop_replica_request_map} might be lost ")
        if self.update_metadata_request_broker_set:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some UpdateMetadata state changes to brokers {self.update_metadata_request_broker_set} with "
                f"partition info {self.update_metadata_request_partition_info_map} might be lost ")

    def clear(self) -> None:
        self.leader_and_isr_request_map.clear()
        self.stop_replica_request_map.clear()
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def add_leader_and_isr_request_for_brokers(self, broker_ids: Iterable[int], topic_partition: TopicPartition,
                                               leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch,
                                               replica_assignment: ReplicaAssignment, is_new: bool) -> None:
        leader_and_isr = leader_isr_and_controller_epoch.leader_and_isr
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            result = self.leader_and_isr_request_map.setdefault(broker_id, {})
            already_new = result.get(topic_partition) is not None and result[topic_partition].is_new
            result[topic_partition] = LeaderAndIsrPartitionState(
                topic_name=topic_partition.topic,
                partition_index=topic_partition.partition,
                controller_epoch=leader_isr_and_controller_epoch.controller_epoch,
                leader=leader_and_isr.leader,
                leader_epoch=leader_and_isr.leader_epoch,
                isr=tuple(leader_and_isr.isr),
                zk_version=leader_and_isr.zk_version,
                replicas=tuple(replica_assignment.replicas),
                adding_replicas=tuple(replica_assignment.adding_replicas),
                removing_replicas=tuple(replica_assignment.removing_replicas),
                is_new=is_new or already_new,
            )
        self.add_update_metadata_request_for_brokers(
            sorted(self.controller_context.live_or_shutting_down_broker_ids), [topic_partition])

    def add_stop_replica_request_for_brokers(self, broker_ids: Iterable[int], topic_partition: TopicPartition,
                                             delete_partition: bool) -> None:
        # A topic being deleted gets the -2 sentinel epoch, which overrides whatever epoch the
        # broker holds, so the delete is never refused as stale.
        if self.controller_context.is_topic_queued_up_for_deletion(topic_partition.topic):
            leader_epoch = LeaderAndIsr.EPOCH_DURING_DELETE
        else:
            info = self.controller_context.partition_leadership_info(topic_partition)
            leader_epoch = info.leader_and_isr.leader_epoch if info is not None else LeaderAndIsr.NO_EPOCH
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            result = self.stop_replica_request_map.setdefault(broker_id, {})
            already_delete = topic_partition in result and result[topic_partition].delete_partition
            result[topic_partition] = StopReplicaPartitionStateInfo(
                topic_partition.partition, leader_epoch, already_delete or delete_partition)

    def add_update_metadata_request_for_brokers(self, broker_ids: Iterable[int],
                                                partitions: Iterable[TopicPartition]) -> None:
        self.update_metadata_request_broker_set.update(b for b in broker_ids if b >= 0)
        for partition in partitions:
            being_deleted = partition.topic in self.controller_context.topics_to_be_deleted
            info = self.controller_context.partition_leadership_info(partition)
            if info is None:
                logger.info("Leader not yet assigned for partition %s. Skip sending UpdateMetadataRequest.", partition)
                continue
            replicas = self.controller_context.partition_replica_assignment(partition)
            offline_replicas = tuple(r for r in replicas if not self.controller_context.is_replica_online(r, partition))
            leader_and_isr = info.leader_and_isr
            if being_deleted:
                # Leader -2 tells brokers the topic is going away, so they drop it from their caches.
                leader_and_isr = LeaderAndIsr.during_delete(leader_and_isr.isr)
            self.update_metadata_request_partition_info_map[partition] = UpdateMetadataPartitionState(
                topic_name=partition.topic,
                partition_index=partition.partition,
                controller_epoch=info.controller_epoch,
                leader=leader_and_isr.leader,
                leader_epoch=leader_and_isr.leader_epoch,
                isr=tuple(leader_and_isr.isr),
                zk_version=leader_and_isr.zk_version,
                replicas=tuple(replicas),
                offline_replicas=offline_replicas,
            )

    # -- sending ---------------------------------------------------------------------------

    def _send_leader_and_isr_request(self, controller_epoch: int, state_change_log: StateChangeLogger) -> None:
        version = leader_and_isr_request_version(self.config)
        schema = _schema_module("leader_and_isr", version)
        live_brokers = {b.id: b for b in self.controller_context.live_or_shutting_down_brokers}
        broker_epochs = self.controller_context.live_broker_id_and_epochs
        for broker, partition_states in self.leader_and_isr_request_map.items():
            if broker not in broker_epochs:
                continue
            leader_ids = {s.leader for s in partition_states.values()}
            num_become_leaders = sum(1 for s in partition_states.values() if s.leader == broker)
            if state_change_log.is_trace_enabled:
                for tp, s in partition_states.items():
                    kind = "become-leader" if s.leader == broker else "become-follower"
                    state_change_log.trace(f"Sending {kind} LeaderAndIsr request {s} to broker {broker} for partition {tp}")
            state_change_log.info(f"Sending LeaderAndIsr request to broker {broker} with {num_become_leaders} "
                                  f"become-leader and {len(partition_states) - num_become_leaders} "
                                  "become-follower partitions")
            leaders = []
            for leader_id in sorted(leader_ids):
                leader_broker = live_brokers.get(leader_id)
                if leader_broker is None:
                    continue
                node = leader_broker.get_node(self.config.inter_broker_listener_name)
                if node is not None:
                    leaders.append(schema.LeaderAndIsrLiveLeader(broker_id=node.id, host_name=node.host or "",
                                                                 port=node.port))
            by_topic: dict[str, list[Any]] = {}
            for s in partition_states.values():
                by_topic.setdefault(s.topic_name, []).append(schema.LeaderAndIsrPartitionState(
                    partition_index=s.partition_index, controller_epoch=s.controller_epoch, leader=s.leader,
                    leader_epoch=s.leader_epoch, isr=s.isr, zk_version=s.zk_version, replicas=s.replicas,
                    adding_replicas=s.adding_replicas, removing_replicas=s.removing_replicas, is_new=s.is_new))
            topic_states = []
            for topic, states in by_topic.items():
                extra: dict[str, Any] = (
                {"topic_id": self.controller_context.topic_ids.get(topic, ZERO_UUID)} if version >= 5 else {})
                topic_states.append(schema.LeaderAndIsrTopicState(topic_name=topic, partition_states=tuple(states),
                                                                  **extra))
            # v5's request type (KIP-516's full/incremental flag) stays 0, as 2.8.2 leaves it.
            extra = {"type": 0} if version >= 5 else {}
            request = schema.LeaderAndIsrRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=broker_epochs[broker], topic_states=tuple(topic_states),
                live_leaders=tuple(leaders), **extra)
            self.send_request(broker, ApiKeys.LEADER_AND_ISR, version, request,
                              self._leader_and_isr_callback(broker))
        self.leader_and_isr_request_map.clear()

    def _leader_and_isr_callback(self, broker: int) -> ResponseCallback:
        def callback(response: Any) -> None:
            from kafka_py.controller.kafka_controller import LeaderAndIsrResponseReceived
            self.send_event(LeaderAndIsrResponseReceived(response, broker))
        return callback

    def _send_update_metadata_requests(self, controller_epoch: int, state_change_log: StateChangeLogger) -> None:
        state_change_log.info(f"Sending UpdateMetadata request to brokers "
                              f"{sorted(self.update_metadata_request_broker_set)} for "
                              f"{len(self.update_metadata_request_partition_info_map)} partitions")
        version = update_metadata_request_version(self.config)
        schema = _schema_module("update_metadata", version)
        live_brokers = []
        for broker in self.controller_context.live_or_shutting_down_brokers:
            endpoints = tuple(schema.UpdateMetadataEndpoint(
                port=e.port, host=e.host or "", listener=e.listener_name.value,
                security_protocol=e.security_protocol.id) for e in broker.end_points)
            live_brokers.append(schema.UpdateMetadataBroker(id=broker.id, endpoints=endpoints, rack=broker.rack))
        by_topic: dict[str, list[Any]] = {}
        for s in self.update_metadata_request_partition_info_map.values():
            by_topic.setdefault(s.topic_name, []).append(schema.UpdateMetadataPartitionState(
                partition_index=s.partition_index, controller_epoch=s.controller_epoch, leader=s.leader,
                leader_epoch=s.leader_epoch, isr=s.isr, zk_version=s.zk_version, replicas=s.replicas,
                offline_replicas=s.offline_replicas))
        topic_states = []
        for topic, states in by_topic.items():
            extra = {"topic_id": self.controller_context.topic_ids.get(topic, ZERO_UUID)} if version >= 7 else {}
            topic_states.append(schema.UpdateMetadataTopicState(topic_name=topic, partition_states=tuple(states),
                                                                **extra))
        broker_epochs = self.controller_context.live_broker_id_and_epochs
        for broker_id in sorted(self.update_metadata_request_broker_set & set(broker_epochs)):
            request = schema.UpdateMetadataRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=broker_epochs[broker_id], topic_states=tuple(topic_states),
                live_brokers=tuple(live_brokers))
            self.send_request(broker_id, ApiKeys.UPDATE_METADATA, version, request,
                              self._update_metadata_callback(broker_id))
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def _update_metadata_callback(self, broker: int) -> ResponseCallback:
        def callback(response: Any) -> None:
            from kafka_py.controller.kafka_controller import UpdateMetadataResponseReceived
            self.send_event(UpdateMetadataResponseReceived(response, broker))
        return callback

    def _send_stop_replica_requests(self, controller_epoch: int, state_change_log: StateChangeLogger) -> None:
        version = stop_replica_request_version(self.config)
        schema = _schema_module("stop_replica", version)
        broker_epochs = self.controller_context.live_broker_id_and_epochs
        for broker_id, partition_states in self.stop_replica_request_map.items():
            if broker_id not in broker_epochs:
                continue
            if state_change_log.is_trace_enabled:
                for tp, s in partition_states.items():
                    state_change_log.trace(f"Sending StopReplica request {s} to broker {broker_id} for partition {tp}")
            by_topic: dict[str, list[Any]] = {}
            for tp, s in partition_states.items():
                by_topic.setdefault(tp.topic, []).append(schema.StopReplicaPartitionState(
                    partition_index=s.partition_index, leader_epoch=s.leader_epoch,
                    delete_partition=s.delete_partition))
            state_change_log.info(f"Sending StopReplica request for {len(partition_states)} replicas to broker {broker_id}")
            request = schema.StopReplicaRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=broker_epochs[broker_id],
                topic_states=tuple(schema.StopReplicaTopicState(topic_name=t, partition_states=tuple(states))
                                   for t, states in by_topic.items()))
            deleted = {tp for tp, s in partition_states.items() if s.delete_partition}
            self.send_request(broker_id, ApiKeys.STOP_REPLICA, version, request,
                              self._stop_replica_callback(broker_id, deleted))
        self.stop_replica_request_map.clear()

    def _stop_replica_callback(self, broker_id: int, deleted: set[TopicPartition]) -> ResponseCallback:
        def callback(response: Any) -> None:
            from kafka_py.controller.kafka_controller import TopicDeletionStopReplicaResponseReceived
            partition_errors: dict[TopicPartition, Errors] = {}
            for pe in response.partition_errors:
                tp = TopicPartition(pe.topic_name, pe.partition_index)
                if self.controller_context.is_topic_deletion_in_progress(pe.topic_name) and tp in deleted:
                    partition_errors[tp] = Errors.for_code(pe.error_code)
            if partition_errors:
                self.send_event(TopicDeletionStopReplicaResponseReceived(
                    broker_id, Errors.for_code(response.error_code), partition_errors))
        return callback

    def send_requests_to_brokers(self, controller_epoch: int) -> None:
        try:
            state_change_log = self.state_change_logger.with_controller_epoch(controller_epoch)
            self._send_leader_and_isr_request(controller_epoch, state_change_log)
            self._send_update_metadata_requests(controller_epoch, state_change_log)
            self._send_stop_replica_requests(controller_epoch, state_change_log)
        except Exception as e:
            if self.leader_and_isr_request_map:
                logger.error("Haven't been able to send leader and isr requests, current state of the map is "
                             "%s. Exception message: %s", self.leader_and_isr_request_map, e)
            if self.update_metadata_request_broker_set:
                logger.error("Haven't been able to send metadata update requests to brokers %s, current state "
                             "of the partition info is %s. Exception message: %s",
                             self.update_metadata_request_broker_set,
                             self.update_metadata_request_partition_info_map, e)
            if self.stop_replica_request_map:
                logger.error("Haven't been able to send stop replica requests, current state of the map is "
                             "%s. Exception message: %s", self.stop_replica_request_map, e)
            raise IllegalStateException(str(e)) from e


class ControllerBrokerRequestBatch(AbstractControllerBrokerRequestBatch):
    def __init__(self, config: Any, controller_channel_manager: ControllerChannelManager,
                 controller_event_manager: "ControllerEventManager", controller_context: "ControllerContext",
                 state_change_logger: StateChangeLogger) -> None:
        super().__init__(config, controller_context, state_change_logger)
        self.controller_channel_manager = controller_channel_manager
        self.controller_event_manager = controller_event_manager

    def send_event(self, event: "ControllerEvent") -> None:
        self.controller_event_manager.put(event)

    def send_request(self, broker_id: int, api_key: ApiKeys, api_version: int, request: Any,
                     callback: ResponseCallback | None = None) -> None:
        self.controller_channel_manager.send_request(broker_id, api_key, api_version, request, callback)


class IllegalStateException(KafkaException):
    """The controller's in-memory state is inconsistent (Java's IllegalStateException); the
    controller resigns when it sees one from a request batch."""


def leader_and_isr_partition_errors(response: Any, topic_names: dict[uuid.UUID, str]) -> dict[TopicPartition, Errors]:
    """Per-partition errors of a LeaderAndIsr response of any version (v5 names topics by id)."""
    errors: dict[TopicPartition, Errors] = {}
    if hasattr(response, "topics"):
        for topic in response.topics:
            name = topic_names.get(topic.topic_id)
            if name is None:
                continue
            for pe in topic.partition_errors:
                errors[TopicPartition(name, pe.partition_index)] = Errors.for_code(pe.error_code)
    else:
        for pe in response.partition_errors:
            errors[TopicPartition(pe.topic_name, pe.partition_index)] = Errors.for_code(pe.error_code)
    return errors
