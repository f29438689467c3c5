"""Port of clients/src/main/java/org/apache/kafka/common/record/RecordConversionStats.java.

What converting records between message formats cost: the bytes held while converting, the
records converted and the time taken. The log validator fills one in for every append (a
produce in another format than the topic's, or recompressed), and a down-converting send for
every fetch answer; KafkaApis.update_record_conversion_stats turns them into the
Produce/FetchMessageConversionsPerSec meters and the request's conversion time and memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class RecordConversionStats:
    temporary_memory_bytes: int = 0
    num_records_converted: int = 0
    conversion_time_nanos: int = 0
    # nothing converted (below)
    EMPTY: ClassVar[RecordConversionStats]

    def add(self, other: "RecordConversionStats") -> "RecordConversionStats":
        """The two summed, as Kafka's add (a send of several partitions sums its parts)."""
        return RecordConversionStats(self.temporary_memory_bytes + other.temporary_memory_bytes,
                                     self.num_records_converted + other.num_records_converted,
                                     self.conversion_time_nanos + other.conversion_time_nanos)


RecordConversionStats.EMPTY = RecordConversionStats()
