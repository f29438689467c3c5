"""A KafkaRaftClient over a MockLog, a mock network and a mock clock, with helpers to feed it
requests and responses and to read what it sent (Kafka's RaftClientTestContext). Test-only."""
from __future__ import annotations

import itertools
import random
from typing import Any, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft import raft_util
from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.internals.string_serde import StringSerde
from kafka_py.raft.kafka_raft_client import KafkaRaftClient
from kafka_py.raft.raft_client import Listener
from kafka_py.raft.raft_config import RaftConfig, voter_connections_for
from kafka_py.raft.raft_request import RaftRequest
from kafka_py.raft.raft_response import RaftResponse
from kafka_py.clients.common.utils.time import MockTime
from tests.raft.mock_log import MockLog
from tests.raft.mocks import MockExpirationService, MockMessageQueue, MockNetworkChannel, MockQuorumStateStore

METADATA_PARTITION = TopicPartition("__cluster_metadata", 0)
CLUSTER_ID = "test-cluster-id"
ELECTION_TIMEOUT_MS = 10_000
FETCH_TIMEOUT_MS = 50_000
REQUEST_TIMEOUT_MS = 5_000
RETRY_BACKOFF_MS = 50
ELECTION_BACKOFF_MAX_MS = 500
FETCH_MAX_WAIT_MS = 0
LINGER_MS = 0


class MockListener(Listener[str]):
    """Reads every batch it is handed, closes the reader, and remembers what it saw."""

    def __init__(self) -> None:
        self.commits: list[tuple[int, int, list[str]]] = []
        self.claimed: list[int] = []
        self.resigned: list[int] = []
        self.snapshot_ids: list = []

    def handle_commit(self, reader) -> None:
        with reader:
            for batch in reader:
                self.commits.append((batch.base_offset, batch.epoch, list(batch.records)))

    def handle_snapshot(self, reader) -> None:
        # A snapshot replaces everything seen so far.
        with reader:
            self.snapshot_ids.append(reader.snapshot_id())
            self.commits = [(batch.base_offset, batch.epoch, list(batch.records)) for batch in reader]

    def handle_claim(self, epoch: int) -> None:
        self.claimed.append(epoch)

    def handle_resign(self, epoch: int) -> None:
        self.resigned.append(epoch)

    def committed_records(self) -> list[str]:
        return [r for _, _, records in self.commits for r in records]


class RaftClientTestContext:
    def __init__(self, local_id: Optional[int], voters: set[int], *, store: Optional[MockQuorumStateStore] = None,
                 log: Optional[MockLog] = None, seed: int = 1, election_timeout_ms: int = ELECTION_TIMEOUT_MS,
                 linger_ms: int = LINGER_MS, fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS) -> None:
        self.local_id = local_id
        self.voters = set(voters)
        self.time = MockTime(current_time_ms=1_000_000, current_hi_res_time_ns=0)
        self.store = store or MockQuorumStateStore()
        self.log = log or MockLog(METADATA_PARTITION)
        self.channel = MockNetworkChannel(itertools.count(1))
        self.queue = MockMessageQueue()
        self.expiration = MockExpirationService(self.time)
        self.random = random.Random(seed)
        self.config = RaftConfig(voter_connections_for({v: ("localhost", 9990 + v) for v in voters}),
                                 request_timeout_ms=REQUEST_TIMEOUT_MS, retry_backoff_ms=RETRY_BACKOFF_MS,
                                 election_timeout_ms=election_timeout_ms,
                                 election_backoff_max_ms=ELECTION_BACKOFF_MAX_MS, fetch_timeout_ms=FETCH_TIMEOUT_MS,
                                 append_linger_ms=linger_ms)
        self.client: KafkaRaftClient[str] = KafkaRaftClient(
            StringSerde(), self.channel, self.log, self.store, self.time, self.expiration, CLUSTER_ID, local_id,
            self.config, message_queue=self.queue, fetch_max_wait_ms=fetch_max_wait_ms, random=self.random,
            metrics_registry=MetricsRegistry())
        self.listener = MockListener()
        self.client.register(self.listener)
        self.client.initialize()
        self._correlation_ids = itertools.count(10_000)

    # ---- driving -----------------------------------------------------------------
    def poll(self, times: int = 1) -> None:
        for _ in range(times):
            self.client.poll()

    def poll_until_quiet(self, limit: int = 50) -> None:
        """Poll until the queue is empty (bounded)."""
        for _ in range(limit):
            self.client.poll()
            if self.queue.is_empty():
                return
        raise AssertionError("client kept receiving messages")

    def sleep(self, ms: int) -> None:
        self.time.sleep(ms)

    def deliver_request(self, data: Any) -> "RaftRequest.Inbound":
        request = RaftRequest.Inbound(next(self._correlation_ids), data, self.time.milliseconds())
        self.client.handle(request)
        return request

    def deliver_response(self, correlation_id: int, source_id: int, data: Any) -> None:
        self.queue.add(RaftResponse.Inbound(correlation_id, data, source_id))

    def sent(self, data_type: type) -> list["RaftRequest.Outbound"]:
        return [r for r in self.channel.drain_send_queue() if isinstance(r.data(), data_type)]

    def response_of(self, request: "RaftRequest.Inbound") -> Any:
        assert request.completion.is_done(), "no response yet"
        return request.completion.get(0).data()

    # ---- state shortcuts --------------------------------------------------------
    @property
    def quorum(self):
        return self.client.quorum

    def current_epoch(self) -> int:
        return self.quorum.epoch()

    def election(self) -> ElectionState:
        return self.store.read_election_state()

    def become_leader(self) -> None:
        """From a fresh start, win an election (votes granted by every other voter)."""
        self.sleep(2 * self.config.election_timeout_ms)
        self.poll(2)  # become candidate, then ask for votes
        assert self.quorum.is_candidate()
        epoch = self.current_epoch()
        for request in self.sent(raft_util.VoteRequestData):
            self.deliver_response(request.correlation_id(), request.destination_id(),
                                  raft_util.vote_response_for(Errors.NONE, METADATA_PARTITION, Errors.NONE, epoch,
                                                              -1, True))
        self.poll_until_quiet()
        assert self.quorum.is_leader(), self.quorum

    # ---- message builders -------------------------------------------------------
    def vote_request(self, epoch: int, candidate_id: int, last_epoch: int, last_offset: int) -> Any:
        return raft_util.vote_request_for(METADATA_PARTITION, epoch, candidate_id, last_epoch, last_offset)

    def begin_epoch_request(self, epoch: int, leader_id: int) -> Any:
        return raft_util.begin_quorum_epoch_request_for(METADATA_PARTITION, epoch, leader_id)

    def end_epoch_request(self, epoch: int, leader_id: int, successors: list[int]) -> Any:
        return raft_util.end_quorum_epoch_request_for(METADATA_PARTITION, epoch, leader_id, successors)

    def fetch_request(self, epoch: int, replica_id: int, fetch_offset: int, last_fetched_epoch: int,
                      max_wait_ms: int = 0, cluster_id: Optional[str] = CLUSTER_ID) -> Any:
        return raft_util.singleton_fetch_request(METADATA_PARTITION, epoch, fetch_offset, last_fetched_epoch,
                                                 replica_id, max_wait_ms, 1 << 20, cluster_id)

    def fetch_response(self, epoch: int, leader_id: int, records: bytes, high_watermark: int,
                       error: Errors = Errors.NONE, diverging=None) -> Any:
        return raft_util.singleton_fetch_response(METADATA_PARTITION, Errors.NONE, error, records, 0,
                                                  high_watermark, epoch, leader_id, diverging)
