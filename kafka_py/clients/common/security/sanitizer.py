"""Port of clients/src/main/java/org/apache/kafka/common/utils/Sanitizer.java (Kafka 2.8.2):
user names as ZooKeeper node names (``/config/users/<sanitized>``).

Java's URLEncoder (UTF-8) keeps letters, digits and ``.-*_``; Kafka then also encodes
``*`` and writes a space as ``%20``, so the name is safe in a znode path and in JMX names.
"""
from __future__ import annotations

from urllib.parse import quote, unquote


def sanitize(name: str) -> str:
    return quote(name, safe="").replace("~", "%7E")


def desanitize(name: str) -> str:
    return unquote(name)
