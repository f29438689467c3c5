"""Port of metadata/src/main/java/org/apache/kafka/controller/BrokerControlStates.java.

A broker's state before and after a heartbeat.
"""
from __future__ import annotations

from dataclasses import dataclass

from kafka_py.metadata.controller.broker_control_state import BrokerControlState


@dataclass(frozen=True, slots=True)
class BrokerControlStates:
    current: BrokerControlState
    next: BrokerControlState

    def __str__(self) -> str:
        return f"BrokerControlStates(current={self.current.name}, next={self.next.name})"
