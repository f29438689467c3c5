"""The controller's automatic preferred-replica election (auto.leader.rebalance.enable, with a
one-second leader.imbalance.check.interval.seconds) on a three-broker cluster: a broker that
restarts loses its leaderships and gets them back by itself once it is in sync again."""
from __future__ import annotations

import pytest

from tests.integration.broker_harness import BrokerProcess, unique_chroot, wait_until
from tests.integration.replicated_cluster import CLUSTER_PROPS, WAIT, ReplicatedCluster

TOPIC = "rebalanced"
# broker b prefers partitions b and b + 3
ASSIGNMENT = {p: [p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(6)}
PREFERRED = {p: replicas[0] for p, replicas in ASSIGNMENT.items()}
PROPS = dict(CLUSTER_PROPS, **{"auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "1"})


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("auto-rebalance")
    brokers = [BrokerProcess(tmp_path_factory.mktemp(f"ar-broker{i}-"), zookeeper.connect_string, chroot, i,
                             overrides=PROPS) for i in range(3)]
    c = ReplicatedCluster(brokers).start()
    c.create_topic(TOPIC, ASSIGNMENT)
    c.wait_fully_replicated(TOPIC, len(ASSIGNMENT))
    yield c
    for b in brokers:
        if b.running:
            b.stop()
    c.close()


def test_a_restarted_broker_gets_its_preferred_leaderships_back_by_itself(cluster):
    wait_until(lambda: cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED, WAIT,
               f"leaders at creation: {cluster.leaders(TOPIC, len(ASSIGNMENT))}")
    controller = cluster.wait_controller()
    restarted = next(i for i in (1, 2, 0) if i != controller)
    own = {p for p, b in PREFERRED.items() if b == restarted}
    epochs = {p: cluster.state(TOPIC, p)["leader_epoch"] for p in own}

    broker = cluster.broker(restarted)
    assert broker.stop() == 0, broker.tail()
    # its controlled shutdown hands its leaderships to the other in-sync replicas
    leaders = cluster.leaders(TOPIC, len(ASSIGNMENT))
    assert all(leaders[p] not in (-1, restarted) for p in own), leaders
    broker.start()

    # back in every ISR, then the next check of the controller's auto-leader-rebalance-task
    # elects it again; nobody asked
    cluster.wait_fully_replicated(TOPIC, len(ASSIGNMENT))
    wait_until(lambda: cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED, WAIT,
               f"leaders after the restart: {cluster.leaders(TOPIC, len(ASSIGNMENT))}\n"
               + cluster.describe(TOPIC, len(ASSIGNMENT)))
    # twice: once away from it at shutdown, once back
    assert all(cluster.state(TOPIC, p)["leader_epoch"] >= epochs[p] + 2 for p in own)
