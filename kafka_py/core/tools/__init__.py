"""core/src/main/scala/kafka/tools: the console clients, log dumps, storage and cluster tools,
MirrorMaker and the other tools of Kafka's core."""
