"""Kafka's ``clients`` module, the parts a broker uses. Its package
org.apache.kafka.clients (the broker's own client side, the blocking connection its
inter-broker senders use) is here; org.apache.kafka.common (the protocol, the record format,
errors, security's server side, utils) is kafka_py.clients.common."""
