"""kafka-python clients in a process of their own, driven by one command per line on stdin.

Tests that walk their own process's objects (tests/leak_finder.py) run the broker in the
test process and its clients here, so that what the clients keep about a topic (metadata,
metrics, buffers) is not mistaken for the broker's. Each command answers ``ok`` or
``error <reason>`` on one line:

    create <topic> <partitions> [<config>=<value> ...]
    create-assigned <topic> <replicas>[/<replicas> ...] [<config>=<value> ...]
                                          replicas of partitions 0, 1, ... as 1,0/0,1
    delete <topic>
    produce <topic> <partitions> [<n>]    n records (default 1), all with the same key, to each
                                          partition, idempotent, acks=all
    consume <topic> <partitions> <group>  assign, read one record per partition, commit
    subscribe <topic> <partitions> <group> join the group, read one record per partition, commit
    read <topic> <partitions> <n>         no group: assign, read n records from the partitions
"""
from __future__ import annotations

import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka_py.core.tools.group_subscription import subscribe


def _read(consumer: KafkaConsumer, wanted: int) -> None:
    got = 0
    for _ in range(150):  # at most 30 s
        got += sum(len(records) for records in consumer.poll(200).values())
        if got >= wanted:
            return
    raise TimeoutError(f"read {got} of {wanted} records")


def main(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    for line in sys.stdin:
        command, *args = line.split()
        try:
            if command == "create":
                configs = dict(a.split("=", 1) for a in args[2:])
                admin.create_topics([NewTopic(args[0], int(args[1]), 1, topic_configs=configs)])
            elif command == "create-assigned":
                assignment = {p: [int(b) for b in replicas.split(",")] for p, replicas in enumerate(args[1].split("/"))}
                configs = dict(a.split("=", 1) for a in args[2:])
                admin.create_topics([NewTopic(args[0], replica_assignments=assignment, topic_configs=configs)])
            elif command == "delete":
                admin.delete_topics([args[0]])
            elif command == "produce":
                producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
                try:
                    for partition in range(int(args[1])):
                        for _ in range(int(args[2]) if len(args) > 2 else 1):
                            producer.send(args[0], b"value", key=b"key", partition=partition).get(30)
                finally:
                    producer.close()
            elif command == "read":
                topic, partitions, wanted = args[0], int(args[1]), int(args[2])
                consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest",
                                         enable_auto_commit=False)
                try:
                    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
                    _read(consumer, wanted)
                finally:
                    consumer.close()
            elif command in ("consume", "subscribe"):
                topic, partitions, group = args[0], int(args[1]), args[2]
                consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                         enable_auto_commit=False)
                try:
                    if command == "consume":
                        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
                    else:
                        subscribe(consumer, [topic])
                    _read(consumer, partitions)
                    consumer.commit()
                finally:
                    consumer.close()
            else:
                raise ValueError(f"unknown command {command}")
            print("ok", flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the test
            print("error", repr(e).replace("\n", " "), flush=True)
    admin.close()


if __name__ == "__main__":
    main(sys.argv[1])
