"""Port of core/src/main/scala/kafka/coordinator/transaction/ProducerIdManager.scala (Kafka 2.8.2).

Producer ids are unique across the cluster. Brokers claim them from ZooKeeper in
blocks of 1000: ``/latest_producer_id_block`` holds the last block any broker claimed
(JSON ``{"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"}``,
both ends inclusive, as strings), and a broker claims the next block with a write
conditional on the znode version it read. When two brokers race, one write fails on
the version and that broker reads again and claims the block after the winner's.
Within a block ids are handed out from memory.

The TransactionCoordinator owns it: InitProducerId hands out ids from it, to idempotent
producers and to transactional ids (a new id, or a new producer id once an id's epochs are
exhausted).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from kafka_py.common.errors import KafkaException
from kafka_py.utils.java_limits import LONG_MAX
from kafka_py.utils.logging import IdentLogger
from kafka_py.zk.zk_data import ProducerIdBlockZNode

logger = logging.getLogger(__name__)

PID_BLOCK_SIZE = 1000


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    broker_id: int
    block_start_id: int
    block_end_id: int

    def __str__(self) -> str:
        return (f"(brokerId:{self.broker_id},blockStartProducerId:{self.block_start_id},"
                f"blockEndProducerId:{self.block_end_id})")


def _parse_block(data: bytes | None) -> ProducerIdBlock | None:
    # The znode is created empty by create_top_level_paths: no block claimed yet.
    if not data:
        return None
    decoded = ProducerIdBlockZNode.decode(data)
    if decoded is None:
        raise KafkaException(f"Failed to parse the producerId block json {data!r}")
    return ProducerIdBlock(*decoded)


class ProducerIdManager:
    """Hands out producer ids from blocks claimed in ZooKeeper."""

    def __init__(self, broker_id: int, zk_client) -> None:
        self.broker_id = broker_id
        self.zk_client = zk_client
        self.logger = IdentLogger(logger, f"[ProducerId Manager {broker_id}]: ")
        self._lock = threading.Lock()
        self._current_block: ProducerIdBlock | None = None
        self._next_producer_id = -1
        with self._lock:
            self._get_new_producer_id_block()
            self._next_producer_id = self._current_block.block_start_id

    def _get_new_producer_id_block(self) -> None:
        path = ProducerIdBlockZNode.path()
        while True:
            data, zk_version = self.zk_client.get_data_and_version(path)
            current = _parse_block(data)
            if current is None:
                self.logger.debug("There is no producerId block yet (Zk path version %d), creating the first block",
                                  zk_version)
                block = ProducerIdBlock(self.broker_id, 0, PID_BLOCK_SIZE - 1)
            else:
                if current.block_end_id > LONG_MAX - PID_BLOCK_SIZE:
                    self.logger.critical("Exhausted all producerIds as the next block's end producerId would exceed "
                                         "the long type limit (current block end producerId is %d)",
                                         current.block_end_id)
                    raise KafkaException("Have exhausted all producerIds.")
                block = ProducerIdBlock(self.broker_id, current.block_end_id + 1,
                                        current.block_end_id + PID_BLOCK_SIZE)
            encoded = ProducerIdBlockZNode.encode(block.broker_id, block.block_start_id, block.block_end_id)
            if zk_version < 0:
                # The znode itself is missing (a ZooKeeper not prepared by a broker yet).
                self.zk_client.make_sure_persistent_path_exists(path)
                continue
            succeeded, version = self.zk_client.conditional_update_path(path, encoded, zk_version,
                                                                        self._check_producer_id_block_zk_data)
            if succeeded:
                self._current_block = block
                self.logger.info("Acquired new producerId block %s by writing to Zk with path version %d",
                                 block, version)
                return

    @staticmethod
    def _check_producer_id_block_zk_data(zk_client, path: str, expected_data: bytes) -> tuple[bool, int]:
        # A write whose reply was lost may still have landed: it counts if the znode holds our block.
        try:
            expected = _parse_block(expected_data)
            data, zk_version = zk_client.get_data_and_version(path)
            if data is None:
                return False, -1
            return _parse_block(data) == expected, zk_version
        except Exception as e:  # noqa: BLE001 - treated as a failed write, retried
            logger.warning("Error while checking for producerId block Zk data on path %s: expected data %r: %s",
                           path, expected_data, e)
            return False, -1

    def generate_producer_id(self) -> int:
        with self._lock:
            if self._next_producer_id > self._current_block.block_end_id:
                self._get_new_producer_id_block()
                self._next_producer_id = self._current_block.block_start_id + 1
            else:
                self._next_producer_id += 1
            return self._next_producer_id - 1

    def shutdown(self) -> None:
        self.logger.info("Shutdown complete: last producerId assigned %d", self._next_producer_id)


__all__ = ["ProducerIdManager", "ProducerIdBlock", "PID_BLOCK_SIZE"]
