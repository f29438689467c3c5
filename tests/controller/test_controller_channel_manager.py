"""ControllerChannelManager and ControllerBrokerRequestBatch against real TCP peers."""
from __future__ import annotations

import os
import resource
import threading
import uuid

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.controller_channel_manager import ControllerBrokerRequestBatch, ControllerChannelManager
from kafka_py.controller.controller_context import ControllerContext
from kafka_py.controller.controller_event_manager import ControllerEventManager
from kafka_py.controller.kafka_controller import LeaderAndIsrResponseReceived, UpdateMetadataResponseReceived
from kafka_py.controller.state_change_logger import StateChangeLogger
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.schema.update_metadata.v7 import request as um_v7
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.core.zk.zk_data import ReplicaAssignment
from tests.controller.fake_broker import FakeBroker, lai_partitions, um_partitions


class EventSink:
    """The event manager's processor side: collects the events the callbacks enqueue."""

    def __init__(self) -> None:
        self.events = []
        self.cond = threading.Condition()

    def process(self, event) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def preempt(self, event) -> None:
        pass

    def wait_for(self, count: int, timeout: float = 10) -> list:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.events) >= count, timeout), self.events
            return list(self.events)


@pytest.fixture
def setup():
    config = KafkaConfig({"broker.id": "1", "zookeeper.connect": "127.0.0.1:1",
                          "listeners": "PLAINTEXT://127.0.0.1:9092", "controller.socket.timeout.ms": "2000"},
                         do_log=False)
    brokers = {i: FakeBroker(i, "unused") for i in (1, 2, 3)}
    ctx = ControllerContext()
    ctx.epoch = 5
    ctx.set_live_brokers({b.broker: 1000 + i for i, b in brokers.items()})
    sink = EventSink()
    event_manager = ControllerEventManager(1, sink)
    event_manager.start()
    channel = ControllerChannelManager(ctx, config)
    channel.startup()
    batch = ControllerBrokerRequestBatch(config, channel, event_manager, ctx, StateChangeLogger(1, True))
    yield config, brokers, ctx, channel, batch, sink
    channel.shutdown()
    event_manager.close()
    for b in brokers.values():
        b.close()


def test_batch_sends_leader_and_isr_to_replicas_and_update_metadata_to_all(setup):
    config, brokers, ctx, channel, batch, sink = setup
    tp = TopicPartition("orders", 0)
    topic_id = uuid.uuid4()
    ctx.set_all_topics({"orders"})
    ctx.add_topic_id("orders", topic_id)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((2, 3)))
    leadership = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 0, (2, 3), 0), 5)
    ctx.put_partition_leadership_info(tp, leadership)

    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers([2, 3], tp, leadership, ReplicaAssignment((2, 3)), is_new=True)
    batch.send_requests_to_brokers(5)

    for broker_id in (2, 3):
        lai = brokers[broker_id].wait_for(ApiKeys.LEADER_AND_ISR)
        assert (lai.controller_id, lai.controller_epoch, lai.broker_epoch) == (1, 5, 1000 + broker_id)
        assert lai.topic_states[0].topic_id == topic_id
        state = lai_partitions(lai)[("orders", 0)]
        assert (state.leader, state.leader_epoch, state.isr, state.replicas, state.is_new) == (2, 0, (2, 3), (2, 3), True)
        assert [n.broker_id for n in lai.live_leaders] == [2]
        assert lai.live_leaders[0].port == brokers[2].port
    for broker_id in (1, 2, 3):
        um = brokers[broker_id].wait_for(ApiKeys.UPDATE_METADATA)
        assert um.broker_epoch == 1000 + broker_id
        assert um_partitions(um)[("orders", 0)].leader == 2
        assert sorted(b.id for b in um.live_brokers) == [1, 2, 3]
        endpoint = next(b for b in um.live_brokers if b.id == 3).endpoints[0]
        assert (endpoint.host, endpoint.port, endpoint.listener) == ("127.0.0.1", brokers[3].port, "PLAINTEXT")
    assert brokers[1].received(ApiKeys.LEADER_AND_ISR) == []
    header = brokers[2].headers()[0]
    assert header.client_id.startswith("controller-1")

    events = sink.wait_for(5)
    assert sorted((type(e).__name__, e.broker_id) for e in events) == sorted(
        [("LeaderAndIsrResponseReceived", 2), ("LeaderAndIsrResponseReceived", 3)]
        + [("UpdateMetadataResponseReceived", b) for b in (1, 2, 3)])
    lai_response = next(e for e in events if isinstance(e, LeaderAndIsrResponseReceived))
    assert lai_response.leader_and_isr_response.topics[0].topic_id == topic_id
    assert all(e.update_metadata_response.error_code == 0 for e in events if isinstance(e, UpdateMetadataResponseReceived))


def test_a_non_empty_batch_refuses_a_new_batch(setup):
    config, brokers, ctx, channel, batch, sink = setup
    batch.add_update_metadata_request_for_brokers([1], [])
    with pytest.raises(Exception, match="not empty"):
        batch.new_batch()
    batch.clear()
    batch.new_batch()


def test_requests_are_resent_after_the_connection_drops(setup):
    config, brokers, ctx, channel, batch, sink = setup
    brokers[2].drop_next = 1
    answered = []
    done = threading.Event()

    def callback(response) -> None:
        answered.append(response)
        done.set()

    request = um_v7.UpdateMetadataRequest(controller_id=1, controller_epoch=5, broker_epoch=1002, topic_states=(),
                                          live_brokers=())
    channel.send_request(2, ApiKeys.UPDATE_METADATA, 7, request, callback)
    assert done.wait(10)
    assert len(answered) == 1 and answered[0].error_code == 0
    assert len(brokers[2].dropped) == 1
    assert brokers[2].connection_count == 2
    assert len(brokers[2].received(ApiKeys.UPDATE_METADATA)) == 1


def test_requests_wait_for_a_broker_that_is_not_listening_yet():
    config = KafkaConfig({"broker.id": "1", "zookeeper.connect": "127.0.0.1:1",
                          "listeners": "PLAINTEXT://127.0.0.1:9092"}, do_log=False)
    late = FakeBroker(7, "unused", listen=False)
    ctx = ControllerContext()
    ctx.set_live_brokers({late.broker: 70})
    channel = ControllerChannelManager(ctx, config)
    channel.startup()
    try:
        request = um_v7.UpdateMetadataRequest(controller_id=1, controller_epoch=1, broker_epoch=70, topic_states=(),
                                              live_brokers=())
        done = threading.Event()
        channel.send_request(7, ApiKeys.UPDATE_METADATA, 7, request, lambda r: done.set())
        assert not done.wait(0.3)
        late.listen()
        assert done.wait(10)
        assert late.wait_for(ApiKeys.UPDATE_METADATA).broker_epoch == 70
    finally:
        channel.shutdown()
        late.close()


def test_removed_broker_gets_nothing_more(setup):
    config, brokers, ctx, channel, batch, sink = setup
    thread = channel.broker_state_info[3].request_send_thread
    channel.remove_broker(3)
    assert not thread.is_alive()
    assert 3 not in channel.broker_state_info
    request = um_v7.UpdateMetadataRequest(controller_id=1, controller_epoch=5, broker_epoch=1003, topic_states=(),
                                          live_brokers=())
    channel.send_request(3, ApiKeys.UPDATE_METADATA, 7, request)
    done = threading.Event()
    channel.send_request(2, ApiKeys.UPDATE_METADATA, 7, request, lambda r: done.set())
    assert done.wait(10)
    assert brokers[3].received(ApiKeys.UPDATE_METADATA) == []


def test_older_inter_broker_protocol_gets_older_request_versions():
    config = KafkaConfig({"broker.id": "1", "zookeeper.connect": "127.0.0.1:1",
                          "listeners": "PLAINTEXT://127.0.0.1:9092", "inter.broker.protocol.version": "2.7"},
                         do_log=False)
    broker = FakeBroker(2, "unused")
    ctx = ControllerContext()
    ctx.set_live_brokers({broker.broker: 20})
    tp = TopicPartition("old", 0)
    ctx.set_all_topics({"old"})
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((2,)))
    leadership = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (2,), 4), 1)
    ctx.put_partition_leadership_info(tp, leadership)
    sink = EventSink()
    event_manager = ControllerEventManager(1, sink)
    event_manager.start()
    channel = ControllerChannelManager(ctx, config)
    channel.startup()
    try:
        batch = ControllerBrokerRequestBatch(config, channel, event_manager, ctx, StateChangeLogger(1, True))
        batch.new_batch()
        batch.add_leader_and_isr_request_for_brokers([2], tp, leadership, ReplicaAssignment((2,)), is_new=False)
        batch.send_requests_to_brokers(1)
        lai = broker.wait_for(ApiKeys.LEADER_AND_ISR)
        assert lai_partitions(lai)[("old", 0)].leader_epoch == 3
        broker.wait_for(ApiKeys.UPDATE_METADATA)
        versions = {h.api_key: h.api_version for h in broker.headers()}
        assert versions == {ApiKeys.LEADER_AND_ISR: 4, ApiKeys.UPDATE_METADATA: 6}
        response = next(e for e in sink.wait_for(2) if isinstance(e, LeaderAndIsrResponseReceived))
        assert response.leader_and_isr_response.partition_errors[0].topic_name == "old"
    finally:
        channel.shutdown()
        event_manager.close()
        broker.close()


def test_requests_reach_a_broker_when_descriptors_are_above_select_limit():
    # A broker that has loaded a thousand segment files hands its controller sockets whose
    # descriptors lie above 1023, where select() refuses to work; the connect must not use it.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 1400
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"hard descriptor limit {hard} is below {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    config = KafkaConfig({"broker.id": "1", "zookeeper.connect": "127.0.0.1:1",
                          "listeners": "PLAINTEXT://127.0.0.1:9092"}, do_log=False)
    broker = FakeBroker(4, "unused")
    held = []
    channel = None
    try:
        # Fill every descriptor up to 1100, so the next socket is numbered above it.
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        ctx = ControllerContext()
        ctx.set_live_brokers({broker.broker: 40})
        channel = ControllerChannelManager(ctx, config)
        channel.startup()
        request = um_v7.UpdateMetadataRequest(controller_id=1, controller_epoch=1, broker_epoch=40, topic_states=(),
                                              live_brokers=())
        done = threading.Event()
        channel.send_request(4, ApiKeys.UPDATE_METADATA, 7, request, lambda r: done.set())
        assert done.wait(10)
        assert broker.wait_for(ApiKeys.UPDATE_METADATA).broker_epoch == 40
        assert channel.broker_state_info[4].network_client.fileno() > 1023
    finally:
        if channel is not None:
            channel.shutdown()
        broker.close()
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
