"""ProducerIdManager against a real ZooKeeper: brokers claim disjoint blocks of 1000 ids
from /latest_producer_id_block, in Kafka's JSON."""
from __future__ import annotations

import json

import pytest

from kafka_py.core.coordinator.transaction.producer_id_manager import PID_BLOCK_SIZE, ProducerIdManager
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from tests.integration.broker_harness import unique_chroot


@pytest.fixture
def zk_client(zookeeper):
    client = KafkaZkClient(f"{zookeeper.connect_string}{unique_chroot()}", session_timeout_ms=10000)
    client.create_top_level_paths()  # leaves /latest_producer_id_block empty, as a broker does
    yield client
    client.close()


def test_blocks_are_claimed_in_turn_and_never_overlap(zk_client):
    first = ProducerIdManager(0, zk_client)
    second = ProducerIdManager(1, zk_client)
    assert [first.generate_producer_id() for _ in range(3)] == [0, 1, 2]
    assert second.generate_producer_id() == PID_BLOCK_SIZE

    data, _ = zk_client.get_data_and_version("/latest_producer_id_block")
    assert json.loads(data) == {"version": 1, "broker": 1, "block_start": "1000", "block_end": "1999"}

    # the rest of the first block, then the next free block (after the second broker's)
    ids = [first.generate_producer_id() for _ in range(PID_BLOCK_SIZE - 3 + 2)]
    assert ids[:PID_BLOCK_SIZE - 3] == list(range(3, PID_BLOCK_SIZE))
    assert ids[PID_BLOCK_SIZE - 3:] == [2 * PID_BLOCK_SIZE, 2 * PID_BLOCK_SIZE + 1]
    data, _ = zk_client.get_data_and_version("/latest_producer_id_block")
    assert json.loads(data)["broker"] == 0 and json.loads(data)["block_start"] == "2000"
