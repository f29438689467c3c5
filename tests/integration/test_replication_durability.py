"""No acknowledged record is lost by a three-broker cluster whose brokers crash, move their
leaderships and restart under an idempotent acks=all producer.

Topics have replication factor 3 and min.insync.replicas=2. Each value the producer sends is
unique; at the end the replicas must hold the same batches byte for byte, and a kafka-python
consumer reading from offset 0 must find every acknowledged value at the offset its
acknowledgement named, no value twice and no hole in the offsets
(replicated_cluster.check_nothing_lost). Every wait is bounded; no timing is asserted.

The randomized test runs for KAFKA_PY_CHAOS_SECONDS (default 30) and prints its seed;
KAFKA_PY_CHAOS_SEED replays one.
"""
from __future__ import annotations

import os
import random
import threading
import time
import uuid

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import BrokerProcess, RawClient, unique_chroot, wait_until
from tests.integration.replicated_cluster import (WAIT, ProduceLoad, check_nothing_lost,
                                                  make_replicated_cluster)

CHAOS_SECONDS = float(os.environ.get("KAFKA_PY_CHAOS_SECONDS", "30"))


@pytest.fixture(scope="module")
def shared_cluster(zookeeper, tmp_path_factory):
    """One three-broker cluster for the module: each test has topics of its own, and starting
    three brokers per test cost more than most of the tests themselves."""
    made: list[BrokerProcess] = []

    def make(broker_id: int, chroot: str, **kwargs) -> BrokerProcess:
        b = BrokerProcess(tmp_path_factory.mktemp(f"durability{broker_id}-"), zookeeper.connect_string, chroot,
                          broker_id, **kwargs)
        made.append(b)
        return b

    c = make_replicated_cluster(make, unique_chroot("durability"))
    try:
        yield c.start()
    finally:
        c.close()
        for b in made:
            if b.running:
                b.stop()


@pytest.fixture
def cluster(shared_cluster):
    """The module's cluster with all three brokers up and a controller elected: a test that
    failed half-way may have left a broker down."""
    for b in shared_cluster.brokers:
        if not b.running:
            b.restart(WAIT)
    shared_cluster.wait_controller()
    return shared_cluster


def topic_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def spread(partitions: int, first_leaders: list[int]) -> dict[int, list[int]]:
    """Replicas [0, 1, 2] rotated so partition p's preferred leader is first_leaders[p % len]."""
    return {p: [(first_leaders[p % len(first_leaders)] + k) % 3 for k in range(3)] for p in range(partitions)}


# -- 1. a leader crashes ----------------------------------------------------------------------------


def test_kill_9_of_a_leader_under_acks_all_loses_no_acknowledged_record(cluster):
    controller = cluster.wait_controller()
    victim = next(b for b in (2, 1, 0) if b != controller)  # a leader that is only a leader
    topic = topic_name("leader-kill")
    cluster.create_topic(topic, spread(1, [victim]), min_insync_replicas="2")
    before = cluster.state(topic)
    assert before["leader"] == victim and sorted(before["isr"]) == [0, 1, 2]

    load = ProduceLoad(cluster.bootstrap(), topic, 1).start()
    try:
        load.wait_acked(300)
        cluster.broker(victim).kill()
        after = cluster.wait_state(topic, lambda s: s["leader"] not in (-1, victim),
                                   "a new leader elected after the kill")
        assert after["leader"] in before["isr"] and after["leader_epoch"] > before["leader_epoch"]
        assert victim not in after["isr"]
        load.wait_acked(300)  # acks=all goes on with the two left (min.insync.replicas=2)
        cluster.broker(victim).restart(WAIT)
        cluster.wait_fully_replicated(topic, 1)
        load.wait_acked(100)
    finally:
        load.stop()
    total = check_nothing_lost(cluster, load, topic, 1)
    assert total >= len(load.acked) >= 700


# -- 2. the controller crashes while leaderships move ------------------------------------------


@pytest.mark.parametrize("first", ["sigterm", "kill"])
def test_a_new_controller_finishes_moving_leaderships_after_the_old_one_is_killed(cluster, first):
    """A broker leading some partitions is stopped (controlled shutdown, or kill -9) and the
    controller is killed right behind it: the next controller elects leaders for whatever is
    left, and once both are back every partition has a live leader and the full ISR."""
    controller = cluster.wait_controller()
    mover = next(b for b in (2, 1, 0) if b != controller)
    partitions = 6
    topic = topic_name("controller-kill")
    cluster.create_topic(topic, spread(partitions, [mover, controller, 3 - mover - controller]),
                         min_insync_replicas="2")
    cluster.wait_fully_replicated(topic, partitions)

    load = ProduceLoad(cluster.bootstrap(), topic, partitions).start()
    try:
        load.wait_acked(300)
        if first == "sigterm":
            seen = len(cluster.broker(mover).output())  # the module's brokers: only what follows counts
            stopping = threading.Thread(target=cluster.broker(mover).stop, daemon=True)
            stopping.start()
            # the controlled shutdown is under way: the controller is asked to move leaderships
            wait_until(lambda: "Starting controlled shutdown" in cluster.broker(mover).output()[seen:], WAIT,
                       "the controlled shutdown never started", interval=0.02)
        else:
            cluster.broker(mover).kill()
        cluster.broker(controller).kill()
        if first == "sigterm":
            stopping.join(WAIT + 60)
            assert not stopping.is_alive()
        third = 3 - mover - controller
        assert cluster.wait_controller(exclude=controller) == third
        # the third broker, alone, leads everything it can (min.insync.replicas stops acks=all)
        cluster.wait_led_by_live_brokers(topic, partitions)

        cluster.broker(mover).restart(WAIT)
        cluster.broker(controller).restart(WAIT)
        cluster.wait_fully_replicated(topic, partitions)
        load.wait_acked(300)
    finally:
        load.stop()
    check_nothing_lost(cluster, load, topic, partitions)


# -- 4. randomized crashes --------------------------------------------------------------------


def test_a_producer_that_saw_one_broker_goes_on_after_its_death_once_it_learnt_the_restarted_ones(cluster):
    """Two brokers die: the survivor's Metadata lists only itself (live brokers only, as Kafka's
    MetadataCache answers), so that is all the producer knows. The two come back; the survivor
    now lists all three, but the producer learns it only at its next refresh. Killed before
    that, the survivor would leave the producer nobody to ask (no Kafka 2.8 client goes back to
    its bootstrap list): the randomized test once stalled this way. Once the producer has
    refreshed, the survivor's death costs nothing: a new leader from the ISR takes the
    idempotent producer's next sequences and no acknowledged record is lost."""
    topic = topic_name("one-known")
    cluster.create_topic(topic, {0: [0, 1, 2]}, min_insync_replicas="2")
    cluster.wait_fully_replicated(topic, 1)
    # no refresh of its own during the test: it learns the cluster when asked to
    load = ProduceLoad(cluster.bootstrap(), topic, 1, producer_config={"metadata_max_age_ms": 300000}).start()
    try:
        load.wait_acked(100)
        cluster.broker(1).kill()
        cluster.broker(2).kill()
        load.wait_knows_brokers({0})
        for b in (1, 2):
            cluster.broker(b).restart(WAIT)
        cluster.wait_fully_replicated(topic, 1)
        load.wait_acked(50)  # through broker 0, the only one it knows
        assert load.known_brokers() == {0}
        load.wait_knows_brokers({0, 1, 2})
        before = cluster.state(topic)
        cluster.broker(0).kill()
        after = cluster.wait_state(topic, lambda s: s["leader"] in (1, 2), "a new leader elected after the kill")
        assert after["leader_epoch"] > before["leader_epoch"]
        load.wait_acked(100)
        cluster.broker(0).restart(WAIT)
        cluster.wait_fully_replicated(topic, 1)
        load.wait_acked(50)
    finally:
        load.stop()
    check_nothing_lost(cluster, load, topic, 1)


def test_random_kill_9_of_leaders_and_controllers_loses_nothing(cluster):
    seed = int(os.environ.get("KAFKA_PY_CHAOS_SEED", random.randrange(2**32)))
    print(f"chaos seed {seed} (KAFKA_PY_CHAOS_SEED={seed} replays it), {CHAOS_SECONDS:.0f} s")
    rng = random.Random(seed)
    partitions = 4
    topic = topic_name("chaos")
    cluster.create_topic(topic, spread(partitions, [0, 1, 2]), min_insync_replicas="2")
    cluster.wait_fully_replicated(topic, partitions)
    # a long run's producer sends more than the default cap (memory grows with what it sent);
    # the kills stop at 80 % of it, leaving the last round and the final waits room to finish
    cap = max(200_000, int(CHAOS_SECONDS * 1000))
    load = ProduceLoad(cluster.bootstrap(), topic, partitions, max_records=cap,
                       describe=lambda: cluster.describe(topic, partitions)).start()
    actions: list[str] = []
    try:
        load.wait_acked(200)
        deadline = time.monotonic() + CHAOS_SECONDS
        rounds = 0
        while time.monotonic() < deadline and rounds < 1000 and load.count() < cap * 0.8:
            rounds += 1
            # the producer must know a broker that outlives this round's kills: after a round
            # that took two brokers down it knows only the third (see the test above)
            load.wait_knows_brokers(cluster.live_ids())
            what = rng.choice(["leader", "leader", "controller"])
            if what == "controller":
                victim = cluster.wait_controller()
            else:
                victim = cluster.leaders(topic, partitions)[rng.randrange(partitions)]
                if victim < 0:
                    victim = rng.randrange(3)
            # sometimes a second broker dies while the first is away: acks=all stalls
            # (min.insync.replicas=2) but a clean election still loses nothing
            also = rng.random() < 0.2
            actions.append(f"kill {what} {victim}" + (" and another" if also else ""))
            cluster.broker(victim).kill()
            down = [victim]
            if also:
                time.sleep(rng.uniform(0, 1.0))
                second = rng.choice([b for b in (0, 1, 2) if b != victim])
                cluster.broker(second).kill()
                down.append(second)
            else:
                cluster.wait_led_by_live_brokers(topic, partitions)
                load.wait_acked(50)
            time.sleep(rng.uniform(0, 2.0))
            for b in down:
                cluster.broker(b).restart(WAIT)
            if rng.random() < 0.7:
                cluster.wait_fully_replicated(topic, partitions)
            load.wait_acked(50)
        cluster.wait_fully_replicated(topic, partitions)
        load.wait_acked(100)
    finally:
        load.stop()
        print(f"seed {seed}: {actions}; {len(load.acked)} acknowledged, {len(load.failed)} failed"
              + (" (kills stopped at the producer's cap)" if len(load.acked) >= cap * 0.8 else ""))
    check_nothing_lost(cluster, load, topic, partitions)


# -- 5. a rolling restart -----------------------------------------------------------------------


def test_a_rolling_restart_under_load_costs_no_record_and_no_non_retriable_error(cluster):
    partitions = 6
    topic = topic_name("rolling")
    cluster.create_topic(topic, spread(partitions, [0, 1, 2]), min_insync_replicas="2")
    cluster.wait_fully_replicated(topic, partitions)
    load = ProduceLoad(cluster.bootstrap(), topic, partitions).start()
    try:
        load.wait_acked(200)
        # as operators do it: the controller last
        controller = cluster.wait_controller()
        for broker_id in [b for b in (0, 1, 2) if b != controller] + [controller]:
            b = cluster.broker(broker_id)
            seen = len(b.output())  # the module's brokers: only what this stop wrote counts
            assert b.stop() == 0, b.tail()
            assert "Controlled shutdown succeeded" in b.output()[seen:], b.tail(80)
            load.wait_acked(100)
            b.start(WAIT)
            cluster.wait_fully_replicated(topic, partitions)
            load.wait_acked(100)
    finally:
        load.stop()
    non_retriable = {v: e for v, e in load.failed.items() if not getattr(e, "retriable", False)}
    assert not non_retriable, list(non_retriable.items())[:5]
    check_nothing_lost(cluster, load, topic, partitions)


# -- 6. follower fetches that must change nothing ------------------------------------------------


def follower_fetch(port: int, topic: str, replica_id: int, fetch_offset: int, current_leader_epoch: int):
    request = build_entity(request_schema(ApiKeys.FETCH, 12), {
        "replica_id": replica_id, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "session_id": 0,
        "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": current_leader_epoch, "fetch_offset": fetch_offset,
             "last_fetched_epoch": -1, "log_start_offset": 0, "partition_max_bytes": 1 << 20}]}]})
    with RawClient(port) as client:
        response = client.request(ApiKeys.FETCH, 12, request)
    return response.responses[0].partitions[0]


def high_watermark(port: int, topic: str) -> int:
    return int(follower_fetch(port, topic, -1, 0, -1).high_watermark)


def test_follower_fetches_from_no_replica_or_a_stale_epoch_change_nothing(cluster):
    """A Fetch naming a broker that is no replica of the partition gets no records and no error
    (Kafka 2.8 logs it and answers empty); a follower fetch carrying an old or future leader
    epoch gets FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH. Neither moves the high watermark
    or the ISR."""
    topic = topic_name("bad-fetch")
    cluster.create_topic(topic, {0: [0, 1]}, min_insync_replicas="1")  # broker 2 is no replica
    # a follower stopped and back: the controller's ISR changes bump the leader epoch past 0
    assert cluster.broker(1).stop() == 0
    cluster.wait_state(topic, lambda s: s["isr"] == [0], "ISR [0]")
    cluster.broker(1).start(WAIT)
    cluster.wait_state(topic, lambda s: sorted(s["isr"]) == [0, 1] and s["leader_epoch"] > 0, "ISR [0, 1]")
    load = ProduceLoad(cluster.bootstrap(), topic, 1, max_records=100).start()
    load.wait_acked(100)
    load.stop()
    cluster.wait_state(topic, lambda s: sorted(s["isr"]) == [0, 1], "ISR [0, 1]")
    state = cluster.state(topic)
    leader = cluster.broker(state["leader"])
    follower = 1 - state["leader"]
    epoch = state["leader_epoch"]
    wait_until(lambda: high_watermark(leader.port, topic) == 100, WAIT, "high watermark 100")

    stranger = follower_fetch(leader.port, topic, 2, 100, epoch)
    assert Errors.for_code(int(stranger.error_code)) is Errors.NONE
    assert not stranger.records
    # claiming to have fetched far beyond the log end: nothing moves
    stranger = follower_fetch(leader.port, topic, 2, 0, epoch)
    assert Errors.for_code(int(stranger.error_code)) is Errors.NONE and not stranger.records
    # (the brokers' output is the module's: the line must name this topic)
    assert any("is not recognized to be one of the assigned replicas" in line and topic in line
               for line in leader.output().splitlines())

    for current, error in ((epoch - 1, Errors.FENCED_LEADER_EPOCH), (epoch + 1, Errors.UNKNOWN_LEADER_EPOCH)):
        answer = follower_fetch(leader.port, topic, follower, 100, current)
        assert Errors.for_code(int(answer.error_code)) is error, (current, answer)
        assert not answer.records

    assert high_watermark(leader.port, topic) == 100
    after = cluster.state(topic)
    assert (after["leader"], after["leader_epoch"], sorted(after["isr"])) == (state["leader"], epoch, [0, 1])
    # and the partition goes on as before
    load = ProduceLoad(cluster.bootstrap(), topic, 1, max_records=50).start()
    load.wait_acked(50)
    load.stop()
    wait_until(lambda: high_watermark(leader.port, topic) == 150, WAIT, "high watermark 150")
