"""Port of metadata/src/main/java/org/apache/kafka/controller/ControllerResult.java.

What a write operation produces: the records to append and the response to give once
they commit. ``is_atomic`` asks the log to append the records as one batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Sequence, TypeVar

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ControllerResult(Generic[T]):
    records: tuple[ApiMessageAndVersion, ...] = field(default=())
    response: T | None = None
    is_atomic: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))

    @classmethod
    def of(cls, records: Sequence[ApiMessageAndVersion], response: T) -> ControllerResult[T]:
        return cls(tuple(records), response, False)

    @classmethod
    def atomic_of(cls, records: Sequence[ApiMessageAndVersion],
                  response: T) -> ControllerResult[T]:
        return cls(tuple(records), response, True)

    def without_records(self) -> ControllerResult[T]:
        """The same response with nothing to write (validate-only requests)."""
        return ControllerResult((), self.response, False)

    def __str__(self) -> str:
        records = ", ".join(str(r) for r in self.records)
        return f"ControllerResult(records=[{records}], response={self.response}, isAtomic={self.is_atomic})"
