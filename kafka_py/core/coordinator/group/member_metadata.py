"""Port of core/src/main/scala/kafka/coordinator/group/MemberMetadata.scala (Kafka 2.8.2).

One member of a group: who it is (member id, optional group.instance.id for static members,
client id and host), its timeouts, the protocols it supports in order of preference with
their metadata, and its current assignment. While a rebalance is under way the member also
holds the callback that answers its parked JoinGroup or SyncGroup request.

Not thread-safe: every access happens under the owning group's lock.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

# (protocol name, protocol metadata), in the member's order of preference
Protocol = tuple[str, bytes]


@dataclass(frozen=True, slots=True)
class MemberSummary:
    """What DescribeGroups reports about a member."""

    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


def plain_protocol_set(supported_protocols: Sequence[Protocol]) -> frozenset[str]:
    return frozenset(name for name, _ in supported_protocols)


class MemberMetadata:
    def __init__(self, member_id: str, group_instance_id: Optional[str], client_id: str, client_host: str,
                 rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                 supported_protocols: Sequence[Protocol], assignment: bytes = b"") -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols: list[Protocol] = list(supported_protocols)
        self.assignment = assignment
        self.awaiting_join_callback: Optional[Callable] = None
        self.awaiting_sync_callback: Optional[Callable] = None
        self.is_leaving = False
        self.is_new = False
        # False from the moment a heartbeat expiration is scheduled until the member shows it
        # is alive (a heartbeat, a commit, a join); the DelayedHeartbeat completes on True.
        self.heartbeat_satisfied = False

    @property
    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync_callback is not None

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise ValueError("Member does not support protocol")

    @property
    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            # a new member may time out while still waiting in its first join
            return self.heartbeat_satisfied
        if self.is_awaiting_join or self.is_awaiting_sync:
            # a parked request proves the member alive for as long as it is parked
            return True
        return self.heartbeat_satisfied

    def matches(self, protocols: Sequence[Protocol]) -> bool:
        """Same protocols, in the same order, with byte-identical metadata."""
        if len(protocols) != len(self.supported_protocols):
            return False
        return all(n1 == n2 and bytes(m1) == bytes(m2)
                   for (n1, m1), (n2, m2) in zip(protocols, self.supported_protocols))

    def summary(self, protocol: str) -> MemberSummary:
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id, self.client_host,
                             self.metadata(protocol), self.assignment)

    def summary_no_metadata(self) -> MemberSummary:
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id, self.client_host, b"", b"")

    def vote(self, candidates: frozenset[str] | set[str]) -> str:
        """The first of this member's protocols (by its preference) among ``candidates``."""
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise ValueError("Member does not support any of the candidate protocols")

    def __repr__(self) -> str:
        return (f"MemberMetadata(memberId={self.member_id}, groupInstanceId={self.group_instance_id}, "
                f"clientId={self.client_id}, clientHost={self.client_host}, "
                f"sessionTimeoutMs={self.session_timeout_ms}, rebalanceTimeoutMs={self.rebalance_timeout_ms}, "
                f"supportedProtocols={[name for name, _ in self.supported_protocols]})")


__all__ = ["MemberMetadata", "MemberSummary", "Protocol", "plain_protocol_set"]
