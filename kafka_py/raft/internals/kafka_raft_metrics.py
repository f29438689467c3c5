"""Port of raft/src/main/java/org/apache/kafka/raft/internals/KafkaRaftMetrics.java
(Kafka 2.8.2).

The raft client's metrics, under the JMX name Kafka's JmxReporter gives them,
``kafka.server:type=raft-metrics``, one attribute each: current-state, current-leader,
current-vote, current-epoch, high-watermark, log-end-offset, log-end-epoch,
number-unknown-voter-connections (gauges read from the QuorumState), and the sensors
commit-latency-avg/max, election-latency-avg/max, fetch-records-rate,
append-records-rate and poll-idle-ratio-avg (kafka_py.clients.common.sensor, as the selector's
metrics are kept). They are registered as gauges of a Yammer-style registry (the broker's
default one unless another is given, so simulations with many clients in one process can
each keep their own) and removed by ``close``; the Prometheus endpoint exports them as
``kafka_server_raft_metrics_<attribute>``, current-state as a state gauge with one sample
per state (``{state="leader"} 1``, 0 for the other four).
"""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional

from kafka_py.clients.common.sensor import Avg, KafkaMetric, Max, MetricConfig, Rate, Sensor
from kafka_py.core.metrics.kafka_metrics_group import default_registry
from kafka_py.core.metrics.yammer import MetricName, MetricsRegistry
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    from kafka_py.raft.quorum_state import QuorumState

logger = logging.getLogger(__name__)


# The values of current-state, in the order Kafka's description of the metric lists them.
CURRENT_STATES = ("leader", "candidate", "voted", "follower", "unattached")


def raft_metric_name(metric_group_name: str, attribute: str) -> MetricName:
    mbean = f"kafka.server:type={metric_group_name}"
    return MetricName("kafka.server", metric_group_name, "", None, mbean, (), attribute=attribute)


class KafkaRaftMetrics:
    def __init__(self, state: "QuorumState", time: Time, metric_grp_prefix: str = "raft",
                 registry: Optional[MetricsRegistry] = None) -> None:
        self._state = state
        self._time = time
        self._group = f"{metric_grp_prefix}-metrics"
        self._registry = registry if registry is not None else default_registry()
        # The two values the raft thread sets and the gauges read from other threads.
        self._lock = threading.Lock()
        self._log_end_offset = OffsetAndEpoch(0, 0)
        self._num_unknown_voter_connections = 0
        self._election_start_ms: Optional[int] = None
        self._poll_start_ms: Optional[int] = None
        self._poll_end_ms: Optional[int] = None
        config = MetricConfig()

        def sensor(name: str, *stats: tuple[str, object]) -> Sensor:
            s = Sensor(name)
            for metric_name, stat in stats:
                s.add(KafkaMetric(metric_name, stat, config))
            return s

        self._commit_time_sensor = sensor("commit-latency", ("commit-latency-avg", Avg()),
                                          ("commit-latency-max", Max()))
        self._election_time_sensor = sensor("election-latency", ("election-latency-avg", Avg()),
                                            ("election-latency-max", Max()))
        self._fetch_records_sensor = sensor("fetch-records", ("fetch-records-rate", Rate()))
        self._append_records_sensor = sensor("append-records", ("append-records-rate", Rate()))
        self._poll_idle_sensor = sensor("poll-idle-ratio", ("poll-idle-ratio-avg", Avg()))
        self._sensors = (self._commit_time_sensor, self._election_time_sensor, self._fetch_records_sensor,
                         self._append_records_sensor, self._poll_idle_sensor)

        self._gauges: dict[str, Callable[[], Any]] = {
            "current-state": self._current_state,
            "current-leader": lambda: state.leader_id_or_sentinel(),
            "current-vote": self._current_vote,
            "current-epoch": lambda: state.epoch(),
            "high-watermark": lambda: -1 if state.high_watermark() is None else state.high_watermark().offset,
            "log-end-offset": lambda: self._read(lambda: self._log_end_offset.offset),
            "log-end-epoch": lambda: self._read(lambda: self._log_end_offset.epoch),
            "number-unknown-voter-connections": lambda: self._read(lambda: self._num_unknown_voter_connections),
        }
        for s in self._sensors:
            for metric in s.metrics:
                self._gauges[metric.name] = (lambda s=s, m=metric: s.measure(m, self._time.milliseconds()))
        for attribute, read in self._gauges.items():
            if attribute == "current-state":
                self._registry.new_state_gauge(raft_metric_name(self._group, attribute), read, CURRENT_STATES)
            else:
                self._registry.new_gauge(raft_metric_name(self._group, attribute), read)

    def _read(self, read: Callable[[], Any]) -> Any:
        with self._lock:
            return read()

    def _current_state(self) -> str:
        state = self._state
        if state.is_leader():
            return "leader"
        if state.is_candidate():
            return "candidate"
        if state.is_voted():
            return "voted"
        if state.is_follower():
            return "follower"
        return "unattached"

    def _current_vote(self) -> int:
        state = self._state
        if state.is_leader() or state.is_candidate():
            return state.local_id_or_throw()
        if state.is_voted():
            return state.voted_state_or_throw().voted_id()
        return -1

    def value(self, attribute: str) -> Any:
        """One metric's value now (tests and tools)."""
        return self._gauges[attribute]()

    def update_poll_start(self, current_time_ms: int) -> None:
        if self._poll_end_ms is not None and self._poll_start_ms is not None:
            poll_time_ms = max(self._poll_end_ms - self._poll_start_ms, 0)
            total_time_ms = max(current_time_ms - self._poll_start_ms, 1)
            self._poll_idle_sensor.record(poll_time_ms / total_time_ms, current_time_ms, False)
        self._poll_start_ms = current_time_ms
        self._poll_end_ms = None

    def update_poll_end(self, current_time_ms: int) -> None:
        self._poll_end_ms = current_time_ms

    def update_log_end(self, log_end_offset: OffsetAndEpoch) -> None:
        with self._lock:
            self._log_end_offset = log_end_offset

    def update_num_unknown_voter_connections(self, num_unknown_voter_connections: int) -> None:
        with self._lock:
            self._num_unknown_voter_connections = num_unknown_voter_connections

    def update_append_records(self, num_records: int) -> None:
        self._append_records_sensor.record(num_records, self._time.milliseconds(), False)

    def update_fetched_records(self, num_records: int) -> None:
        self._fetch_records_sensor.record(num_records, self._time.milliseconds(), False)

    def update_commit_latency(self, latency_ms: float, current_time_ms: int) -> None:
        self._commit_time_sensor.record(latency_ms, current_time_ms, False)

    def update_election_start_ms(self, current_time_ms: int) -> None:
        self._election_start_ms = current_time_ms

    def maybe_update_election_latency(self, current_time_ms: int) -> None:
        if self._election_start_ms is not None:
            self._election_time_sensor.record(current_time_ms - self._election_start_ms, current_time_ms, False)
            self._election_start_ms = None

    def close(self) -> None:
        for attribute in self._gauges:
            self._registry.remove_metric(raft_metric_name(self._group, attribute))
