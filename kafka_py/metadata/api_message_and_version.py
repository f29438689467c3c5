"""Port of metadata/src/main/java/org/apache/kafka/metadata/ApiMessageAndVersion.java.

A metadata record and the version it is (or was) serialized at. In Kafka a message object
serves every version, so the pair is needed; here each generated class is one version, so
the version is the class's ``__version__`` and the pair checks that the two agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from kio.static.primitive import i16
from kio.static.protocol import Entity


class ApiMessage(Entity, Protocol):
    """A generated message or record class with an api key (Kafka's ApiMessage)."""

    __api_key__: ClassVar[i16]


@dataclass(frozen=True, slots=True)
class ApiMessageAndVersion:
    message: ApiMessage
    version: int

    def __post_init__(self) -> None:
        # A mismatch would frame the record with one version and write the body of another.
        if type(self.message).__version__ != self.version:
            raise ValueError(f"{type(self.message).__name__} is version "
                             f"{type(self.message).__version__}, not {self.version}")

    @classmethod
    def of(cls, message: ApiMessage) -> ApiMessageAndVersion:
        """The pair for ``message`` at its class's version."""
        return cls(message, int(type(message).__version__))

    def __str__(self) -> str:
        return f"ApiMessageAndVersion({self.message} at version {self.version})"
