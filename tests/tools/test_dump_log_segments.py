"""Tests for kafka_py/core/tools/dump_log_segments.py and bin/kafka-dump-log.sh.

Segments are written with the broker's own classes (FileRecords, OffsetIndex,
TimeIndex) into tmp_path and dumped with the click command.
"""
from __future__ import annotations

import pathlib
import struct
import subprocess

import crc32c
import pytest
from click.testing import CliRunner

from kafka_py.log.offset_index import OffsetIndex
from kafka_py.log.time_index import TimeIndex
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch, SimpleRecord, TimestampType, build_batch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.tools.dump_log_segments import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
TS = 1_600_000_000_000


def batch(base_offset, n, *, compression=CompressionType.NONE, ts=None, key_prefix=b"k", **kwargs) -> bytes:
    # Later batches get later timestamps, as in a real log (the time index needs that).
    ts = TS + 10 * base_offset if ts is None else ts
    records = [SimpleRecord(None if key_prefix is None else key_prefix + str(i).encode(),
                            b"value-%d" % (base_offset + i), timestamp=ts + i,
                            headers=(("h1", b"a"), ("h2", None)))
               for i in range(n)]
    return build_batch(records, base_offset=base_offset, compression=compression,
                       partition_leader_epoch=4, **kwargs)


def write_segment(directory: pathlib.Path, base_offset: int, raw_batches: list[bytes], *,
                  index: bool = True, time_index: bool = True) -> dict:
    name = f"{base_offset:020d}"
    paths = {"log": directory / f"{name}.log", "index": directory / f"{name}.index",
             "timeindex": directory / f"{name}.timeindex"}
    records = FileRecords.open(paths["log"])
    positions = []
    for raw in raw_batches:
        positions.append(records.size_in_bytes())
        records.append(MemoryRecords(raw))
    records.flush()
    records.close()
    if index:
        offset_index = OffsetIndex(paths["index"], base_offset, max_index_size=4096)
        for raw, position in zip(raw_batches, positions):
            offset_index.append(DefaultRecordBatch(raw).last_offset, position)
        offset_index.close()
    if time_index:
        tindex = TimeIndex(paths["timeindex"], base_offset, max_index_size=4096)
        for raw in raw_batches:
            b = DefaultRecordBatch(raw)
            tindex.maybe_append(b.max_timestamp, b.last_offset)
        tindex.close()
    paths["positions"] = positions
    return paths


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_shallow_dump_prints_kafka_batch_lines(tmp_path):
    raws = [batch(0, 3), batch(3, 2, compression=CompressionType.GZIP)]
    seg = write_segment(tmp_path, 0, raws)
    result = run("--files", seg["log"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Dumping {seg['log']}"
    assert lines[1] == "Starting offset: 0"
    first = DefaultRecordBatch(raws[0])
    assert lines[2] == (
        f"baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 "
        f"producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false position: 0 "
        f"CreateTime: {TS + 2} size: {len(raws[0])} magic: 2 compresscodec: NONE crc: {first.checksum} "
        f"isvalid: true")
    assert lines[3].startswith(f"baseOffset: 3 lastOffset: 4 count: 2 ")
    assert f"position: {len(raws[0])} " in lines[3] and "compresscodec: GZIP" in lines[3]
    assert len(lines) == 4, "shallow iteration prints no record lines"


def test_print_data_log_prints_records_of_every_codec(tmp_path):
    raws = [batch(0, 2), batch(2, 2, compression=CompressionType.LZ4, key_prefix=None),
            batch(4, 1, compression=CompressionType.ZSTD)]
    seg = write_segment(tmp_path, 0, raws)
    result = run("--files", seg["log"], "--print-data-log")
    assert result.exit_code == 0, result.output
    records = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert len(records) == 5
    assert records[0] == (
        f"| offset: 0 isValid: true crc: null keySize: 2 valueSize: 7 CreateTime: {TS} baseOffset: 0 "
        f"lastOffset: 1 baseSequence: -1 lastSequence: -1 producerEpoch: -1 partitionLeaderEpoch: 4 "
        f"batchSize: {len(raws[0])} magic: 2 compressType: NONE position: 0 sequence: -1 "
        f"headerKeys: [h1,h2] key: k0 payload: value-0")
    assert "keySize: -1" in records[2] and " key:" not in records[2]
    assert records[2].endswith("payload: value-2")
    assert "compressType: LZ4" in records[3]
    assert records[4].endswith("key: k0 payload: value-4")


def test_deep_iteration_without_data_and_skip_metadata(tmp_path):
    seg = write_segment(tmp_path, 0, [batch(0, 2)])
    deep = run("--files", seg["log"], "--deep-iteration")
    records = [line for line in deep.stdout.splitlines() if line.startswith("| ")]
    assert len(records) == 2 and all("payload" not in line for line in records)
    bare = run("--files", seg["log"], "--print-data-log", "--skip-record-metadata")
    records = [line for line in bare.stdout.splitlines() if line.startswith("| ")]
    assert records == ["| key: k0 payload: value-0", "| key: k1 payload: value-1"]


def test_log_append_time_and_producer_fields_are_shown(tmp_path):
    raw = bytearray(batch(0, 2, producer_id=77, producer_epoch=2, base_sequence=10, is_transactional=True))
    DefaultRecordBatch(raw).set_max_timestamp(TimestampType.LOG_APPEND_TIME, TS + 999)
    seg = write_segment(tmp_path, 0, [bytes(raw)])
    result = run("--files", seg["log"], "--deep-iteration")
    lines = result.stdout.splitlines()
    assert ("baseSequence: 10 lastSequence: 11 producerId: 77 producerEpoch: 2 partitionLeaderEpoch: 4 "
            "isTransactional: true") in lines[2]
    assert f"LogAppendTime: {TS + 999}" in lines[2]
    assert all(f"LogAppendTime: {TS + 999}" in line for line in lines[3:5])
    assert "sequence: 11" in lines[4]


def test_control_batch_shows_end_transaction_marker(tmp_path):
    marker = build_batch([SimpleRecord(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 5), timestamp=TS + 100)],
                         base_offset=2, producer_id=9, producer_epoch=0, is_transactional=True,
                         is_control_batch=True)
    seg = write_segment(tmp_path, 0, [batch(0, 2, producer_id=9, producer_epoch=0, base_sequence=0,
                                            is_transactional=True), marker])
    result = run("--files", seg["log"], "--print-data-log")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "isControl: true" in lines[5]
    assert lines[6].endswith("endTxnMarker: COMMIT coordinatorEpoch: 5")
    assert "payload" not in lines[6]


def test_non_consecutive_offsets_reported(tmp_path):
    seg = write_segment(tmp_path, 0, [batch(0, 2), batch(5, 1)], index=False, time_index=False)
    result = run("--files", seg["log"], "--deep-iteration")
    assert result.exit_code == 0
    assert f"Non-consecutive offsets in {seg['log'].absolute()}" in result.stderr
    assert "  1 is followed by 5" in result.stderr


def test_offset_index_dump_and_mismatch(tmp_path):
    raws = [batch(100, 3), batch(103, 2), batch(105, 4)]
    seg = write_segment(tmp_path, 100, raws)
    result = run("--files", seg["index"])
    assert result.exit_code == 0, result.output
    p = seg["positions"]
    assert result.stdout.splitlines()[1:] == [
        f"offset: 102 position: {p[0]}", f"offset: 104 position: {p[1]}", f"offset: 108 position: {p[2]}"]
    assert "Mismatches" not in result.stderr

    # An entry pointing at the wrong batch is reported, as Kafka's tool does.
    bad = tmp_path / f"{100:020d}.index"
    data = bytearray(bad.read_bytes())
    struct.pack_into(">i", data, 8 + 4, p[0])  # second entry (offset 104) -> first batch
    bad.write_bytes(bytes(data))
    result = run("--files", bad, "--verify-index-only")
    assert result.exit_code == 0
    assert "offset:" not in result.stdout
    assert f"Mismatches in :{bad.absolute()}" in result.stderr
    assert "  Index offset: 104, log offset: 102" in result.stderr


def test_index_sanity_check(tmp_path):
    seg = write_segment(tmp_path, 0, [batch(0, 1)])
    result = run("--files", seg["index"], "--index-sanity-check")
    assert result.exit_code == 0
    assert f"{seg['index']} passed sanity check." in result.stdout
    with open(seg["index"], "ab") as f:
        f.write(b"\x00\x00\x00")  # not a whole entry
    result = run("--files", seg["index"], "--index-sanity-check")
    assert result.exit_code == 1
    assert "failed sanity check" in result.stderr and str(seg["index"]) in result.stderr


def test_empty_index(tmp_path):
    seg = write_segment(tmp_path, 0, [batch(0, 1)], index=False)
    seg["index"].write_bytes(b"")
    result = run("--files", seg["index"])
    assert result.exit_code == 0
    assert f"{seg['index']} is empty." in result.stdout


def test_time_index_dump_and_mismatch(tmp_path):
    raws = [batch(0, 2, ts=TS), batch(2, 2, ts=TS + 100)]
    seg = write_segment(tmp_path, 0, raws)
    result = run("--files", seg["timeindex"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == [f"timestamp: {TS + 1} offset: 1", f"timestamp: {TS + 101} offset: 3"]
    assert result.stderr == ""

    data = bytearray(seg["timeindex"].read_bytes())
    struct.pack_into(">q", data, 12, TS + 5)  # second entry's timestamp no longer matches its batch
    seg["timeindex"].write_bytes(bytes(data))
    result = run("--files", seg["timeindex"])
    assert f"Found timestamp mismatch in :{seg['timeindex'].absolute()}" in result.stderr
    assert f"  Index timestamp: {TS + 5}, log timestamp: {TS + 101}" in result.stderr


def test_several_files_and_unknown_suffix(tmp_path):
    seg = write_segment(tmp_path, 0, [batch(0, 1)])
    stray = tmp_path / "notes.txt"
    stray.write_text("hello")
    result = run("--files", f"{seg['log']},{stray},{seg['index']}")
    assert result.exit_code == 1
    assert f"Dumping {stray}" in result.stdout
    assert "Ignoring unknown file" in result.stderr and str(stray) in result.stderr
    # The files after the bad one are still dumped.
    assert "offset: 0 position: 0" in result.stdout


def test_missing_file(tmp_path):
    missing = tmp_path / f"{0:020d}.log"
    result = run("--files", missing)
    assert result.exit_code == 1
    assert str(missing) in result.stderr and "no such file" in result.stderr
    assert not missing.exists(), "dumping must never create files"


def test_garbage_log_reports_position_without_traceback(tmp_path):
    garbage = tmp_path / f"{0:020d}.log"
    garbage.write_bytes(b"this is not a kafka segment, just some text in a file\n" * 3)
    result = run("--files", garbage)
    assert result.exit_code == 1
    assert f"{garbage}: corrupt log data at position 0" in result.stderr
    assert "Traceback" not in result.output


def test_valid_batches_then_garbage(tmp_path):
    raws = [batch(0, 2), batch(2, 1)]
    seg = write_segment(tmp_path, 0, raws, index=False, time_index=False)
    with open(seg["log"], "ab") as f:
        f.write(struct.pack(">qi", 3, 5) + b"\x07" * 30)  # a header whose size is impossibly small
    result = run("--files", seg["log"], "--deep-iteration")
    assert result.exit_code == 1
    good_end = len(raws[0]) + len(raws[1])
    assert [line.startswith("baseOffset:") for line in result.stdout.splitlines()].count(True) == 2
    assert f"corrupt log data at position {good_end}" in result.stderr
    assert f"Found 42 invalid bytes at the end of {seg['log'].name}" in result.stdout


def test_preallocated_segment_tail_is_not_corruption(tmp_path):
    # An active segment of a broker with log.preallocate: the data, then zeros to its full size.
    raws = [batch(0, 2), batch(2, 1)]
    path = tmp_path / f"{0:020d}.log"
    records = FileRecords.open(path, preallocate=True, init_file_size=1 << 20)
    for raw in raws:
        records.append(raw)
    records.close_handlers()  # as a live broker leaves it: not trimmed
    assert path.stat().st_size == 1 << 20
    result = run("--files", path, "--deep-iteration")
    assert result.exit_code == 0, result.output
    assert [line.startswith("baseOffset:") for line in result.stdout.splitlines()].count(True) == 2
    data = len(raws[0]) + len(raws[1])
    assert f"Found {(1 << 20) - data} bytes of preallocated space (zeros) after the data of {path.name}" \
        in result.stdout
    assert "invalid bytes" not in result.stdout

    # one non-zero byte far into that space is not preallocated space any more
    with open(path, "r+b") as f:
        f.seek((1 << 20) - 10)
        f.write(b"\x01")
    result = run("--files", path)
    assert result.exit_code == 1
    assert f"corrupt log data at position {data}" in result.stderr


def test_flipped_byte_shows_invalid_crc(tmp_path):
    raws = [batch(0, 2), batch(2, 2)]
    seg = write_segment(tmp_path, 0, raws, index=False, time_index=False)
    data = bytearray(seg["log"].read_bytes())
    data[len(raws[0]) - 3] ^= 0x55
    seg["log"].write_bytes(bytes(data))
    result = run("--files", seg["log"])
    lines = [line for line in result.stdout.splitlines() if line.startswith("baseOffset")]
    assert lines[0].endswith("isvalid: false") and lines[1].endswith("isvalid: true")
    assert result.exit_code == 1
    assert "invalid CRC at positions 0" in result.stderr


def test_txn_index_and_producer_snapshot(tmp_path):
    txn = tmp_path / f"{0:020d}.txnindex"
    txn.write_bytes(struct.pack(">hqqqq", 0, 12, 3, 9, 10) + struct.pack(">hqqqq", 0, 13, 20, 25, 26))
    entries = struct.pack(">i", 2) + struct.pack(">qhiqiqiq", 12, 1, 9, 40, 2, TS, 3, -1) \
        + struct.pack(">qhiqiqiq", 13, 0, 4, 41, 0, TS + 1, 0, 30)
    snapshot = tmp_path / f"{42:020d}.snapshot"
    snapshot.write_bytes(struct.pack(">hI", 1, crc32c.crc32c(entries)) + entries)
    result = run("--files", f"{txn},{snapshot}")
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert "version: 0 producerId: 12 firstOffset: 3 lastOffset: 9 lastStableOffset: 10" in out
    assert ("producerId: 12 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: None "
            f"firstSequence: 7 lastSequence: 9 lastOffset: 40 offsetDelta: 2 timestamp: {TS}") in out
    assert any(line.startswith("producerId: 13 ") and "currentTxnFirstOffset: Some(30)" in line for line in out)

    snapshot.write_bytes(snapshot.read_bytes()[:-1] + b"\x00")
    result = run("--files", snapshot)
    assert result.exit_code == 1 and "CRC" in result.stderr


def test_files_option_is_required():
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 2
    assert "--files" in result.output


def test_bash_wrapper(tmp_path):
    seg = write_segment(tmp_path, 0, [batch(0, 2)])
    script = ROOT / "bin" / "kafka-dump-log.sh"
    done = subprocess.run([str(script), "--files", f"{seg['log']},{seg['index']}", "--print-data-log"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Starting offset: 0" in done.stdout
    assert "key: k1 payload: value-1" in done.stdout
    assert "offset: 1 position: 0" in done.stdout
    bad = subprocess.run([str(script), "--files", str(tmp_path / "x.bin")], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert bad.returncode == 1 and "x.bin" in bad.stderr


def test_piped_into_head_exits_quietly(tmp_path):
    # More output than a pipe holds, so the tool is still writing when head leaves.
    seg = write_segment(tmp_path, 0, [batch(i * 50, 50) for i in range(40)])
    script = ROOT / "bin" / "kafka-dump-log.sh"
    piped = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{script}' --files '{seg['log']}' --print-data-log | head -n 3"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[:2] == [f"Dumping {seg['log']}", "Starting offset: 0"]
    assert piped.stderr == ""


# -- how keys and values are shown -------------------------------------------------------------

def upper_text(data: bytes) -> str:
    """A decoder for --value-decoder-class tests.tools.test_dump_log_segments:upper_text."""
    return data.decode().upper()


def records_segment(tmp_path, pairs) -> pathlib.Path:
    raw = build_batch([SimpleRecord(k, v, timestamp=TS) for k, v in pairs], base_offset=0)
    return write_segment(tmp_path, 0, [raw])["log"]


def payloads(result) -> list[str]:
    return [line.split(" headerKeys: [] ", 1)[1] for line in result.stdout.splitlines() if line.startswith("| ")]


def test_offsets_decoder_shows_consumer_offsets_records(tmp_path):
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.core.coordinator.group.group_metadata_manager import offset_commit_key, offset_commit_value
    from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata

    key = offset_commit_key("g1", TopicPartition("orders", 3))
    log = records_segment(tmp_path, [(key, offset_commit_value(OffsetAndMetadata(42, None, "", TS))),
                                     (key, offset_commit_value(OffsetAndMetadata(43, 1, "note", TS))),
                                     (key, None)])
    result = run("--files", log, "--offsets-decoder")  # implies --print-data-log
    assert result.exit_code == 0, result.output
    assert payloads(result) == [
        "key: offset_commit::group=g1,partition=orders-3 payload: offset=42",
        "key: offset_commit::group=g1,partition=orders-3 payload: offset=43,metadata=note",
        "key: offset_commit::group=g1,partition=orders-3 payload: <DELETE>"]


def test_transaction_log_decoder_shows_transaction_state_records(tmp_path):
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.core.coordinator.transaction.transaction_log import key_to_bytes, value_to_bytes
    from kafka_py.core.coordinator.transaction.transaction_metadata import TransactionState, TxnTransitMetadata

    ongoing = TxnTransitMetadata(7, -1, 2, -1, 60000, TransactionState.ONGOING,
                                 frozenset({TopicPartition("b", 1), TopicPartition("a", 0)}), TS, TS + 5)
    log = records_segment(tmp_path, [(key_to_bytes("tx-1"), value_to_bytes(ongoing)), (key_to_bytes("tx-1"), None)])
    result = run("--files", log, "--transaction-log-decoder", "--skip-record-metadata")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert lines == [
        f"| key: transaction_metadata::transactionalId=tx-1 payload: producerId:7,producerEpoch:2,state=Ongoing,"
        f"partitions=[a-0,b-1],txnLastUpdateTimestamp={TS + 5},txnTimeoutMs=60000",
        "| key: transaction_metadata::transactionalId=tx-1 payload: <DELETE>"]


def test_key_and_value_decoder_classes(tmp_path):
    log = records_segment(tmp_path, [(struct.pack(">i", -5), struct.pack(">q", 2**40)), (None, b"plain")])
    result = run("--files", log, "--key-decoder-class", "kafka.serializer.IntegerDecoder",
                 "--value-decoder-class", "kafka.serializer.LongDecoder", "--skip-record-metadata")
    assert result.exit_code == 1  # the second value is 5 bytes: not a long
    lines = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert lines == [f"| key: -5 payload: {2**40}"]
    assert f"{log}: the record at offset 1 (position 0) cannot be decoded: ValueError: LongDecoder needs 8 bytes" \
        in result.stderr

    # a Python callable; the key keeps Kafka's default StringDecoder
    (tmp_path / "other").mkdir()
    log2 = records_segment(tmp_path / "other", [(b"k", b"hello")])
    result = run("--files", log2, "--value-decoder-class", "tests.tools.test_dump_log_segments:upper_text")
    assert result.exit_code == 0, result.output
    assert payloads(result) == ["key: k payload: HELLO"]

    # the option without a value is Kafka's StringDecoder, and like every decoder option it
    # implies --print-data-log
    result = run("--files", log2, "--key-decoder-class")
    assert result.exit_code == 0, result.output
    assert payloads(result) == ["key: k payload: hello"]


@pytest.mark.parametrize("decoder, message", [
    ("com.example.AvroDecoder", "cannot import com.example"),
    ("tests.tools.test_dump_log_segments:nothing_here", "has no nothing_here"),
    ("tests.tools.test_dump_log_segments:TS", "is not callable"),
])
def test_a_decoder_that_cannot_be_used_is_a_usage_error(tmp_path, decoder, message):
    log = records_segment(tmp_path, [(b"k", b"v")])
    result = CliRunner().invoke(main, ["--files", str(log), "--value-decoder-class", decoder])
    assert result.exit_code == 2
    assert message in result.output


# -- logs of message format v0/v1 --------------------------------------------------------------

def legacy_log_segment(tmp_path, magic: int):
    """A segment written by a Log whose topic has message.format.version 0.9.0 (v0) or 0.10.2
    (v1): three messages uncompressed, then a gzip wrapper of two."""
    from kafka_py.log.log import Log
    from kafka_py.log.log_config import LogConfig, api_version
    from kafka_py.clients.common.utils.time import MockTime

    config = LogConfig(message_format_version=api_version("0.9.0" if magic == 0 else "0.10.2"), index_interval=1)
    log = Log(str(tmp_path / "legacy-0"), config, time=MockTime(current_time_ms=TS))
    # record headers have no place in v0/v1
    plain = [SimpleRecord(b"k%d" % i, b"value-%d" % i, TS + i) for i in range(3)]
    log.append_as_leader(MemoryRecords(bytearray(build_batch(plain))), leader_epoch=0)
    records = [SimpleRecord(b"z%d" % i, b"zipped-%d" % i, TS + 100 + i) for i in range(2)]
    log.append_as_leader(MemoryRecords(bytearray(build_batch(records, compression=CompressionType.GZIP))),
                         leader_epoch=0)
    log.close()
    return tmp_path / "legacy-0" / "00000000000000000000.log"


@pytest.mark.parametrize("magic", [0, 1])
def test_entries_of_message_formats_v0_and_v1_print_as_kafka_prints_them(tmp_path, magic):
    from kafka.record.memory_records import MemoryRecords as KpMemoryRecords

    log_file = legacy_log_segment(tmp_path, magic)
    data = log_file.read_bytes()
    # the expected CRCs and sizes, read by an independent decoder (kafka-python's)
    reader = KpMemoryRecords(data)
    entries = []
    while reader.has_next():
        entries.append(reader.next_batch())
    ts_type = "NoTimestampType" if magic == 0 else "CreateTime"
    ts = lambda t: -1 if magic == 0 else t  # noqa: E731 - v0 has no timestamps
    result = run("--files", log_file, "--print-data-log")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    entry_lines = [line for line in lines if line.startswith("offset: ")]
    positions = [0]
    for e in entries:
        positions.append(positions[-1] + e.size_in_bytes)
    assert entry_lines == [
        f"offset: {offset} position: {positions[i]} {ts_type}: {ts(t)} size: {entries[i].size_in_bytes} "
        f"magic: {magic} compresscodec: {codec} crc: {entries[i]._crc} isvalid: true"
        for i, (offset, t, codec) in enumerate([(0, TS, "NONE"), (1, TS + 1, "NONE"), (2, TS + 2, "NONE"),
                                               (4, TS + 101, "GZIP")])]
    records = [line for line in lines if line.startswith("| ")]
    inner = list(entries[3])
    assert records[0] == (
        f"| offset: 0 isValid: true crc: {entries[0]._crc} keySize: 2 valueSize: 7 {ts_type}: {ts(TS)} "
        f"baseOffset: 0 lastOffset: 0 baseSequence: -1 lastSequence: -1 producerEpoch: -1 "
        f"partitionLeaderEpoch: -1 batchSize: {entries[0].size_in_bytes} magic: {magic} compressType: NONE "
        f"position: 0 crc: {entries[0]._crc} isvalid: true key: k0 payload: value-0")
    assert records[4] == (
        f"| offset: 4 isValid: true crc: {inner[1].checksum} keySize: 2 valueSize: 8 {ts_type}: {ts(TS + 101)} "
        f"baseOffset: 3 lastOffset: 4 baseSequence: -1 lastSequence: -1 producerEpoch: -1 "
        f"partitionLeaderEpoch: -1 batchSize: {entries[3].size_in_bytes} magic: {magic} compressType: GZIP "
        f"position: {positions[3]} crc: {inner[1].checksum} isvalid: true key: z1 payload: zipped-1")
    assert len(records) == 5


@pytest.mark.parametrize("magic", [0, 1])
def test_indexes_of_a_legacy_segment_verify(tmp_path, magic):
    log_file = legacy_log_segment(tmp_path, magic)
    index = log_file.with_suffix(".index")
    result = run("--files", index, "--verify-index-only")
    assert result.exit_code == 0, result.output
    assert "Mismatches in" not in result.output
    time_index = log_file.with_suffix(".timeindex")
    result = run("--files", time_index)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("timestamp: ")]
    # a v0 log has no timestamps to index; in a v1 log the second append (the wrapper) got an entry
    assert lines == ([] if magic == 0 else [f"timestamp: {TS + 101} offset: 4"])
    assert "Found timestamp mismatch" not in result.output
