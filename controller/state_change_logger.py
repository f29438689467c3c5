"""Port of core/src/main/scala/kafka/controller/StateChangeLogger.scala.

Kafka writes every partition and replica state change to a dedicated logger,
``state.change.logger`` (its own file, state-change.log, in the stock log4j config), with a
prefix naming the controller and its epoch. Operators read that file to reconstruct who led
what and when, so kafka-py keeps the logger name and the prefix.
"""
from __future__ import annotations

import logging
from typing import Any

from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger("state.change.logger")


class StateChangeLogger:
    def __init__(self, broker_id: int, in_controller_context: bool, controller_epoch: int | None = None) -> None:
        self.broker_id = broker_id
        self.in_controller_context = in_controller_context
        self.controller_epoch = controller_epoch
        if controller_epoch is not None and not in_controller_context:
            raise ValueError("Controller epoch should only be defined if inControllerContext is true")
        kind = "Controller" if in_controller_context else "Broker"
        epoch = f" epoch={controller_epoch}" if controller_epoch is not None else ""
        self.logger = IdentLogger(logger, f"[{kind} id={broker_id}{epoch}] ")

    def with_controller_epoch(self, controller_epoch: int) -> "StateChangeLogger":
        return StateChangeLogger(self.broker_id, self.in_controller_context, controller_epoch)

    @property
    def is_trace_enabled(self) -> bool:
        return logger.isEnabledFor(logging.DEBUG)

    def trace(self, msg: str, *args: Any) -> None:
        self.logger.debug(msg, *args, stacklevel=2)

    def info(self, msg: str, *args: Any) -> None:
        self.logger.info(msg, *args, stacklevel=2)

    def warn(self, msg: str, *args: Any) -> None:
        self.logger.warning(msg, *args, stacklevel=2)

    def error(self, msg: str, *args: Any, exc_info: Any = None) -> None:
        self.logger.error(msg, *args, exc_info=exc_info, stacklevel=2)
