"""KafkaRaftMetrics (Kafka's KafkaRaftMetricsTest): the gauges follow the QuorumState through
every transition, the sensors measure what they are given, and the Prometheus collector
exports the group as kafka_server_raft_metrics_* with current-state as one sample per state."""
import math
import random

from kafka_py.core.metrics.prometheus_exporter import KafkaMetricsCollector
from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.raft.internals.kafka_raft_metrics import CURRENT_STATES, KafkaRaftMetrics, raft_metric_name
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.quorum_state import QuorumState
from kafka_py.clients.common.utils.time import MockTime
from tests.raft.mocks import MockQuorumStateStore

LOCAL_ID = 0


def build(voters):
    time = MockTime(current_time_ms=0, current_hi_res_time_ns=0)
    state = QuorumState(LOCAL_ID, voters, 5000, 10000, MockQuorumStateStore(), time, random.Random(7))
    state.initialize(OffsetAndEpoch(0, 0))
    registry = MetricsRegistry(start_ticker=False)
    return state, time, registry, KafkaRaftMetrics(state, time, "raft", registry)


def read(registry, attribute):
    return registry.get(raft_metric_name("raft-metrics", attribute)).value()


def view(registry):
    return tuple(read(registry, a) for a in ("current-state", "current-leader", "current-vote", "current-epoch",
                                             "high-watermark"))


def test_voter_state_through_every_transition():
    state, _, registry, metrics = build({LOCAL_ID, 1, 2})
    assert view(registry) == ("unattached", -1, -1, 0, -1)
    state.transition_to_candidate()
    assert view(registry) == ("candidate", -1, LOCAL_ID, 1, -1)
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(2)
    assert view(registry) == ("leader", LOCAL_ID, LOCAL_ID, 1, -1)
    state.leader_state_or_throw().update_local_state(0, LogOffsetMetadata(5))
    state.leader_state_or_throw().update_replica_state(1, 0, LogOffsetMetadata(5))
    assert read(registry, "high-watermark") == 5
    state.transition_to_follower(2, 1)
    assert view(registry) == ("follower", 1, -1, 2, 5)
    state.follower_state_or_throw().update_high_watermark(10)
    assert read(registry, "high-watermark") == 10
    state.transition_to_voted(3, 2)
    assert view(registry) == ("voted", -1, 2, 3, 10)
    state.transition_to_unattached(4)
    assert view(registry) == ("unattached", -1, -1, 4, 10)
    metrics.close()
    assert registry.all_metrics() == []


def test_log_end_connections_and_sensors():
    _, time, registry, metrics = build({LOCAL_ID})
    assert (read(registry, "log-end-offset"), read(registry, "log-end-epoch")) == (0, 0)
    metrics.update_log_end(OffsetAndEpoch(5, 1))
    assert (read(registry, "log-end-offset"), read(registry, "log-end-epoch")) == (5, 1)
    metrics.update_num_unknown_voter_connections(2)
    assert read(registry, "number-unknown-voter-connections") == 2
    metrics.update_commit_latency(10, time.milliseconds())
    metrics.update_commit_latency(30, time.milliseconds())
    assert (read(registry, "commit-latency-avg"), read(registry, "commit-latency-max")) == (20, 30)
    metrics.update_election_start_ms(time.milliseconds())
    time.sleep(40)
    metrics.maybe_update_election_latency(time.milliseconds())
    assert read(registry, "election-latency-max") == 40
    # polls that wait 75 of every 100 ms
    for _ in range(3):
        metrics.update_poll_start(time.milliseconds())
        time.sleep(75)
        metrics.update_poll_end(time.milliseconds())
        time.sleep(25)
    metrics.update_poll_start(time.milliseconds())
    assert math.isclose(read(registry, "poll-idle-ratio-avg"), 0.75)
    metrics.update_append_records(30)
    metrics.update_fetched_records(15)
    time.sleep(1000)
    assert read(registry, "append-records-rate") > 0 and read(registry, "fetch-records-rate") > 0
    metrics.close()


def test_exported_names_and_state_samples():
    state, _, registry, metrics = build({LOCAL_ID, 1, 2})
    state.transition_to_candidate()
    families = {f.name: f for f in KafkaMetricsCollector(registry).collect()}
    current_state = families["kafka_server_raft_metrics_current_state"]
    assert {s.labels["state"]: s.value for s in current_state.samples} == {
        s: (1.0 if s == "candidate" else 0.0) for s in CURRENT_STATES}
    assert families["kafka_server_raft_metrics_current_epoch"].samples[0].value == 1
    assert families["kafka_server_raft_metrics_current_vote"].samples[0].value == LOCAL_ID
    for attribute in ("current-leader", "high-watermark", "log-end-offset", "log-end-epoch",
                      "number-unknown-voter-connections", "poll-idle-ratio-avg", "commit-latency-avg",
                      "commit-latency-max", "election-latency-avg", "election-latency-max", "append-records-rate",
                      "fetch-records-rate"):
        assert "kafka_server_raft_metrics_" + attribute.replace("-", "_") in families, attribute
    metrics.close()
