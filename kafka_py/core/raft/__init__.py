"""core/src/main/scala/kafka/raft: the broker's side of KRaft (RaftManager, the metadata log
over a Log, the network channel); the protocol itself is Kafka's raft module, kafka_py.raft."""
