"""Seeds shared by the segment targets: segment files as the log writes them."""
from __future__ import annotations

import os
import tempfile
from typing import Iterable

from kafka_py.clients.common.utils.time import MockTime

NOW_MS = 1_700_000_000_000


def written_segments() -> Iterable[tuple[str, bytes]]:
    """The .log file of a log after appends of every codec, transactions and a control batch."""
    from kafka_py.log.log import Log
    from kafka_py.log.log_config import LogConfig
    from kafka_py.clients.common.record.compression import CompressionType
    from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
    from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
    from kafka_py.clients.common.record.memory_records import MemoryRecords

    records = [SimpleRecord(b"k", b"v" * 20, NOW_MS), SimpleRecord(None, b"w", NOW_MS + 1,
                                                                   headers=(("h", b"x"),))]
    with tempfile.TemporaryDirectory() as root:
        directory = os.path.join(root, "seed-0")
        log = Log(directory, LogConfig(retention_ms=-1, index_interval=64), time=MockTime(NOW_MS),
                  had_clean_shutdown=True, recovery_point=0)
        for epoch, codec in enumerate(CompressionType):
            log.append_as_leader(MemoryRecords(bytearray(build_batch(records, compression=codec))),
                                 leader_epoch=epoch)
        log.append_as_leader(MemoryRecords(bytearray(build_batch(
            records, producer_id=3, producer_epoch=0, base_sequence=0, is_transactional=True))), leader_epoch=5)
        log.append_as_leader(MemoryRecords.with_end_transaction_marker(
            0, NOW_MS, 5, 3, 0, EndTransactionMarker(ControlRecordType.COMMIT, 0)),
            leader_epoch=5, origin=_coordinator())
        log.flush()
        data = open(log.active_segment.log.file, "rb").read()
        log.close()
    yield "log", data
    yield "torn-tail", data[:-7]
    first = int.from_bytes(data[8:12], "big") + 12
    yield "first-batch", data[:first]


def _coordinator():
    from kafka_py.log.producer_state_manager import AppendOrigin

    return AppendOrigin.COORDINATOR
