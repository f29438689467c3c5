"""A GroupCoordinator over a real storage stack (LogManager, ReplicaManager on tmp_path) with a
manual clock for everything the group protocol times: heartbeats, rebalances, offset expiry.

The purgatories run on a ``MockTimer`` (tasks run on the test's thread when ``tick`` moves
the clock past them) and the GroupMetadataManager on a ``MockScheduler`` (loads, unloads and
the expiry task run synchronously), so the tests are deterministic. Offsets and group
records really go to __consumer_offsets through ReplicaManager.append_records and are read
back from the log on election.
"""
from __future__ import annotations

import heapq
import itertools
import struct
import threading
from typing import Any, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator, MemberIdentity
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema.leader_and_isr.v4 import request as lai4
from kafka_py.server.delayed_operation import DelayedOperationPurgatory
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.metadata_cache import MetadataCache
from kafka_py.server.replica_manager import ReplicaManager
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler, MockScheduler
from kafka_py.clients.common.utils.time import MockTime, Time
from kafka_py.core.utils.timer.system_timer import Timer
from kafka_py.core.utils.timer.timer_task_list import TimerTaskEntry

PROTOCOL_TYPE = "consumer"
DEFAULT_SESSION_TIMEOUT_MS = 10_000
DEFAULT_REBALANCE_TIMEOUT_MS = 30_000


class MockTimer(Timer):
    """Kafka's test MockTimer: due tasks run synchronously when ``advance_clock`` is called."""

    def __init__(self, time: MockTime) -> None:
        self.time = time
        self._queue: list[tuple[int, int, TimerTaskEntry]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def add(self, timer_task) -> None:
        if timer_task.delay_ms <= 0:
            # already due, as SystemTimer hands it straight to its executor
            timer_task.run()
            return
        entry = TimerTaskEntry(timer_task, timer_task.delay_ms + self.time.milliseconds())
        with self._lock:
            heapq.heappush(self._queue, (entry.expiration_ms, next(self._seq), entry))

    def advance_clock(self, timeout_ms: int) -> bool:
        now = self.time.milliseconds()
        ran = False
        while True:
            with self._lock:
                if not self._queue or self._queue[0][0] > now:
                    return ran
                _, _, entry = heapq.heappop(self._queue)
            if not entry.cancelled:
                entry.timer_task.run()
                ran = True

    @property
    def size(self) -> int:
        with self._lock:
            return sum(1 for _, _, e in self._queue if not e.cancelled)

    def shutdown(self) -> None:
        pass


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocol Subscription v0: version, topics, null user data."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        data = t.encode()
        out += struct.pack(">h", len(data)) + data
    return out + struct.pack(">i", -1)


def assignment(partitions: dict[str, list[int]]) -> bytes:
    """A ConsumerProtocol Assignment v0."""
    out = struct.pack(">hi", 0, len(partitions))
    for topic, parts in partitions.items():
        data = topic.encode()
        out += struct.pack(">h", len(data)) + data + struct.pack(">i", len(parts))
        out += b"".join(struct.pack(">i", p) for p in parts)
    return out + struct.pack(">i", -1)


class Result:
    """Collects what a coordinator callback was called with."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> None:
        self.values.append(value)

    @property
    def done(self) -> bool:
        return bool(self.values)

    @property
    def value(self) -> Any:
        assert len(self.values) == 1, f"expected one answer, got {self.values}"
        return self.values[0]


class InternalTopicHarness:
    """Broker 0's storage stack in the test process (config, scheduler, LogManager,
    MetadataCache, ReplicaManager over ``log_dir``) for a coordinator over one internal topic;
    a subclass sets ``internal_topic`` and builds ``self.coordinator``."""

    internal_topic = ""

    def __init__(self, log_dir: str, num_partitions: int, time: Optional[MockTime], props: dict[str, str],
                 overrides: dict[str, str], scheduler_prefix: str) -> None:
        props = {"zookeeper.connect": "localhost:2181", "broker.id": "0", "log.dirs": log_dir, **props}
        props.update({k.replace("_", "."): v for k, v in overrides.items()})
        self.config = KafkaConfig(props, do_log=False)
        self.num_partitions = num_partitions
        self.scheduler = KafkaScheduler(1, scheduler_prefix)
        self.scheduler.startup()
        defaults = self.config.log_config_defaults()
        self.log_manager = LogManager(self.config.log_dirs, LogConfig.from_props(defaults, {}),
                                      default_props=defaults, time=Time.SYSTEM)
        self.log_manager.startup()
        self.metadata_cache = MetadataCache(0)
        self.replica_manager = ReplicaManager(self.config, Time.SYSTEM, None, self.scheduler, self.log_manager,
                                              self.metadata_cache)
        self.replica_manager.startup()
        self.time = time if time is not None else MockTime()
        self.coordinator: Any = None
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.coordinator.shutdown()
        self.replica_manager.shutdown()
        self.log_manager.shutdown()
        self.scheduler.shutdown()

    def lead(self, *partitions: int, epoch: int = 1) -> None:
        """Become leader of the internal topic's partitions (all when none are named), with an
        ISR of this broker alone, so acks=-1 writes complete at once."""
        partitions = partitions or tuple(range(self.num_partitions))
        states = tuple(lai4.LeaderAndIsrPartitionState(
            partition_index=p, controller_epoch=1, leader=0, leader_epoch=epoch, isr=(0,), zk_version=0,
            replicas=(0,), is_new=True) for p in partitions)
        request = lai4.LeaderAndIsrRequest(controller_id=0, controller_epoch=1, broker_epoch=-1, topic_states=(
            lai4.LeaderAndIsrTopicState(topic_name=self.internal_topic, partition_states=states),),
            live_leaders=())

        def on_leadership_change(leaders, followers) -> None:
            for partition in leaders:
                self.coordinator.on_election(partition.partition_id, partition.get_leader_epoch())
            for partition in followers:
                self.coordinator.on_resignation(partition.partition_id, partition.get_leader_epoch())

        self.replica_manager.become_leader_or_follower(1, request, on_leadership_change)


class CoordinatorHarness(InternalTopicHarness):
    """One broker's GroupCoordinator over real logs in ``log_dir``."""

    internal_topic = GROUP_METADATA_TOPIC_NAME

    def __init__(self, log_dir: str, num_partitions: int = 1, time: Optional[MockTime] = None,
                 **overrides: str) -> None:
        super().__init__(log_dir, num_partitions, time, {
            "offsets.topic.num.partitions": str(num_partitions), "offsets.topic.replication.factor": "1",
            "group.initial.rebalance.delay.ms": "0"}, overrides, "coordinator-test-scheduler-")
        self.heartbeat_timer = MockTimer(self.time)
        self.rebalance_timer = MockTimer(self.time)
        heartbeat = DelayedOperationPurgatory("Heartbeat", timeout_timer=self.heartbeat_timer, reaper_enabled=False)
        rebalance = DelayedOperationPurgatory("Rebalance", timeout_timer=self.rebalance_timer, reaper_enabled=False)
        self.manager_scheduler = MockScheduler(self.time)
        self.coordinator = GroupCoordinator.create(self.config, self.replica_manager, self.time, heartbeat, rebalance,
                                                   scheduler=self.manager_scheduler)
        self.coordinator.startup(lambda: num_partitions)
        self.manager = self.coordinator.group_manager

    # ------------------------------------------------------------------ partitions

    def partition_of(self, group_id: str) -> int:
        return self.coordinator.partition_for(group_id)

    def offsets_log(self, group_id: str):
        return self.replica_manager.get_log(TopicPartition(GROUP_METADATA_TOPIC_NAME, self.partition_of(group_id)))

    # ------------------------------------------------------------------ time

    def tick(self, ms: int) -> None:
        """Move the clock and run whatever came due (expirations, scheduled tasks)."""
        self.time.sleep(ms)
        self.heartbeat_timer.advance_clock(0)
        self.rebalance_timer.advance_clock(0)

    # ------------------------------------------------------------------ requests

    def join(self, group_id: str, member_id: str = "", protocols=None, *, protocol_type: str = PROTOCOL_TYPE,
             group_instance_id: Optional[str] = None, require_known_member_id: bool = False,
             session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
             rebalance_timeout_ms: int = DEFAULT_REBALANCE_TIMEOUT_MS, client_id: str = "client") -> Result:
        result = Result()
        if protocols is None:
            protocols = [("range", subscription("t"))]
        self.coordinator.handle_join_group(group_id, member_id, group_instance_id, require_known_member_id,
                                           client_id, "/127.0.0.1", rebalance_timeout_ms, session_timeout_ms,
                                           protocol_type, protocols, result)
        return result

    def sync(self, group_id: str, generation: int, member_id: str, assignments: Optional[dict] = None, *,
             group_instance_id: Optional[str] = None, protocol_type: Optional[str] = None,
             protocol_name: Optional[str] = None) -> Result:
        result = Result()
        self.coordinator.handle_sync_group(group_id, generation, member_id, protocol_type, protocol_name,
                                           group_instance_id, assignments or {}, result)
        return result

    def heartbeat(self, group_id: str, member_id: str, generation: int,
                  group_instance_id: Optional[str] = None) -> Errors:
        result = Result()
        self.coordinator.handle_heartbeat(group_id, member_id, group_instance_id, generation, result)
        return result.value

    def leave(self, group_id: str, *members: MemberIdentity):
        result = Result()
        self.coordinator.handle_leave_group(group_id, list(members), result)
        return result.value

    def commit(self, group_id: str, offsets: dict[TopicPartition, int], member_id: str = "", generation: int = -1,
               group_instance_id: Optional[str] = None, metadata: str = "") -> dict[TopicPartition, Errors]:
        result = Result()
        now = self.time.milliseconds()
        self.coordinator.handle_commit_offsets(
            group_id, member_id, group_instance_id, generation,
            {tp: OffsetAndMetadata(o, None, metadata, now) for tp, o in offsets.items()}, result)
        return result.value

    def fetch(self, group_id: str, partitions=None) -> dict[TopicPartition, int]:
        error, data = self.coordinator.handle_fetch_offsets(group_id, False, partitions)
        assert error is Errors.NONE, error
        return {tp: offset for tp, (offset, _, _, _) in data.items()}

    def join_and_sync_single(self, group_id: str, **kwargs) -> tuple[str, int]:
        """One member joins (no MEMBER_ID_REQUIRED round) and syncs; returns (member id, generation)."""
        joined = self.join(group_id, **kwargs).value
        assert joined.error is Errors.NONE, joined.error
        synced = self.sync(group_id, joined.generation_id, joined.member_id,
                           {joined.member_id: assignment({"t": [0]})}).value
        assert synced.error is Errors.NONE, synced.error
        return joined.member_id, joined.generation_id

    def state(self, group_id: str) -> str:
        error, summary = self.coordinator.handle_describe_group(group_id)
        assert error is Errors.NONE
        return summary.state
