"""Port of core/src/main/scala/kafka/server/AlterIsrManager.scala (Kafka 2.8.2, with ZkIsrManager.scala).

A partition leader that wants to shrink or expand its ISR hands an ``AlterIsrItem`` to the
broker's AlterIsrManager and learns the outcome later, through the item's callback: the
LeaderAndIsr now stored (with its new zkVersion), or an Errors member. Which manager a broker
uses depends on ``inter.broker.protocol.version``, as in Kafka:

* 2.7-IV2 and later: ``DefaultAlterIsrManager``. Items wait in ``unsent_isr_updates`` (one
  per partition; a second one for a partition is refused until the first is answered) and go
  to the active controller as one AlterIsr request (API key 56) carrying every waiting item,
  with at most one request in flight. The controller validates and writes the state znodes
  and answers per partition. A top-level error (NOT_CONTROLLER is retried by the channel
  itself; STALE_BROKER_EPOCH, an unknown error) leaves the items waiting and the request is
  sent again 50 ms later; a request is never given up, so a leader's proposal is answered
  eventually or made moot by a LeaderAndIsr (``clear_pending``).
* below 2.7-IV2: ``ZkIsrManager``. The leader writes the partition state znode itself, with a
  set conditional on the zkVersion it knows, answers the item at once, and records the
  partition for an ISR change notification. A scheduled task writes the notifications
  (``/isr_change_notification/isr_change_<seq>``) in batches: after 5 s without further
  changes, or at the latest 60 s after the previous batch. The controller's
  IsrChangeNotification handler then sends UpdateMetadata to every broker.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.core.utils import replication_utils
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    from kafka_py.server.broker_to_controller_channel_manager import (
        BrokerToControllerChannelManager,
        ClientResponse,
    )
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)

# The controller's answer for one partition: the state it stored, or why not (Kafka's Either).
AlterIsrResult = Union[Errors, LeaderAndIsr]

# How soon a request that got a top-level error is sent again.
RETRY_DELAY_MS = 50


@dataclass(frozen=True, slots=True)
class AlterIsrItem:
    """One partition's proposed ISR: ``leader_and_isr`` carries the leader epoch and the
    zkVersion the leader knows; ``controller_epoch`` is only needed by ZkIsrManager's write."""

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr
    callback: Callable[[AlterIsrResult], None]
    controller_epoch: int


class AlterIsrManager:
    """What Partition needs of either manager."""

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def submit(self, alter_isr_item: AlterIsrItem) -> bool:
        """Accept the item (False: one for this partition is already waiting)."""
        raise NotImplementedError

    def clear_pending(self, topic_partition: TopicPartition) -> None:
        """Forget a waiting item: the partition's leadership changed, so its proposal is moot."""
        raise NotImplementedError


def create_alter_isr_manager(config: Any, metadata_cache: Any, scheduler: Any, time: Time, zk_client: "KafkaZkClient",
                             broker_epoch_supplier: Callable[[], int],
                             thread_name_prefix: Optional[str] = None) -> AlterIsrManager:
    """KafkaServer's choice: AlterIsr to the controller from IBP 2.7-IV2, ZooKeeper writes below."""
    from kafka_py.log.log_config import api_version

    if config.inter_broker_protocol_version >= api_version("2.7-IV2"):
        from kafka_py.server.broker_to_controller_channel_manager import (
            BrokerToControllerChannelManager,
            MetadataCacheControllerNodeProvider,
        )

        channel_manager = BrokerToControllerChannelManager(
            MetadataCacheControllerNodeProvider.create(config, metadata_cache), time, config, "alterIsrChannel",
            thread_name_prefix)
        return DefaultAlterIsrManager(channel_manager, scheduler, time, config.broker_id, broker_epoch_supplier)
    return ZkIsrManager(scheduler, time, zk_client)


# -- AlterIsr to the controller ----------------------------------------------------------------

class DefaultAlterIsrManager(AlterIsrManager):
    def __init__(self, controller_channel_manager: "BrokerToControllerChannelManager", scheduler: Any, time: Time,
                 broker_id: int, broker_epoch_supplier: Callable[[], int]) -> None:
        self.controller_channel_manager = controller_channel_manager
        self.scheduler = scheduler
        self.time = time
        self.broker_id = broker_id
        self.broker_epoch_supplier = broker_epoch_supplier
        self.logger = IdentLogger(logger, f"[AlterIsrManager broker={broker_id}] ")
        self._lock = threading.Lock()  # guards the two fields below
        self.unsent_isr_updates: dict[TopicPartition, AlterIsrItem] = {}
        self._inflight_request = False

    def start(self) -> None:
        self.controller_channel_manager.start()

    def shutdown(self) -> None:
        self.controller_channel_manager.shutdown()

    def submit(self, alter_isr_item: AlterIsrItem) -> bool:
        with self._lock:
            enqueued = alter_isr_item.topic_partition not in self.unsent_isr_updates
            if enqueued:
                self.unsent_isr_updates[alter_isr_item.topic_partition] = alter_isr_item
        self.maybe_propagate_isr_changes()
        return enqueued

    def clear_pending(self, topic_partition: TopicPartition) -> None:
        with self._lock:
            self.unsent_isr_updates.pop(topic_partition, None)

    def maybe_propagate_isr_changes(self) -> None:
        """Send every waiting item, unless a request is in flight (its answer sends the next)."""
        with self._lock:
            if not self.unsent_isr_updates or self._inflight_request:
                return
            self._inflight_request = True
            # Items stay in the map until answered: a refused or lost request sends them again.
            inflight = list(self.unsent_isr_updates.values())
        self._send_request(inflight)

    def _clear_in_flight_request(self) -> None:
        with self._lock:
            if not self._inflight_request:
                self.logger.warning("Attempting to clear AlterIsr in-flight flag when no apparent request is in-flight")
            self._inflight_request = False

    def schedule_retry(self) -> None:
        try:
            self.scheduler.schedule_once("send-alter-isr", self.maybe_propagate_isr_changes, delay_ms=RETRY_DELAY_MS)
        except Exception:  # noqa: BLE001 - the scheduler is gone: the broker is shutting down
            self.logger.debug("Not retrying AlterIsr: the scheduler is stopped", exc_info=True)

    def _send_request(self, inflight: list[AlterIsrItem]) -> None:
        try:
            broker_epoch = self.broker_epoch_supplier()
            request = self.build_request(inflight, broker_epoch)
        except Exception:  # noqa: BLE001 - the in-flight flag must not stay set with nothing in flight
            self.logger.exception("Could not build the AlterIsr request for %s",
                                  [item.topic_partition for item in inflight])
            self._clear_in_flight_request()
            self.schedule_retry()
            return
        self.logger.debug("Sending AlterIsr to controller %s", request)
        self.controller_channel_manager.send_request(ApiKeys.ALTER_ISR, request,
                                                     _AlterIsrCompletionHandler(self, broker_epoch, inflight))

    def on_response(self, response: "ClientResponse", sent_broker_epoch: int, inflight: list[AlterIsrItem]) -> None:
        """The channel's answer to a request: settle the items, then send what waits (at once
        after a good answer, 50 ms later after a top-level error)."""
        try:
            if response.version_mismatch is not None:
                error = Errors.UNSUPPORTED_VERSION
            else:
                error = self.handle_alter_isr_response(response.response_body, sent_broker_epoch, inflight)
        except Exception:  # noqa: BLE001 - a malformed answer is retried like an error
            self.logger.exception("Error handling the AlterIsr response %s", response)
            error = Errors.UNKNOWN_SERVER_ERROR
        finally:
            self._clear_in_flight_request()
        if error is Errors.NONE:
            # answers often free room for items that arrived meanwhile: send them now
            self.maybe_propagate_isr_changes()
        else:
            self.schedule_retry()

    def on_timeout(self) -> None:
        # The channel never times AlterIsr out (its retry timeout is infinite); should it, the
        # items stay waiting and go again.
        self._clear_in_flight_request()
        self.logger.error("Unexpected timeout of an AlterIsr request to the controller")
        self.schedule_retry()

    def build_request(self, items: list[AlterIsrItem], broker_epoch: int) -> Any:
        """One AlterIsr request with the items grouped by topic."""
        request_cls = request_schema(ApiKeys.ALTER_ISR, 0)
        module = __import__(request_cls.__module__, fromlist=["TopicData", "PartitionData"])
        by_topic: dict[str, list[AlterIsrItem]] = {}
        for item in items:
            by_topic.setdefault(item.topic_partition.topic, []).append(item)
        topics = tuple(
            module.TopicData(name=topic, partitions=tuple(
                module.PartitionData(partition_index=item.topic_partition.partition,
                                     leader_epoch=item.leader_and_isr.leader_epoch,
                                     new_isr=tuple(item.leader_and_isr.isr),
                                     current_isr_version=item.leader_and_isr.zk_version)
                for item in topic_items))
            for topic, topic_items in by_topic.items())
        return request_cls(broker_id=self.broker_id, broker_epoch=broker_epoch, topics=topics)

    def handle_alter_isr_response(self, response: Any, sent_broker_epoch: int,
                                  inflight: list[AlterIsrItem]) -> Errors:
        """Hand each sent item its partition's answer; returns the top-level error."""
        error = Errors.for_code(int(response.error_code))
        if error is Errors.STALE_BROKER_EPOCH:
            self.logger.warning("Broker had a stale broker epoch (%d), retrying.", sent_broker_epoch)
        elif error is Errors.CLUSTER_AUTHORIZATION_FAILED:
            self.logger.error("Broker is not authorized to send AlterIsr to controller")
        elif error is not Errors.NONE:
            self.logger.warning("Controller returned an unexpected top-level error when handling AlterIsr request: %s",
                                error.name)
        else:
            results: dict[TopicPartition, AlterIsrResult] = {}
            for topic in response.topics:
                for p in topic.partitions:
                    tp = TopicPartition(str(topic.name), int(p.partition_index))
                    partition_error = Errors.for_code(int(p.error_code))
                    if partition_error is Errors.NONE:
                        results[tp] = LeaderAndIsr(int(p.leader_id), int(p.leader_epoch),
                                                   tuple(int(r) for r in p.isr), int(p.current_isr_version))
                    else:
                        results[tp] = partition_error
            # Walk what was sent, not what came back, so every sent item is settled or resent.
            for item in inflight:
                result = results.get(item.topic_partition)
                if result is None:
                    self.logger.warning("Partition %s was sent but not included in the response",
                                        item.topic_partition)
                    continue
                # Removed before the callback, so that a retry the callback submits is accepted;
                # and only this very item: clear_pending and a newer proposal may have replaced it.
                with self._lock:
                    if self.unsent_isr_updates.get(item.topic_partition) is item:
                        del self.unsent_isr_updates[item.topic_partition]
                try:
                    item.callback(result)
                except Exception:  # noqa: BLE001 - one partition's failure must not strand the others
                    self.logger.exception("Error handling the AlterIsr answer %s for partition %s",
                                          result, item.topic_partition)
        return error


class _AlterIsrCompletionHandler:
    """The completion handler of one AlterIsr request (Kafka's anonymous
    ControllerRequestCompletionHandler): remembers what was sent, for the manager."""

    def __init__(self, manager: DefaultAlterIsrManager, sent_broker_epoch: int, inflight: list[AlterIsrItem]) -> None:
        self.manager = manager
        self.sent_broker_epoch = sent_broker_epoch
        self.inflight = inflight

    def on_complete(self, response: "ClientResponse") -> None:
        self.manager.on_response(response, self.sent_broker_epoch, self.inflight)

    def on_timeout(self) -> None:
        self.manager.on_timeout()


# -- the controller's side of the message (KafkaController.alterIsrs) --------------------------

def alter_isr_request_partitions(request: Any) -> dict[TopicPartition, LeaderAndIsr]:
    """Each partition of an AlterIsr request as the LeaderAndIsr its sender proposes: the
    sender as leader, its leader epoch, the new ISR and the zkVersion it last saw."""
    proposed: dict[TopicPartition, LeaderAndIsr] = {}
    for topic in request.topics:
        for p in topic.partitions:
            proposed[TopicPartition(str(topic.name), int(p.partition_index))] = LeaderAndIsr(
                int(request.broker_id), int(p.leader_epoch), tuple(int(r) for r in p.new_isr),
                int(p.current_isr_version))
    return proposed


def build_alter_isr_response(result: "dict[TopicPartition, AlterIsrResult] | Errors") -> Any:
    """The AlterIsr answer: a top-level error alone, or per partition the stored state or an error."""
    response_cls = _alter_isr_response_class()
    module = __import__(response_cls.__module__, fromlist=["TopicData", "PartitionData"])
    if isinstance(result, Errors):
        return response_cls(throttle_time_ms=0, error_code=result.error_code, topics=())
    by_topic: dict[str, list[Any]] = {}
    for tp, outcome in result.items():
        if isinstance(outcome, Errors):
            # the other fields keep the message's defaults, as Kafka's answer does
            data = module.PartitionData(partition_index=tp.partition, error_code=outcome.error_code, leader_id=0,
                                        leader_epoch=0, isr=(), current_isr_version=0)
        else:
            data = module.PartitionData(partition_index=tp.partition, error_code=Errors.NONE.error_code,
                                        leader_id=outcome.leader, leader_epoch=outcome.leader_epoch,
                                        isr=tuple(outcome.isr), current_isr_version=outcome.zk_version)
        by_topic.setdefault(tp.topic, []).append(data)
    topics = tuple(module.TopicData(name=topic, partitions=tuple(partitions))
                   for topic, partitions in by_topic.items())
    return response_cls(throttle_time_ms=0, error_code=Errors.NONE.error_code, topics=topics)


def _alter_isr_response_class() -> type:
    from kafka_py.clients.common.protocol.messages import response_schema

    return response_schema(ApiKeys.ALTER_ISR, 0)


# -- ISR changes written to ZooKeeper by the leader ------------------------------------------

@dataclass(frozen=True, slots=True)
class IsrChangePropagationConfig:
    """How often to look for ISR changes to announce, the longest an announcement may wait,
    and how long to wait for further changes before announcing."""

    check_interval_ms: int = 2500
    max_delay_ms: int = 60000
    linger_ms: int = 5000


class ZkIsrManager(AlterIsrManager):
    def __init__(self, scheduler: Any, time: Time, zk_client: "KafkaZkClient",
                 isr_change_notification_config: IsrChangePropagationConfig = IsrChangePropagationConfig()) -> None:
        self.scheduler = scheduler
        self.time = time
        self.zk_client = zk_client
        self.isr_change_notification_config = isr_change_notification_config
        self._lock = threading.Lock()  # guards the three fields below
        self.isr_change_set: set[TopicPartition] = set()
        self._last_isr_change_ms = time.milliseconds()
        self._last_isr_propagation_ms = time.milliseconds()
        self._task = None

    def start(self) -> None:
        interval = self.isr_change_notification_config.check_interval_ms
        self._task = self.scheduler.schedule("isr-change-propagation", self.maybe_propagate_isr_changes,
                                             delay_ms=interval, period_ms=interval)

    def shutdown(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def clear_pending(self, topic_partition: TopicPartition) -> None:
        # Nothing waits here: the write is done in submit; a notification still to be sent is
        # still worth sending.
        pass

    def submit(self, alter_isr_item: AlterIsrItem) -> bool:
        tp = alter_isr_item.topic_partition
        logger.debug("Writing new ISR %s to ZooKeeper with version %d for partition %s",
                     list(alter_isr_item.leader_and_isr.isr), alter_isr_item.leader_and_isr.zk_version, tp)
        succeeded, new_version = replication_utils.update_leader_and_isr(
            self.zk_client, tp, alter_isr_item.leader_and_isr, alter_isr_item.controller_epoch)
        if succeeded:
            with self._lock:
                self.isr_change_set.add(tp)
                self._last_isr_change_ms = self.time.milliseconds()
            # The caller (Partition, holding its ISR write lock) has already moved to the
            # proposed state, which this answer commits.
            alter_isr_item.callback(alter_isr_item.leader_and_isr.with_zk_version(new_version))
        else:
            alter_isr_item.callback(Errors.INVALID_UPDATE_VERSION)
        # Always accepted: the outcome is the callback's.
        return True

    def maybe_propagate_isr_changes(self) -> None:
        """Announce the changed partitions once changes have settled (no change for linger_ms)
        or the last announcement is max_delay_ms old, so a burst of ISR changes becomes one
        notification rather than one per change."""
        now = self.time.milliseconds()
        config = self.isr_change_notification_config
        with self._lock:
            if not self.isr_change_set:
                return
            if not (self._last_isr_change_ms + config.linger_ms < now
                    or self._last_isr_propagation_ms + config.max_delay_ms < now):
                return
            # Written under the lock so that two runs never announce the same changes twice.
            self.zk_client.propagate_isr_changes(sorted(self.isr_change_set))
            self.isr_change_set.clear()
            self._last_isr_propagation_ms = now


__all__ = [
    "AlterIsrItem", "AlterIsrResult", "AlterIsrManager", "DefaultAlterIsrManager", "ZkIsrManager",
    "IsrChangePropagationConfig", "create_alter_isr_manager", "alter_isr_request_partitions",
    "build_alter_isr_response",
]
