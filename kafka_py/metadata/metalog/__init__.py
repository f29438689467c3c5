"""Port of metadata/src/main/java/org/apache/kafka/metalog/ (Kafka 2.8.2).

The interface the 2.8.2 quorum controller writes its records through (MetaLogManager),
the callbacks it gets back (MetaLogListener), the leader value (MetaLogLeader), and
LocalLogManager: an in-process shared log that several controllers can run on, with its
own leader election and handover, which the controller tests use. A Raft-backed manager
adapts kafka_py.raft to the same interface.
"""
