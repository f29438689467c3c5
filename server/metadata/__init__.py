"""Port of core/src/main/scala/kafka/server/metadata/ (Kafka 2.8.2): what a KRaft broker
keeps of the metadata log (MetadataImage, RaftMetadataCache, CachedConfigRepository) and
the listener that applies the log's records to it (BrokerMetadataListener)."""
