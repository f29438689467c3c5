"""Port of core/src/main/scala/kafka/zk: Kafka's ZooKeeper data (zk_data), client (kafka_zk_client) and admin operations (admin_zk_client)."""
from kafka_py.zk.kafka_zk_client import (
    Code,
    ControllerMovedException,
    KafkaZkClient,
    StateChangeHandler,
    UpdateLeaderAndIsrResult,
    ZNodeChangeHandler,
    ZNodeChildChangeHandler,
    ZooKeeperClient,
    ZooKeeperClientException,
    ZooKeeperClientTimeoutException,
)
from kafka_py.zk.zk_data import (
    BrokerInfo,
    ConfigEntityName,
    ConfigType,
    ReplicaAssignment,
    TopicIdReplicaAssignment,
    ZkVersion,
)

__all__ = [
    "BrokerInfo",
    "Code",
    "ConfigEntityName",
    "ConfigType",
    "ControllerMovedException",
    "KafkaZkClient",
    "ReplicaAssignment",
    "StateChangeHandler",
    "TopicIdReplicaAssignment",
    "UpdateLeaderAndIsrResult",
    "ZNodeChangeHandler",
    "ZNodeChildChangeHandler",
    "ZkVersion",
    "ZooKeeperClient",
    "ZooKeeperClientException",
    "ZooKeeperClientTimeoutException",
]
