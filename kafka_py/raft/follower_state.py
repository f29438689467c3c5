"""Port of raft/src/main/java/org/apache/kafka/raft/FollowerState.java (Kafka 3.0.0).

A node that knows the leader of its epoch and fetches from it. Every successful Fetch
response resets the fetch timer; a voter whose timer runs out stands for election, an
observer looks for the leader among the voters. The follower's high watermark is the one
the leader reported, never more than its own log end, and never moves back.

While the follower downloads a snapshot (KIP-630) the snapshot being written is held here and
regular fetches pause; it is discarded if the follower state ends before it is complete.
"""
from __future__ import annotations

import logging
from typing import AbstractSet, Optional

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.epoch_state import EpochState
from kafka_py.raft.internals.timer import Timer
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class FollowerState(EpochState):
    def __init__(self, time: Time, epoch: int, leader_id: int, voters: AbstractSet[int],
                 high_watermark: Optional[LogOffsetMetadata], fetch_timeout_ms: int) -> None:
        self._fetch_timeout_ms = fetch_timeout_ms
        self._epoch = epoch
        self._leader_id = leader_id
        self._voters = frozenset(voters)
        self._fetch_timer = Timer(time, fetch_timeout_ms)
        self._high_watermark = high_watermark
        self._fetching_snapshot: Optional[RawSnapshotWriter] = None

    def election(self) -> ElectionState:
        return ElectionState(self._epoch, self._leader_id, None, self._voters)

    def epoch(self) -> int:
        return self._epoch

    def name(self) -> str:
        return "Follower"

    def remaining_fetch_time_ms(self, current_time_ms: int) -> int:
        self._fetch_timer.update(current_time_ms)
        return self._fetch_timer.remaining_ms()

    def leader_id(self) -> int:
        return self._leader_id

    def has_fetch_timeout_expired(self, current_time_ms: int) -> bool:
        self._fetch_timer.update(current_time_ms)
        return self._fetch_timer.is_expired()

    def reset_fetch_timeout(self, current_time_ms: int) -> None:
        self._fetch_timer.update(current_time_ms)
        self._fetch_timer.reset(self._fetch_timeout_ms)

    def override_fetch_timeout(self, current_time_ms: int, timeout_ms: int) -> None:
        self._fetch_timer.update(current_time_ms)
        self._fetch_timer.reset(timeout_ms)

    def update_high_watermark(self, high_watermark: Optional[int]) -> bool:
        """Take the leader's high watermark; True if it moved. It may never go back or vanish."""
        if high_watermark is None and self._high_watermark is not None:
            raise ValueError(f"Attempt to overwrite current high watermark {self._high_watermark} with unknown value")
        if self._high_watermark is not None:
            previous = self._high_watermark.offset
            if high_watermark < 0:
                raise ValueError("Illegal negative high watermark update")
            if previous > high_watermark:
                raise ValueError("Non-monotonic update of high watermark attempted")
            if previous == high_watermark:
                return False
        self._high_watermark = None if high_watermark is None else LogOffsetMetadata(high_watermark)
        return True

    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return self._high_watermark

    def fetching_snapshot(self) -> Optional[RawSnapshotWriter]:
        return self._fetching_snapshot

    def set_fetching_snapshot(self, new_snapshot: Optional[RawSnapshotWriter]) -> None:
        if self._fetching_snapshot is not None:
            self._fetching_snapshot.close()
        self._fetching_snapshot = new_snapshot

    def close(self) -> None:
        if self._fetching_snapshot is not None:
            self._fetching_snapshot.close()
            self._fetching_snapshot = None

    def __str__(self) -> str:
        return (f"FollowerState(fetchTimeoutMs={self._fetch_timeout_ms}, epoch={self._epoch}, "
                f"leaderId={self._leader_id}, voters={sorted(self._voters)}, fetchingSnapshot={self._fetching_snapshot})")
