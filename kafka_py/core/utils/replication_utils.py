"""Port of core/src/main/scala/kafka/utils/ReplicationUtils.scala (Kafka 2.8.2).

How a leader writes its own ISR change straight to ZooKeeper, the way every leader did before
AlterIsr (``inter.broker.protocol.version`` < 2.7-IV2, see ZkIsrManager in
server/alter_isr_manager.py): a set of the partition state znode conditional on the
zkVersion the leader last saw, so a write the controller made in between (a new leader, a
new epoch) is never overwritten.

A set whose reply was lost can be retried by the ZooKeeper client and then fail with a bad
version although the first attempt succeeded. ``check_leader_and_isr_zk_data`` tells that
case apart: the znode already holds exactly what was being written.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.zk.zk_data import TopicPartitionStateZNode, ZkVersion

if TYPE_CHECKING:
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)


def update_leader_and_isr(zk_client: "KafkaZkClient", partition: TopicPartition, new_leader_and_isr: LeaderAndIsr,
                          controller_epoch: int) -> tuple[bool, int]:
    """Write ``new_leader_and_isr`` if the state znode is still at its ``zk_version``:
    (True, the znode's new version) or (False, ZkVersion.UNKNOWN_VERSION).

    ``controller_epoch`` is the epoch of the controller that made the current leader leader,
    not the current controller's: the znode records who decided the leadership."""
    path = TopicPartitionStateZNode.path(partition)
    data = TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(new_leader_and_isr, controller_epoch))
    return zk_client.conditional_update_path(path, data, new_leader_and_isr.zk_version,
                                             check_leader_and_isr_zk_data)


def check_leader_and_isr_zk_data(zk_client: "KafkaZkClient", path: str, expected_data: bytes) -> tuple[bool, int]:
    """After a bad-version failure: (True, version) if the znode holds ``expected_data``'s state
    already (an earlier attempt of this very write succeeded), else (False, UNKNOWN_VERSION)."""
    written_data, written_stat = zk_client.get_data_and_stat(path)
    if written_data is None or written_stat is None:
        return False, ZkVersion.UNKNOWN_VERSION
    # Both decoded against the same stat, so only leader, epochs and ISR are compared.
    expected = TopicPartitionStateZNode.decode(expected_data, written_stat)
    written = TopicPartitionStateZNode.decode(written_data, written_stat)
    if expected is not None and expected == written:
        return True, written_stat.version
    return False, ZkVersion.UNKNOWN_VERSION


__all__ = ["update_leader_and_isr", "check_leader_and_isr_zk_data"]
