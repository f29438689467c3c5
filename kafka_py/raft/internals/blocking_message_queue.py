"""Port of raft/src/main/java/org/apache/kafka/raft/internals/BlockingMessageQueue.java
(Kafka 2.8.2).

The RaftMessageQueue of a real node: a thread-safe FIFO that the network threads and the
application's threads (``wakeup`` after an append) feed, and the raft thread drains. A
wake-up is a sentinel in the queue, so a wake-up sent before the poll starts is not lost.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import Optional

from kafka_py.raft.raft_message import RaftMessage
from kafka_py.raft.raft_message_queue import RaftMessageQueue

logger = logging.getLogger(__name__)

_WAKEUP = object()
# queue.Queue.get rejects timeouts beyond threading.TIMEOUT_MAX; the client passes Long.MAX_VALUE.
_MAX_TIMEOUT_S = threading.TIMEOUT_MAX


class BlockingMessageQueue(RaftMessageQueue):
    def __init__(self) -> None:
        self._queue: "queue.SimpleQueue[object]" = queue.SimpleQueue()
        self._size_lock = threading.Lock()
        self._size = 0

    def poll(self, timeout_ms: int) -> Optional[RaftMessage]:
        try:
            if timeout_ms <= 0:
                message = self._queue.get_nowait()
            else:
                message = self._queue.get(timeout=min(timeout_ms / 1000.0, _MAX_TIMEOUT_S))
        except queue.Empty:
            return None
        if message is _WAKEUP:
            return None
        with self._size_lock:
            self._size -= 1
        return message  # type: ignore[return-value]

    def add(self, message: RaftMessage) -> None:
        with self._size_lock:
            self._size += 1
        self._queue.put(message)

    def is_empty(self) -> bool:
        with self._size_lock:
            return self._size == 0

    def wakeup(self) -> None:
        self._queue.put(_WAKEUP)
