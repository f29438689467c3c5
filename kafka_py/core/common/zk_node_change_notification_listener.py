"""Port of core/src/main/scala/kafka/common/ZkNodeChangeNotificationListener.scala.

Watches a znode whose children are sequential notifications (``<prefix><10-digit seq>``,
e.g. /config/changes/config_change_0000000042). Each new child is handed, in sequence
order, to a ``NotificationHandler``; the highest sequence already handled is remembered so a
notification is handled once per listener. Notifications older than
``change_expiration_ms`` are deleted as they are seen (every broker does this; whichever
gets there first wins, the rest find nothing to delete).

The child watch and the session handler only enqueue a "look again" marker (at most one
waits at a time); a single thread of the listener reads ZooKeeper and runs the handler, so
the ZooKeeper callback thread never blocks on handler work.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import Protocol

from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient, StateChangeHandler, ZNodeChildChangeHandler

logger = logging.getLogger(__name__)

DEFAULT_CHANGE_EXPIRATION_MS = 15 * 60 * 1000


class NotificationHandler(Protocol):
    def process_notification(self, notification_message: bytes) -> None:
        ...


class _ChangeNotification:
    """The "look again" marker put on the queue."""


_CHANGE = _ChangeNotification()
_STOP = object()


class ZkNodeChangeNotificationListener:
    def __init__(self, zk_client: KafkaZkClient, seq_node_root: str, seq_node_prefix: str,
                 notification_handler: NotificationHandler,
                 change_expiration_ms: int = DEFAULT_CHANGE_EXPIRATION_MS, time: Time = Time.SYSTEM) -> None:
        self.zk_client = zk_client
        self.seq_node_root = seq_node_root
        self.seq_node_prefix = seq_node_prefix
        self.notification_handler = notification_handler
        self.change_expiration_ms = change_expiration_ms
        self.time = time
        self.last_executed_change = -1
        self._queue: queue.Queue = queue.Queue()
        self._queue_lock = threading.Lock()
        self._is_closed = threading.Event()
        self._thread = _ChangeEventProcessThread(f"{seq_node_root}-event-process-thread", self)
        self._child_handler = ZNodeChildChangeHandler(seq_node_root, self._add_change_notification)
        # Named per root, as Kafka's StateChangeHandlers.zkNodeChangeListenerHandler.
        self._state_handler = StateChangeHandler(f"change-notification-{seq_node_root}",
                                                 after_initializing_session=self._add_change_notification)

    def init(self) -> None:
        self.zk_client.register_state_change_handler(self._state_handler)
        self.zk_client.register_znode_child_change_handler(self._child_handler)
        # The first pass reads the children with a watch, arming the handler registered above.
        self._add_change_notification()
        self._thread.start()

    def close(self) -> None:
        self._is_closed.set()
        self.zk_client.unregister_state_change_handler(self._state_handler.name)
        self.zk_client.unregister_znode_child_change_handler(self._child_handler.path)
        with self._queue_lock:
            while True:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
        self._thread.initiate_shutdown()
        self._queue.put(_STOP)
        self._thread.await_shutdown()

    # -- processing (listener thread) ---------------------------------------------------------

    def process_notifications(self) -> None:
        try:
            notifications = sorted(self.zk_client.get_children(self.seq_node_root))
            if notifications:
                logger.info("Processing notification(s) to %s", self.seq_node_root)
                now = self.time.milliseconds()
                for notification in notifications:
                    change_id = self._change_number(notification)
                    if change_id > self.last_executed_change:
                        self._process_notification(notification)
                        self.last_executed_change = change_id
                self._purge_obsolete_notifications(now, notifications)
        except Exception:  # noqa: BLE001 - a bad pass must not stop the listener
            if not self._is_closed.is_set():
                logger.exception("Error while processing notification change for path = %s", self.seq_node_root)

    def _process_notification(self, notification: str) -> None:
        change_znode = f"{self.seq_node_root}/{notification}"
        data, _ = self.zk_client.get_data_and_stat(change_znode)
        if data is None:
            logger.warning("read null data from %s", change_znode)
            return
        try:
            self.notification_handler.process_notification(data)
        except Exception:  # noqa: BLE001 - one bad notification must not block the ones after it
            logger.exception("error processing change notification %s from %s",
                             data.decode("utf-8", "replace"), change_znode)

    def _purge_obsolete_notifications(self, now: int, notifications: list[str]) -> None:
        for notification in sorted(notifications):
            node = f"{self.seq_node_root}/{notification}"
            data, stat = self.zk_client.get_data_and_stat(node)
            if data is not None and stat is not None and now - stat.ctime > self.change_expiration_ms:
                logger.debug("Purging change notification %s", node)
                self.zk_client.delete_path(node)

    def _change_number(self, name: str) -> int:
        return int(name[len(self.seq_node_prefix):])

    # -- wake-ups (ZooKeeper callback threads) -----------------------------------------------

    def _add_change_notification(self) -> None:
        # One pending marker is enough: the pass it triggers reads every child.
        with self._queue_lock:
            if not self._is_closed.is_set() and self._queue.empty():
                self._queue.put(_CHANGE)

    def _take(self) -> object:
        return self._queue.get()


class _ChangeEventProcessThread(ShutdownableThread):
    def __init__(self, name: str, listener: ZkNodeChangeNotificationListener) -> None:
        super().__init__(name, is_interruptible=False, daemon=True)
        self._listener = listener

    def do_work(self) -> None:
        item = self._listener._take()
        if item is _CHANGE and self.is_running:
            self._listener.process_notifications()
