"""Port of metadata/src/main/java/org/apache/kafka/controller/Controller.java (Kafka 2.8.2,
with 3.0.0's additions).

What a controller offers to the request handlers (ControllerApis) and to the process
that runs it. Every operation answers with a concurrent.futures.Future (Kafka's
CompletableFuture) that completes once its records have committed, or fails with an
ApiException (NOT_CONTROLLER on a controller that is not active).
"""
from __future__ import annotations

import abc
from concurrent.futures import Future


class Controller(abc.ABC):
    @abc.abstractmethod
    def create_topics(self, request) -> Future: ...

    @abc.abstractmethod
    def alter_isr(self, request) -> Future: ...

    @abc.abstractmethod
    def register_broker(self, request) -> Future: ...

    @abc.abstractmethod
    def process_broker_heartbeat(self, request) -> Future: ...

    @abc.abstractmethod
    def unregister_broker(self, request) -> Future: ...

    @abc.abstractmethod
    def elect_leaders(self, request) -> Future: ...

    @abc.abstractmethod
    def cur_claim_epoch(self) -> int:
        """The epoch this controller leads, or -1 when it is not active."""

    def is_active(self) -> bool:
        return self.cur_claim_epoch() != -1

    @abc.abstractmethod
    def begin_shutdown(self) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...
