"""core/src/main/scala/kafka/common: the broker-side helpers Kafka keeps there."""
