"""Fuzz target: a log directory whose only segment is the input, opened after an unclean
shutdown: Log's recovery (LogSegment.recover: batch checks, index rebuild, producer state,
leader epochs; truncation at the first invalid batch).

Contract: the log opens (a bad tail is truncated, as in Kafka) or the open raises
KafkaStorageException; once open, everything in the log reads back valid, the log end
offset follows the last batch, and the log takes a new append.
"""
from __future__ import annotations

import os
import shutil
from typing import Iterable

from tests.fuzz.harness import scratch_dir

from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime

_NOW_MS = 1_700_000_000_000
_ROOT = scratch_dir("recovery")
_CONFIG = LogConfig(retention_ms=-1, index_interval=64, segment_size=1 << 20)
_NEXT = MemoryRecords(bytearray(build_batch([SimpleRecord(None, b"after-recovery", _NOW_MS)])))


def one_input(data: bytes) -> None:
    directory = os.path.join(_ROOT, "fuzz-0")
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    with open(os.path.join(directory, "00000000000000000000.log"), "wb") as f:
        f.write(data)
    try:
        log = Log(directory, _CONFIG, time=MockTime(_NOW_MS), had_clean_shutdown=False, recovery_point=0)
    except KafkaStorageException:
        return
    try:
        end = log.log_end_offset
        last = None
        if end > log.log_start_offset:
            records = log.read(log.log_start_offset, 1 << 30).records
            memory = MemoryRecords(records.read_bytes(0, records.size_in_bytes()))
            for batch in memory.batches():
                batch.ensure_valid()
                for _ in batch.records():
                    pass
                last = batch.last_offset
            if last is not None and last + 1 != end:
                raise AssertionError(f"log end offset {end} after a last batch ending at {last}")
        log.append_as_leader(MemoryRecords(bytearray(_NEXT.buffer)), leader_epoch=1 << 20)
    finally:
        log.close()


def seeds() -> Iterable[tuple[str, bytes]]:
    from tests.fuzz._segments import written_segments

    return written_segments()
