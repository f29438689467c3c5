"""Port of core/src/main/scala/kafka/api/Request.scala.

The replica ids a Fetch or ListOffsets request may carry besides a broker's own:
``FUTURE_LOCAL_REPLICA_ID`` marks the reads a broker's ReplicaAlterLogDirsThread makes of
its own log to copy it into another log dir. A consumer's and a debugging consumer's ids
(Kafka's OrdinaryConsumerId and DebuggingConsumerId) are FetchRequest's constants, in
kafka_py/clients/common/protocol/requests.py.
"""
from __future__ import annotations

from kafka_py.clients.common.protocol.requests import CONSUMER_REPLICA_ID, DEBUGGING_REPLICA_ID

FUTURE_LOCAL_REPLICA_ID = -3


def is_valid_broker_id(replica_id: int) -> bool:
    """Fetches from followers carry their broker id, never a negative one."""
    return replica_id >= 0


def describe_replica_id(replica_id: int) -> str:
    if replica_id == CONSUMER_REPLICA_ID:
        return "consumer"
    if replica_id == DEBUGGING_REPLICA_ID:
        return "debug consumer"
    if replica_id == FUTURE_LOCAL_REPLICA_ID:
        return "future local replica"
    if is_valid_broker_id(replica_id):
        return f"replica [{replica_id}]"
    return f"invalid replica [{replica_id}]"
