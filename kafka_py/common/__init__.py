"""Small shared value types and exceptions (Kafka's org.apache.kafka.common)."""
from kafka_py.common.topic_partition import TopicPartition

__all__ = ["TopicPartition"]
