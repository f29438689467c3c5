"""Port of metadata/src/main/java/org/apache/kafka/queue/ (Kafka 2.8.2).

The single-threaded event queue that the quorum controller (and, in Kafka 3.0, the
broker's metadata listener) runs everything on: events in order, events put in front,
events with deadlines and events deferred until a time, one thread, no locks in the
events themselves.
"""
