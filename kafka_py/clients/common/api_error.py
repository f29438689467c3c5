"""Port of clients/src/main/java/org/apache/kafka/common/requests/ApiError.java.

An error code plus an optional message: the per-item answer of the admin APIs
(CreateTopics, CreatePartitions, AlterConfigs, ElectLeaders, CreateAcls ...), used by
the request handlers, the admin manager and the controller alike.
"""
from __future__ import annotations

from typing import NamedTuple

from kafka_py.clients.common.protocol.errors import Errors

__all__ = ["ApiError"]


class ApiError(NamedTuple):
    """``(error, message)``; a tuple so callers may unpack it."""

    error: Errors
    message: str | None = None

    @classmethod
    def from_throwable(cls, e: BaseException) -> "ApiError":
        return cls.of(Errors.for_exception(e), str(e))

    @classmethod
    def of(cls, error: Errors, text: str | None) -> "ApiError":
        """``error`` with the message of an exception that carried ``text``, by the rule of
        ``from_throwable``: no message for UNKNOWN_SERVER_ERROR (it could leak internals) nor
        when it only repeats the error's default text, as Kafka's ApiError.fromThrowable."""
        if error is Errors.UNKNOWN_SERVER_ERROR or not text or text == error.message:
            return cls(error, None)
        return cls(error, text)

    def is_success(self) -> bool:
        return self.error is Errors.NONE

    def message_with_fallback(self) -> str:
        return self.message if self.message is not None else self.error.message


ApiError.NONE = ApiError(Errors.NONE)  # type: ignore[attr-defined]
