"""Port of metadata/src/main/java/org/apache/kafka/metadata/MetadataParseException.java.

Raised when a metadata log record cannot be read: an unknown frame version, api key or
record version, or a body that does not parse.
"""
from __future__ import annotations

from kafka_py.clients.common.errors import KafkaException


class MetadataParseException(KafkaException):
    """A metadata record could not be parsed; the message says which part and why."""
