"""Port of metadata/src/main/java/org/apache/kafka/controller/DeferredEvent.java.

An operation waiting in the ControllerPurgatory for the log to commit an offset.
"""
from __future__ import annotations

import abc


class DeferredEvent(abc.ABC):
    @abc.abstractmethod
    def complete(self, exception: BaseException | None) -> None:
        """Finish the operation: successfully when ``exception`` is None."""
