"""Port of core/src/main/scala/kafka/server/FinalizedFeatureChangeListener.scala (Kafka 2.8.2).

Keeps a ZooKeeper-mode broker's FinalizedFeatureCache equal to the /feature znode: a watch on
the znode (creation, data change, deletion) and a session handler queue a re-read, and one
thread ("feature-zk-node-event-process-thread") reads the znode and updates the cache in the
order the events came. The znode's version is the cache's epoch. An absent, unreadable or
disabled znode clears the cache. A read the cache refuses (an older epoch, or finalized levels
this broker cannot run) stops the broker, as in Kafka: it must not serve a cluster whose
features it does not support.

``init_or_throw`` registers the watch and waits for the first read, so a broker that starts
serving already knows the cluster's finalized features.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import Optional

from kafka_py.server.finalized_feature_cache import FinalizedFeatureCache
from kafka_py.core.utils.exit import Exit
from kafka_py.core.utils.shutdownable_thread import FatalExitError, ShutdownableThread
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient, StateChangeHandler, ZNodeChangeHandler
from kafka_py.core.zk.zk_data import FeatureZNode, FeatureZNodeStatus, ZkVersion

logger = logging.getLogger(__name__)


class FeatureCacheUpdater:
    """One re-read of /feature; the first one at startup also signals that it has run."""

    def __init__(self, listener: "FinalizedFeatureChangeListener", path: str,
                 notify_once: Optional[threading.Event] = None) -> None:
        self._listener = listener
        self.path = path
        self._notify_once = notify_once

    def update_latest_or_throw(self) -> None:
        if self._notify_once is not None and self._notify_once.is_set():
            raise RuntimeError("Can not notify after updateLatestOrThrow was called more than once successfully.")
        cache = self._listener.finalized_feature_cache
        logger.debug("Reading feature ZK node at path: %s", self.path)
        data, version = self._listener.zk_client.get_data_and_version(self.path)
        if version == ZkVersion.UNKNOWN_VERSION or data is None:
            logger.info("Feature ZK node at path: %s does not exist", self.path)
            cache.clear()
        else:
            try:
                node = FeatureZNode.decode(data)
            except ValueError:
                logger.error("Unable to deserialize feature ZK node at path: %s", self.path, exc_info=True)
                cache.clear()
            else:
                if node.status is FeatureZNodeStatus.DISABLED:
                    logger.info("Feature ZK node at path: %s is in disabled status.", self.path)
                    cache.clear()
                else:
                    cache.update_or_throw(node.features, version)
        if self._notify_once is not None:
            self._notify_once.set()

    def await_update_or_throw(self, wait_time_ms: int) -> None:
        if self._notify_once is not None and not self._notify_once.wait(wait_time_ms / 1000.0):
            raise TimeoutError(f"Timed out after waiting for {wait_time_ms}ms for FeatureCache to be updated.")


class ChangeNotificationProcessorThread(ShutdownableThread):
    def __init__(self, name: str, updates: "queue.Queue[Optional[FeatureCacheUpdater]]") -> None:
        super().__init__(name=name, daemon=True)
        self._updates = updates

    def initiate_shutdown(self) -> bool:
        started = super().initiate_shutdown()
        if started:
            self._updates.put(None)  # wakes the blocking take
        return started

    def do_work(self) -> None:
        updater = self._updates.get()
        if updater is None:
            return
        try:
            updater.update_latest_or_throw()
        except Exception:  # noqa: BLE001 - any failure leaves the cache untrustworthy
            self.logger.error("Failed to process feature ZK node change event. The broker will eventually exit.",
                              exc_info=True)
            Exit.exit(1, "feature ZK node change event failed")
            raise FatalExitError(1)


class FinalizedFeatureChangeListener:
    def __init__(self, finalized_feature_cache: FinalizedFeatureCache, zk_client: KafkaZkClient) -> None:
        self.finalized_feature_cache = finalized_feature_cache
        self.zk_client = zk_client
        self._queue: "queue.Queue[Optional[FeatureCacheUpdater]]" = queue.Queue()
        self._thread = ChangeNotificationProcessorThread("feature-zk-node-event-process-thread", self._queue)
        path = FeatureZNode.path()
        self._znode_handler = ZNodeChangeHandler(
            path, on_creation=lambda: self._enqueue("Feature ZK node created at path: %s", path),
            on_deletion=lambda: self._enqueue("Feature ZK node deleted at path: %s", path, warn=True),
            on_data_change=lambda: self._enqueue("Feature ZK node updated at path: %s", path))
        # A new session may have missed changes while the old one expired: re-read.
        self._state_handler = StateChangeHandler(
            path, after_initializing_session=lambda: self._queue.put(FeatureCacheUpdater(self, path)))

    def _enqueue(self, message: str, path: str, warn: bool = False) -> None:
        (logger.warning if warn else logger.info)(message, path)
        self._queue.put(FeatureCacheUpdater(self, path))

    def init_or_throw(self, wait_once_for_cache_update_ms: int) -> None:
        if wait_once_for_cache_update_ms <= 0:
            raise ValueError(f"Expected waitOnceForCacheUpdateMs > 0, but provided: {wait_once_for_cache_update_ms}")
        self._thread.start()
        self.zk_client.register_state_change_handler(self._state_handler)
        self.zk_client.register_znode_change_handler_and_check_existence(self._znode_handler)
        first = FeatureCacheUpdater(self, FeatureZNode.path(), threading.Event())
        self._queue.put(first)
        try:
            first.await_update_or_throw(wait_once_for_cache_update_ms)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        self.zk_client.unregister_state_change_handler(self._state_handler.name)
        self.zk_client.unregister_znode_change_handler(FeatureZNode.path())
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._thread.shutdown()

    @property
    def is_listener_initiated(self) -> bool:
        return self._thread.is_running and self._thread.is_alive()

    @property
    def is_listener_dead(self) -> bool:
        return not self._thread.is_running and not self._thread.is_alive()
