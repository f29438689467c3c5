"""Port of core/src/main/scala/kafka/server/FetchSession.scala (Kafka 2.8.2): incremental fetch
sessions (KIP-227) on the broker. The client side is kafka_py/clients/fetch_session_handler.py.

A client that fetches the same partitions over and over (a follower, a consumer) may ask for
a *session*: a full fetch with epoch 0 lists every partition, and the answer carries a
session id. From then on it sends *incremental* fetches (that id, epochs 1, 2, ...) naming
only the partitions whose request changed or that it wants to forget; the broker fetches
the others as cached here. The answer leaves out the partitions with nothing new: no
records, the same high watermark and log start offset as last sent, no error.

``FetchManager.new_context`` turns a request's session fields into one of four contexts:

* ``SessionlessFetchContext``: epoch -1 (and every Fetch before v7): the request is the
  whole story, the answer lists every partition, session id 0;
* ``FullFetchContext``: epoch 0: the request lists every partition; answering it creates a
  session (``FetchSessionCache.maybe_create_session``) if the cache has room or can evict one;
  the session named, if any, is closed first;
* ``IncrementalFetchContext``: a known session at the epoch it expects: the request's
  partitions and forgotten partitions update the session, and the fetch covers all of it;
* ``SessionErrorContext``: an unknown session (FETCH_SESSION_ID_NOT_FOUND) or the wrong
  epoch (INVALID_FETCH_SESSION_EPOCH): answered with that error and nothing else.

An incremental request that forgets every partition closes its session and is answered as
a sessionless one.

The cache holds at most ``max.incremental.fetch.session.cache.slots`` sessions. A new
session that finds it full may evict (``FetchSessionCache.try_evict``): the least recently
used session if it has been idle for more than ``eviction_ms`` (two minutes, Kafka's
MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS); otherwise the least valuable evictable session,
valued by (privileged, partition count, id): a follower's session (privileged) may evict a
consumer's, and a session with more partitions one with fewer; a session younger than
``eviction_ms`` is evictable only by a privileged one, and a privileged one only once it is
older than that. A client whose session was evicted gets FETCH_SESSION_ID_NOT_FOUND on its
next incremental fetch and starts again with a full one.

Kafka's TreeMaps of sessions by last use and by value are heaps here whose stale entries are
skipped when met (``_SessionOrder``); Kafka's ImplicitLinkedHashCollection of a session's
partitions is an ordered dict. Each session has its own lock; where both locks are needed the
cache's is taken first, never the other way round.

Partition answers are the ReplicaManager's ``FetchPartitionData`` (or anything with its
``error``, ``high_watermark``, ``log_start_offset``, ``records``, ``preferred_read_replica``
and ``diverging_epoch``); requests are ``PartitionData``. The contexts return the answer's
top-level error, its session id and the partitions it holds, in order.
"""
from __future__ import annotations

import heapq
import logging
import random
import threading
from collections import OrderedDict
from typing import Callable, Iterable, NamedTuple, Optional, Sequence

from kafka_py.clients.fetch_session_handler import FINAL_EPOCH, INITIAL_EPOCH, INVALID_SESSION_ID, next_epoch
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import PartitionData
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.core.utils.logging import TRACE
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

NUM_INCREMENTAL_FETCH_SESSIONS = "NumIncrementalFetchSessions"
NUM_INCREMENTAL_FETCH_PARTITIONS_CACHED = "NumIncrementalFetchPartitionsCached"
INCREMENTAL_FETCH_SESSIONS_EVICTIONS_PER_SEC = "IncrementalFetchSessionEvictionsPerSec"
EVICTIONS = "evictions"
# KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000

_NO_ERROR = Errors.NONE


def partitions_to_log_string(partitions: Iterable[TopicPartition]) -> str:
    partitions = list(partitions)
    if logger.isEnabledFor(TRACE):  # Kafka lists them at TRACE only
        return "(" + ", ".join(map(str, partitions)) + ")"
    return f"{len(partitions)} partition(s)"


# a fetch's partition answers, in the order of the response
PartitionResponses = list[tuple[TopicPartition, FetchPartitionData]]


class FetchResponseData(NamedTuple):
    """What a context answers: the top-level error, the session id, and the partitions
    (topic partition, partition answer) the response holds, in order."""

    error: Errors
    session_id: int
    partitions: PartitionResponses


class CachedPartition:
    """One partition of a session: the request data the fetcher last sent (``req``, a
    PartitionData) and what it was last told (``high_watermark``, the broker's
    ``local_log_start_offset``); -1 for "nothing yet", which forces the next answer."""

    __slots__ = ("topic_partition", "req", "high_watermark", "local_log_start_offset")

    def __init__(self, topic_partition: TopicPartition, req: PartitionData, high_watermark: int = -1,
                 local_log_start_offset: int = -1) -> None:
        self.topic_partition = topic_partition
        self.req = req
        self.high_watermark = high_watermark
        self.local_log_start_offset = local_log_start_offset

    @property
    def fetch_offset(self) -> int:
        return self.req.fetch_offset

    def update_request_params(self, req: PartitionData) -> None:
        self.req = req

    def maybe_update_response_data(self, resp: FetchPartitionData, update_response_data: bool) -> bool:
        """Whether ``resp`` must be in the answer (new records, a new high watermark or log start
        offset, a preferred read replica, an error, a diverging epoch); with
        ``update_response_data``, remember what the answer tells the fetcher."""
        must_respond = False
        records = resp.records
        if records is not None and len(records) > 0:
            must_respond = True
        if self.high_watermark != resp.high_watermark:
            must_respond = True
            if update_response_data:
                self.high_watermark = resp.high_watermark
        if self.local_log_start_offset != resp.log_start_offset:
            must_respond = True
            if update_response_data:
                self.local_log_start_offset = resp.log_start_offset
        if resp.preferred_read_replica is not None:
            must_respond = True
        if resp.error is not _NO_ERROR:
            # an error always goes out; forgetting the high watermark makes sure the partition
            # goes out again once the error is gone
            if update_response_data:
                self.high_watermark = -1
            must_respond = True
        if resp.diverging_epoch is not None:
            # the fetcher must learn it to truncate
            must_respond = True
        return must_respond

    def __repr__(self) -> str:
        return (f"CachedPartition(topicPartition={self.topic_partition}, maxBytes={self.req.max_bytes}, "
                f"fetchOffset={self.req.fetch_offset}, highWatermark={self.high_watermark}, "
                f"fetcherLogStartOffset={self.req.log_start_offset}, "
                f"localLogStartOffset={self.local_log_start_offset})")


class FetchSession:
    """A session: its id, whether a follower made it (``privileged``), its partitions in order,
    when it was created and last used (milliseconds), and the epoch its next request must carry.
    ``lock`` guards the partitions and the epoch."""

    __slots__ = ("id", "privileged", "partition_map", "creation_ms", "last_used_ms", "epoch", "cached_size",
                 "lock")

    def __init__(self, session_id: int, privileged: bool, partition_map: "OrderedDict[TopicPartition, CachedPartition]",
                 creation_ms: int, last_used_ms: int, epoch: int) -> None:
        self.id = session_id
        self.privileged = privileged
        self.partition_map = partition_map
        self.creation_ms = creation_ms
        self.last_used_ms = last_used_ms
        self.epoch = epoch
        # the size the cache last counted for this entry; -1 while it is not in the cache
        self.cached_size = -1
        self.lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self.partition_map)

    @property
    def is_empty(self) -> bool:
        return not self.partition_map

    @property
    def last_used_key(self) -> tuple[int, int]:
        return (self.last_used_ms, self.id)

    @property
    def evictable_key(self) -> tuple[bool, int, int]:
        return (self.privileged, self.cached_size, self.id)

    def get_fetch_offset(self, topic_partition: TopicPartition) -> Optional[int]:
        with self.lock:
            cached = self.partition_map.get(topic_partition)
            return None if cached is None else cached.fetch_offset

    def update(self, fetch_data: Sequence[tuple[TopicPartition, PartitionData]], to_forget: Iterable[TopicPartition]
               ) -> tuple[list[TopicPartition], list[TopicPartition], list[TopicPartition]]:
        """Take in an incremental request: its partitions are added or update their cached
        request data, its forgotten ones leave. Returns (added, updated, removed). Lock held."""
        added: list[TopicPartition] = []
        updated: list[TopicPartition] = []
        removed: list[TopicPartition] = []
        partition_map = self.partition_map
        for tp, req in fetch_data:
            cached = partition_map.get(tp)
            if cached is None:
                partition_map[tp] = CachedPartition(tp, req)
                added.append(tp)
            else:
                cached.update_request_params(req)
                updated.append(tp)
        for tp in to_forget:
            if partition_map.pop(tp, None) is not None:
                removed.append(tp)
        return added, updated, removed

    def __repr__(self) -> str:
        return (f"FetchSession(id={self.id}, privileged={self.privileged}, partitionMap.size={self.size}, "
                f"creationMs={self.creation_ms}, lastUsedMs={self.last_used_ms}, epoch={self.epoch})")


# ---------------------------------------------------------------------------- contexts


class FetchContext:
    """What a Fetch request is, once its session fields are understood."""

    def get_fetch_offset(self, topic_partition: TopicPartition) -> Optional[int]:
        raise NotImplementedError

    def partitions(self) -> list[tuple[TopicPartition, PartitionData]]:
        """Every partition this fetch reads, with its request data (Kafka's foreachPartition)."""
        raise NotImplementedError

    def get_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        """The answer ``update_and_generate_response_data`` would give, changing nothing: for
        sizing an answer against a quota before deciding to send it (Kafka's getResponseSize)."""
        raise NotImplementedError

    def update_and_generate_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        """The answer to send, from every partition's read (``updates``, in order); a session
        remembers what it told the fetcher."""
        raise NotImplementedError

    def get_throttled_response(self, throttle_time_ms: int) -> FetchResponseData:
        """The answer of a throttled fetch: no partitions."""
        return FetchResponseData(_NO_ERROR, INVALID_SESSION_ID, [])


class SessionErrorContext(FetchContext):
    """A fetch naming a session that does not exist, or at the wrong epoch."""

    def __init__(self, error: Errors) -> None:
        self.error = error

    def get_fetch_offset(self, topic_partition: TopicPartition) -> Optional[int]:
        return None

    def partitions(self) -> list[tuple[TopicPartition, PartitionData]]:
        return []

    def get_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        return FetchResponseData(self.error, INVALID_SESSION_ID, [])

    def update_and_generate_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        # the partitions of the request are unknown without its session
        logger.debug("Session error fetch context returning %s", self.error.name)
        return FetchResponseData(self.error, INVALID_SESSION_ID, [])


class _ListedFetchContext(FetchContext):
    """A fetch whose request lists every partition it reads (no increment to apply)."""

    def __init__(self, fetch_data: list[tuple[TopicPartition, PartitionData]]) -> None:
        self.fetch_data = fetch_data

    def get_fetch_offset(self, topic_partition: TopicPartition) -> Optional[int]:
        for tp, req in self.fetch_data:
            if tp == topic_partition:
                return req.fetch_offset
        return None

    def partitions(self) -> list[tuple[TopicPartition, PartitionData]]:
        return self.fetch_data

    def get_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        return FetchResponseData(_NO_ERROR, INVALID_SESSION_ID, updates)


class SessionlessFetchContext(_ListedFetchContext):
    """A fetch without a session: the request lists everything, the answer too."""

    def update_and_generate_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        return FetchResponseData(_NO_ERROR, INVALID_SESSION_ID, updates)


class FullFetchContext(_ListedFetchContext):
    """A full fetch asking for a session: answered in full, with the id of the session the
    answer creates (0 when the cache keeps none for it)."""

    def __init__(self, time: Time, cache: "FetchSessionCache", fetch_data: list[tuple[TopicPartition, PartitionData]],
                 is_from_follower: bool) -> None:
        super().__init__(fetch_data)
        self.time = time
        self.cache = cache
        self.is_from_follower = is_from_follower

    def update_and_generate_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        requested = dict(self.fetch_data)

        def create_partitions() -> "OrderedDict[TopicPartition, CachedPartition]":
            cached: "OrderedDict[TopicPartition, CachedPartition]" = OrderedDict()
            for tp, resp in updates:
                cached[tp] = CachedPartition(tp, requested[tp], resp.high_watermark, resp.log_start_offset)
            return cached

        session_id = self.cache.maybe_create_session(self.time.milliseconds(), self.is_from_follower, len(updates),
                                                     create_partitions, (tp for tp, _ in updates))
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("Full fetch context with session id %d returning %s", session_id,
                         partitions_to_log_string(tp for tp, _ in updates))
        return FetchResponseData(_NO_ERROR, session_id, updates)


class IncrementalFetchContext(FetchContext):
    """A fetch in an existing session: it reads every partition of the session, and its answer
    holds only those with something new."""

    def __init__(self, time: Time, request_epoch: int, session: FetchSession) -> None:
        self.time = time
        self.request_epoch = request_epoch
        self.session = session

    def get_fetch_offset(self, topic_partition: TopicPartition) -> Optional[int]:
        return self.session.get_fetch_offset(topic_partition)

    def partitions(self) -> list[tuple[TopicPartition, PartitionData]]:
        session = self.session
        with session.lock:
            return [(tp, cached.req) for tp, cached in session.partition_map.items()]

    def _select(self, updates: PartitionResponses, update: bool) -> PartitionResponses:
        # Lock held. With ``update``, the partitions that go out move to the end of the session,
        # so the next fetch reads the others first (the byte budget rotates, as in Kafka).
        partition_map = self.session.partition_map
        selected = []
        for tp, resp in updates:
            cached = partition_map.get(tp)
            if cached is None:
                # forgotten by a newer request of the same session meanwhile: say nothing of it
                continue
            if cached.maybe_update_response_data(resp, update):
                selected.append((tp, resp))
                if update:
                    partition_map.move_to_end(tp)
        return selected

    def get_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        session = self.session
        with session.lock:
            if session.epoch != next_epoch(self.request_epoch):
                return FetchResponseData(Errors.INVALID_FETCH_SESSION_EPOCH, session.id, [])
            return FetchResponseData(_NO_ERROR, session.id, self._select(updates, False))

    def update_and_generate_response_data(self, updates: PartitionResponses) -> FetchResponseData:
        session = self.session
        with session.lock:
            # another request with this id may have come in since this one's context was made
            expected_epoch = next_epoch(self.request_epoch)
            if session.epoch != expected_epoch:
                logger.info("Incremental fetch session %d expected epoch %d, but got %d.  Possible duplicate "
                            "request.", session.id, expected_epoch, session.epoch)
                return FetchResponseData(Errors.INVALID_FETCH_SESSION_EPOCH, session.id, [])
            selected = self._select(updates, True)
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("Incremental fetch context with session id %d returning %s", session.id,
                             partitions_to_log_string(tp for tp, _ in selected))
            return FetchResponseData(_NO_ERROR, session.id, selected)

    def get_throttled_response(self, throttle_time_ms: int) -> FetchResponseData:
        session = self.session
        with session.lock:
            expected_epoch = next_epoch(self.request_epoch)
            if session.epoch != expected_epoch:
                logger.info("Incremental fetch session %d expected epoch %d, but got %d.  Possible duplicate "
                            "request.", session.id, expected_epoch, session.epoch)
                return FetchResponseData(Errors.INVALID_FETCH_SESSION_EPOCH, session.id, [])
            return FetchResponseData(_NO_ERROR, session.id, [])


# ---------------------------------------------------------------------------- the cache


class _SessionOrder:
    """Sessions ordered by a key, smallest first (Kafka's TreeMap[key, FetchSession]): the
    current key of each member, and a heap whose entries are checked against it when they
    reach the top, so re-keying a member costs one push and no search."""

    __slots__ = ("_keys", "_heap")

    def __init__(self) -> None:
        self._keys: dict[int, tuple] = {}
        self._heap: list[tuple[tuple, int]] = []

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, session_id: int) -> bool:
        return session_id in self._keys

    def put(self, session_id: int, key: tuple) -> None:
        if self._keys.get(session_id) == key:
            return
        self._keys[session_id] = key
        heap = self._heap
        heapq.heappush(heap, (key, session_id))
        if len(heap) > 2 * len(self._keys) + 64:
            # more stale entries than live ones: rebuild from the live keys
            self._heap = [(k, sid) for sid, k in self._keys.items()]
            heapq.heapify(self._heap)

    def remove(self, session_id: int) -> None:
        self._keys.pop(session_id, None)

    def first(self) -> Optional[tuple[tuple, int]]:
        heap = self._heap
        keys = self._keys
        while heap:
            key, session_id = heap[0]
            if keys.get(session_id) == key:
                return key, session_id
            heapq.heappop(heap)
        return None


class FetchSessionCache(KafkaMetricsGroup):
    """The broker's sessions, at most ``max_entries``; ``eviction_ms`` is how long a session
    must be unused before any new one may evict it (see the module docstring)."""

    metrics_group = "kafka.server"
    metrics_type_name = "FetchSessionCache"

    def __init__(self, max_entries: int, eviction_ms: int = MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
                 is_hosted: Optional[Callable[[TopicPartition], bool]] = None) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        # whether this broker hosts a partition (the ReplicaManager's view); None: every one
        self.is_hosted = is_hosted
        self._lock = threading.RLock()
        self._num_partitions = 0
        self._sessions: dict[int, FetchSession] = {}
        # by (last used ms, id)
        self._last_used = _SessionOrder()
        # by (privileged, size, id): sessions any new session may evict, and those only a
        # privileged one may
        self._evictable_by_all = _SessionOrder()
        self._evictable_by_privileged = _SessionOrder()
        self._random = random.Random()
        self.replace_gauge(NUM_INCREMENTAL_FETCH_SESSIONS, lambda: self.size)
        self.replace_gauge(NUM_INCREMENTAL_FETCH_PARTITIONS_CACHED, lambda: self.total_partitions)
        self.remove_metric(INCREMENTAL_FETCH_SESSIONS_EVICTIONS_PER_SEC)
        self.evictions_meter = self.new_meter(INCREMENTAL_FETCH_SESSIONS_EVICTIONS_PER_SEC, EVICTIONS)

    def get(self, session_id: int) -> Optional[FetchSession]:
        with self._lock:
            return self._sessions.get(session_id)

    @property
    def size(self) -> int:
        with self._lock:
            return len(self._sessions)

    @property
    def total_partitions(self) -> int:
        with self._lock:
            return self._num_partitions

    def new_session_id(self) -> int:
        """A positive id no session of this cache has."""
        with self._lock:
            while True:
                session_id = self._random.randint(1, INT_MAX - 1)
                if session_id not in self._sessions and session_id != INVALID_SESSION_ID:
                    return session_id

    def maybe_create_session(self, now: int, privileged: bool, size: int,
                             create_partitions: Callable[[], "OrderedDict[TopicPartition, CachedPartition]"],
                             topic_partitions: Iterable[TopicPartition] = ()) -> int:
        """A new session of ``size`` partitions (``topic_partitions``), if there is room or one
        can be evicted: its id, or INVALID_SESSION_ID. None is made for a fetch naming a
        partition this broker does not host (``is_hosted``): the client's metadata is stale,
        and a session would keep naming the partition should the client go away, where
        ``remove_sessions_of`` cannot see it (it ran when the partition left). The check and the
        session's creation are one step under the cache's lock, so a partition leaving at the
        same time is either seen here or its removal sees the new session."""
        with self._lock:
            is_hosted = self.is_hosted
            if is_hosted is not None and not all(map(is_hosted, topic_partitions)):
                logger.debug("No fetch session created: the fetch names a partition this broker does not host.")
                return INVALID_SESSION_ID
            if len(self._sessions) < self.max_entries or self.try_evict(privileged, (privileged, size, 0), now):
                session = FetchSession(self.new_session_id(), privileged, create_partitions(), now, now,
                                       next_epoch(INITIAL_EPOCH))
                logger.debug("Created fetch session %s", session)
                self._sessions[session.id] = session
                self.touch(session, now)
                return session.id
            logger.debug("No fetch session created for privileged=%s, size=%d.", privileged, size)
            return INVALID_SESSION_ID

    def try_evict(self, privileged: bool, key: tuple[bool, int, int], now: int) -> bool:
        """Evict a session to make room for a new one with ``key``: the least recently used one
        if it is stale, else the least valuable evictable one if it is worth less than ``key``."""
        with self._lock:
            first_used = self._last_used.first()
            if first_used is None:
                logger.log(TRACE, "There are no cache entries to evict.")
                return False
            (last_used_ms, _), session_id = first_used
            if now - last_used_ms > self.eviction_ms:
                logger.log(TRACE, "Evicting stale FetchSession %d.", session_id)
                self.remove(self._sessions[session_id])
                self.evictions_meter.mark()
                return True
            evictable = (self._evictable_by_privileged if privileged else self._evictable_by_all).first()
            if evictable is None:
                logger.log(TRACE, "No evictable entries found.")
                return False
            evictable_key, session_id = evictable
            if key < evictable_key:
                logger.log(TRACE, "Can't evict %s with %s", evictable_key, key)
                return False
            logger.log(TRACE, "Evicting %s with %s.", evictable_key, key)
            self.remove(self._sessions[session_id])
            self.evictions_meter.mark()
            return True

    def remove_by_id(self, session_id: int) -> Optional[FetchSession]:
        with self._lock:
            session = self._sessions.get(session_id)
            return None if session is None else self.remove(session)

    def remove(self, session: FetchSession) -> Optional[FetchSession]:
        with self._lock:
            self._last_used.remove(session.id)
            self._evictable_by_all.remove(session.id)
            self._evictable_by_privileged.remove(session.id)
            removed = self._sessions.pop(session.id, None)
            if removed is not None:
                self._num_partitions -= session.cached_size
                session.cached_size = -1
            return removed

    def remove_sessions_of(self, partitions: Iterable[TopicPartition]) -> int:
        """Close every session that holds one of ``partitions``, partitions this broker no longer
        hosts; returns how many. Their clients' next incremental fetch is answered
        FETCH_SESSION_ID_NOT_FOUND and they start again with a full fetch, whose answer says
        what became of each partition (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION).
        Kafka 2.8 leaves such sessions in the cache, where a session whose client went away
        keeps naming the partitions until it is evicted, which a cache that is not full never
        does."""
        partitions = set(partitions)
        if not partitions:
            return 0
        with self._lock:
            holding = []
            for session in self._sessions.values():
                with session.lock:
                    if not session.partition_map.keys().isdisjoint(partitions):
                        holding.append(session)
            for session in holding:
                self.remove(session)
        if holding:
            logger.debug("Removed %d fetch session(s) holding %s that left this broker.", len(holding),
                         partitions_to_log_string(partitions))
        return len(holding)

    def touch(self, session: FetchSession, now: int) -> None:
        """The session was just used: move it in the last-used order and re-value it by its size."""
        with self._lock:
            with session.lock:
                self._touch_locked(session, now)

    def _touch_locked(self, session: FetchSession, now: int) -> None:
        # both locks held
        session.last_used_ms = now
        self._last_used.put(session.id, session.last_used_key)
        old_size = session.cached_size
        if old_size != -1:
            self._num_partitions -= old_size
        session.cached_size = session.size
        key = session.evictable_key
        old_enough = now - session.creation_ms > self.eviction_ms
        if not session.privileged or old_enough:
            self._evictable_by_privileged.put(session.id, key)
        else:
            self._evictable_by_privileged.remove(session.id)
        if old_enough:
            self._evictable_by_all.put(session.id, key)
        else:
            self._evictable_by_all.remove(session.id)
        self._num_partitions += session.cached_size


class FetchManager:
    """Makes each Fetch request's context (see the module docstring)."""

    def __init__(self, time: Time, cache: FetchSessionCache) -> None:
        self.time = time
        self.cache = cache

    def new_context(self, session_id: int, session_epoch: int, fetch_data: list[tuple[TopicPartition, PartitionData]],
                    to_forget: Sequence[TopicPartition], is_follower: bool) -> FetchContext:
        if session_epoch == FINAL_EPOCH and session_id == INVALID_SESSION_ID:
            # sessionless, the common case of old clients: nothing to look up
            return SessionlessFetchContext(fetch_data)
        cache = self.cache
        if session_epoch == INITIAL_EPOCH or session_epoch == FINAL_EPOCH:
            closed = ""
            if session_id != INVALID_SESSION_ID and cache.remove_by_id(session_id) is not None:
                # a full fetch closes the session it names
                closed = f" Removed fetch session {session_id}."
            if session_epoch == FINAL_EPOCH:
                context: FetchContext = SessionlessFetchContext(fetch_data)
                suffix = " Will not try to create a new session."
            else:
                context = FullFetchContext(self.time, cache, fetch_data, is_follower)
                suffix = ""
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("Created a new full FetchContext with %s.%s%s",
                             partitions_to_log_string(tp for tp, _ in fetch_data), closed, suffix)
            return context
        with cache._lock:
            session = cache.get(session_id)
            if session is None:
                logger.debug("Session error for %d: no such session ID found.", session_id)
                return SessionErrorContext(Errors.FETCH_SESSION_ID_NOT_FOUND)
            with session.lock:
                if session.epoch != session_epoch:
                    logger.debug("Session error for %d: expected epoch %d, but got %d instead.", session_id,
                                 session.epoch, session_epoch)
                    return SessionErrorContext(Errors.INVALID_FETCH_SESSION_EPOCH)
                added, updated, removed = session.update(fetch_data, to_forget)
                if session.is_empty:
                    logger.debug("Created a new sessionless FetchContext and closing session id %d, epoch %d: "
                                 "after removing %s, there are no more partitions left.", session.id, session.epoch,
                                 partitions_to_log_string(removed))
                    cache.remove(session)
                    return SessionlessFetchContext(fetch_data)
                cache._touch_locked(session, self.time.milliseconds())
                session.epoch = next_epoch(session.epoch)
                if logger.isEnabledFor(logging.DEBUG):
                    logger.debug("Created a new incremental FetchContext for session id %d, epoch %d: added %s, "
                                 "updated %s, removed %s", session.id, session.epoch, partitions_to_log_string(added),
                                 partitions_to_log_string(updated), partitions_to_log_string(removed))
                return IncrementalFetchContext(self.time, session_epoch, session)


__all__ = ["FetchManager", "FetchSessionCache", "FetchSession", "CachedPartition", "FetchContext",
           "SessionErrorContext", "SessionlessFetchContext", "FullFetchContext", "IncrementalFetchContext",
           "FetchResponseData", "MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS"]
