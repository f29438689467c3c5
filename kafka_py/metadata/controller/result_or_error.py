"""Port of metadata/src/main/java/org/apache/kafka/controller/ResultOrError.java.

Either a value or an ApiError, as the controller's read APIs answer per item.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.protocol.errors import Errors

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ResultOrError(Generic[T]):
    result: T | None = None
    error: ApiError = ApiError.NONE  # type: ignore[attr-defined]

    @classmethod
    def of_error(cls, error: ApiError | Errors, message: str | None = None) -> ResultOrError[T]:
        if isinstance(error, Errors):
            error = ApiError(error, message)
        return cls(None, error)

    def is_error(self) -> bool:
        return not self.error.is_success()

    def is_result(self) -> bool:
        return self.error.is_success()

    def __str__(self) -> str:
        if self.is_error():
            return f"ResultOrError({self.error})"
        return f"ResultOrError({self.result})"
