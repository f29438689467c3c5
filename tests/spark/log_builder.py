"""Writes partition directories in Kafka's on-disk layout for the planner and reader tests:
segments of magic v2 batches with offset indexes, like a broker's (entries every
``index_interval`` bytes, the active index left preallocated when asked)."""
from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

from kafka_py.log.offset_index import OffsetIndex
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, TimestampType, build_batch

BASE_TIMESTAMP = 1_600_000_000_000


@dataclass
class WrittenBatch:
    file: str
    position: int
    size: int
    base_offset: int
    last_offset: int
    records: list  # (offset, key, value, timestamp, headers)


@dataclass
class WrittenPartition:
    dir: str
    batches: list[WrittenBatch] = field(default_factory=list)

    @property
    def segments(self) -> list[str]:
        return sorted({b.file for b in self.batches})

    def rows(self, from_offset: int = 0, until_offset: int = 2**62) -> list[tuple]:
        return [r for b in self.batches for r in b.records if from_offset <= r[0] < until_offset]


def write_partition(log_dir: str, topic: str, partition: int, batch_sizes: list[int], *,
                    segment_bytes: int = 64 * 1024, index_interval: int = 1024, value_size: int = 60,
                    compression: CompressionType = CompressionType.NONE, start_offset: int = 0,
                    live_index: bool = False, seed: int = 7,
                    timestamp_type: TimestampType = TimestampType.CREATE_TIME) -> WrittenPartition:
    """Batches of ``batch_sizes[i]`` records, rolled into a new segment past ``segment_bytes``."""
    rng = random.Random(seed)
    part_dir = os.path.join(log_dir, f"{topic}-{partition}")
    os.makedirs(part_dir, exist_ok=True)
    written = WrittenPartition(part_dir)
    offset = start_offset
    seg_file = None
    index = None
    position = 0
    since_entry = 0
    for n in batch_sizes:
        if seg_file is None or position >= segment_bytes:
            if index is not None:
                index.close()
            seg_file = os.path.join(part_dir, "%020d.log" % offset)
            open(seg_file, "wb").close()
            index = OffsetIndex(os.path.join(part_dir, "%020d.index" % offset), offset, max_index_size=1024 * 1024)
            position = 0
            since_entry = 0
        records = []
        simple = []
        for i in range(n):
            key = None if rng.random() < 0.1 else f"k{offset + i}".encode()
            value = None if rng.random() < 0.05 else rng.randbytes(rng.randint(0, value_size))
            headers = tuple((f"h{j}", None if rng.random() < 0.2 else rng.randbytes(3)) for j in range(rng.randint(0, 2)))
            ts = BASE_TIMESTAMP + (offset + i) * 3
            simple.append(SimpleRecord(key, value, ts, headers))
            records.append((offset + i, key, value, ts, headers))
        log_append = BASE_TIMESTAMP + 10**6 + offset if timestamp_type == TimestampType.LOG_APPEND_TIME else None
        data = build_batch(simple, base_offset=offset, compression=compression, timestamp_type=timestamp_type,
                           log_append_time=log_append)
        if log_append is not None:
            records = [(o, k, v, log_append, h) for o, k, v, _, h in records]
        with open(seg_file, "ab") as f:
            f.write(data)
        if since_entry > index_interval:
            index.append(offset + n - 1, position)
            since_entry = 0
        since_entry += len(data)
        written.batches.append(WrittenBatch(seg_file, position, len(data), offset, offset + n - 1, records))
        position += len(data)
        offset += n
    if index is not None:
        if live_index:
            # As a running broker leaves it: full size, zeros after the last entry.
            index.flush()
            index.close_handler()
        else:
            index.close()
    return written
