"""Real Kafka brokers in tests: ``KafkaCluster`` (a context manager for any test runner) and
a pytest plugin (``kafka_py.testing.pytest_plugin``, registered through the ``pytest11``
entry point) with the fixtures ``kafka_cluster``, ``kafka_broker``, ``kafka_bootstrap`` and
``kafka_topic``. docs/testing.md is the guide.
"""
from kafka_py.testing.cluster import KRAFT, ZOOKEEPER, BrokerNode, KafkaCluster, prewarm

__all__ = ["KafkaCluster", "BrokerNode", "KRAFT", "ZOOKEEPER", "prewarm"]
