"""A broker whose topics come and go keeps its Python allocations flat.

A KafkaServer runs in this process (real ZooKeeper) and kafka-python's admin client in a
child process (tests/integration/client_worker.py). Topics of two partitions are created
and deleted, one after the other, as a test suite or a stream processor's repartition
topics do. After a warm-up (the first requests of each kind create their metrics, the
purgatories' shards and the caches), the count of memory blocks Python has allocated
(``sys.getallocatedblocks()``, after a full collection) must not grow by more than a
couple of blocks a lifecycle: a count, not RSS or time, so the bound holds on any machine.
Before the histograms' decaying samples moved to flat arrays, each lifecycle left about
two hundred blocks behind.

``KAFKA_PY_CHURN_CYCLES`` sets the number of measured lifecycles (default 200).
"""
from __future__ import annotations

import gc
import os
import sys
import uuid

from kafka_py.common.topic_partition import TopicPartition
from kafka_py.server.kafka_server import KafkaServer
from tests.integration.broker_harness import unique_chroot, wait_until
from tests.integration.in_process_state import ClientWorker, in_process_broker, log_dirs_of

WARM_UP = 40
CYCLES = int(os.environ.get("KAFKA_PY_CHURN_CYCLES", "200"))
PARTITIONS = 2
# Blocks a lifecycle may leave on average: noise between two counts is about a hundred
# blocks (a thread's frame, a timer bucket), well under this times CYCLES.
MAX_BLOCKS_PER_CYCLE = 3


def _gone(server: KafkaServer, topic: str) -> bool:
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    return (topic not in server.metadata_cache.get_all_topics()
            and not server.zk_client.topic_exists(topic)
            and not server.zk_client.is_topic_marked_for_deletion(topic)
            and not any(tp in server.replica_manager.all_partitions for tp in tps)
            and not any(server.log_manager.get_log(tp) for tp in tps))


def _allocated_blocks() -> int:
    gc.collect()
    return sys.getallocatedblocks()


def test_topic_lifecycles_leave_no_allocations_behind(zookeeper, tmp_path):
    marker = f"churn{uuid.uuid4().hex[:6]}"
    with in_process_broker(f"{zookeeper.connect_string}{unique_chroot()}", tmp_path) as server:
        worker = ClientWorker(f"127.0.0.1:{server.bound_port()}")
        try:
            before = None
            for i in range(WARM_UP + CYCLES):
                topic = f"{marker}-{i}"
                worker.call("create", topic, PARTITIONS)
                wait_until(lambda: all(server.replica_manager.online_partition(TopicPartition(topic, p))
                                       for p in range(PARTITIONS)), 30, f"{topic} not created")
                worker.call("delete", topic)
                wait_until(lambda: _gone(server, topic), 60, f"{topic} deletion did not complete")
                if i == WARM_UP - 1:
                    wait_until(lambda: not log_dirs_of(server, marker), 60, "deleted logs still on disk")
                    before = _allocated_blocks()
            wait_until(lambda: not log_dirs_of(server, marker), 60, "deleted logs still on disk")
            after = _allocated_blocks()
        finally:
            worker.close()
    grown = after - before
    assert grown <= MAX_BLOCKS_PER_CYCLE * CYCLES, (
        f"{grown} more blocks allocated after {CYCLES} topic lifecycles ({grown / CYCLES:.1f} a lifecycle)")
