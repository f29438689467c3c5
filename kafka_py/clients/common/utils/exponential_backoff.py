"""Port of clients/src/main/java/org/apache/kafka/common/utils/ExponentialBackoff.java.

``initial_interval * multiplier ** attempts``, capped at ``max_interval`` and spread by a
random factor within ``1 +- jitter`` (so brokers retrying together drift apart). With
``initial_interval >= max_interval`` the backoff is constant.
"""
from __future__ import annotations

import math
import random


class ExponentialBackoff:
    def __init__(self, initial_interval: int, multiplier: int, max_interval: int, jitter: float) -> None:
        self.initial_interval = initial_interval
        self.multiplier = multiplier
        self.jitter = jitter
        self._exp_max = (math.log(max_interval / max(initial_interval, 1)) / math.log(multiplier)
                         if max_interval > initial_interval else 0.0)

    def backoff(self, attempts: int) -> int:
        if self._exp_max == 0:
            return self.initial_interval
        exp = min(attempts, self._exp_max)
        term = self.initial_interval * self.multiplier ** exp
        return int(random.uniform(1 - self.jitter, 1 + self.jitter) * term)


__all__ = ["ExponentialBackoff"]
