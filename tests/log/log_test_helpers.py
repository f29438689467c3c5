"""Shared helpers for the LogSegment / Log / LogManager tests (not a test module)."""
from __future__ import annotations

import os
import time as _time
from typing import Iterable, List, Optional, Sequence, Tuple

from kafka_py.log.log import FetchIsolation, Log
from kafka_py.log.log_config import LogConfig
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords

Entry = Tuple[int, Optional[bytes], Optional[bytes]]


def make_records(values: Sequence[bytes | Tuple[Optional[bytes], Optional[bytes]]], *, base_offset: int = 0,
                 timestamp: Optional[int] = None, timestamps: Optional[Sequence[int]] = None,
                 **kwargs) -> MemoryRecords:
    """One batch; ``values`` are values (key = None) or (key, value) pairs. Writable buffer.

    Timestamps default to the wall clock, which MockTime also starts from, so retention and
    producer expiry see fresh records.
    """
    if timestamp is None:
        timestamp = int(_time.time() * 1000)
    simple = []
    for i, v in enumerate(values):
        key, value = v if isinstance(v, tuple) else (None, v)
        ts = timestamps[i] if timestamps is not None else timestamp
        simple.append(SimpleRecord(key, value, timestamp=ts))
    return MemoryRecords(bytearray(build_batch(simple, base_offset=base_offset, **kwargs)))


def decode(records) -> List[Entry]:
    """(offset, key, value) of every complete record in a FileRecords slice or MemoryRecords."""
    if isinstance(records, MemoryRecords):
        memory = records
    else:
        memory = MemoryRecords(records.read_bytes(0, records.size_in_bytes()))
    out = []
    for batch in memory.batches(strict=False):
        for record in batch.records():
            out.append((record.offset, record.key, record.value))
    return out


def read_all(log: Log, start: Optional[int] = None, isolation: FetchIsolation = FetchIsolation.LOG_END,
             max_length: int = 4096) -> List[Entry]:
    """Every record from ``start`` (default: log start) to the isolation bound, read chunk by chunk."""
    offset = log.log_start_offset if start is None else start
    out: List[Entry] = []
    while True:
        info = log.read(offset, max_length, isolation, min_one_message=True)
        entries = [e for e in decode(info.records) if e[0] >= offset]
        if not entries:
            return out
        out.extend(entries)
        offset = entries[-1][0] + 1


def config(**kwargs) -> LogConfig:
    return LogConfig(**kwargs)


def segment_files(dir: str, suffix: str) -> List[str]:
    return sorted(name for name in os.listdir(dir) if name.endswith(suffix))


def values_of(entries: Iterable[Entry]) -> List[Optional[bytes]]:
    return [value for _, _, value in entries]
