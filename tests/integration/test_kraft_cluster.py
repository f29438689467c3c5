"""A KRaft cluster of three controller processes and three broker processes, no ZooKeeper:
the active controller killed -9 under topic creation and acks=all produce load (a new one
is elected, the creations complete, nothing acknowledged is lost), and a broker that stops
heartbeating fenced with its leaderships moved, then back."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tests.integration.broker_harness import wait_until
from tests.integration.kraft_harness import KRaftQuorum

ELECTION_TIMEOUT_MS = 1000
# A new controller is due within the election timeout plus the fetch timeout a follower
# waits before it stands; the slack covers process scheduling on a loaded machine.
ELECTION_WAIT_S = (ELECTION_TIMEOUT_MS + 2000) / 1000 + 30
SESSION_TIMEOUT_MS = 3000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("kraft-cluster")
    quorum = KRaftQuorum(base, overrides={"controller.quorum.election.timeout.ms": str(ELECTION_TIMEOUT_MS),
                                          "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS)})
    quorum.format()
    brokers = quorum.add_brokers(base, 3, overrides={"broker.heartbeat.interval.ms": "500",
                                                     "min.insync.replicas": "2"})
    try:
        quorum.start()
        yield quorum, brokers
    finally:
        for broker in brokers:  # a paused broker cannot stop
            if broker.running:
                os.kill(broker.process.pid, signal.SIGCONT)
        quorum.stop()


def _admin(brokers):
    from kafka import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=",".join(b.bootstrap for b in brokers), request_timeout_ms=30000)


def _leaders(admin, topic: str) -> dict[int, int]:
    described = admin.describe_topics([topic])[0]
    return {p["partition_index"]: p["leader_id"] for p in described["partitions"]}


def _all_led(admin, topic: str, partitions: int) -> bool:
    leaders = _leaders(admin, topic)
    return len(leaders) == partitions and all(leader >= 0 for leader in leaders.values())


def test_the_active_controller_killed_under_load_loses_nothing(cluster):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    quorum, brokers = cluster
    admin = _admin(brokers)
    admin.create_topics([NewTopic("kraft-load", 3, 3)])
    wait_until(lambda: _all_led(admin, "kraft-load", 3), 60,
               "kraft-load has no leaders")
    acked: list[bytes] = []
    failures: list[BaseException] = []
    stop = threading.Event()
    producer = KafkaProducer(bootstrap_servers=",".join(b.bootstrap for b in brokers), acks="all",
                             retries=20, request_timeout_ms=15000, max_in_flight_requests_per_connection=1)

    def produce() -> None:
        for i in range(20_000):  # bounded; stopped much sooner
            if stop.is_set():
                return
            value = b"r%06d" % i
            try:
                producer.send("kraft-load", value).get(timeout=60)
                acked.append(value)
            except Exception as e:  # noqa: BLE001 - an unacknowledged record may be lost
                failures.append(e)

    thread = threading.Thread(target=produce, name="kraft-load-producer", daemon=True)
    thread.start()
    try:
        leader_id, epoch, _ = quorum.wait_for_leader(ELECTION_WAIT_S)
        wait_until(lambda: len(acked) >= 200, 60, f"no produce progress: {failures[-3:]}")
        created_before = [f"kraft-created-{i}" for i in range(3)]
        admin.create_topics([NewTopic(t, 1, 3) for t in created_before])

        quorum.node(leader_id).kill()
        new_leader_id, new_epoch, _ = quorum.wait_for_leader(ELECTION_WAIT_S, min_epoch=epoch + 1)
        assert new_leader_id != leader_id

        # a creation after the failover completes
        admin.create_topics([NewTopic("kraft-created-after", 2, 3)])
        wait_until(lambda: _all_led(admin, "kraft-created-after", 2), 60,
                   "the topic created after the failover has no leaders")
        assert set(created_before) <= set(admin.list_topics())
        before = len(acked)
        wait_until(lambda: len(acked) >= before + 200, 60, f"no produce progress after the failover: {failures[-3:]}")
    finally:
        stop.set()
        thread.join(timeout=120)
        producer.close(timeout=30)
    quorum.node(leader_id).start()

    consumer = KafkaConsumer("kraft-load", bootstrap_servers=brokers[0].bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=15000, enable_auto_commit=False)
    try:
        seen = {record.value for record in consumer}
    finally:
        consumer.close()
    missing = [v for v in acked if v not in seen]
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {missing[:5]}"
    admin.close()


def test_a_broker_that_stops_heartbeating_is_fenced_and_its_leaderships_move(cluster):
    from kafka.admin import NewTopic
    from kafka.errors import KafkaTimeoutError, RetriableError

    quorum, brokers = cluster
    admin = _admin(brokers)
    admin.create_topics([NewTopic("kraft-fence", 6, 3)])
    wait_until(lambda: _all_led(admin, "kraft-fence", 6), 60,
               "kraft-fence has no leaders")
    victim = next(b for b in brokers if b.node_id in _leaders(admin, "kraft-fence").values())
    others = [b for b in brokers if b is not victim]
    os.kill(victim.process.pid, signal.SIGSTOP)  # alive, but silent: no heartbeats
    try:
        other_admin = _admin(others)

        seen: dict[int, int] = {}

        def victim_leads_nothing() -> bool:
            # Until it is fenced the silent broker is still in the metadata, and the admin
            # client may send its Metadata request there: a timeout then is expected, not an end.
            try:
                seen.update(_leaders(other_admin, "kraft-fence"))
            except (KafkaTimeoutError, RetriableError):  # RequestTimedOutError among them
                return False
            return victim.node_id not in seen.values()

        wait_until(victim_leads_nothing, SESSION_TIMEOUT_MS / 1000 + 60, "the silent broker kept its leaderships")
        assert all(leader in {b.node_id for b in others} for leader in seen.values()), seen
        controller_log = "\n".join(quorum.node(n).output() for n in (1, 2, 3))
        assert f"Fencing broker {victim.node_id} because its session has timed out." in controller_log, \
            controller_log[-3000:]
    finally:
        os.kill(victim.process.pid, signal.SIGCONT)
    # back: it registers again and is unfenced, and can lead again
    wait_until(lambda: victim.output().count("Transitioning from RECOVERY to RUNNING") >= 1
               and victim.running, 60, "the broker did not come back")
    admin.close()
