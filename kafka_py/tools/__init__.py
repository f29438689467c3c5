"""Command-line tools: ports of Kafka's core/src/main/scala/kafka/tools and kafka/admin commands."""
