"""Port of clients/src/main/java/org/apache/kafka/clients/FetchSessionHandler.java, with
clients/.../common/requests/FetchMetadata.java (Kafka 2.8.2): the client side of incremental
fetch sessions (KIP-227), as a replica fetcher uses it.

A fetcher keeps one handler per broker it fetches from. Each round it tells a ``Builder``
every partition it wants and where from (``add``), and ``build`` decides what the Fetch
request says:

* a **full** fetch (the first, and after any failure) lists every partition, with session id
  0 and epoch 0 (create a session) or the old session's id and epoch 0 (close it, make a new
  one); the broker answers with a new session id, or 0 when it keeps no session for us;
* an **incremental** fetch (session id and epoch 1, 2, ...) lists only the partitions that
  were added or whose request data changed (``to_send``), and the partitions to drop from the
  session (``to_forget``); the others are implied, the broker fetches them as last asked.

``handle_response`` checks the answer against the session (a full answer must hold every
partition of the session, an incremental one nothing outside it) and moves the metadata
on: the next epoch, a new session, or back to a full fetch. An error answer
(FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) or a failed request
(``handle_error``) makes the next fetch a full one.

The session's partitions are kept in insertion order, as Kafka's LinkedHashMap keeps them:
the broker fills a full fetch's byte budget in request order, and ``build`` relies on the
order to find the added partitions (altered ones are moved to the end of ``next``).
"""
from __future__ import annotations

import logging
from typing import Any, Collection, Iterable, Mapping, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.core.utils.logging import TRACE, IdentLogger

logger = logging.getLogger(__name__)

INVALID_SESSION_ID = 0  # no session: a sessionless fetch, or the broker made none
INITIAL_EPOCH = 0  # a full fetch that asks for a new session (closing the one named, if any)
FINAL_EPOCH = -1  # a full fetch that closes the session named and asks for none


def next_epoch(prev_epoch: int) -> int:
    """The epoch after ``prev_epoch``: FINAL stays FINAL; after the largest int32 comes 1."""
    if prev_epoch < 0:
        return FINAL_EPOCH
    if prev_epoch == INT_MAX:
        return 1
    return prev_epoch + 1


class FetchMetadata:
    """A fetch request's session id and epoch (FetchMetadata.java)."""

    __slots__ = ("session_id", "epoch")

    INITIAL: "FetchMetadata"
    LEGACY: "FetchMetadata"

    def __init__(self, session_id: int, epoch: int) -> None:
        self.session_id = session_id
        self.epoch = epoch

    @property
    def is_full(self) -> bool:
        return self.epoch == INITIAL_EPOCH or self.epoch == FINAL_EPOCH

    def next_close_existing(self) -> "FetchMetadata":
        """The next request after an error: a full fetch that closes the broker's fetch context for this id and asks it for a new one."""
        return FetchMetadata(self.session_id, INITIAL_EPOCH)

    @staticmethod
    def new_incremental(session_id: int) -> "FetchMetadata":
        """The first incremental fetch of a session the broker just created."""
        return FetchMetadata(session_id, next_epoch(INITIAL_EPOCH))

    def next_incremental(self) -> "FetchMetadata":
        return FetchMetadata(self.session_id, next_epoch(self.epoch))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FetchMetadata) and self.session_id == other.session_id
                and self.epoch == other.epoch)

    def __hash__(self) -> int:
        return hash((self.session_id, self.epoch))

    def __repr__(self) -> str:
        session = "INVALID" if self.session_id == INVALID_SESSION_ID else str(self.session_id)
        epoch = {INITIAL_EPOCH: "INITIAL", FINAL_EPOCH: "FINAL"}.get(self.epoch, str(self.epoch))
        return f"(sessionId={session}, epoch={epoch})"


FetchMetadata.INITIAL = FetchMetadata(INVALID_SESSION_ID, INITIAL_EPOCH)
# what a Fetch older than v7 (no session fields) means: sessionless
FetchMetadata.LEGACY = FetchMetadata(INVALID_SESSION_ID, FINAL_EPOCH)


class FetchRequestData:
    """What one Fetch request carries: ``to_send`` (partition -> its request data, in request
    order), ``to_forget`` (partitions to drop from the session), ``session_partitions`` (every
    partition of the session after this request) and the ``metadata`` (session id, epoch)."""

    __slots__ = ("to_send", "to_forget", "session_partitions", "metadata")

    def __init__(self, to_send: Mapping[TopicPartition, Any], to_forget: list[TopicPartition],
                 session_partitions: Mapping[TopicPartition, Any], metadata: FetchMetadata) -> None:
        self.to_send = to_send
        self.to_forget = to_forget
        self.session_partitions = session_partitions
        self.metadata = metadata

    def __repr__(self) -> str:
        if self.metadata.is_full:
            return f"FullFetchRequest({', '.join(map(str, self.to_send))})"
        implied = [str(tp) for tp in self.session_partitions if tp not in self.to_send]
        return (f"IncrementalFetchRequest(toSend=({', '.join(map(str, self.to_send))}), "
                f"toForget=({', '.join(map(str, self.to_forget))}), implied=({', '.join(implied)}))")


def _partitions_to_log_string(partitions: Collection[TopicPartition]) -> str:
    if logger.isEnabledFor(TRACE):  # Kafka lists them at TRACE only
        return "(" + ", ".join(map(str, partitions)) + ")"
    return f"{len(partitions)} partition(s)"


class FetchSessionHandler:
    """The fetch session state of one fetcher towards one broker (``node``)."""

    def __init__(self, node: int, log_prefix: str = "") -> None:
        self.node = node
        self.logger = IdentLogger(logger, log_prefix)
        # the metadata of the next request
        self.next_metadata = FetchMetadata.INITIAL
        # every partition of the session, in insertion order, with its last sent request data
        self.session_partitions: dict[TopicPartition, Any] = {}

    @property
    def session_id(self) -> int:
        return self.next_metadata.session_id

    def new_builder(self, copy_session_partitions: bool = True) -> "FetchSessionHandler.Builder":
        """A builder for the next request. A replica fetcher passes ``copy_session_partitions=False``:
        the request's ``session_partitions`` is then the handler's own dict, valid until the next build."""
        return FetchSessionHandler.Builder(self, copy_session_partitions)

    class Builder:
        __slots__ = ("_handler", "_next", "_copy_session_partitions")

        def __init__(self, handler: "FetchSessionHandler", copy_session_partitions: bool) -> None:
            self._handler = handler
            self._next: Optional[dict[TopicPartition, Any]] = {}
            self._copy_session_partitions = copy_session_partitions

        def add(self, topic_partition: TopicPartition, data: Any) -> None:
            """Fetch ``topic_partition`` in the coming request with ``data`` (a PartitionData)."""
            self._next[topic_partition] = data

        def build(self) -> FetchRequestData:
            handler = self._handler
            next_partitions = self._next
            if next_partitions is None:
                raise RuntimeError("build() was already called on this builder")
            self._next = None
            metadata = handler.next_metadata
            if metadata.is_full:
                if logger.isEnabledFor(logging.DEBUG):
                    handler.logger.debug("Built full fetch %s for node %d with %s.", metadata,
                                         handler.node, _partitions_to_log_string(next_partitions))
                handler.session_partitions = next_partitions
                to_send = dict(next_partitions)
                return FetchRequestData(to_send, [], to_send, metadata)

            session = handler.session_partitions
            added: list[TopicPartition] = []
            removed: list[TopicPartition] = []
            altered: list[TopicPartition] = []
            for tp in list(session):
                prev_data = session[tp]
                next_data = next_partitions.pop(tp, None)
                if next_data is None:
                    # no longer wanted: out of the session
                    del session[tp]
                    removed.append(tp)
                elif next_data != prev_data:
                    # changed: sent again, and moved to the end of next
                    next_partitions[tp] = next_data
                    session[tp] = next_data
                    altered.append(tp)
            # What is left at the front of next is new; the altered partitions follow it.
            for tp, next_data in next_partitions.items():
                if tp in session:
                    break
                session[tp] = next_data
                added.append(tp)
            if logger.isEnabledFor(logging.DEBUG):
                handler.logger.debug("Built incremental fetch %s for node %d. Added %s, altered %s, removed %s "
                                     "out of %s",
                                     metadata, handler.node, _partitions_to_log_string(added),
                                     _partitions_to_log_string(altered), _partitions_to_log_string(removed),
                                     _partitions_to_log_string(session))
            session_partitions = dict(session) if self._copy_session_partitions else session
            return FetchRequestData(next_partitions, removed, session_partitions, metadata)

    # ------------------------------------------------------------------ answers

    def _verify_full_fetch_response_partitions(self, response_partitions: Iterable[TopicPartition]) -> Optional[str]:
        response_set = set(response_partitions)
        session = self.session_partitions
        extra = [tp for tp in response_set if tp not in session]
        omitted = [tp for tp in session if tp not in response_set] if len(response_set) - len(extra) != len(session) \
            else []
        if not extra and not omitted:
            return None
        problem = ""
        if omitted:
            problem += f"omitted=({', '.join(map(str, omitted))}), "
        if extra:
            problem += f"extra=({', '.join(map(str, extra))}), "
        return problem + f"response=({', '.join(map(str, response_set))})"

    def _verify_incremental_fetch_response_partitions(
            self, response_partitions: Iterable[TopicPartition]) -> Optional[str]:
        session = self.session_partitions
        extra = [tp for tp in response_partitions if tp not in session]
        if not extra:
            return None
        return f"extra=({', '.join(map(str, extra))}), response=({', '.join(map(str, response_partitions))})"

    def _response_log_string(self, response_partitions: Collection[TopicPartition]) -> str:
        implied = len(self.session_partitions) - len(response_partitions)
        if implied > 0:
            return f" with {len(response_partitions)} response partition(s), {implied} implied partition(s)"
        return f" with {len(response_partitions)} response partition(s)"

    def handle_response(self, error: Errors, session_id: int, throttle_time_ms: int,
                        response_partitions: Collection[TopicPartition]) -> bool:
        """Take in a Fetch answer (its top-level error, session id, throttle time and the
        partitions it holds). True if its partitions may be processed; False if the answer
        failed or does not fit the session, and the next fetch is then a full one."""
        metadata = self.next_metadata
        if error is not Errors.NONE:
            self.logger.info("Node %d was unable to process the fetch request with %s: %s.",
                             self.node, metadata, error.name)
            if error is Errors.FETCH_SESSION_ID_NOT_FOUND:
                self.next_metadata = FetchMetadata.INITIAL
            else:
                self.next_metadata = metadata.next_close_existing()
            return False
        debug = logger.isEnabledFor(logging.DEBUG)
        if metadata.is_full:
            if not response_partitions and throttle_time_ms > 0:
                # KIP-219: a throttled client gets an empty full answer; not an error, but there
                # is nothing to process either
                if debug:
                    self.logger.debug("Node %d sent an empty full fetch response to indicate that this client "
                                      "should be throttled for %d ms.", self.node, throttle_time_ms)
                self.next_metadata = FetchMetadata.INITIAL
                return False
            problem = self._verify_full_fetch_response_partitions(response_partitions)
            if problem is not None:
                self.logger.info("Node %d sent an invalid full fetch response with %s", self.node,
                                 problem)
                self.next_metadata = FetchMetadata.INITIAL
                return False
            if session_id == INVALID_SESSION_ID:
                if debug:
                    self.logger.debug("Node %d sent a full fetch response%s", self.node,
                                      self._response_log_string(response_partitions))
                self.next_metadata = FetchMetadata.INITIAL
            else:
                if debug:
                    self.logger.debug("Node %d sent a full fetch response that created a new incremental fetch "
                                      "session %d%s", self.node, session_id,
                                      self._response_log_string(response_partitions))
                self.next_metadata = FetchMetadata.new_incremental(session_id)
            return True
        problem = self._verify_incremental_fetch_response_partitions(response_partitions)
        if problem is not None:
            self.logger.info("Node %d sent an invalid incremental fetch response with %s", self.node,
                             problem)
            self.next_metadata = metadata.next_close_existing()
            return False
        if session_id == INVALID_SESSION_ID:
            # the broker closed the session
            if debug:
                self.logger.debug("Node %d sent an incremental fetch response closing session %d%s",
                                  self.node, metadata.session_id, self._response_log_string(response_partitions))
            self.next_metadata = FetchMetadata.INITIAL
        else:
            if debug:
                self.logger.debug("Node %d sent an incremental fetch response with throttleTimeMs = %d for session "
                                  "%d%s", self.node, throttle_time_ms, session_id,
                                  self._response_log_string(response_partitions))
            self.next_metadata = metadata.next_incremental()
        return True

    def handle_error(self, error: BaseException) -> None:
        """A request that got no answer: the next fetch closes the session and starts a new one."""
        self.logger.info("Error sending fetch request %s to node %d: %s", self.next_metadata,
                         self.node, error)
        self.next_metadata = self.next_metadata.next_close_existing()


__all__ = ["FetchSessionHandler", "FetchMetadata", "FetchRequestData", "INVALID_SESSION_ID", "INITIAL_EPOCH",
           "FINAL_EPOCH", "next_epoch"]
