"""How many offsets of each partition one micro-batch of the ``kafka-log`` stream takes.

No Kafka counterpart: the admission control of Spark's Kafka source (``maxOffsetsPerTrigger``,
``minOffsetsPerTrigger`` with ``maxTriggerDelay``, in KafkaMicroBatchStream.scala), as pure
functions over offsets so that they are tested alone.

``rate_limit`` shares a budget of offsets between partitions in proportion to what each has
waiting, in whole offsets: each gets the floor of its share, and what the floors leave of the
budget goes one offset at a time to the partitions with the largest remainders. The total
never exceeds the budget (Spark's source rounds shares below one up, and can exceed it when
partitions outnumber the budget); a partition left out of one micro-batch has the same or a
larger share in the next, so none waits for ever.
"""
from __future__ import annotations

from typing import Mapping, Optional, TypeVar

K = TypeVar("K")


def waiting(begins: Mapping[K, int], ends: Mapping[K, int]) -> dict[K, int]:
    """Offsets waiting per partition (those with a begin and something after it)."""
    return {k: end - begins[k] for k, end in ends.items() if k in begins and end > begins[k]}


def rate_limit(budget: int, begins: Mapping[K, int], ends: Mapping[K, int]) -> dict[K, int]:
    """End offsets that take at most ``budget`` offsets past ``begins`` toward ``ends``."""
    sizes = waiting(begins, ends)
    total = sum(sizes.values())
    if total <= budget:
        return dict(ends)
    shares = {k: budget * size / total for k, size in sizes.items()}
    taken = {k: int(share) for k, share in shares.items()}
    left = budget - sum(taken.values())
    # Largest remainders first; ties by key so the same offsets plan the same batch.
    for k in sorted(shares, key=lambda k: (-(shares[k] - taken[k]), str(k)))[:left]:
        taken[k] += 1
    return {k: (begins[k] + taken[k] if k in taken else end) for k, end in ends.items()}


class TriggerDelay:
    """``minOffsetsPerTrigger``: hold a micro-batch back until enough offsets wait, or until
    ``maxTriggerDelay`` has passed since the last one that ran."""

    def __init__(self, min_offsets: int, max_delay_ms: int) -> None:
        self.min_offsets = min_offsets
        self.max_delay_ms = max_delay_ms
        self.last_batch_ms: Optional[float] = None

    def hold_back(self, begins: Mapping[K, int], ends: Mapping[K, int], now_ms: float) -> bool:
        """True when the micro-batch should wait; False (and the clock restarted) when it runs."""
        if self.last_batch_ms is None:
            # The first call starts the clock: a query that just started waits like any other.
            self.last_batch_ms = now_ms
        if now_ms - self.last_batch_ms >= self.max_delay_ms:
            self.last_batch_ms = now_ms
            return False
        if sum(waiting(begins, ends).values()) < self.min_offsets:
            return True
        self.last_batch_ms = now_ms
        return False
