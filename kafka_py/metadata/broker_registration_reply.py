"""Port of metadata/src/main/java/org/apache/kafka/metadata/BrokerRegistrationReply.java.

The controller's answer to a broker registration: the epoch the broker now holds.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BrokerRegistrationReply:
    epoch: int
