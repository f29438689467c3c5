"""core/src/main/scala/kafka/admin: the administration commands (kafka-topics.sh,
kafka-configs.sh, kafka-acls.sh ...)."""
