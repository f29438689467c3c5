"""A consume-transform-produce loop in a process of its own, for the exactly-once tests.

    python -m tests.integration.txn_transformer <bootstrap> <input> <output> <group> <transactional id>

Reads <input> as a member of <group> (read_committed, no auto commit) and, per poll, in one
transaction: writes ``out:<input partition>:<input offset>:<value>`` for every record read to
<output> (same partition number) and sends the consumed offsets to the transaction
(``send_offsets_to_transaction`` with the consumer's group metadata, KIP-447); then commits.
Prints ``committed <n>`` after each commit, <n> the records transformed so far. With
``TXN_PAUSE_BEFORE_COMMIT_MS`` it prints ``written <n>`` once a transaction's records are on
the broker and waits that long before committing, so that a kill -9 lands inside it. Exits once it has had partitions assigned and
then ``TXN_IDLE_EXIT_S`` seconds (default 5) without input, or after ``TXN_MAX_S`` seconds
(default 120) in all.
"""
from __future__ import annotations

import os
import sys
import time

from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import OffsetAndMetadata
from kafka_py.core.tools.group_subscription import subscribe


def main(bootstrap: str, input_topic: str, output_topic: str, group: str, transactional_id: str) -> None:
    pause_s = int(os.environ.get("TXN_PAUSE_BEFORE_COMMIT_MS", "0")) / 1000.0
    idle_exit_s = float(os.environ.get("TXN_IDLE_EXIT_S", "5"))
    max_s = float(os.environ.get("TXN_MAX_S", "120"))
    # a killed predecessor leaves the group when its session times out
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                             isolation_level="read_committed", enable_auto_commit=False,
                             auto_offset_reset="earliest", max_poll_records=20, session_timeout_ms=6000,
                             heartbeat_interval_ms=1000)
    subscribe(consumer, [input_topic])
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id)
    producer.init_transactions()
    print("ready", flush=True)
    transformed = 0
    started = last_input = time.monotonic()
    while time.monotonic() - started < max_s:
        batches = consumer.poll(200)
        if not consumer.assignment():
            last_input = time.monotonic()
        if not batches:
            if time.monotonic() - last_input > idle_exit_s:
                break
            continue
        last_input = time.monotonic()
        producer.begin_transaction()
        offsets = {}
        for tp, records in batches.items():
            for record in records:
                value = b"out:%d:%d:" % (tp.partition, record.offset) + record.value
                producer.send(output_topic, value, partition=tp.partition)
                transformed += 1
            offsets[tp] = OffsetAndMetadata(records[-1].offset + 1, "", -1)
        producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
        if pause_s:
            producer.flush()
            print(f"written {transformed}", flush=True)
            time.sleep(pause_s)
        producer.commit_transaction()
        print(f"committed {transformed}", flush=True)
    producer.close()
    consumer.close()
    print("done", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:6])
