"""clients/src/main/java/org/apache/kafka/common: the wire protocol (``protocol``), the record
format (``record``), the server side of ``security``, ``utils``, ``config``, and the small
value types and exceptions of the package itself."""
from kafka_py.clients.common.topic_partition import TopicPartition

__all__ = ["TopicPartition"]
