"""Port of core/src/main/scala/kafka/server/epoch: the per-partition leader epoch cache."""
from kafka_py.server.epoch.leader_epoch_file_cache import EpochEntry, LeaderEpochFileCache

__all__ = ["EpochEntry", "LeaderEpochFileCache"]
