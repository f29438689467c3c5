"""Port of raft/src/main/java/org/apache/kafka/raft/internals/ThresholdPurgatory.java
(Kafka 2.8.2).

The FuturePurgatory the raft client uses: waiting futures kept ordered by (threshold,
arrival), so completing everything below a value takes the front of the order. A future
leaves the purgatory however it completes (reached, expired, called off), through its own
completion callback.
"""
from __future__ import annotations

import bisect
import itertools
import logging
import threading

from kafka_py.raft.expiration_service import ExpirationService
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.raft.internals.future_purgatory import FuturePurgatory

logger = logging.getLogger(__name__)


class ThresholdPurgatory(FuturePurgatory):
    def __init__(self, expiration_service: ExpirationService) -> None:
        self._expiration_service = expiration_service
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # Sorted list of ((threshold, id), future); the id keeps equal thresholds in arrival order.
        self._keys: list[tuple[int, int]] = []
        self._futures: dict[tuple[int, int], CompletableFuture[int]] = {}

    def await_(self, threshold: int, max_wait_time_ms: int) -> CompletableFuture[int]:
        key = (threshold, next(self._ids))
        future: CompletableFuture[int] = self._expiration_service.fail_after(max_wait_time_ms)
        with self._lock:
            bisect.insort(self._keys, key)
            self._futures[key] = future
        future.when_complete(lambda _value, _exc: self._remove(key))
        return future

    def _remove(self, key: tuple[int, int]) -> None:
        with self._lock:
            if self._futures.pop(key, None) is not None:
                index = bisect.bisect_left(self._keys, key)
                del self._keys[index]

    def maybe_complete(self, value: int, current_time_ms: int) -> None:
        with self._lock:
            # Thresholds up to and including ``value`` are reached.
            end = bisect.bisect_right(self._keys, (value, float("inf")))
            ready = [self._futures[key] for key in self._keys[:end]]
        # Completion runs callbacks (which re-take the lock), so never under it.
        for future in ready:
            future.complete(current_time_ms)

    def complete_all(self, current_time_ms: int) -> None:
        for future in self._snapshot():
            future.complete(current_time_ms)

    def complete_all_exceptionally(self, exception: BaseException) -> None:
        for future in self._snapshot():
            future.complete_exceptionally(exception)

    def _snapshot(self) -> list[CompletableFuture[int]]:
        with self._lock:
            return [self._futures[key] for key in self._keys]

    def num_waiting(self) -> int:
        with self._lock:
            return len(self._futures)
