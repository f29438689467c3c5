"""Port of clients/src/main/java/org/apache/kafka/common/IsolationLevel.java.

The isolation a Fetch or ListOffsets request asks for, by its wire value: READ_UNCOMMITTED
reads up to the high watermark, READ_COMMITTED up to the last stable offset.
"""
from __future__ import annotations

import enum


class IsolationLevel(enum.IntEnum):
    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1
