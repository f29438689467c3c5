"""Port of metadata/src/main/java/org/apache/kafka/metadata/BrokerState.java.

What a broker is doing. The numbers are Kafka's public values: the BrokerState metric
reports them and a broker heartbeat carries them. A broker moves down the list in order:
NOT_RUNNING, STARTING (catching up with the metadata), RECOVERY (caught up, not yet
unfenced), RUNNING, PENDING_CONTROLLED_SHUTDOWN, SHUTTING_DOWN.
"""
from __future__ import annotations

import enum


class BrokerState(enum.IntEnum):
    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 6
    SHUTTING_DOWN = 7
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> BrokerState:
        """The state with this value; UNKNOWN for any other value (a newer peer's state)."""
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN
