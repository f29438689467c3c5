"""A deterministic event simulation of a raft quorum (in the spirit of Kafka's
RaftEventSimulationTest): 3 or 5 KafkaRaftClients over MockLogs on one mock clock and a
simulated network that drops, delays, duplicates and reorders messages, with nodes
partitioned, killed and restarted with their quorum-state and (flushed) log. Every message
is encoded and decoded with kio's classes on its way, so the wire format is exercised too.

Nodes take snapshots of their listener's state at what it has committed (Kafka 3.0's
ReplicatedCounter does the same) and their logs drop what a snapshot covers, so a node that
restarts loads its snapshot, and one that lags behind the others' log start catches up with
FetchSnapshot.

Checked after every event: at most one leader per epoch, epochs never go back, the log
matching property, every committed entry present in every later leader's log and in every
replica's log below its high watermark, the leader's high watermark never moving back, and a
majority holding everything below it. Each scenario also requires progress once a majority
can talk again. Every loop is bounded by an event count; runs are seeded by hypothesis.
"""
from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.clients.common.protocol.codec import read_entity, write_entity
from kafka_py.raft.internals.string_serde import StringSerde
from kafka_py.raft.kafka_raft_client import KafkaRaftClient
from kafka_py.raft.raft_client import Listener
from kafka_py.raft.raft_config import RaftConfig, voter_connections_for
from kafka_py.raft.raft_request import RaftRequest
from kafka_py.raft.raft_response import RaftResponse
from kafka_py.clients.common.utils.time import MockTime
from tests.raft.mock_log import MockLog
from tests.raft.mocks import MockExpirationService, MockMessageQueue, MockNetworkChannel, MockQuorumStateStore
from tests.raft.raft_client_test_context import METADATA_PARTITION

ELECTION_TIMEOUT_MS = 1000
FETCH_TIMEOUT_MS = 3000
# Shorter than Kafka's simulation (3000): lost messages are retried sooner, so runs stay short.
REQUEST_TIMEOUT_MS = 400
RETRY_BACKOFF_MS = 50
ELECTION_BACKOFF_MAX_MS = 100
FETCH_MAX_WAIT_MS = 100
MAX_EVENTS = 20_000


def wire_copy(message):
    """The message as the receiver would decode it from the bytes on the wire."""
    return read_entity(type(message), write_entity(message))[0]


@dataclass
class PersistentState:
    store: MockQuorumStateStore = field(default_factory=MockQuorumStateStore)
    log: MockLog = field(default_factory=lambda: MockLog(METADATA_PARTITION))


class CounterListener(Listener[str]):
    def __init__(self) -> None:
        self.claimed_epoch: Optional[int] = None
        self.committed: list[str] = []
        # the last data record handed over, and its epoch: where a snapshot of ``committed`` ends
        self.last_offset = -1
        self.last_epoch = 0
        self.snapshots_loaded = 0

    def handle_commit(self, reader) -> None:
        with reader:
            for batch in reader:
                self.committed.extend(batch.records)
                self.last_offset, self.last_epoch = batch.last_offset(), batch.epoch

    def handle_snapshot(self, reader) -> None:
        with reader:
            self.committed = [record for batch in reader for record in batch.records]
            self.last_offset = reader.last_contained_log_offset()
            self.last_epoch = reader.last_contained_log_epoch()
            self.snapshots_loaded += 1

    def handle_claim(self, epoch: int) -> None:
        self.claimed_epoch = epoch

    def handle_resign(self, epoch: int) -> None:
        self.claimed_epoch = None


class RaftNode:
    def __init__(self, node_id: int, cluster: "Cluster", state: PersistentState) -> None:
        self.node_id = node_id
        self.channel = MockNetworkChannel(cluster.correlation_ids)
        self.queue = MockMessageQueue()
        self.expiration = MockExpirationService(cluster.time)
        self.listener = CounterListener()
        config = RaftConfig(voter_connections_for({v: ("localhost", 9990 + v) for v in cluster.voters}),
                            request_timeout_ms=REQUEST_TIMEOUT_MS, retry_backoff_ms=RETRY_BACKOFF_MS,
                            election_timeout_ms=ELECTION_TIMEOUT_MS, election_backoff_max_ms=ELECTION_BACKOFF_MAX_MS,
                            fetch_timeout_ms=FETCH_TIMEOUT_MS, append_linger_ms=0)
        state.log.reopen()
        self.client = KafkaRaftClient(StringSerde(), self.channel, state.log, state.store, cluster.time,
                                      self.expiration, "sim-cluster", node_id, config, message_queue=self.queue,
                                      fetch_max_wait_ms=FETCH_MAX_WAIT_MS, random=cluster.random,
                                      metrics_registry=MetricsRegistry())
        self.client.register(self.listener)
        self.client.initialize()

    def poll(self) -> None:
        for _ in range(100):
            self.client.poll()
            if not self.client.is_running() or self.queue.is_empty():
                return

    def stop(self) -> None:
        self.expiration.close()


class Cluster:
    def __init__(self, num_voters: int, seed: int, drop: float, duplicate: float, max_delay_ms: int) -> None:
        self.random = random.Random(seed)
        self.time = MockTime(current_time_ms=0, current_hi_res_time_ns=0)
        self.correlation_ids = itertools.count(1)
        self.voters = set(range(num_voters))
        self.persistent = {n: PersistentState() for n in self.voters}
        self.running: dict[int, RaftNode] = {}
        self.incarnation: dict[int, int] = {n: 0 for n in self.voters}
        self.drop, self.duplicate, self.max_delay_ms = drop, duplicate, max_delay_ms
        self.blocked: set[tuple[int, int]] = set()  # (from, to) pairs that cannot talk
        self.events: list = []
        self.seq = itertools.count()
        self.invariants = Invariants(self)
        self.next_value = itertools.count()
        self.event_count = 0
        self.snapshots_enabled = True

    # ---- membership ---------------------------------------------------------------
    def start(self, node_id: int) -> None:
        self.incarnation[node_id] += 1
        self.running[node_id] = RaftNode(node_id, self, self.persistent[node_id])

    def kill(self, node_id: int) -> None:
        node = self.running.pop(node_id, None)
        if node is not None:
            node.stop()
        self.incarnation[node_id] += 1

    def partition(self, isolated: set[int]) -> None:
        self.blocked = {(a, b) for a in self.voters for b in self.voters
                        if (a in isolated) != (b in isolated)}

    def heal(self) -> None:
        self.blocked = set()

    # ---- events -------------------------------------------------------------------
    def schedule(self, delay_ms: int, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (self.time.milliseconds() + delay_ms, next(self.seq), action))

    def schedule_periodic(self, period_ms: int, jitter_ms: int, action: Callable[[], None]) -> None:
        def run() -> None:
            action()
            self.schedule(period_ms + self.random.randrange(jitter_ms + 1), run)
        self.schedule(self.random.randrange(jitter_ms + 1), run)

    def run_until(self, condition: Callable[[], bool], max_events: int) -> None:
        for _ in range(max_events):
            if condition():
                return
            deadline, _, action = heapq.heappop(self.events)
            if deadline > self.time.milliseconds():
                self.time.sleep(deadline - self.time.milliseconds())
            action()
            self.event_count += 1
            self.invariants.verify()
        raise AssertionError(f"condition not reached within {max_events} events")

    # ---- network ------------------------------------------------------------------
    def can_talk(self, a: int, b: int) -> bool:
        return (a, b) not in self.blocked

    def deliver_all(self) -> None:
        for node_id, node in list(self.running.items()):
            for request in node.channel.drain_send_queue():
                self._route_request(node_id, self.incarnation[node_id], request)

    def _delay(self) -> int:
        return self.random.randrange(self.max_delay_ms + 1)

    def _route_request(self, source: int, source_incarnation: int, request: "RaftRequest.Outbound") -> None:
        destination = request.destination_id()
        if not self.can_talk(source, destination) or self.random.random() < self.drop:
            return  # lost: the sender's request timeout takes over
        copies = 2 if self.random.random() < self.duplicate else 1
        for _ in range(copies):
            self.schedule(self._delay(), lambda: self._deliver_request(source, source_incarnation, destination,
                                                                        request))

    def _deliver_request(self, source: int, source_incarnation: int, destination: int,
                         request: "RaftRequest.Outbound") -> None:
        node = self.running.get(destination)
        if node is None:
            return
        inbound = RaftRequest.Inbound(request.correlation_id(), wire_copy(request.data()), self.time.milliseconds())
        destination_incarnation = self.incarnation[destination]

        def respond(response, exception) -> None:
            if exception is not None or destination_incarnation != self.incarnation[destination]:
                return
            if not self.can_talk(destination, source) or self.random.random() < self.drop:
                return
            data = wire_copy(response.data())
            self.schedule(self._delay(), lambda: self._deliver_response(source, source_incarnation, destination,
                                                                        request.correlation_id(), data))

        inbound.completion.when_complete(respond)
        node.client.handle(inbound)

    def _deliver_response(self, source: int, source_incarnation: int, responder: int, correlation_id: int,
                          data) -> None:
        node = self.running.get(source)
        if node is None or self.incarnation[source] != source_incarnation:
            return
        node.queue.add(RaftResponse.Inbound(correlation_id, data, responder))

    # ---- workload -----------------------------------------------------------------
    def poll(self, node_id: int) -> None:
        node = self.running.get(node_id)
        if node is not None:
            node.poll()

    def take_snapshot(self) -> None:
        """A random running node snapshots its listener's state and its log drops what the
        snapshot covers (what retention does in a real log)."""
        if not self.snapshots_enabled or not self.running:
            return
        node = self.running[self.random.choice(sorted(self.running))]
        log, listener = node.client._log, node.listener
        latest = log.latest_snapshot_id()
        if listener.last_offset < 0 or (latest is not None and listener.last_offset + 1 - latest.offset < 5):
            return
        writer = node.client.create_snapshot(listener.last_offset, listener.last_epoch, 0)
        if writer is None:
            return
        writer.append(list(listener.committed))
        writer.freeze()
        writer.close()
        snapshot_id = writer.snapshot_id()
        if log.high_watermark().offset >= snapshot_id.offset > log.start_offset():
            log.delete_before_snapshot(snapshot_id)

    def append_on_leader(self) -> None:
        for node in self.running.values():
            epoch = node.listener.claimed_epoch
            if node.client.quorum.is_leader() and epoch is not None and not node.client.is_shutting_down():
                node.client.schedule_append(epoch, [f"v{next(self.next_value)}"])

    def start_workload(self) -> None:
        for node_id in sorted(self.voters):
            self.schedule_periodic(3, 5, lambda n=node_id: self.poll(n))
        self.schedule_periodic(1, 2, self.deliver_all)
        self.schedule_periodic(2, 3, self.append_on_leader)
        self.schedule_periodic(40, 20, self.take_snapshot)

    # ---- observations -------------------------------------------------------------
    def leader(self) -> Optional[RaftNode]:
        leaders = [n for n in self.running.values() if n.client.quorum.is_leader()]
        return max(leaders, key=lambda n: n.client.quorum.epoch()) if leaders else None

    def high_watermarks(self, nodes=None) -> list[int]:
        return [n.client.high_watermark() or 0 for i, n in self.running.items() if nodes is None or i in nodes]

    def all_reached(self, offset: int, nodes=None) -> bool:
        hws = self.high_watermarks(nodes)
        return bool(hws) and min(hws) > offset

    def any_reached(self, offset: int) -> bool:
        return max(self.high_watermarks(), default=0) > offset


class Invariants:
    """Checked after every event.

    Log matching is checked through fingerprints: every (offset, epoch) seen in any log must
    always carry the same record and follow the same epoch. By induction over offsets, two
    logs sharing an (offset, epoch) then share their whole history up to it, which is Raft's
    log matching property; and comparing one entry is enough to compare two prefixes. Logs
    grow, lose a suffix (truncation) or a prefix (a snapshot replaced it), so each check scans
    only the entries added since the last. An entry below a log's start is covered by that
    node's snapshot, which was taken from committed state, so it is not compared.
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.leaders_by_epoch: dict[int, int] = {}
        self.epochs: dict[int, int] = {}
        self.leader_high_watermark = 0
        # offset -> (offset, epoch) of every committed entry seen
        self.committed: dict[int, tuple[int, int]] = {}
        self._fingerprints: dict[tuple[int, int], tuple[Optional[bytes], bool]] = {}
        self._previous_epochs: dict[tuple[int, int], int] = {}
        self._scanned: dict[int, int] = {}

    @staticmethod
    def _entry(log: list, offset: int):
        """The entry at ``offset`` of a listing that starts at its log's start, or None."""
        if not log:
            return None
        index = offset - log[0][0]
        return log[index] if 0 <= index < len(log) else None

    def _same_prefix(self, log: list, start: int, length: int) -> bool:
        """Does ``log`` (starting at ``start``) hold the first ``length`` committed entries?"""
        if length == 0 or length - 1 < start:
            return True  # nothing to compare, or covered by the node's snapshot
        entry = self._entry(log, length - 1)
        known = self.committed.get(length - 1)
        return entry is not None and (known is None or entry[:2] == known)

    def verify(self) -> None:
        cluster = self.cluster
        # At most one leader per epoch (as persisted), and epochs only go up.
        for node_id, state in cluster.persistent.items():
            election = state.store.read_election_state()
            if election is None:
                continue
            assert election.epoch >= self.epochs.get(node_id, 0), f"epoch of {node_id} went back"
            self.epochs[node_id] = election.epoch
            if election.has_leader():
                known = self.leaders_by_epoch.setdefault(election.epoch, election.leader_id())
                assert known == election.leader_id(), f"two leaders in epoch {election.epoch}"
        logs = {n: s.log._entries_listing() for n, s in cluster.persistent.items()}
        starts = {n: s.log.start_offset() for n, s in cluster.persistent.items()}
        ends = {n: s.log.end_offset().offset for n, s in cluster.persistent.items()}
        # Log matching.
        for node_id, log in logs.items():
            first = log[0][0] if log else ends[node_id]
            scan_from = max(first, min(self._scanned.get(node_id, 0), ends[node_id]))
            for offset in range(scan_from, ends[node_id]):
                k = offset - first
                entry_offset, epoch, value, is_control = log[k]
                assert entry_offset == offset, f"node {node_id} has a gap at {offset}"
                known = self._fingerprints.setdefault((offset, epoch), (value, is_control))
                assert known == (value, is_control), \
                    f"node {node_id} breaks log matching at offset {offset}, epoch {epoch}"
                if k > 0:
                    previous_epoch = log[k - 1][1]
                    assert epoch >= previous_epoch, f"node {node_id}'s epochs go back at offset {offset}"
                    known_previous = self._previous_epochs.setdefault((offset, epoch), previous_epoch)
                    assert known_previous == previous_epoch, f"node {node_id} breaks log matching at {offset}"
            self._scanned[node_id] = ends[node_id]
        # Committed entries: everything any replica holds below its high watermark; every
        # replica agrees with it.
        for node_id, node in cluster.running.items():
            hw = node.client.high_watermark() or 0
            log = logs[node_id]
            assert hw <= ends[node_id], f"node {node_id}'s high watermark is beyond its log"
            for offset in range(max(starts[node_id], log[0][0] if log else hw), hw):
                entry = self._entry(log, offset)
                known = self.committed.setdefault(offset, entry[:2])
                assert known == entry[:2], f"node {node_id} disagrees on committed data at {offset}"
        committed_length = max(self.committed, default=-1) + 1
        leader = cluster.leader()
        if leader is not None:
            n = leader.node_id
            assert self._same_prefix(logs[n], starts[n], committed_length), "a leader lacks committed entries"
            hw = leader.client.high_watermark()
            if hw is not None:
                assert hw >= self.leader_high_watermark, "leader high watermark went back"
                self.leader_high_watermark = hw
                holders = sum(1 for v in cluster.voters
                              if ends[v] >= min(hw, committed_length)
                              and self._same_prefix(logs[v], starts[v], min(hw, committed_length)))
                assert holders >= len(cluster.voters) // 2 + 1, "high watermark not held by a majority"


def make_cluster(num_voters: int, seed: int, faults) -> Cluster:
    drop, duplicate, max_delay = faults
    cluster = Cluster(num_voters, seed, drop, duplicate, max_delay)
    for node_id in sorted(cluster.voters):
        cluster.start(node_id)
    cluster.start_workload()
    return cluster


# (drop probability, duplicate probability, max delay ms); delays beyond 0 also reorder.
faults = st.tuples(st.sampled_from([0.0, 0.02, 0.05]), st.sampled_from([0.0, 0.1]), st.sampled_from([0, 5, 20]))
# Shrinking a failing run replays whole simulations; report the failing seed instead.
simulation = settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                      suppress_health_check=[HealthCheck.too_slow])


@simulation
@given(num_voters=st.sampled_from([3, 5]), seed=st.integers(0, 2**32 - 1), faults=faults)
def test_initial_election_and_replication(num_voters, seed, faults):
    cluster = make_cluster(num_voters, seed, faults)
    cluster.run_until(lambda: cluster.all_reached(10), MAX_EVENTS)
    # Everyone committed the same values, in order.
    committed = [n.listener.committed for n in cluster.running.values()]
    shortest = min(len(c) for c in committed)
    assert shortest > 0 and all(c[:shortest] == committed[0][:shortest] for c in committed)


@simulation
@given(num_voters=st.sampled_from([3, 5]), seed=st.integers(0, 2**32 - 1), faults=faults,
       graceful=st.booleans())
def test_leader_failure_and_restart(num_voters, seed, faults, graceful):
    cluster = make_cluster(num_voters, seed, faults)
    cluster.run_until(lambda: cluster.any_reached(10), MAX_EVENTS)
    leader = cluster.leader()
    assert leader is not None
    leader_id = leader.node_id
    if graceful:
        future = leader.client.shutdown(500)
        cluster.run_until(lambda: future.is_done(), MAX_EVENTS)
    cluster.kill(leader_id)
    target = max(cluster.high_watermarks()) + 10
    cluster.run_until(lambda: cluster.all_reached(target), MAX_EVENTS)
    cluster.start(leader_id)
    target = max(cluster.high_watermarks()) + 10
    cluster.run_until(lambda: cluster.all_reached(target), MAX_EVENTS)


@simulation
@given(num_voters=st.sampled_from([3, 5]), seed=st.integers(0, 2**32 - 1), faults=faults)
def test_leader_partitioned_then_healed(num_voters, seed, faults):
    cluster = make_cluster(num_voters, seed, faults)
    cluster.run_until(lambda: cluster.any_reached(10), MAX_EVENTS)
    leader_id = cluster.leader().node_id
    cluster.partition({leader_id})
    majority = cluster.voters - {leader_id}
    target = max(cluster.high_watermarks()) + 10
    cluster.run_until(lambda: cluster.all_reached(target, majority), MAX_EVENTS)
    cluster.heal()
    target = max(cluster.high_watermarks()) + 10
    cluster.run_until(lambda: cluster.all_reached(target), MAX_EVENTS)


@simulation
@given(seed=st.integers(0, 2**32 - 1), faults=faults)
def test_minority_partition_of_five_cannot_commit(seed, faults):
    cluster = make_cluster(5, seed, faults)
    cluster.run_until(lambda: cluster.any_reached(10), MAX_EVENTS)
    cluster.partition({0, 1})
    minority_before = max(cluster.high_watermarks({0, 1}))
    target = max(cluster.high_watermarks()) + 20
    cluster.run_until(lambda: max(cluster.high_watermarks({2, 3, 4})) > target, MAX_EVENTS)
    # The minority's high watermark could only reach what the majority side had committed.
    assert max(cluster.high_watermarks({0, 1})) <= max(minority_before, target)
    assert max(cluster.high_watermarks({2, 3, 4})) > max(cluster.high_watermarks({0, 1}))
    cluster.heal()
    target = max(cluster.high_watermarks()) + 10
    cluster.run_until(lambda: cluster.all_reached(target), MAX_EVENTS)


@simulation
@given(num_voters=st.sampled_from([3, 5]), seed=st.integers(0, 2**32 - 1), faults=faults)
def test_recovery_after_all_nodes_fail(num_voters, seed, faults):
    cluster = make_cluster(num_voters, seed, faults)
    cluster.run_until(lambda: cluster.any_reached(10), MAX_EVENTS)
    high_watermark = max(cluster.high_watermarks())
    for node_id in sorted(cluster.voters):
        cluster.kill(node_id)
    for node_id in sorted(cluster.voters)[:num_voters // 2 + 1]:
        cluster.start(node_id)
    cluster.run_until(lambda: cluster.all_reached(high_watermark + 10), MAX_EVENTS)


@simulation
@given(num_voters=st.sampled_from([3, 5]), seed=st.integers(0, 2**32 - 1), faults=faults)
def test_lagging_node_catches_up_from_a_snapshot(num_voters, seed, faults):
    cluster = make_cluster(num_voters, seed, faults)
    cluster.run_until(lambda: cluster.any_reached(10), MAX_EVENTS)
    leader = cluster.leader()
    laggard = min(cluster.voters - {leader.node_id})
    cluster.kill(laggard)
    laggard_end = cluster.persistent[laggard].log.end_offset().offset
    others = cluster.voters - {laggard}
    # the others snapshot and drop their logs past where the laggard stopped
    cluster.run_until(lambda: min(cluster.persistent[n].log.start_offset() for n in others) > laggard_end,
                      MAX_EVENTS)
    cluster.start(laggard)
    target = max(cluster.high_watermarks()) + 10
    cluster.run_until(lambda: cluster.all_reached(target), MAX_EVENTS)
    # it could only have caught up from a snapshot; its state is everyone's
    node = cluster.running[laggard]
    assert node.listener.snapshots_loaded >= 1
    assert cluster.persistent[laggard].log.start_offset() > 0
    committed = [n.listener.committed for n in cluster.running.values()]
    shortest = min(len(c) for c in committed)
    assert shortest > 0 and all(c[:shortest] == committed[0][:shortest] for c in committed)
