"""clients/src/main/java/org/apache/kafka/common/utils: Time, Utils, the properties format,
backoff and app info."""
