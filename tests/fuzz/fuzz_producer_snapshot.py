"""Fuzz target: a producer state snapshot file (<offset>.snapshot, log/producer_state_manager.py).

Contract: the snapshot reads, or CorruptSnapshotException is raised (the log then deletes it
and rebuilds producer state from the segments, as in Kafka).
"""
from __future__ import annotations

import os
from typing import Iterable

from tests.fuzz.harness import scratch_dir

from kafka_py.log.producer_state_manager import CorruptSnapshotException, ProducerStateManager

_PATH = os.path.join(scratch_dir("snapshot"), "00000000000000000100.snapshot")


def one_input(data: bytes) -> None:
    with open(_PATH, "wb") as f:
        f.write(data)
    try:
        ProducerStateManager.read_snapshot(_PATH)
    except CorruptSnapshotException:
        pass


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.log.log import Log
    from kafka_py.log.log_config import LogConfig
    from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
    from kafka_py.clients.common.record.memory_records import MemoryRecords
    from kafka_py.clients.common.utils.time import MockTime

    directory = os.path.join(scratch_dir("snapshot-seeds"), "seed-0")
    log = Log(directory, LogConfig(retention_ms=-1), time=MockTime(1_700_000_000_000), had_clean_shutdown=True,
              recovery_point=0)
    for producer_id, transactional in ((5, False), (6, True)):
        log.append_as_leader(MemoryRecords(bytearray(build_batch(
            [SimpleRecord(None, b"v", 1_700_000_000_000)], producer_id=producer_id, producer_epoch=2,
            base_sequence=0, is_transactional=transactional))), leader_epoch=0)
    log.close()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".snapshot"):
            with open(os.path.join(directory, name), "rb") as f:
                yield "snapshot", f.read()
