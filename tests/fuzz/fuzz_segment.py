"""Fuzz target: a .log segment file's batches read through FileRecords (what fetches, the
log cleaner and DumpLogSegments do), every batch checked and every record decoded.

Contract: batch iteration ends quietly at a partial batch, or raises CorruptRecordException
at a header that cannot be a batch; a batch's ensure_valid and record decoding raise
CorruptRecordException or InvalidRecordException; nothing else.
"""
from __future__ import annotations

import os
import shutil
from typing import Iterable

from tests.fuzz.harness import scratch_dir

from kafka_py.clients.common.errors import CorruptRecordException, InvalidRecordException
from kafka_py.clients.common.record.file_records import FileRecords

_ROOT = scratch_dir("segment")
_PATH = os.path.join(_ROOT, "00000000000000000000.log")


def one_input(data: bytes) -> None:
    with open(_PATH, "wb") as f:
        f.write(data)
    records = FileRecords.open(_PATH, file_already_exists=True)
    try:
        for batch in records.batches():
            try:
                batch.ensure_valid()
                for _ in batch.records():
                    pass
            except (CorruptRecordException, InvalidRecordException):
                break
    except CorruptRecordException:
        pass
    finally:
        records.close()


def seeds() -> Iterable[tuple[str, bytes]]:
    from tests.fuzz._segments import written_segments

    return written_segments()
