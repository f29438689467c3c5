"""Port of core/src/main/scala/kafka/zk: Kafka's ZooKeeper data (zk_data), client (kafka_zk_client) and admin operations (admin_zk_client).

The names below are re-exported on first use rather than imported with the package: every
broker imports zk_data (the ZooKeeper paths and JSON that KRaft mode shares, such as
ConfigType and BrokerInfo), and importing the package must not bring the ZooKeeper client and
kazoo into a KRaft node, which never talks to ZooKeeper (docs/kraft.md, "What the start does").
"""
from __future__ import annotations

import importlib
from typing import Any

# Each re-exported name and the module that defines it.
_EXPORTS = {
    "Code": "kafka_zk_client",
    "ControllerMovedException": "kafka_zk_client",
    "KafkaZkClient": "kafka_zk_client",
    "StateChangeHandler": "kafka_zk_client",
    "UpdateLeaderAndIsrResult": "kafka_zk_client",
    "ZNodeChangeHandler": "kafka_zk_client",
    "ZNodeChildChangeHandler": "kafka_zk_client",
    "ZooKeeperClient": "kafka_zk_client",
    "ZooKeeperClientException": "kafka_zk_client",
    "ZooKeeperClientTimeoutException": "kafka_zk_client",
    "BrokerInfo": "zk_data",
    "ConfigEntityName": "zk_data",
    "ConfigType": "zk_data",
    "ReplicaAssignment": "zk_data",
    "TopicIdReplicaAssignment": "zk_data",
    "ZkVersion": "zk_data",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
