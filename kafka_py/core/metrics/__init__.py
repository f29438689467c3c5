"""core/src/main/scala/kafka/metrics: KafkaMetricsGroup and the Yammer metrics it registers
(kafka_py/core/metrics/yammer.py), and their export in Prometheus's text format."""
