"""Port of metadata/src/main/java/org/apache/kafka/controller/BrokerControlState.java.

Where a broker is in the controller's lifecycle: FENCED (registered, not yet caught up,
or timed out), UNFENCED (serving), CONTROLLED_SHUTDOWN (moving its leaderships away),
SHUTDOWN_NOW (may stop). Each state says whether the broker is fenced and whether it
should shut down.
"""
from __future__ import annotations

import enum


class BrokerControlState(enum.Enum):
    FENCED = (True, False)
    UNFENCED = (False, False)
    CONTROLLED_SHUTDOWN = (False, False, "controlled")
    SHUTDOWN_NOW = (True, True)

    @property
    def fenced(self) -> bool:
        return self.value[0]

    @property
    def should_shut_down(self) -> bool:
        return self.value[1]

    def in_controlled_shutdown(self) -> bool:
        return self is BrokerControlState.CONTROLLED_SHUTDOWN
