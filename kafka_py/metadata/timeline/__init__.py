"""Port of metadata/src/main/java/org/apache/kafka/timeline/ (Kafka 2.8.2, with 3.0.0's
TimelineInteger, TimelineLong and registry reset).

Collections whose past states can be read and restored. A SnapshotRegistry hands out
snapshots at increasing epochs; every timeline collection registered with it records, in
the newest snapshot, what a change overwrote, so that reads can be made "as of" any live
snapshot and the registry can revert every collection to one. The quorum controller keeps
its whole state in these: it applies a write's records at once, and reverts to the last
committed snapshot when the write fails to commit.

All of it needs external synchronization (the controller's single event thread).
"""
