"""``kafka.isolation.level=read_committed`` in the kafka-log source: the last stable offset from
the files and the aborted transactions of the .txnindex files, on a log written by the broker's
own Log (transactional batches and the coordinator's markers); and the same through Spark and
the Parquet export."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("pyarrow")

from kafka_py.log import log_files  # noqa: E402
from kafka_py.log.log import Log  # noqa: E402
from kafka_py.log.log_config import LogConfig  # noqa: E402
from kafka_py.log.producer_state_manager import AppendOrigin  # noqa: E402
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker  # noqa: E402
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch  # noqa: E402
from kafka_py.clients.common.record.memory_records import MemoryRecords  # noqa: E402
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile  # noqa: E402
from kafka_py.clients.common.topic_partition import TopicPartition  # noqa: E402
from kafka_py.spark.log_dir_planner import LogDirPlanner  # noqa: E402
from kafka_py.spark.options import KafkaLogOptions, KafkaLogOptionsException  # noqa: E402
from kafka_py.spark.segment_reader import read_slice  # noqa: E402
from kafka_py.clients.common.utils.time import MockTime  # noqa: E402

TOPIC = "txn"
TS = 1_700_000_000_000


class Writer:
    """Appends to a partition as its leader would: plain, transactional, and markers."""

    def __init__(self, log_dir: str, segment_bytes: int = 1024) -> None:
        self.log = Log(os.path.join(log_dir, f"{TOPIC}-0"), LogConfig(segment_size=segment_bytes),
                       time=MockTime())
        self.sequences: dict[int, int] = {}

    def plain(self, *values: bytes) -> None:
        self.log.append_as_leader(MemoryRecords(bytearray(build_batch(
            [SimpleRecord(None, v, TS) for v in values]))), leader_epoch=0)

    def txn(self, producer_id: int, *values: bytes) -> None:
        sequence = self.sequences.get(producer_id, 0)
        self.sequences[producer_id] = sequence + len(values)
        self.log.append_as_leader(MemoryRecords(bytearray(build_batch(
            [SimpleRecord(None, v, TS) for v in values], producer_id=producer_id, producer_epoch=0,
            base_sequence=sequence, is_transactional=True))), leader_epoch=0, origin=AppendOrigin.CLIENT)

    def end(self, producer_id: int, commit: bool) -> None:
        marker = EndTransactionMarker(ControlRecordType.COMMIT if commit else ControlRecordType.ABORT, 1)
        self.log.append_as_leader(MemoryRecords.with_end_transaction_marker(0, TS, 0, producer_id, 0, marker),
                                  leader_epoch=0, origin=AppendOrigin.COORDINATOR)

    def close(self, high_watermark: int | None = None) -> None:
        """As a broker's clean shutdown: a producer snapshot, and the high watermark checkpointed."""
        end = self.log.log_end_offset
        self.log.close()
        OffsetCheckpointFile(os.path.join(os.path.dirname(self.log.dir), "replication-offset-checkpoint")).write(
            {TopicPartition(TOPIC, 0): end if high_watermark is None else high_watermark})


def read(log_dir, **options) -> tuple[list[bytes], list]:
    opts = KafkaLogOptions.parse({"path": str(log_dir), **options})
    slices = LogDirPlanner(opts.paths).plan(opts)
    values = []
    for s in slices:
        for rb in read_slice(s):
            values.extend(rb.to_pydict()["value"])
    return values, slices


RC = {"kafka.isolation.level": "read_committed"}


def test_aborted_records_are_dropped_and_the_read_stops_at_an_open_transaction(tmp_path):
    w = Writer(str(tmp_path))
    w.plain(b"p0")
    for i in range(12):  # spread over several 1 KiB segments, interleaved producers
        w.txn(1, b"c%d" % i)
        w.txn(2, b"a%d" % i)
        if i % 3 == 2:
            w.end(1, commit=True)
            w.end(2, commit=False)
    w.plain(b"p1")
    w.txn(3, b"open")  # never ended: the last stable offset stops before it
    w.plain(b"after-open")
    w.close()
    assert w.log.number_of_segments >= 3

    committed, slices = read(tmp_path, **RC)
    assert committed == [b"p0", *[b"c%d" % i for i in range(12)], b"p1"]
    assert any(s.aborted for s in slices)
    # read_uncommitted reads everything to the log end
    everything, _ = read(tmp_path)
    assert len(everything) == 2 + 24 + 2
    # with the producer snapshots gone the same is found by reading the headers from the start
    for name in os.listdir(w.log.dir):
        if name.endswith(log_files.PRODUCER_SNAPSHOT_FILE_SUFFIX):
            os.remove(os.path.join(w.log.dir, name))
    assert read(tmp_path, **RC)[0] == committed


def test_a_marker_at_or_past_the_high_watermark_leaves_its_transaction_open(tmp_path):
    w = Writer(str(tmp_path), segment_bytes=64 * 1024)
    w.plain(b"before")          # 0
    w.txn(7, b"t")              # 1
    w.end(7, commit=True)       # 2
    w.close(high_watermark=2)   # the marker is not committed yet
    assert read(tmp_path, committedOnly="true", **RC)[0] == [b"before"]
    assert read(tmp_path, committedOnly="true")[0] == [b"before", b"t"]
    assert read(tmp_path, **RC)[0] == [b"before", b"t"]


def test_isolation_level_is_checked(tmp_path):
    with pytest.raises(KafkaLogOptionsException, match="isolation.level"):
        KafkaLogOptions.parse({"path": str(tmp_path), "kafka.isolation.level": "serializable"})
    options = KafkaLogOptions.parse({"path": str(tmp_path), "kafka.isolation.level": "READ_COMMITTED",
                                     "kafka.bootstrap.servers": "b:9092"})
    # a consumer setting: not handed to the admin client that asks for high watermarks
    assert options.read_committed and dict(options.kafka) == {"bootstrap.servers": "b:9092"}


def test_spark_read_and_parquet_export_with_read_committed(spark, tmp_path):
    from kafka_py.spark.export_job import run_export

    w = Writer(str(tmp_path / "logs"))
    for i in range(6):
        w.txn(1, b"keep-%d" % i)
        w.txn(2, b"drop-%d" % i)
        w.end(1, commit=True)
        w.end(2, commit=False)
    w.txn(3, b"open")
    w.close()
    df = spark.read.format("kafka-log").option("path", str(tmp_path / "logs")) \
        .option("kafka.isolation.level", "read_committed").load()
    assert sorted(bytes(r["value"]) for r in df.select("value").collect()) == sorted(b"keep-%d" % i
                                                                                      for i in range(6))
    result = run_export(spark, [str(tmp_path / "logs")], str(tmp_path / "out"), progress="none",
                        read_committed=True)
    assert result.records == 6
    # the next run starts at the open transaction, not past it
    assert result.ranges[TopicPartition(TOPIC, 0)][1] == w.log.log_end_offset - 1
