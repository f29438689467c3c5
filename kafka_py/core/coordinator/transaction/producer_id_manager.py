"""Port of core/src/main/scala/kafka/coordinator/transaction/ProducerIdManager.scala (Kafka 2.8.2).

Producer ids are unique across the cluster. Brokers claim them from ZooKeeper in
blocks of 1000: ``/latest_producer_id_block`` holds the last block any broker claimed
(JSON ``{"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"}``,
both ends inclusive, as strings), and a broker claims the next block with a write
conditional on the znode version it read. When two brokers race, one write fails on
the version and that broker reads again and claims the block after the winner's.
Within a block ids are handed out from memory.

A KRaft broker has no ZooKeeper: ``RPCProducerIdManager`` (Kafka 3.0.0's, in the same
file) asks the active controller for blocks with AllocateProducerIds (API 67) instead,
requesting the next block once 90% of the current one is handed out, so the ids rarely
wait for the controller.

The TransactionCoordinator owns it: InitProducerId hands out ids from it, to idempotent
producers and to transactional ids (a new id, or a new producer id once an id's epochs are
exhausted).
"""
from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.zk.zk_data import ProducerIdBlockZNode

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


# Kafka 3.0's ProducerIdManager.PidPrefetchThreshold: the share of a block handed out before
# the next one is requested.
PID_PREFETCH_THRESHOLD = 0.90


@dataclass(frozen=True, slots=True)
class ProducerIdsBlock:
    """Kafka 3.0's ProducerIdsBlock: ``producer_id_len`` ids from ``producer_id_start``."""

    broker_id: int
    producer_id_start: int
    producer_id_len: int

    @property
    def producer_id_end(self) -> int:
        return self.producer_id_start + self.producer_id_len - 1


_EMPTY_BLOCK = ProducerIdsBlock(-1, 0, 0)


class RPCProducerIdManager:
    """Producer ids in blocks the KRaft controller allocates (Kafka 3.0.0)."""

    def __init__(self, broker_id: int, broker_epoch_supplier: Callable[[], int], controller_channel: Any,
                 max_wait_ms: int) -> None:
        self.broker_id = broker_id
        self.broker_epoch_supplier = broker_epoch_supplier
        self.controller_channel = controller_channel
        self.max_wait_ms = max_wait_ms
        self.logger = IdentLogger(logger, f"[RPC ProducerId Manager {broker_id}]: ")
        # the next block, or the exception that getting it ended with
        self._next_producer_id_block: queue.Queue = queue.Queue(maxsize=1)
        self._request_lock = threading.Lock()  # guards _request_in_flight
        self._request_in_flight = False
        self._lock = threading.Lock()  # generate_producer_id's, as Kafka's synchronized
        self._current_block = _EMPTY_BLOCK
        self._next_producer_id = -1

    def generate_producer_id(self) -> int:
        with self._lock:
            if self._next_producer_id == -1:
                self._maybe_request_next_block()
                self._next_producer_id = 0
            else:
                self._next_producer_id += 1
                block = self._current_block
                if self._next_producer_id >= block.producer_id_start + block.producer_id_len * PID_PREFETCH_THRESHOLD:
                    self._maybe_request_next_block()
            if self._next_producer_id > self._current_block.producer_id_end:
                try:
                    result = self._next_producer_id_block.get(timeout=self.max_wait_ms / 1000)
                except queue.Empty:
                    raise Errors.REQUEST_TIMED_OUT.exception("Timed out waiting for next producer ID block") \
                        from None
                if isinstance(result, BaseException):
                    raise result
                self._current_block = result
                self._next_producer_id = result.producer_id_start
            return self._next_producer_id

    def _maybe_request_next_block(self) -> None:
        with self._request_lock:
            if not self._next_producer_id_block.empty() or self._request_in_flight:
                return
            self._request_in_flight = True
        self.send_request()

    def send_request(self) -> None:
        from kio.schema.allocate_producer_ids.v0.request import AllocateProducerIdsRequest

        from kafka_py.clients.common.protocol.api_keys import ApiKeys

        request = AllocateProducerIdsRequest(broker_id=self.broker_id, broker_epoch=self.broker_epoch_supplier())
        self.logger.debug("Requesting next Producer ID block")
        self.controller_channel.send_request(ApiKeys.ALLOCATE_PRODUCER_IDS, request, _AllocateProducerIdsHandler(self))

    def handle_allocate_producer_ids_response(self, response: Any) -> None:
        with self._request_lock:
            self._request_in_flight = False
        error = Errors.for_code(int(response.error_code))
        if error is Errors.NONE:
            self.logger.debug("Got next producer ID block from controller %s", response)
            start, length = int(response.producer_id_start), int(response.producer_id_len)
            if start < self._current_block.producer_id_end:
                self._next_producer_id_block.put(KafkaException(
                    f"Producer ID block is not monotonic with current block: current={self._current_block} "
                    f"response={response}"))
            elif start < 0 or length < 0 or start > LONG_MAX - length:
                self._next_producer_id_block.put(KafkaException(f"Producer ID block includes invalid ID range: "
                                                                f"{response}"))
            else:
                self._next_producer_id_block.put(ProducerIdsBlock(self.broker_id, start, length))
        elif error is Errors.STALE_BROKER_EPOCH:
            self.logger.warning("Our broker epoch was stale, trying again.")
            self._maybe_request_next_block()
        elif error is Errors.BROKER_ID_NOT_REGISTERED:
            self.logger.warning("Our broker ID is not yet known by the controller, trying again.")
            self._maybe_request_next_block()
        else:
            self.logger.warning("Had an unknown error from the controller, giving up.")
            self._next_producer_id_block.put(error.exception())

    def handle_timeout(self) -> None:
        self.logger.warning("Timed out when requesting AllocateProducerIds from the controller.")
        with self._request_lock:
            self._request_in_flight = False
        try:
            self._next_producer_id_block.put_nowait(Errors.REQUEST_TIMED_OUT.exception())
        except queue.Full:
            pass
        self._maybe_request_next_block()

    def shutdown(self) -> None:
        self.logger.info("Shutdown complete: last producerId assigned %d", self._next_producer_id)


class _AllocateProducerIdsHandler:
    def __init__(self, manager: RPCProducerIdManager) -> None:
        self.manager = manager

    def on_complete(self, response: Any) -> None:
        if response.version_mismatch is not None:
            self.manager.handle_allocate_producer_ids_response(_ErrorResponse(Errors.UNSUPPORTED_VERSION))
        else:
            self.manager.handle_allocate_producer_ids_response(response.response_body)

    def on_timeout(self) -> None:
        self.manager.handle_timeout()


@dataclass(frozen=True, slots=True)
class _ErrorResponse:
    error: Errors

    @property
    def error_code(self) -> int:
        return self.error.error_code


__all__ = ["ProducerIdManager", "ProducerIdBlock", "PID_BLOCK_SIZE", "RPCProducerIdManager", "ProducerIdsBlock"]
