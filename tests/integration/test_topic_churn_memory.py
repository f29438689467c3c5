"""A broker whose topics come and go keeps its Python allocations flat.

A KafkaServer runs in this process (real ZooKeeper) and kafka-python's admin client in a
child process (tests/integration/client_worker.py). Topics of two partitions are created
and deleted, one after the other, as a test suite or a stream processor's repartition
topics do. After a warm-up (the first requests of each kind create their metrics, the
purgatories' shards and the caches), the count of memory blocks Python has allocated
(``sys.getallocatedblocks()``, after a full collection) must not grow by more than a
couple of blocks a lifecycle, read as the slope through counts taken every twenty
lifecycles: a count, not RSS or time, so the bound holds on any machine.
Before the histograms' decaying samples moved to flat arrays, each lifecycle left about
two hundred blocks behind.

``KAFKA_PY_CHURN_CYCLES`` sets the number of measured lifecycles (default 200).
"""
from __future__ import annotations

import gc
import os
import statistics
import sys
import time
import uuid

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.kafka_server import KafkaServer
from tests.integration.broker_harness import unique_chroot, wait_until
from tests.integration.in_process_state import ClientWorker, in_process_broker, log_dirs_of

WARM_UP = 40
CYCLES = int(os.environ.get("KAFKA_PY_CHURN_CYCLES", "200"))
PARTITIONS = 2
# A settled count is taken every MARK_EVERY lifecycles after the warm-up.
MARK_EVERY = 20
# Blocks a lifecycle may leave. Between two settled counts a few hundred blocks come or go at
# random (cancelled tasks waiting in the scheduler's queue, a purgatory shard's first key, a
# dict that resized), so the growth is read as a slope over all the counts; a leak of one
# object with its attribute dict a lifecycle would exceed this bound.
MAX_BLOCKS_PER_CYCLE = 3


def _gone(server: KafkaServer, topic: str) -> bool:
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    return (topic not in server.metadata_cache.get_all_topics()
            and not server.zk_client.topic_exists(topic)
            and not server.zk_client.is_topic_marked_for_deletion(topic)
            and not any(tp in server.replica_manager.all_partitions for tp in tps)
            and not any(server.log_manager.get_log(tp) for tp in tps))


def _allocated_blocks(readings: int = 8) -> int:
    """The broker's settled allocations: the least of a few counts taken apart. Its threads
    (the metrics ticker, ZooKeeper pings, the request handlers) hold a hundred or so blocks
    for a moment at any time, more on a loaded machine; the least count leaves those out."""
    counts = []
    for _ in range(readings):
        gc.collect()
        counts.append(sys.getallocatedblocks())
        time.sleep(0.05)
    return min(counts)


def _blocks_per_lifecycle(marks: list[tuple[int, int]]) -> float:
    """The growth of the count with the lifecycles, as the median of the slopes between every
    two marks (Theil and Sen's estimator): a leak raises every slope, while a step (a dict
    that resized once, a scheduler queue rebuilt) moves only the pairs it falls between."""
    slopes = sorted((b_blocks - a_blocks) / (b_cycle - a_cycle)
                    for i, (a_cycle, a_blocks) in enumerate(marks) for b_cycle, b_blocks in marks[i + 1:])
    return statistics.median(slopes)


def test_topic_lifecycles_leave_no_allocations_behind(zookeeper, tmp_path):
    marker = f"churn{uuid.uuid4().hex[:6]}"
    marks: list[tuple[int, int]] = []  # (lifecycles after the warm-up, settled blocks)
    with in_process_broker(f"{zookeeper.connect_string}{unique_chroot()}", tmp_path) as server:
        worker = ClientWorker(f"127.0.0.1:{server.bound_port()}")
        try:
            for i in range(WARM_UP + CYCLES):
                topic = f"{marker}-{i}"
                worker.call("create", topic, PARTITIONS)
                wait_until(lambda: all(server.replica_manager.online_partition(TopicPartition(topic, p))
                                       for p in range(PARTITIONS)), 30, f"{topic} not created")
                worker.call("delete", topic)
                wait_until(lambda: _gone(server, topic), 60, f"{topic} deletion did not complete")
                done = i + 1 - WARM_UP
                if done >= 0 and (done % MARK_EVERY == 0 or done == CYCLES):
                    wait_until(lambda: not log_dirs_of(server, marker), 60, "deleted logs still on disk")
                    marks.append((done, _allocated_blocks()))
        finally:
            worker.close()
    per_cycle = _blocks_per_lifecycle(marks)
    grown = marks[-1][1] - marks[0][1]
    assert per_cycle <= MAX_BLOCKS_PER_CYCLE, (
        f"{per_cycle:.1f} more blocks allocated a topic lifecycle over {CYCLES} lifecycles "
        f"({grown} from first to last count; counts {marks})")
