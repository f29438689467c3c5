"""Port of core/src/main/scala/kafka/controller/ControllerState.scala.

What the controller's event thread is doing right now. Each event names the state it runs
in; the event manager publishes it while the event is processed and falls back to ``IDLE``
between events. ``value`` is the byte Kafka exposes in its ``ControllerState`` gauge.
"""
from __future__ import annotations

import enum
import logging

logger = logging.getLogger(__name__)


class ControllerState(enum.Enum):
    """Kafka's controller states; ``.value`` is the gauge byte, ``str()`` Kafka's object name."""

    IDLE = 0
    CONTROLLER_CHANGE = 1
    BROKER_CHANGE = 2
    TOPIC_CHANGE = 3
    TOPIC_DELETION = 4
    ALTER_PARTITION_REASSIGNMENT = 5
    AUTO_LEADER_BALANCE = 6
    MANUAL_LEADER_BALANCE = 7
    CONTROLLED_SHUTDOWN = 8
    ISR_CHANGE = 9
    LEADER_AND_ISR_RESPONSE_RECEIVED = 10
    LOG_DIR_CHANGE = 11
    CONTROLLER_SHUTDOWN = 12
    UNCLEAN_LEADER_ELECTION_ENABLE = 13
    TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE = 14
    LIST_PARTITION_REASSIGNMENT = 15
    UPDATE_METADATA_RESPONSE_RECEIVED = 16
    UPDATE_FEATURES = 17

    @property
    def kafka_name(self) -> str:
        """The Scala case-object name (``BrokerChange``), which metric names are built from."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def rate_and_time_metric_name(self) -> str | None:
        # Idle and UpdateMetadataResponseReceived have no timer in Kafka; BrokerChange and
        # AlterPartitionReassignment keep the names their metrics had before this enum existed.
        if self in (ControllerState.IDLE, ControllerState.UPDATE_METADATA_RESPONSE_RECEIVED):
            return None
        if self is ControllerState.BROKER_CHANGE:
            return "LeaderElectionRateAndTimeMs"
        if self is ControllerState.ALTER_PARTITION_REASSIGNMENT:
            return "PartitionReassignmentRateAndTimeMs"
        return f"{self.kafka_name}RateAndTimeMs"

    def __str__(self) -> str:
        return self.kafka_name
