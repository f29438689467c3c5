"""Moving replicas between log dirs on one broker's storage stack (LogManager, ReplicaManager,
ReplicaAlterLogDirsThread) with two real log dirs in tmp_path: where partitions are created,
AlterReplicaLogDirs with its errors, the copy into the -future log and the swap, a move
resumed after a restart, DescribeLogDirs, and the two APIs through KafkaApis."""
from __future__ import annotations

import os
import threading
import time

import pytest

from kafka_py.core.api.request import FUTURE_LOCAL_REPLICA_ID
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.network.request_channel import RequestChannel
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import PartitionData
from kafka_py.server.kafka_apis import KafkaApis
from kafka_py.server.replication_quota_manager import ReplicaQuota
from tests.server.test_kafka_apis import Apis, ResponseCollector
from tests.server.test_replica_manager import Broker, records, um_request, values_of

T = "moved"
TP0 = TopicPartition(T, 0)
TP1 = TopicPartition(T, 1)
WAIT_S = 30.0


def wait_for(condition, message: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(message)
        time.sleep(0.02)


@pytest.fixture
def dirs(tmp_path):
    return str(tmp_path / "d1"), str(tmp_path / "d2")


@pytest.fixture
def broker(dirs):
    b = Broker(",".join(dirs))
    yield b
    b.close()


def produce_batches(broker: Broker, tp: TopicPartition, batches: int, per_batch: int = 10) -> list[bytes]:
    values = []
    for i in range(batches):
        chunk = [f"{tp}-{i}-{j}".encode() for j in range(per_batch)]
        result = broker.produce({tp: records(*chunk)})
        assert result[tp].error is Errors.NONE
        values.extend(chunk)
    return values


def read_all(broker: Broker, tp: TopicPartition) -> list[bytes]:
    """Every record from the log start offset on, as a consumer reads them."""
    start = broker.rm.local_log(tp).log_start_offset
    data = broker.fetch([(tp, PartitionData(start, 0, 50 * 1024 * 1024))])[tp]
    assert data.error is Errors.NONE, data.error
    return values_of(data.records)


def partition_dirs(log_dir: str) -> list[str]:
    return sorted(n for n in os.listdir(log_dir) if os.path.isdir(os.path.join(log_dir, n)))


def test_partitions_go_to_the_dir_with_fewest(broker, dirs):
    tps = [TopicPartition("spread", p) for p in range(6)]
    broker.lead(*tps)
    in_dirs = [broker.rm.get_log_dir(tp) for tp in tps]
    assert sorted(in_dirs.count(d) for d in dirs) == [3, 3], in_dirs


def test_a_replica_moves_with_its_data_and_keeps_serving(broker, dirs):
    broker.lead(TP0)
    source = broker.rm.get_log_dir(TP0)
    [dest] = [d for d in dirs if d != source]
    values = produce_batches(broker, TP0, 20)
    log_start = 30
    broker.rm.local_log(TP0).maybe_increment_log_start_offset(log_start)

    assert broker.rm.alter_replica_log_dirs({TP0: dest}) == {TP0: Errors.NONE}
    wait_for(lambda: broker.rm.get_log_dir(TP0) == dest, "the replica did not move")

    log = broker.rm.local_log(TP0)
    assert not log.is_future and log.dir == os.path.join(dest, str(TP0))
    assert broker.rm.online_partition(TP0).future_log is None
    assert log.log_end_offset == len(values) and log.log_start_offset == log_start
    assert read_all(broker, TP0) == values[log_start:]
    # the old directory is gone or on its way out; no -future directory is left
    assert not any(n.endswith("-future") for n in partition_dirs(dest))
    assert str(TP0) not in partition_dirs(source)
    # and the moved log takes new records
    more = produce_batches(broker, TP0, 1)
    assert read_all(broker, TP0) == values[log_start:] + more
    # asking for the dir it is in is answered NONE and moves nothing
    assert broker.rm.alter_replica_log_dirs({TP0: dest}) == {TP0: Errors.NONE}
    assert broker.rm.online_partition(TP0).future_log is None


def test_bad_destinations_and_replicas_change_nothing(broker, dirs, tmp_path):
    broker.lead(TP0)
    source = broker.rm.get_log_dir(TP0)
    before = {d: partition_dirs(d) for d in dirs}
    other = str(tmp_path / "not-a-log-dir")
    # a topic the broker knows but does not host here
    broker.metadata_cache.update_metadata(2, um_request({"elsewhere": [(0, 1, (1,))]}))
    result = broker.rm.alter_replica_log_dirs({
        TP0: other,
        TopicPartition("elsewhere", 0): dirs[1],
        TopicPartition("unknown", 0): dirs[1],
        TP1: "relative/dir",
    })
    assert result == {TP0: Errors.LOG_DIR_NOT_FOUND, TopicPartition("elsewhere", 0): Errors.REPLICA_NOT_AVAILABLE,
                      TopicPartition("unknown", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION,
                      TP1: Errors.LOG_DIR_NOT_FOUND}
    assert not os.path.exists(other)
    assert broker.rm.get_log_dir(TP0) == source
    assert broker.rm.online_partition(TP0).future_log is None
    assert {d: partition_dirs(d) for d in dirs} == before


def test_a_replica_not_created_yet_is_created_in_the_dir_asked_for(broker, dirs):
    # both dirs empty: the partition would go to the first; asked for the second, it goes there
    broker.metadata_cache.update_metadata(2, um_request({T: [(0, 0, (0,))]}))
    assert broker.rm.alter_replica_log_dirs({TP0: dirs[1]}) == {TP0: Errors.REPLICA_NOT_AVAILABLE}
    broker.lead(TP0)
    assert broker.rm.get_log_dir(TP0) == dirs[1]


class StopAfter(ReplicaQuota):
    """A quota exceeded once ``limit`` bytes were copied: the copy stops part-way."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.recorded = 0
        self.lock = threading.Lock()

    def record(self, value: int) -> None:
        with self.lock:
            self.recorded += value

    def is_quota_exceeded(self) -> bool:
        with self.lock:
            return self.recorded >= self.limit

    def is_throttled(self, topic_partition: TopicPartition) -> bool:
        return False


def test_a_move_stopped_part_way_resumes_after_a_restart(dirs):
    broker = Broker(",".join(dirs))
    try:
        broker.config.replica_fetch_max_bytes = 2048  # several rounds for the copy
        broker.lead(TP0)
        source = broker.rm.get_log_dir(TP0)
        [dest] = [d for d in dirs if d != source]
        values = produce_batches(broker, TP0, 40, per_batch=20)
        quota = StopAfter(4096)
        broker.rm.replica_alter_log_dirs_manager.quota_manager = quota
        assert broker.rm.alter_replica_log_dirs({TP0: dest}) == {TP0: Errors.NONE}
        partition = broker.rm.online_partition(TP0)
        wait_for(lambda: quota.is_quota_exceeded(), "the copy did not start")
        future = partition.future_log
        assert future is not None and future.is_future and future.parent_dir == dest
        assert 0 < future.log_end_offset < len(values)
        # DescribeLogDirs shows both logs, the future one behind the current one's end
        described = {r["log_dir"]: r for r in broker.rm.describe_log_dirs(None)}
        [current_entry] = described[source]["topics"][0]["partitions"]
        [future_entry] = described[dest]["topics"][0]["partitions"]
        assert current_entry["is_future_key"] is False and current_entry["offset_lag"] == 0
        assert future_entry["is_future_key"] is True
        assert future_entry["offset_lag"] == len(values) - future.log_end_offset
        assert future_entry["partition_size"] == future.size > 0
    finally:
        broker.close()

    names = partition_dirs(dest)
    assert len([n for n in names if n.endswith("-future")]) == 1, names

    broker = Broker(",".join(dirs))
    try:
        assert broker.log_manager.get_log(TP0, is_future=True) is not None
        broker.lead(TP0, epoch=2)
        wait_for(lambda: broker.rm.get_log_dir(TP0) == dest, "the move did not finish after the restart")
        assert read_all(broker, TP0) == values
        assert broker.log_manager.get_log(TP0, is_future=True) is None
    finally:
        broker.close()
    assert [n for n in partition_dirs(dest) if n.startswith(T)] == [str(TP0)]


def test_a_new_move_elsewhere_replaces_one_under_way(tmp_path):
    dirs = [str(tmp_path / f"d{i}") for i in range(3)]
    broker = Broker(",".join(dirs))
    try:
        broker.lead(TP0)
        produce_batches(broker, TP0, 5)
        source = broker.rm.get_log_dir(TP0)
        first, second = [d for d in dirs if d != source]
        quota = StopAfter(0)  # nothing is copied
        broker.rm.replica_alter_log_dirs_manager.quota_manager = quota
        assert broker.rm.alter_replica_log_dirs({TP0: first}) == {TP0: Errors.NONE}
        assert broker.rm.online_partition(TP0).future_log.parent_dir == first
        quota.limit = 1 << 62
        assert broker.rm.alter_replica_log_dirs({TP0: second}) == {TP0: Errors.NONE}
        wait_for(lambda: broker.rm.get_log_dir(TP0) == second, "the replica did not move")
        assert not [n for n in partition_dirs(first) if n.startswith(T) and not n.endswith("-delete")]
    finally:
        broker.close()


def test_the_future_replica_reads_as_replica_minus_3_up_to_the_log_end(broker):
    # the copy reads past the high watermark (a follower's view), never as a consumer
    broker.lead(TP0, replicas=(0, 1), isr=(0, 1))
    broker.produce({TP0: records(b"a", b"b")})
    log = broker.rm.local_log(TP0)
    assert log.high_watermark == 0 and log.log_end_offset == 2
    [(_, result)] = broker.rm.read_from_local_log(FUTURE_LOCAL_REPLICA_ID, False, FetchIsolation.LOG_END, 1 << 20,
                                                  False, [(TP0, PartitionData(0, 0, 1 << 20))])
    assert values_of(result.info.records) == [b"a", b"b"]


# ---------------------------------------------------------------------------- through KafkaApis


class TwoDirApis(Apis):
    """test_kafka_apis' KafkaApis stack, on two log dirs."""

    def __init__(self, tmp_path) -> None:
        self.dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
        self.broker = Broker(",".join(self.dirs))
        self.channel = RequestChannel(10)
        self.collector = ResponseCollector()
        self.channel.add_processor(self.collector)
        self.apis = KafkaApis(self.channel, self.broker.rm, None, None, None, 0, self.broker.config,
                              self.broker.metadata_cache, "test-cluster-id")
        self._correlation_id = 0


@pytest.fixture
def apis(tmp_path):
    env = TwoDirApis(tmp_path)
    yield env
    env.close()


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_and_alter_log_dirs_requests(apis, version):
    apis.broker.lead(TP0, TP1)
    apis.produce(TP0, b"x" * 100)
    body = apis.call(ApiKeys.DESCRIBE_LOG_DIRS, version, topics=None)
    by_dir = {r.log_dir: r for r in body.results}
    assert set(by_dir) == set(apis.dirs)
    found = {}
    for log_dir, result in by_dir.items():
        assert Errors.for_code(result.error_code) is Errors.NONE
        for topic in result.topics:
            for p in topic.partitions:
                found[TopicPartition(topic.name, int(p.partition_index))] = (log_dir, int(p.partition_size),
                                                                            int(p.offset_lag), p.is_future_key)
    assert set(found) == {TP0, TP1}
    assert found[TP0][1] > 100 and found[TP1][1] == 0
    assert all(v[2] == 0 and v[3] is False for v in found.values())

    # only the partition asked about
    body = apis.call(ApiKeys.DESCRIBE_LOG_DIRS, version, topics=[{"topic": T, "partition_index": [1]}])
    listed = [(t.name, int(p.partition_index)) for r in body.results for t in r.topics for p in t.partitions]
    assert listed == [(T, 1)]

    dest = [d for d in apis.dirs if d != found[TP0][0]][0]
    alter_version = min(version, 2)
    body = apis.call(ApiKeys.ALTER_REPLICA_LOG_DIRS, alter_version, dirs=[
        {"path": dest, "topics": [{"name": T, "partitions": [0]}]},
        {"path": "/no/such/dir", "topics": [{"name": T, "partitions": [1]}]}])
    answers = {(t.topic_name, int(p.partition_index)): Errors.for_code(p.error_code)
               for t in body.results for p in t.partitions}
    assert answers == {(T, 0): Errors.NONE, (T, 1): Errors.LOG_DIR_NOT_FOUND}
    wait_for(lambda: apis.broker.rm.get_log_dir(TP0) == dest, "the replica did not move")


def test_offline_dirs_and_partitions_answer_kafka_storage_error(broker, dirs):
    broker.lead(TP0, TP1)
    failed = broker.rm.get_log_dir(TP1)
    healthy = broker.rm.get_log_dir(TP0)
    assert failed != healthy
    broker.rm.handle_log_dir_failure(failed, send_zk_notification=False)
    assert broker.rm.alter_replica_log_dirs({TP0: failed, TP1: healthy}) == {
        TP0: Errors.KAFKA_STORAGE_ERROR, TP1: Errors.KAFKA_STORAGE_ERROR}
    assert broker.rm.get_log_dir(TP0) == healthy
    described = {r["log_dir"]: r for r in broker.rm.describe_log_dirs(None)}
    assert described[failed]["error_code"] is Errors.KAFKA_STORAGE_ERROR and described[failed]["topics"] == []
    assert described[healthy]["error_code"] is Errors.NONE
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in described[healthy]["topics"]] == [
        (T, [0])]


def test_a_move_pauses_cleaning_once_and_resumes_it_when_done(tmp_path):
    from kafka_py.log.cleaner_config import CleanerConfig
    from kafka_py.log.log_cleaner_manager import LogCleaningPaused

    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    broker = Broker(",".join(dirs))
    try:
        # a cleaner over the same logs, as a broker with log.cleaner.enable has
        from kafka_py.log.log_cleaner import LogCleaner

        lm = broker.log_manager
        lm._cleaner = LogCleaner(CleanerConfig(enable_cleaner=True), lm.live_log_dirs, lm._current_logs, None)
        broker.lead(TP0)
        produce_batches(broker, TP0, 3)
        source = broker.rm.get_log_dir(TP0)
        [dest] = [d for d in dirs if d != source]
        quota = StopAfter(0)
        broker.rm.replica_alter_log_dirs_manager.quota_manager = quota
        assert broker.rm.alter_replica_log_dirs({TP0: dest}) == {TP0: Errors.NONE}
        manager = lm.cleaner.cleaner_manager
        assert manager.cleaning_state(TP0) == LogCleaningPaused(1)
        # a LeaderAndIsr during the move asks again: still one pause
        broker.lead(TP0, epoch=2)
        assert manager.cleaning_state(TP0) == LogCleaningPaused(1)
        quota.limit = 1 << 62
        wait_for(lambda: broker.rm.get_log_dir(TP0) == dest, "the replica did not move")
        assert manager.cleaning_state(TP0) is None
    finally:
        broker.close()


def test_num_replica_alter_log_dirs_threads_must_be_at_least_one(dirs):
    from kafka_py.server.kafka_config import ConfigException, KafkaConfig

    props = {"zookeeper.connect": "localhost:2181", "log.dirs": ",".join(dirs)}
    assert KafkaConfig(props, do_log=False).num_replica_alter_log_dirs_threads == 2
    assert KafkaConfig({**props, "num.replica.alter.log.dirs.threads": "3"},
                       do_log=False).num_replica_alter_log_dirs_threads == 3
    with pytest.raises(ConfigException) as info:
        KafkaConfig({**props, "num.replica.alter.log.dirs.threads": "0"}, do_log=False)
    assert info.value.name == "num.replica.alter.log.dirs.threads" and "at least 1" in str(info.value)
