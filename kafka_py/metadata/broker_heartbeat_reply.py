"""Port of metadata/src/main/java/org/apache/kafka/metadata/BrokerHeartbeatReply.java.

What the controller tells a broker in answer to a heartbeat.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatReply:
    # the broker's metadata has caught up with the controller's
    is_caught_up: bool
    # the broker is fenced: it may not lead or be in an ISR
    is_fenced: bool
    # the broker is in a controlled shutdown
    in_controlled_shutdown: bool
    # the broker should now stop
    should_shut_down: bool
