"""Kafka's ``tools`` module (tools/src/main/java/org/apache/kafka/tools): the producer
performance test and the verifiable producer and consumer. The tools of Kafka's core are in
kafka_py.core.tools and kafka_py.core.admin."""
