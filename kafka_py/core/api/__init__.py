"""Port of core/src/main/scala/kafka/api: value types shared by the controller, ZooKeeper and brokers."""
