"""Port of storage/src/main/java/org/apache/kafka/storage/internals/log/VerificationGuard.java and
VerificationStateEntry.java (Kafka 3.6+, KIP-890 part 1), which Kafka 2.8.2 does not have.

Before the first transactional batch of a producer is appended to a partition on which the
producer has no open transaction, the partition leader asks the transaction coordinator
whether the partition is part of the producer's ongoing transaction
(server/add_partitions_to_txn_manager.py). The answer comes back later, and meanwhile the
transaction may have ended (an abort marker written) and a new one begun that does not
include this partition: an answer about the old transaction must not let a batch into the
new one. So the leader makes a ``VerificationGuard`` when it starts the check, keeps it in
the partition's producer state (``VerificationStateEntry``, one per producer id) and hands
the same object to the append once the coordinator has said yes; the log appends the
batch only if the guard it is given is the one still kept for the producer. Any
transactional append of the producer (its first batch, or a marker) removes the entry, so
a guard can be used once and never across a marker.

The entry also remembers the lowest sequence seen while verifying: a producer whose first
batch failed verification with a retriable error must not get a later batch in ahead of
it (that would leave the first one out of order for ever); a batch with a higher sequence
is refused with OUT_OF_ORDER_SEQUENCE_NUMBER until the first one is in.
"""
from __future__ import annotations

import itertools
import threading

__all__ = ["SENTINEL", "VerificationGuard", "VerificationStateEntry"]

_ids = itertools.count(1)
_ids_lock = threading.Lock()


class VerificationGuard:
    """A unique token of one verification; compared by identity."""

    __slots__ = ("value",)

    def __init__(self, value: int | None = None) -> None:
        if value is None:
            with _ids_lock:
                value = next(_ids)
        self.value = value

    def verify(self, verifying_guard: "VerificationGuard | None") -> bool:
        """Whether ``verifying_guard`` (what an append carries) is this guard; the sentinel
        verifies nothing."""
        return verifying_guard is self and self is not SENTINEL

    def __repr__(self) -> str:
        return f"VerificationGuard(value={self.value})"


# What an append carries when it started no verification: never verifies anything.
SENTINEL = VerificationGuard(0)


class VerificationStateEntry:
    """The verification in progress of one producer on one partition."""

    __slots__ = ("timestamp", "verification_guard", "lowest_sequence", "epoch")

    def __init__(self, timestamp: int, sequence: int, epoch: int) -> None:
        self.timestamp = timestamp
        self.verification_guard = VerificationGuard()
        self.lowest_sequence = sequence
        self.epoch = epoch

    def maybe_update_lowest_sequence_and_epoch(self, incoming_sequence: int, incoming_epoch: int) -> None:
        """A lower sequence of the same epoch lowers the bar; a newer epoch starts it afresh
        (its sequences start over)."""
        if incoming_epoch == self.epoch and incoming_sequence < self.lowest_sequence:
            self.lowest_sequence = incoming_sequence
        if incoming_epoch > self.epoch:
            self.epoch = incoming_epoch
            self.lowest_sequence = incoming_sequence

    def __repr__(self) -> str:
        return (f"VerificationStateEntry(timestamp={self.timestamp}, guard={self.verification_guard}, "
                f"lowestSequence={self.lowest_sequence}, epoch={self.epoch})")
