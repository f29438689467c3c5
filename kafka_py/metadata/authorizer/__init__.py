"""Port of metadata/src/main/java/org/apache/kafka/metadata/authorizer/ (Kafka 3.5.0): the
authorizer of KRaft mode, whose ACLs are metadata records (StandardAcl, StandardAuthorizer)."""
