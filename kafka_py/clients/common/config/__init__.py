"""clients/src/main/java/org/apache/kafka/common/config: ConfigDef."""
