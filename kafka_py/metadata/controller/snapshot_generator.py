"""Port of metadata/src/main/java/org/apache/kafka/controller/SnapshotGenerator.java (Kafka 3.0.0).

Writes the controller's state at a committed offset into a SnapshotWriter, a few batches at a
time so the controller's event thread is not held for the whole snapshot: the state is read
through the managers' ``iterator(epoch)`` as of the snapshot's offset (the in-memory snapshot
the controller keeps there), in sections (features, cluster, replication, configuration,
client quotas, producer ids), each section a sequence of record batches. The last call
freezes the writer.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, Optional

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Section:
    name: str
    iterator: Iterator[list[ApiMessageAndVersion]]


class SnapshotGenerator:
    def __init__(self, log_prefix: str, writer: SnapshotWriter[ApiMessageAndVersion], max_batches_per_generate_call: int,
                 sections: list[Section]) -> None:
        self.logger = IdentLogger(logger, log_prefix)
        self._writer = writer
        self._max_batches_per_generate_call = max_batches_per_generate_call
        self._section_iterator = iter(sections)
        self._batch_iterator: Iterator[list[ApiMessageAndVersion]] = iter(())
        self._batch: Optional[list[ApiMessageAndVersion]] = None
        self._section: Optional[Section] = None
        self._num_records = 0

    def last_contained_log_offset(self) -> int:
        return self._writer.last_contained_log_offset()

    def writer(self) -> SnapshotWriter[ApiMessageAndVersion]:
        return self._writer

    def _generate_batch(self) -> bool:
        """Write the next batch; True once the snapshot is complete (and frozen)."""
        if self._batch is None:
            # Bounded by the number of sections: each pass takes the next one.
            while True:
                self._batch = next(self._batch_iterator, None)
                if self._batch is not None:
                    break
                if self._section is not None:
                    self.logger.info("Generated %d record(s) for the %s section of snapshot %s.", self._num_records,
                                     self._section.name, self._writer.snapshot_id())
                    self._section = None
                    self._num_records = 0
                self._section = next(self._section_iterator, None)
                if self._section is None:
                    self._writer.freeze()
                    return True
                self.logger.info("Generating records for the %s section of snapshot %s.", self._section.name,
                                 self._writer.snapshot_id())
                self._batch_iterator = self._section.iterator
        self._writer.append(self._batch)
        self._num_records += len(self._batch)
        self._batch = None
        return False

    def generate_batches(self) -> Optional[int]:
        """Write up to the per-call number of batches; None when the snapshot is done, else the
        delay (ns) before the next call."""
        for _ in range(self._max_batches_per_generate_call):
            if self._generate_batch():
                return None
        return 0
