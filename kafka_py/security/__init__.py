"""Authentication of connections: TLS contexts and certificate principals, SASL (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512) and the SCRAM credentials stored in ZooKeeper.

The modules port the server side of Kafka's clients/.../common/security packages; the
socket side (the TLS transport in the selector) lives in kafka_py.network.
"""
