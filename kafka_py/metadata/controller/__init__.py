"""Port of metadata/src/main/java/org/apache/kafka/controller/ (Kafka 2.8.2, completed
from Kafka 3.0.0 where 2.8.2's KRaft controller was unfinished).

The quorum controller: a single-threaded state machine on a KafkaEventQueue whose state
lives in timeline collections and whose changes are metadata records written through a
MetaLogManager. QuorumController is the entry point; the *ControlManager classes each
own one part of the state (brokers, topics and partitions, configs, quotas, features,
producer ids) and turn requests into records and replay records into state.
"""
