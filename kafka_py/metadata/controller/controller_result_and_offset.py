"""Port of metadata/src/main/java/org/apache/kafka/controller/ControllerResultAndOffset.java.

A ControllerResult and the log offset its records were (or will be) written at: the
offset whose commit completes the operation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kafka_py.metadata.controller.controller_result import ControllerResult

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ControllerResultAndOffset(Generic[T]):
    offset: int
    result: ControllerResult[T]

    @classmethod
    def of(cls, offset: int, result: ControllerResult[T]) -> ControllerResultAndOffset[T]:
        return cls(offset, result)

    @property
    def records(self):
        return self.result.records

    @property
    def response(self) -> T | None:
        return self.result.response

    @property
    def is_atomic(self) -> bool:
        return self.result.is_atomic
