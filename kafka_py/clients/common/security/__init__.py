"""Port of the server side of clients/src/main/java/org/apache/kafka/common/security (Kafka 2.8.2):
authentication of connections: TLS contexts and certificate principals, SASL (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER) and the SCRAM credentials stored in ZooKeeper.

The modules port the server side of Kafka's clients/.../common/security packages; the
socket side (the TLS transport in the selector) lives in kafka_py.network.
"""
