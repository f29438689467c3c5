"""Port of the constants of clients/src/main/java/org/apache/kafka/common/requests
(Kafka 2.8.2) that the broker and its tools share: ListOffsetsRequest.java,
FetchRequest.java, AbstractControlRequest.java and OffsetsForLeaderEpochResponse.java.

Kafka keeps these on the request and response classes; kio's message classes have no
room for them, so they live here, one home each, and every module imports them.
"""
from __future__ import annotations

# ListOffsetsRequest: the special target timestamps.
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1

# FetchRequest / ListOffsetsRequest: the replica id a consumer's request carries.
CONSUMER_REPLICA_ID = -1

# AbstractControlRequest: a control request from a controller that sent no broker epoch.
UNKNOWN_BROKER_EPOCH = -1

# OffsetsForLeaderEpochResponse: no such epoch, no end offset known for it.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

__all__ = ["EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "CONSUMER_REPLICA_ID", "UNKNOWN_BROKER_EPOCH",
           "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET"]
