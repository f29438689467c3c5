"""clients/src/main/java/org/apache/kafka/clients: the broker's own client side, the one blocking
connection its inter-broker senders (replica fetchers, the controller, controlled shutdown) use."""
