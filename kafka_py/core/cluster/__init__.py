"""Port of core/src/main/scala/kafka/cluster: brokers and their end points (Broker.scala, EndPoint.scala)."""
from kafka_py.core.cluster.broker import (
    Broker,
    BrokerEndPoint,
    BrokerEndPointNotAvailableException,
    EndPoint,
    FinalizedVersionRange,
    ListenerName,
    Node,
    SecurityProtocol,
    SupportedVersionRange,
)

__all__ = [
    "Broker",
    "BrokerEndPoint",
    "BrokerEndPointNotAvailableException",
    "EndPoint",
    "FinalizedVersionRange",
    "ListenerName",
    "Node",
    "SecurityProtocol",
    "SupportedVersionRange",
]
