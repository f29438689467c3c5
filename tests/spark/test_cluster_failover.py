"""Streams over a three-broker cluster (RF=3) while its leader is killed: over the log dirs,
and through the brokers (Fetch to each partition's leader, no log dirs).

An idempotent acks=all producer writes on (tests/integration/replicated_cluster.py's
ProduceLoad); three streams run at once in one Spark session, each into a memory sink, each
learning the high watermarks its own way: from the brokers while reading the log dirs of all
three brokers, from the replication checkpoints in those dirs alone, and by reading through
the brokers. The leader of a partition is killed with SIGKILL mid-stream and a new one is
elected. In every stream, every acknowledged record arrives once, at the offset it was
acknowledged at, with its value: no row read twice, none from a replica's uncommitted tail. An
RF=1 topic with a partition on each broker is read in the same streams: each of its records
once, the one on the killed broker included, and the streams go on past that partition going
offline. One cluster and one kill serve all three streams: each stream's planning and reading
meets the same failover."""
from __future__ import annotations

import json

from kafka import KafkaProducer

from tests.integration.broker_harness import BrokerProcess, unique_chroot, wait_until
from tests.integration.replicated_cluster import CLUSTER_PROPS, ProduceLoad, ReplicatedCluster

WAIT_S = 180
TOPIC = "failover"
RF1_TOPIC = "failover-rf1"
#: How each stream learns the high watermarks: the table name and its reader's options.
HIGH_WATERMARKS = ("bootstrap_servers", "checkpoint", "brokers")


def test_streams_over_three_brokers_survive_a_leader_kill(spark, zookeeper, tmp_path):
    chroot = unique_chroot("spark-failover")
    props = dict(CLUSTER_PROPS, **{"replica.high.watermark.checkpoint.interval.ms": "200"})
    brokers = [BrokerProcess(tmp_path / f"broker-{i}", zookeeper.connect_string, chroot, broker_id=i, overrides=props)
               for i in range(3)]
    cluster = ReplicatedCluster(brokers).start()
    queries = {}
    load = None
    try:
        cluster.create_topic(TOPIC, {0: [0, 1, 2], 1: [1, 2, 0]})
        cluster.wait_fully_replicated(TOPIC, 2)
        cluster.create_topic(RF1_TOPIC, {0: [0], 1: [1], 2: [2]})
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all")
        sent = [producer.send(RF1_TOPIC, value=b"rf1-%d" % i, partition=i % 3) for i in range(300)]
        rf1_acked = {(m.partition, m.offset): b"rf1-%d" % i for i, m in enumerate(f.get(timeout=60) for f in sent)}
        producer.close()

        for high_watermarks in HIGH_WATERMARKS:
            reader = spark.readStream.format("kafka-log").option("subscribe", f"{TOPIC},{RF1_TOPIC}")
            if high_watermarks != "brokers":
                reader = reader.option("paths", json.dumps([str(b.log_dir) for b in brokers]))
            if high_watermarks != "checkpoint":
                # with no paths: read through the brokers, each task fetching from the leader
                reader = reader.option("kafka.bootstrap.servers", ",".join(cluster.bootstrap()))
            table = "failover_" + high_watermarks
            query = queries[table] = (reader.load().select("topic", "partition", "offset", "value").writeStream
                                      .format("memory").queryName(table)
                                      .option("checkpointLocation", str(tmp_path / f"cp-{high_watermarks}"))
                                      .trigger(processingTime="500 milliseconds").start())
            # One stream started at a time: each starts a Python worker that must connect back to
            # Spark within Spark's fixed 10 s, and three importing at once on a busy machine did not.
            wait_until(lambda: query.exception() is not None or query.lastProgress is not None, WAIT_S,
                       f"{table}: no micro-batch ran", interval=0.2)
        # the load under the running streams (a bounded producer: it started after them, so the
        # acknowledgements waited for below are still to come)
        load = ProduceLoad(cluster.bootstrap(), TOPIC, 2, max_records=100_000, describe=lambda: cluster.describe(TOPIC, 2))
        load.start()
        load.wait_acked(400)

        def rows(table: str, topic: str = TOPIC) -> list:
            if queries[table].exception() is not None:
                raise queries[table].exception()
            return [(r["partition"], r["offset"], bytes(r["value"]))
                    for r in spark.sql(f"select * from {table} where topic = '{topic}'").collect()]

        for table in queries:
            wait_until(lambda: len(rows(table)) >= 200, WAIT_S, f"{table}: the stream read nothing", interval=0.5)
            wait_until(lambda: len(rows(table, RF1_TOPIC)) >= len(rf1_acked), WAIT_S,
                       f"{table}: the RF=1 topic was not read", interval=0.5)
        leader = cluster.leaders(TOPIC, 2)[0]
        cluster.broker(leader).kill()
        cluster.wait_led_by_live_brokers(TOPIC, 2)
        load.wait_acked(600)
        load.stop()
        acked = {(p, o): value for value, (p, o) in load.acked.items()}
        for table in queries:
            wait_until(lambda: set(acked) <= {(p, o) for p, o, _ in rows(table)}, WAIT_S,
                       f"{table}: acknowledged records never reached the stream", interval=0.5)
            seen = rows(table)
            positions = [(p, o) for p, o, _ in seen]
            assert len(positions) == len(set(positions)), f"{table}: a record was read twice"
            for p, o, value in seen:
                if (p, o) in acked:
                    assert value == acked[(p, o)], \
                        f"{table}: {TOPIC}-{p} offset {o} holds another record than was acknowledged"
                else:
                    # Only a record the producer gave up on may be there unacknowledged.
                    assert value in load.failed, f"{table}: {TOPIC}-{p} offset {o}: a record nobody produced"
            rf1 = rows(table, RF1_TOPIC)
            assert len(rf1) == len(rf1_acked) and {(p, o): v for p, o, v in rf1} == rf1_acked, table
    finally:
        for query in queries.values():
            query.stop()
        if load is not None and load._thread.is_alive():
            load.stop()
        for b in brokers:
            if b.running:
                b.stop()
        cluster.close()
