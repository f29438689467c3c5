"""kill -9 at every step that writes: a broker ends at a named crash point (os._exit(137) from
kafka_py/core/utils/crash_points.py) in the middle of a roll, an index resize, a recovery, a clean and
the swap of its segments, a retention delete, a producer snapshot, a checkpoint's
write-and-rename, a topic deletion, a move between log dirs, an offset commit, a transaction
state append, a reassignment; it is started again without the point, and then:

* every record a producer was told is written (acks=all) is read back once, at its offset;
* offsets only grow and have no holes, except where retention (below the log start offset) or
  compaction (an older value of a key) legitimately removed records;
* every partition takes a new record at its log end offset;
* no ``.swap``, ``.deleted``, ``.cleaned``, ``.tmp`` file and no ``-delete`` directory is left
  once the broker's own delayed deletes have run;
* on the compacted topic the cleaner runs again (its checkpoint moves past where it was).

Each case proves it crashed where it claims: the exit status is 137 and the broker's output
has the point's line; a point the workload never reaches fails the case.

The points of the periodic checkpoints (recovery points, log start offsets, high watermarks)
are armed only in a second start, after a kill -9 of a broker that took records: what the
interrupted write would have replaced is then a checkpoint of real offsets. A crash may come at any step of a workload, topic creation included; a topic whose
creation it interrupted is created again after the restart.

Each case costs one or two broker starts, a crash and a restart (tens of seconds), so by
default a seeded subset runs: ``KAFKA_PY_CRASH_POINTS_COUNT`` points (5) drawn with
``random.Random(KAFKA_PY_CRASH_POINTS_SEED)`` (0). ``KAFKA_PY_CRASH_POINTS=all`` runs every
point of ``crash_points.POINTS``; ``KAFKA_PY_CRASH_POINTS=name,name`` runs those.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import random
import threading
import time
from typing import Callable, Optional

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition, TopicPartitionReplica
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError
from kafka.structs import OffsetAndMetadata

from kafka_py.clients.common.topic_partition import TopicPartition as KpTopicPartition
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.core.utils import crash_points
from tests.integration.broker_harness import BrokerProcess, read_znode, unique_chroot, wait_until

WAIT = 60.0
# How long a workload may run before its point counts as never reached.
CRASH_WAIT = 45.0
VALUE_SIZE = 120
SEGMENT_BYTES = "2048"
# a producer batch of ~10 records, below SEGMENT_BYTES
BATCH_BYTES = 1400
LEFTOVER_SUFFIXES = (".swap", ".deleted", ".cleaned", ".tmp")

BROKER_PROPS = {
    # every periodic write comes round often, so that its points are reached within seconds;
    # the log manager's tasks (retention, checkpoints, the removal of -delete directories)
    # start at once instead of 30 s after startup
    "log.initial.task.delay.ms": "0",
    "log.flush.offset.checkpoint.interval.ms": "300",
    "log.flush.start.offset.checkpoint.interval.ms": "300",
    "replica.high.watermark.checkpoint.interval.ms": "300",
    "log.retention.check.interval.ms": "300",
    "log.segment.delete.delay.ms": "200",
    "log.cleaner.backoff.ms": "100",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": str(4 * 1024 * 1024),
    "offsets.topic.num.partitions": "1",
    "offsets.topic.segment.bytes": "4096",
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.segment.bytes": "4096",
    "delete.topic.enable": "true",
}

PLAIN = {"segment.bytes": SEGMENT_BYTES}
RETAINED = {"segment.bytes": SEGMENT_BYTES, "retention.bytes": "6144"}
COMPACTED = {"segment.bytes": SEGMENT_BYTES, "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01",
             "min.compaction.lag.ms": "0"}
KEYS = 12
# a partition being reassigned: segments a follower's fetch does not have to take ten records at a time
MOVING = {"segment.bytes": str(256 * 1024)}


# ---------------------------------------------------------------------------- one run


class Run:
    """One broker (or two), what its producers were told, and what the checks need."""

    def __init__(self, broker: BrokerProcess, point: str, armed: str, extra_brokers: tuple[BrokerProcess, ...] = ()):
        self.broker = broker
        self.point = point
        # KAFKA_PY_CRASH_POINT's value: the point, and at which pass
        self.armed = armed
        self.extra_brokers = extra_brokers
        # (topic, partition) -> offset -> (key, value), what acks=all acknowledged
        self.acked: dict[tuple[str, int], dict[int, tuple[Optional[bytes], bytes]]] = collections.defaultdict(dict)
        self.topics: dict[str, tuple[int, dict, Optional[dict[int, list[int]]]]] = {}
        # topics whose creation was answered and whose partitions have leaders
        self.created: set[str] = set()
        self.seq = 0
        self._producer: Optional[KafkaProducer] = None
        self.state: dict = {}

    @property
    def bootstrap(self) -> list[str]:
        return [b.bootstrap for b in (self.broker, *self.extra_brokers) if b.running]

    @property
    def dead(self) -> bool:
        return self.broker.process is not None and self.broker.process.poll() is not None

    def producer(self) -> KafkaProducer:
        if self._producer is None:
            # No retries: a send either is acknowledged or counts as not written. Batches stay below
            # segment.bytes: the broker refuses a larger one (RECORD_LIST_TOO_LARGE), and
            # kafka-python's flush() returns before the halves it splits it into are answered.
            self._producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", retries=0, linger_ms=2,
                                           batch_size=BATCH_BYTES, request_timeout_ms=5000, max_block_ms=5000)
        return self._producer

    def close_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            close_producer(producer)

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=15000)

    def create_topic(self, name: str, partitions: int, configs: dict,
                     assignment: Optional[dict[int, list[int]]] = None) -> None:
        self.topics[name] = (partitions, configs, assignment)
        admin = self.admin()
        try:
            if assignment is None:
                topic = NewTopic(name, partitions, 1, topic_configs=configs)
            else:
                topic = NewTopic(name, -1, -1, replica_assignments=assignment, topic_configs=configs)
            admin.create_topics([topic], timeout_ms=30000)
        finally:
            admin.close()
        wait_until(lambda: self.leaders_known(name, partitions), WAIT, f"{name} has no leaders")
        self.created.add(name)

    def finish_topic_creation(self) -> None:
        """After the restart: a topic whose creation the crash interrupted may be in ZooKeeper
        or not; created again if not, so that the checks find every topic of the workload."""
        for name, (partitions, configs, assignment) in self.topics.items():
            if name in self.created:
                continue
            if not self.leaders_known(name, partitions):
                try:
                    self.create_topic(name, partitions, configs, assignment)
                except TopicAlreadyExistsError:
                    pass
            wait_until(lambda: self.leaders_known(name, partitions), WAIT, f"{name} has no leaders")
            self.created.add(name)

    def leaders_known(self, topic: str, partitions: int) -> bool:
        brokers = [b for b in (self.broker, *self.extra_brokers) if b.running]
        answer = brokers[0].metadata((topic,))
        found = [p for t in answer.topics if t.name == topic and int(t.error_code) == 0 for p in t.partitions
                 if int(p.error_code) == 0 and int(p.leader_id) >= 0]
        return len(found) == partitions

    def send_round(self, topic: str, count: int, keyed: bool = False) -> None:
        """``count`` sends spread over the topic's partitions; the acknowledged ones are kept."""
        partitions = self.topics[topic][0]
        producer = self.producer()
        pending = []
        for i in range(count):
            self.seq += 1
            key = b"key-%02d" % (self.seq % KEYS) if keyed else None
            value = f"{topic}-{self.seq:08d}-".encode().ljust(VALUE_SIZE, b"v")
            partition = i % partitions
            pending.append((partition, key, value, producer.send(topic, key=key, value=value,
                                                                 partition=partition)))
        try:
            producer.flush(timeout=10)
        except KafkaError:
            pass  # each future says below whether its record was written
        deadline = time.monotonic() + 10
        for partition, key, value, future in pending:
            try:
                metadata = future.get(timeout=max(0.0, deadline - time.monotonic()))
            except KafkaError:
                continue  # failed, or not answered: not acknowledged
            self.acked[(topic, partition)][metadata.offset] = (key, value)


def close_producer(producer: KafkaProducer) -> None:
    """Close a producer whose broker may be gone. kafka-python's close() flushes first and, with
    records still unanswered, raises before it stops its sender thread; that thread is then
    stopped without sending, so that none outlives the test."""
    try:
        producer.close(timeout=2)
    except KafkaError:
        producer._sender.force_close()
        producer._sender.join(5)
        try:
            producer.close(timeout=0)
        except KafkaError:
            pass


def until_crash(run: Run, step: Callable[[], None]) -> None:
    """Repeat ``step`` until the broker has ended; a client error of a dying broker is expected."""
    deadline = time.monotonic() + CRASH_WAIT
    while not run.dead:
        if time.monotonic() > deadline:
            pytest.fail(f"crash point {run.point} was not reached within {CRASH_WAIT}s:\n{run.broker.tail()}")
        try:
            step()
        except (KafkaError, OSError, TimeoutError, RuntimeError):
            time.sleep(0.05)
    run.close_producer()


# ---------------------------------------------------------------------------- reading back


def read_partition(bootstrap, topic: str, partition: int,
                   isolation: str = "read_uncommitted") -> tuple[int, int, list]:
    """(log start offset, end offset, [(offset, key, value)]) of one partition, read from the start.

    A fetch returns the records of one segment at most (as Kafka's Log.read does), so a log of
    many small segments takes one round trip per segment: the read fails when it stops moving
    for WAIT seconds, not when the whole log takes longer than that on a busy machine."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level=isolation,
                             request_timeout_ms=20000)
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        start = consumer.beginning_offsets([tp])[tp]
        end = consumer.end_offsets([tp])[tp]
        consumer.seek(tp, start)
        records: list = []
        position = start
        stalled_since = time.monotonic()
        # each poll that moves advances at least one offset; the others are bounded by WAIT
        for _ in range(end - start + int(WAIT / 0.5) + 1):
            if position >= end:
                break
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend((r.offset, r.key, r.value) for r in batch)
            if consumer.position(tp) > position:
                position = consumer.position(tp)
                stalled_since = time.monotonic()
            elif time.monotonic() - stalled_since > WAIT:
                break
        assert position >= end, f"{topic}-{partition}: reading stopped at {position}, the end is {end}"
        return start, end, [r for r in records if r[0] < end]
    finally:
        consumer.close()


def check_records(run: Run, topic: str, partition: int, *, compacted: bool = False, retained: bool = False,
                  contiguous: bool = True) -> tuple[int, int]:
    start, end, records = read_partition(run.bootstrap, topic, partition)
    offsets = [o for o, _, _ in records]
    where = f"{topic}-{partition} after a crash at {run.point}"
    assert offsets == sorted(set(offsets)), f"{where}: offsets repeat or go back: {offsets}"
    values = [v for _, _, v in records]
    assert len(values) == len(set(values)), f"{where}: a record is there twice"
    if not retained:
        assert start == 0, f"{where}: the log starts at {start}"
    if contiguous and not compacted:
        assert offsets == list(range(start, end)), f"{where}: holes in [{start}, {end}): {offsets}"
    found = {o: (k, v) for o, k, v in records}
    acked = run.acked.get((topic, partition), {})
    if compacted:
        # The newest acknowledged value of each key survives, unless a newer record of the key does.
        newest: dict = {}
        for offset, (key, _) in sorted(acked.items()):
            newest[key] = offset
        newest_found: dict = {}
        for offset, (key, _) in found.items():
            newest_found[key] = max(offset, newest_found.get(key, -1))
        for key, offset in newest.items():
            assert newest_found.get(key, -1) >= offset, f"{where}: the acknowledged {key!r}@{offset} is gone"
        for offset, record in acked.items():
            if offset in found:
                assert found[offset] == record, f"{where}: offset {offset} holds another record"
    else:
        for offset, record in sorted(acked.items()):
            if offset < start:
                continue  # retention removed it, as it may
            assert found.get(offset) == record, (
                f"{where}: acknowledged offset {offset} is {found.get(offset)!r}, not {record!r}")
    return start, end


def check_serves(run: Run, topic: str, partitions: int) -> None:
    """A new record in each partition lands at the partition's end offset."""
    producer = KafkaProducer(bootstrap_servers=run.bootstrap, acks="all", linger_ms=0)
    consumer = KafkaConsumer(bootstrap_servers=run.bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = consumer.end_offsets(tps)
        for tp in tps:
            key = b"key-00" if run.topics.get(topic, (0, {}, None))[1].get("cleanup.policy") == "compact" else None
            metadata = producer.send(topic, key=key, value=b"after-restart", partition=tp.partition).get(timeout=30)
            assert metadata.offset == ends[tp], f"{tp} took a record at {metadata.offset}, its end was {ends[tp]}"
    finally:
        producer.close()
        consumer.close()


def leftovers(log_dirs: list[pathlib.Path]) -> list[str]:
    found = []
    for log_dir in log_dirs:
        for path in log_dir.rglob("*"):
            if path.is_file() and path.name.endswith(LEFTOVER_SUFFIXES):
                found.append(str(path))
            elif path.is_dir() and path.name.endswith("-delete"):
                found.append(str(path))
    return found


def wait_no_leftovers(run: Run, log_dirs: list[pathlib.Path]) -> None:
    wait_until(lambda: not leftovers(log_dirs), WAIT,
               f"left behind after a crash at {run.point}: {leftovers(log_dirs)}", interval=0.2)


def cleaner_checkpoint(log_dir: pathlib.Path, topic: str, partition: int) -> int:
    path = log_dir / "cleaner-offset-checkpoint"
    if not path.exists():
        return -1
    return OffsetCheckpointFile(str(path)).read().get(KpTopicPartition(topic, partition), -1)


# ---------------------------------------------------------------------------- the scenarios


def produce_scenario(run: Run) -> None:
    """Rolls (small segments), producer snapshots, the periodic checkpoints."""
    run.create_topic("plain", 2, PLAIN)
    until_crash(run, lambda: run.send_round("plain", 40))


def check_produce(run: Run) -> None:
    for p in range(2):
        check_records(run, "plain", p)
    wait_no_leftovers(run, [run.broker.log_dir])
    check_serves(run, "plain", 2)


def retention_scenario(run: Run) -> None:
    run.create_topic("retained", 1, RETAINED)
    until_crash(run, lambda: run.send_round("retained", 40))


def check_retention(run: Run) -> None:
    check_records(run, "retained", 0, retained=True)
    wait_no_leftovers(run, [run.broker.log_dir])
    check_serves(run, "retained", 1)


def compaction_scenario(run: Run) -> None:
    run.create_topic("compacted", 1, COMPACTED)
    until_crash(run, lambda: run.send_round("compacted", 40, keyed=True))


def check_compaction(run: Run) -> None:
    check_records(run, "compacted", 0, compacted=True)
    wait_no_leftovers(run, [run.broker.log_dir])
    check_serves(run, "compacted", 1)
    # The cleaner works again: new overwrites are compacted past where it had got to.
    before = cleaner_checkpoint(run.broker.log_dir, "compacted", 0)
    deadline = time.monotonic() + WAIT
    while cleaner_checkpoint(run.broker.log_dir, "compacted", 0) <= before:
        assert time.monotonic() < deadline, f"the cleaner did not resume past {before}:\n{run.broker.tail()}"
        run.send_round("compacted", 40, keyed=True)
    check_records(run, "compacted", 0, compacted=True)


def restart_scenario(run: Run) -> None:
    """kill -9 from outside while producing, then a start with the point armed: it crashes while
    recovering, or in a periodic write (a checkpoint) once it serves again and takes records.
    What that write replaces is then the previous run's, of a log with records in it."""
    run.create_topic("plain", 2, PLAIN)
    for _ in range(10):
        run.send_round("plain", 40)
    assert run.broker.kill() == -9
    run.broker.env[crash_points.ENV_VAR] = run.armed
    wait_until(lambda: run.broker.registration() is None, 30.0, "old broker registration did not expire")
    run.broker.start(wait=False)
    until_crash(run, lambda: run.send_round("plain", 40))


def deletion_scenario(run: Run) -> None:
    run.create_topic("plain", 1, PLAIN)
    run.create_topic("doomed", 2, PLAIN)
    for _ in range(5):
        run.send_round("plain", 20)
        run.send_round("doomed", 20)

    def delete() -> None:
        if not run.state.get("deleted"):
            admin = run.admin()
            try:
                admin.delete_topics(["doomed"], timeout_ms=30000)
            finally:
                admin.close()
            run.state["deleted"] = True
        run.send_round("plain", 10)

    until_crash(run, delete)


def check_deletion(run: Run) -> None:
    check_records(run, "plain", 0)
    check_serves(run, "plain", 1)
    # the controller finishes the deletion and the broker its delayed removal of the directories
    wait_until(lambda: not any(p.name.startswith("doomed-") for p in run.broker.log_dir.iterdir()), WAIT,
               f"doomed's directories are still there: {sorted(os.listdir(run.broker.log_dir))}")
    wait_until(lambda: "doomed" not in [t.name for t in run.broker.metadata(("doomed",)).topics
                                        if int(t.error_code) == 0], WAIT, "doomed still exists")
    wait_no_leftovers(run, [run.broker.log_dir])


def move_scenario(run: Run) -> None:
    """AlterReplicaLogDirs between the broker's two log dirs; the swap of the caught-up copy."""
    run.create_topic("moved", 1, PLAIN)
    for _ in range(10):
        run.send_round("moved", 40)
    source = next(d for d in run.broker.dirs if (pathlib.Path(d) / "moved-0").is_dir())
    dest = next(d for d in run.broker.dirs if d != source)
    run.state["dest"] = dest
    admin = run.admin()
    try:
        admin.alter_replica_log_dirs({TopicPartitionReplica("moved", 0, run.broker.broker_id): dest})
    finally:
        admin.close()
    until_crash(run, lambda: run.send_round("moved", 20))


def check_move(run: Run) -> None:
    dirs = [pathlib.Path(d) for d in run.broker.dirs]
    check_records(run, "moved", 0)
    check_serves(run, "moved", 1)
    wait_no_leftovers(run, dirs)
    homes = [d for d in dirs if (d / "moved-0").is_dir()]
    assert len(homes) == 1, f"moved-0 is in {homes}"
    assert not [p for d in dirs for p in d.iterdir() if p.name.endswith("-future")]


def group_scenario(run: Run) -> None:
    run.create_topic("plain", 1, PLAIN)
    run.send_round("plain", 10)
    tp = TopicPartition("plain", 0)
    committed: list[int] = []

    def commit() -> None:
        consumer = run.state.get("consumer")
        if consumer is None:
            consumer = run.state["consumer"] = KafkaConsumer(
                bootstrap_servers=run.bootstrap, group_id="committer", enable_auto_commit=False,
                request_timeout_ms=5000)
            consumer.assign([tp])
        offset = len(committed) + 1
        consumer.commit({tp: OffsetAndMetadata(offset, "", -1)})
        committed.append(offset)

    try:
        until_crash(run, commit)
    finally:
        consumer = run.state.pop("consumer", None)
        if consumer is not None:
            try:
                consumer.close(autocommit=False)
            except Exception:  # noqa: BLE001 - its coordinator is gone
                pass
    run.state["committed"] = committed


def check_group(run: Run) -> None:
    committed = run.state["committed"]
    tp = TopicPartition("plain", 0)
    found: dict = {}

    def fetched() -> bool:
        admin = run.admin()
        try:
            found.update(admin.list_group_offsets("committer")["committer"])
            return tp in found
        except KafkaError:
            return False
        finally:
            admin.close()

    wait_until(fetched, WAIT, "the group's offsets are not served")
    # the commit the crash interrupted was appended, so it may be there too
    assert found[tp].offset >= (committed[-1] if committed else -1), (found, committed[-3:])
    check_records(run, "__consumer_offsets", 0, compacted=True)
    wait_no_leftovers(run, [run.broker.log_dir])


def transaction_scenario(run: Run) -> None:
    run.create_topic("plain", 1, PLAIN)
    run.state["txn_values"] = []

    def transact() -> None:
        producer = run.state.get("txn_producer")
        if producer is None:
            producer = run.state["txn_producer"] = KafkaProducer(
                bootstrap_servers=run.bootstrap, transactional_id="crashing-txn", request_timeout_ms=5000,
                max_block_ms=8000)
            producer.init_transactions()
        producer.begin_transaction()
        values = [f"txn-{run.seq}-{i}".encode() for i in range(5)]
        run.seq += 1
        for v in values:
            producer.send("plain", value=v, partition=0)
        run.state["txn_values"].append(values)
        # kafka-python's commit waits without a bound, also on a coordinator that has died:
        # waited for in a thread of its own, and given up on after a while
        outcome: dict = {}

        def commit() -> None:
            try:
                producer.commit_transaction()
                outcome["done"] = True
            except BaseException as e:  # noqa: BLE001 - handed back below
                outcome["error"] = e

        committer = threading.Thread(target=commit, name="txn-commit", daemon=True)
        committer.start()
        committer.join(timeout=15)
        if "error" in outcome:
            raise outcome["error"]
        if not outcome.get("done"):
            raise TimeoutError("commit_transaction did not complete")
        run.state.setdefault("committed_txns", []).append(values)

    try:
        until_crash(run, transact)
    finally:
        producer = run.state.pop("txn_producer", None)
        if producer is not None:
            close_producer(producer)


def check_transaction(run: Run) -> None:
    # The transaction the crash interrupted was past PrepareCommit (the point's third append),
    # so its commit is decided: the coordinator completes it after loading its log.
    wanted = [v for values in run.state["txn_values"] for v in values]

    def all_committed() -> bool:
        _, _, records = read_partition(run.bootstrap, "plain", 0, isolation="read_committed")
        return [v for _, _, v in records] == wanted

    wait_until(all_committed, WAIT, f"not every transaction reads as committed:\n{run.broker.tail()}", interval=0.5)
    producer = KafkaProducer(bootstrap_servers=run.bootstrap, transactional_id="crashing-txn")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("plain", value=b"after-restart", partition=0)
        producer.commit_transaction()
    finally:
        producer.close()
    check_records(run, "__transaction_state", 0, compacted=True)
    wait_no_leftovers(run, [run.broker.log_dir])


def reassignment_scenario(run: Run) -> None:
    """Broker 0 is the controller and crashes; ``moving`` goes from broker 1 to broker 0.

    The reassignment's second half (the leader moved to broker 0) starts only once broker 0 is
    in the ISR, which it joins when a fetch of its reaches the leader's high watermark. With
    acks=all and the leader alone in the ISR, every append moves that mark, and a follower
    taking one small segment per fetch never reaches it under a producer that never pauses: the
    topic has larger segments, and the producer leaves the follower time between rounds."""
    run.create_topic("moving", 1, MOVING, assignment={0: [1]})
    for _ in range(5):
        run.send_round("moving", 40)

    def reassign() -> None:
        if not run.state.get("requested"):
            admin = run.admin()
            try:
                admin.alter_partition_reassignments({TopicPartition("moving", 0): [0]})
            finally:
                admin.close()
            run.state["requested"] = True
        run.send_round("moving", 10)
        time.sleep(0.2)

    until_crash(run, reassign)


def check_reassignment(run: Run) -> None:
    other = run.extra_brokers[0]
    zk = other.zk()
    try:
        def done() -> bool:
            found = read_znode(zk, "/brokers/topics/moving")
            znode = json.loads(found[0]) if found else {}
            return (znode.get("partitions", {}).get("0") == [0] and not znode.get("adding_replicas")
                    and not znode.get("removing_replicas"))

        wait_until(done, WAIT, "the reassignment did not complete", interval=0.2)
    finally:
        zk.stop()
        zk.close()
    wait_until(lambda: run.broker.leads("moving", [0]), WAIT, "broker 0 does not lead moving-0")
    check_records(run, "moving", 0)
    check_serves(run, "moving", 1)
    wait_until(lambda: not (other.log_dir / "moving-0").exists(), WAIT, "broker 1 kept its replica")
    wait_no_leftovers(run, [run.broker.log_dir, other.log_dir])


class Scenario:
    def __init__(self, drive: Callable[[Run], None], check: Callable[[Run], None], hit: int = 1,
                 log_dirs: int = 1, brokers: int = 1):
        self.drive, self.check, self.hit, self.log_dirs, self.brokers = drive, check, hit, log_dirs, brokers

    @property
    def armed_at_restart(self) -> bool:
        return self.drive is restart_scenario


PRODUCE = Scenario(produce_scenario, check_produce, hit=3)
SCENARIOS: dict[str, Scenario] = {
    # a few rolls in, so that acknowledged records precede the crash
    "log.roll.after_producer_snapshot": PRODUCE,
    "log.roll.after_new_segment": PRODUCE,
    # each roll trims the offset index of the segment it seals
    "index.resize.after_file_truncate": PRODUCE,
    "log_segment.recover.after_index_reset": Scenario(restart_scenario, check_produce),
    "cleaner.after_cleaned_segment_written": Scenario(compaction_scenario, check_compaction),
    "log.replace_segments.after_swap_rename": Scenario(compaction_scenario, check_compaction),
    "log.replace_segments.after_old_segments_renamed": Scenario(compaction_scenario, check_compaction),
    "log.delete_segment_files.after_rename": Scenario(retention_scenario, check_retention),
    "producer_state.snapshot.before_rename": PRODUCE,
    # written every 300 ms from the start on: the tenth write, a few seconds into the restart
    "checkpoint.recovery-point-offset-checkpoint.before_rename": Scenario(restart_scenario, check_produce, hit=10),
    "checkpoint.log-start-offset-checkpoint.before_rename": Scenario(restart_scenario, check_produce, hit=10),
    "checkpoint.replication-offset-checkpoint.before_rename": Scenario(restart_scenario, check_produce, hit=10),
    "checkpoint.cleaner-offset-checkpoint.before_rename": Scenario(compaction_scenario, check_compaction),
    # written when the partition gets its leader epoch (the first write) and whenever retention
    # moves the log start offset past the first epoch's start
    "checkpoint.leader-epoch-checkpoint.before_rename": Scenario(retention_scenario, check_retention, hit=3),
    "log_manager.async_delete.after_rename": Scenario(deletion_scenario, check_deletion),
    "log.delete.after_segments_deleted": Scenario(deletion_scenario, check_deletion),
    "log_manager.replace_future.after_future_renamed": Scenario(move_scenario, check_move, log_dirs=2),
    "log_manager.replace_future.after_source_renamed": Scenario(move_scenario, check_move, log_dirs=2),
    "group_metadata_manager.store_offsets.after_append": Scenario(group_scenario, check_group, hit=5),
    # the third append of a transactional id is its first PrepareCommit
    "transaction_state_manager.append.after_append": Scenario(transaction_scenario, check_transaction, hit=3),
    "controller.reassignment.after_adding_replicas": Scenario(reassignment_scenario, check_reassignment, brokers=2),
    "controller.reassignment.after_leader_moved": Scenario(reassignment_scenario, check_reassignment, brokers=2),
}


def selected_points() -> list[str]:
    wanted = os.environ.get("KAFKA_PY_CRASH_POINTS", "")
    points = sorted(crash_points.POINTS)
    if wanted == "all":
        return points
    if wanted:
        return [p.strip() for p in wanted.split(",") if p.strip()]
    rng = random.Random(int(os.environ.get("KAFKA_PY_CRASH_POINTS_SEED", "0")))
    count = int(os.environ.get("KAFKA_PY_CRASH_POINTS_COUNT", "5"))
    return sorted(rng.sample(points, min(count, len(points))))


def test_every_point_has_a_scenario():
    assert set(SCENARIOS) == set(crash_points.POINTS)


@pytest.mark.parametrize("point", selected_points())
def test_restart_after_a_crash_at(point, zookeeper, tmp_path_factory):
    scenario = SCENARIOS[point]
    armed = point if scenario.hit == 1 else f"{point}@{scenario.hit}"
    chroot = unique_chroot("crash")
    workdir = tmp_path_factory.mktemp("crash-broker0-")
    overrides = dict(BROKER_PROPS)
    dirs = [str(workdir / f"dir-{i}") for i in range(scenario.log_dirs)]
    if scenario.log_dirs > 1:
        overrides["log.dirs"] = ",".join(dirs)
    if scenario.brokers > 1:
        overrides.update({"offsets.topic.replication.factor": "1", "auto.leader.rebalance.enable": "false",
                          "replica.fetch.backoff.ms": "200"})
    env = {} if scenario.armed_at_restart else {crash_points.ENV_VAR: armed}
    broker = BrokerProcess(workdir, zookeeper.connect_string, chroot, 0, overrides=overrides, env=env)
    broker.dirs = dirs if scenario.log_dirs > 1 else [str(broker.log_dir)]
    if scenario.log_dirs > 1:
        broker.log_dir = pathlib.Path(dirs[0])
    extra = tuple(BrokerProcess(tmp_path_factory.mktemp(f"crash-broker{i}-"), zookeeper.connect_string, chroot, i,
                                overrides=overrides) for i in range(1, scenario.brokers))
    run = Run(broker, point, armed, extra)
    try:
        broker.start()  # first, so that it is the controller
        for other in extra:
            other.start()
        try:
            scenario.drive(run)
        except Exception:  # noqa: BLE001 - any step of the workload may meet the crash
            if not run.dead:
                raise
        run.close_producer()
        code = broker.kill()
        assert code == crash_points.EXIT_CODE, f"the broker ended with {code}:\n{broker.tail()}"
        assert f"crash point {point} reached" in broker.output(), broker.tail()

        broker.env.pop(crash_points.ENV_VAR, None)
        broker.restart(WAIT)
        run.finish_topic_creation()
        scenario.check(run)
    finally:
        run.close_producer()
        for b in (broker, *extra):
            if b.running:
                b.stop()
