"""Port of Kafka 2.8.2's metadata module (metadata/src/main/java/org/apache/kafka/).

The KRaft side of Kafka: the metadata records and their log framing, the small values the
controller and brokers exchange (kafka_py.metadata's modules, Kafka's
org.apache.kafka.metadata), the snapshottable collections of org.apache.kafka.timeline
(kafka_py.metadata.timeline) and the event queue of org.apache.kafka.queue
(kafka_py.metadata.queue).
"""
