"""Controller failover: from kill -9 of the active controller to the next topic created,
in a KRaft cluster and in a ZooKeeper-mode cluster holding the same number of partitions.

    .venv/bin/python benchmarks/bench_controller_failover.py [--counts 1000,10000] [--rounds 3]

KRaft: three controller processes and one broker; ZooKeeper mode: three brokers (one of
them the controller) and a ZooKeeper. Each count creates topics of 100 partitions
(replication factor 1) first; then, per round, the active controller (the raft leader, or
the broker holding ``/controller``) is killed -9 and the clock runs until a CreateTopics
of a new one-partition topic sent to a surviving broker is answered without error (the
new controller elected, its state loaded, the topic written; each attempt names a new
topic); the killed node is restarted before the next round. Prints each round and the medians as JSON.

In ZooKeeper mode a new controller is elected only once ZooKeeper expires the dead one's
session (``zookeeper.session.timeout.ms``, 6 s here, ZooKeeper's floor at its 3 s tick);
in KRaft mode once a follower's fetch timeout passes
(``controller.quorum.fetch.timeout.ms``, Kafka's 2 s) and it wins an election.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import shutil
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kafka_py.clients.common.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.clients.common.protocol.errors import Errors  # noqa: E402
from tests.integration.broker_harness import BrokerProcess, RawClient, unique_chroot, wait_until  # noqa: E402
from tests.integration.kraft_harness import KRaftQuorum  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_partitions import create_topics, leaders_known, req, wait_served  # noqa: E402


class TopicCreator:
    """CreateTopics of one-partition topics, a new name for each attempt: an attempt that
    failed may still have created its topic (in ZooKeeper mode a controller just elected
    can place it on the dead broker its metadata still lists, and the request times out),
    and asking again for that name would answer TOPIC_ALREADY_EXISTS for ever."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.attempts = 0

    def __call__(self, port: int) -> bool:
        self.attempts += 1
        return create_one(port, f"{self.prefix}-{self.attempts}")


def create_one(port: int, topic: str) -> bool:
    """A CreateTopics of ``topic`` (1 partition) answered without error."""
    try:
        with RawClient(port, timeout=15) as client:
            response = client.request(ApiKeys.CREATE_TOPICS, 5, req(
                ApiKeys.CREATE_TOPICS, 5, topics=[{"name": topic, "num_partitions": 1, "replication_factor": 1}],
                timeout=10000))
    except OSError:
        return False
    return all(int(t.error_code) == Errors.NONE.error_code for t in response.topics)


def kraft_rounds(count: int, rounds: int, base: pathlib.Path) -> list[float]:
    quorum = KRaftQuorum(base / f"kraft-{count}")
    quorum.format()
    broker = quorum.add_brokers(base / f"kraft-{count}", 1, overrides={
        "offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1"})[0]
    quorum.start()
    try:
        topics = [f"f{count}-t{i:04d}" for i in range(count // 100)]
        create_topics(broker.port, topics, 100, 10)
        wait_served(broker.port, topics, 100, 600)
        times = []
        for r in range(rounds):
            leader_id, epoch, _ = quorum.wait_for_leader(60)
            victim = quorum.node(leader_id)
            start = time.monotonic()
            victim.kill()
            create = TopicCreator(f"after-{count}-{r}")
            wait_until(lambda: create(broker.port), 300, "no topic created")
            times.append(time.monotonic() - start)
            print(f"  kraft {count} round {r + 1}: {times[-1]:.2f} s", flush=True)
            victim.start()
            quorum.wait_for_leader(60, min_epoch=epoch + 1)
        return times
    finally:
        quorum.stop()


def zookeeper_rounds(count: int, rounds: int, base: pathlib.Path, zk: ZooKeeperServer) -> list[float]:
    chroot = unique_chroot("bench-failover")
    brokers = [BrokerProcess(base / f"zk-{count}-{i}", zk.connect_string, chroot, broker_id=i,
                             overrides={"zookeeper.session.timeout.ms": "6000", "num.partitions": "1"})
               for i in range(3)]
    for b in brokers:
        b.start(timeout=120, wait=False)
    for b in brokers:
        b.wait_started(120)

    def controller_id() -> int:
        client = brokers[0].zk()  # the chroot is the client's
        try:
            return json.loads(client.get("/controller")[0])["brokerid"]
        finally:
            client.stop()
            client.close()

    try:
        topics = [f"f{count}-t{i:04d}" for i in range(count // 100)]
        # ZooKeeper mode answers CreateTopics only on the controller (NOT_CONTROLLER elsewhere)
        create_topics(brokers[controller_id()].port, topics, 100, 10)
        # the leaders are spread over the three brokers: wait until Metadata names them all
        wait_until(lambda: leaders_known(brokers[0].port, count), 600, "partitions without a leader")
        times = []
        for r in range(rounds):
            victim = brokers[controller_id()]
            survivors = [b for b in brokers if b is not victim]
            start = time.monotonic()
            victim.kill()
            # the new controller is one of the survivors; the others answer NOT_CONTROLLER
            create = TopicCreator(f"after-{count}-{r}")
            wait_until(lambda: any(create(b.port) for b in survivors), 300, "no topic created")
            times.append(time.monotonic() - start)
            print(f"  zookeeper {count} round {r + 1}: {times[-1]:.2f} s", flush=True)
            victim.restart(timeout=300)
        return times
    finally:
        for b in brokers:
            if b.running:
                b.stop(timeout=300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    base = pathlib.Path(tempfile.mkdtemp(prefix="bench-failover-"))
    (base / "zookeeper").mkdir()
    zk = ZooKeeperServer(base / "zookeeper").start()
    results = {}
    try:
        for count in (int(c) for c in args.counts.split(",")):
            results[count] = {"kraft": kraft_rounds(count, args.rounds, base),
                              "zookeeper": zookeeper_rounds(count, args.rounds, base, zk)}
    finally:
        zk.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(json.dumps({
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "median_s": {count: {mode: round(statistics.median(v), 2) for mode, v in by_mode.items()}
                     for count, by_mode in results.items()},
    }, indent=2))


if __name__ == "__main__":
    main()
