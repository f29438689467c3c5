"""Port of core/src/main/scala/kafka/coordinator/transaction/TransactionMetadata.scala (Kafka 2.8.2).

What the transaction coordinator knows of one transactional id: its producer id and epoch
(and the previous ones, so that a producer retrying InitProducerId after a lost answer is
recognised), its transaction timeout, the partitions of its current transaction and the
state of that transaction.

States and their transitions (``TransactionState.valid_previous_states`` is the table
checked on every transition)::

    Empty --AddPartitions/AddOffsets--> Ongoing --EndTxn(commit)--> PrepareCommit --markers--> CompleteCommit
                                           |    --EndTxn(abort)/timeout--> PrepareAbort --markers--> CompleteAbort
                                           +--InitProducerId by a new producer--> PrepareEpochFence -> PrepareAbort
    Empty, CompleteCommit, CompleteAbort --InitProducerId--> Empty;  --AddPartitions--> Ongoing
    Empty, CompleteCommit, CompleteAbort --expiry--> Dead (removed from the cache and the log)

Every change is made in two steps, as in Kafka: ``prepare_*`` checks the transition and sets
``pending_state`` (which blocks any other change) and returns the target as a
``TxnTransitMetadata``; that target is written to __transaction_state, and only once the write
is replicated does ``complete_transition_to`` apply it (or the write failed and the pending
state is dropped). Not thread safe: every access holds ``lock`` (``in_lock``).
"""
from __future__ import annotations

import enum
import logging
import threading
from dataclasses import dataclass
from typing import Callable, FrozenSet, Iterable, Optional, TypeVar, Union

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.default_record_batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafka_py.core.utils.java_limits import SHORT_MAX

logger = logging.getLogger(__name__)


T = TypeVar("T")


class TransactionState(enum.Enum):
    """The states with the byte Kafka stores for them; ``str(state)`` is Kafka's name."""

    EMPTY = (0, "Empty", True)
    ONGOING = (1, "Ongoing", False)
    PREPARE_COMMIT = (2, "PrepareCommit", False)
    PREPARE_ABORT = (3, "PrepareAbort", False)
    COMPLETE_COMMIT = (4, "CompleteCommit", True)
    COMPLETE_ABORT = (5, "CompleteAbort", True)
    DEAD = (6, "Dead", False)
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence", False)

    def __init__(self, byte: int, state_name: str, is_expiration_allowed: bool) -> None:
        self.byte = byte
        self.state_name = state_name
        self.is_expiration_allowed = is_expiration_allowed

    @property
    def valid_previous_states(self) -> FrozenSet["TransactionState"]:
        return _VALID_PREVIOUS_STATES[self]

    @classmethod
    def from_byte(cls, byte: int) -> "TransactionState":
        for state in cls:
            if state.byte == byte:
                return state
        raise ValueError(f"Unknown transaction state byte {byte} from the transaction status message")

    def __str__(self) -> str:
        return self.state_name

    def __repr__(self) -> str:
        return self.state_name


Empty = TransactionState.EMPTY
Ongoing = TransactionState.ONGOING
PrepareCommit = TransactionState.PREPARE_COMMIT
PrepareAbort = TransactionState.PREPARE_ABORT
CompleteCommit = TransactionState.COMPLETE_COMMIT
CompleteAbort = TransactionState.COMPLETE_ABORT
Dead = TransactionState.DEAD
PrepareEpochFence = TransactionState.PREPARE_EPOCH_FENCE

_VALID_PREVIOUS_STATES: dict[TransactionState, FrozenSet[TransactionState]] = {
    Empty: frozenset({Empty, CompleteCommit, CompleteAbort}),
    Ongoing: frozenset({Ongoing, Empty, CompleteCommit, CompleteAbort}),
    PrepareCommit: frozenset({Ongoing}),
    PrepareAbort: frozenset({Ongoing, PrepareEpochFence}),
    CompleteCommit: frozenset({PrepareCommit}),
    CompleteAbort: frozenset({PrepareAbort}),
    Dead: frozenset({Empty, CompleteAbort, CompleteCommit}),
    PrepareEpochFence: frozenset({Ongoing}),
}


def is_valid_transition(old_state: TransactionState, new_state: TransactionState) -> bool:
    return old_state in new_state.valid_previous_states


def is_epoch_exhausted(producer_epoch: int) -> bool:
    """An epoch of Short.MaxValue - 1 or more is never handed out: the coordinator must always be
    able to bump it once more to fence the producer."""
    return producer_epoch >= SHORT_MAX - 1


@dataclass(frozen=True, slots=True)
class TxnTransitMetadata:
    """The target of a prepared transition: what is written to the log and then applied."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: FrozenSet[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int

    def __str__(self) -> str:
        return (f"TxnTransitMetadata(producerId={self.producer_id}, lastProducerId={self.last_producer_id}, "
                f"producerEpoch={self.producer_epoch}, lastProducerEpoch={self.last_producer_epoch}, "
                f"txnTimeoutMs={self.txn_timeout_ms}, txnState={self.txn_state}, "
                f"topicPartitions={_partitions_str(self.topic_partitions)}, "
                f"txnStartTimestamp={self.txn_start_timestamp}, "
                f"txnLastUpdateTimestamp={self.txn_last_update_timestamp})")


def _partitions_str(partitions: Iterable[TopicPartition]) -> str:
    return "Set(" + ", ".join(str(tp) for tp in sorted(partitions, key=lambda t: (t.topic, t.partition))) + ")"


class TransactionMetadata:
    """One transactional id's producer and transaction, as the coordinator holds it."""

    def __init__(self, transactional_id: str, producer_id: int, last_producer_id: int, producer_epoch: int,
                 last_producer_epoch: int, txn_timeout_ms: int, state: TransactionState,
                 topic_partitions: Optional[Iterable[TopicPartition]] = None, txn_start_timestamp: int = -1,
                 txn_last_update_timestamp: int = -1) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.last_producer_id = last_producer_id
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.txn_timeout_ms = txn_timeout_ms
        self.state = state
        self.topic_partitions: set[TopicPartition] = set(topic_partitions or ())
        self.txn_start_timestamp = txn_start_timestamp
        self.txn_last_update_timestamp = txn_last_update_timestamp
        # the state a write in flight will move to; blocks any other transition meanwhile
        self.pending_state: Optional[TransactionState] = None
        # an epoch fence whose write failed: the next fence reuses the bumped epoch instead of
        # bumping again (that epoch was never handed to anyone)
        self.has_failed_epoch_fence = False
        self.lock = threading.RLock()

    @classmethod
    def create(cls, transactional_id: str, producer_id: int, producer_epoch: int, txn_timeout_ms: int,
               timestamp: int, state: TransactionState = Empty, last_producer_id: int = NO_PRODUCER_ID,
               last_producer_epoch: int = NO_PRODUCER_EPOCH) -> "TransactionMetadata":
        """Kafka's TransactionMetadata.apply: a new id's metadata, created and last updated at ``timestamp``."""
        return cls(transactional_id, producer_id, last_producer_id, producer_epoch, last_producer_epoch,
                   txn_timeout_ms, state, (), timestamp, timestamp)

    def in_lock(self, fun: Callable[[], T]) -> T:
        with self.lock:
            return fun()

    # ------------------------------------------------------------------ partitions

    def add_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        self.topic_partitions.update(partitions)

    def remove_partition(self, topic_partition: TopicPartition) -> None:
        """A partition whose marker was written (only while the markers are being sent)."""
        if self.state not in (PrepareCommit, PrepareAbort):
            raise RuntimeError(f"Transaction metadata's current state is {self.state}, and its pending state is "
                               f"{self.pending_state} while trying to remove partitions whose txn marker has been "
                               "sent, this is not expected")
        self.topic_partitions.discard(topic_partition)

    # ------------------------------------------------------------------ prepared transitions

    def prepare_no_transit(self) -> TxnTransitMetadata:
        """The current metadata as a transit (no pending state set)."""
        return TxnTransitMetadata(self.producer_id, self.last_producer_id, self.producer_epoch,
                                  self.last_producer_epoch, self.txn_timeout_ms, self.state,
                                  frozenset(self.topic_partitions), self.txn_start_timestamp,
                                  self.txn_last_update_timestamp)

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        if self.producer_epoch == SHORT_MAX:
            raise RuntimeError("Cannot fence producer with epoch equal to Short.MaxValue since this would overflow")
        bumped_epoch = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare_transition_to(PrepareEpochFence, self.producer_id, bumped_epoch, NO_PRODUCER_EPOCH,
                                           self.txn_timeout_ms, frozenset(self.topic_partitions),
                                           self.txn_start_timestamp, self.txn_last_update_timestamp)

    def prepare_increment_producer_epoch(self, new_txn_timeout_ms: int, expected_producer_epoch: Optional[int],
                                         update_timestamp: int) -> Union[Errors, TxnTransitMetadata]:
        """An epoch bump for InitProducerId; an ``Errors`` (PRODUCER_FENCED) when the caller's
        expected epoch shows it has been fenced."""
        if self.is_producer_epoch_exhausted:
            raise RuntimeError(f"Cannot allocate any more producer epochs for producerId {self.producer_id}")
        bumped_epoch = self.producer_epoch + 1
        if expected_producer_epoch is None:
            # a new producer instance: bump, and forget the previous epoch
            next_epoch, last_epoch = bumped_epoch, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_producer_epoch == self.producer_epoch:
            # the current producer continuing after an error
            next_epoch, last_epoch = bumped_epoch, self.producer_epoch
        elif expected_producer_epoch == self.last_producer_epoch:
            # a retry of a bump that succeeded: answer the same epoch again
            next_epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        else:
            logger.info("Expected producer epoch %d does not match current producer epoch %d or previous producer "
                        "epoch %d", expected_producer_epoch, self.producer_epoch, self.last_producer_epoch)
            return Errors.PRODUCER_FENCED
        return self._prepare_transition_to(Empty, self.producer_id, next_epoch, last_epoch, new_txn_timeout_ms,
                                           frozenset(), -1, update_timestamp)

    def prepare_producer_id_rotation(self, new_producer_id: int, new_txn_timeout_ms: int, update_timestamp: int,
                                     record_last_epoch: bool) -> TxnTransitMetadata:
        if self._has_pending_transaction:
            raise RuntimeError("Cannot rotate producer ids while a transaction is still pending")
        return self._prepare_transition_to(Empty, new_producer_id, 0,
                                           self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                                           new_txn_timeout_ms, frozenset(), -1, update_timestamp)

    def prepare_add_partitions(self, added_topic_partitions: Iterable[TopicPartition],
                               update_timestamp: int) -> TxnTransitMetadata:
        if self.state in (Empty, CompleteAbort, CompleteCommit):
            new_txn_start_timestamp = update_timestamp
        else:
            new_txn_start_timestamp = self.txn_start_timestamp
        return self._prepare_transition_to(Ongoing, self.producer_id, self.producer_epoch, self.last_producer_epoch,
                                           self.txn_timeout_ms,
                                           frozenset(self.topic_partitions) | frozenset(added_topic_partitions),
                                           new_txn_start_timestamp, update_timestamp)

    def prepare_abort_or_commit(self, new_state: TransactionState, update_timestamp: int) -> TxnTransitMetadata:
        return self._prepare_transition_to(new_state, self.producer_id, self.producer_epoch,
                                           self.last_producer_epoch, self.txn_timeout_ms,
                                           frozenset(self.topic_partitions), self.txn_start_timestamp,
                                           update_timestamp)

    def prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        new_state = CompleteCommit if self.state is PrepareCommit else CompleteAbort
        # the prepare record made it to the log, so a failed fence before it no longer matters
        self.has_failed_epoch_fence = False
        return self._prepare_transition_to(new_state, self.producer_id, self.producer_epoch,
                                           self.last_producer_epoch, self.txn_timeout_ms, frozenset(),
                                           self.txn_start_timestamp, update_timestamp)

    def prepare_dead(self) -> TxnTransitMetadata:
        return self._prepare_transition_to(Dead, self.producer_id, self.producer_epoch, self.last_producer_epoch,
                                           self.txn_timeout_ms, frozenset(), self.txn_start_timestamp,
                                           self.txn_last_update_timestamp)

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def _has_pending_transaction(self) -> bool:
        return self.state in (Ongoing, PrepareAbort, PrepareCommit)

    def _prepare_transition_to(self, new_state: TransactionState, new_producer_id: int, new_epoch: int,
                               new_last_epoch: int, new_txn_timeout_ms: int,
                               new_topic_partitions: FrozenSet[TopicPartition], new_txn_start_timestamp: int,
                               update_timestamp: int) -> TxnTransitMetadata:
        if self.pending_state is not None:
            raise RuntimeError(f"Preparing transaction state transition to {new_state} while it already a pending "
                               f"state {self.pending_state}")
        if new_producer_id < 0:
            raise ValueError(f"Illegal new producer id {new_producer_id}")
        if new_epoch < 0:
            raise ValueError(f"Illegal new producer epoch {new_epoch}")
        if self.state not in new_state.valid_previous_states:
            raise RuntimeError(f"Preparing transaction state transition to {new_state} failed since the target "
                               f"state {new_state} is not a valid previous state of the current state {self.state}")
        transit = TxnTransitMetadata(new_producer_id, self.producer_id, new_epoch, new_last_epoch,
                                     new_txn_timeout_ms, new_state, new_topic_partitions, new_txn_start_timestamp,
                                     update_timestamp)
        logger.debug("TransactionalId %s prepare transition from %s to %s", self.transactional_id, self.state,
                     transit)
        self.pending_state = new_state
        return transit

    # ------------------------------------------------------------------ completing

    def complete_transition_to(self, transit: TxnTransitMetadata) -> None:
        """Apply a prepared transition whose log write has been replicated.

        Valid only if the pending state is the transit's state, the epoch is the same (or the
        next, or 0 with a new producer id, for Empty), the partitions only grow, and the
        timestamps make sense for the state; anything else is a coordinator bug.
        """
        to_state = self.pending_state
        if to_state is None:
            logger.critical("%r's transition to %s failed since pendingState is not defined: this should not happen",
                            self, transit)
            raise RuntimeError(f"TransactionalId {self.transactional_id} completing transaction state transition "
                               "while it does not have a pending state")
        if to_state is not transit.txn_state:
            self._throw_state_transition_failure(transit)
        if to_state is Empty:  # InitProducerId
            if ((self.producer_epoch != transit.producer_epoch and not self._valid_producer_epoch_bump(transit))
                    or transit.topic_partitions or transit.txn_start_timestamp != -1):
                self._throw_state_transition_failure(transit)
            self.txn_timeout_ms = transit.txn_timeout_ms
            self.producer_epoch = transit.producer_epoch
            self.last_producer_epoch = transit.last_producer_epoch
            self.producer_id = transit.producer_id
            self.last_producer_id = transit.last_producer_id
        elif to_state is Ongoing:  # AddPartitionsToTxn / AddOffsetsToTxn
            if (not self._valid_producer_epoch(transit) or not self.topic_partitions <= transit.topic_partitions
                    or self.txn_timeout_ms != transit.txn_timeout_ms):
                self._throw_state_transition_failure(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.add_partitions(transit.topic_partitions)
        elif to_state in (PrepareAbort, PrepareCommit):  # EndTxn or a timeout
            if (not self._valid_producer_epoch(transit) or self.topic_partitions != set(transit.topic_partitions)
                    or self.txn_timeout_ms != transit.txn_timeout_ms
                    or self.txn_start_timestamp != transit.txn_start_timestamp):
                self._throw_state_transition_failure(transit)
        elif to_state in (CompleteAbort, CompleteCommit):  # every marker written
            if (not self._valid_producer_epoch(transit) or self.txn_timeout_ms != transit.txn_timeout_ms
                    or transit.txn_start_timestamp == -1):
                self._throw_state_transition_failure(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.topic_partitions.clear()
        elif to_state is PrepareEpochFence:
            # never completed: a fence goes straight on to PrepareAbort
            self._throw_state_transition_failure(transit)
        else:  # Dead
            raise RuntimeError(f"TransactionalId {self.transactional_id} is trying to complete a transition to "
                               f"{to_state}. This means that the transactionalId was being expired, and the only "
                               "acceptable completion of this operation is to remove the transaction metadata from "
                               f"the cache, not to persist the {to_state} in the log.")
        logger.debug("TransactionalId %s complete transition from %s to %s", self.transactional_id, self.state,
                     transit)
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None
        self.state = to_state

    def _valid_producer_epoch(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch and transit.producer_id == self.producer_id

    def _valid_producer_epoch_bump(self, transit: TxnTransitMetadata) -> bool:
        return (transit.producer_epoch == self.producer_epoch + 1
                or (transit.producer_epoch == 0 and transit.producer_id != self.producer_id))

    def _throw_state_transition_failure(self, transit: TxnTransitMetadata) -> None:
        logger.critical("%r's transition to %s failed: this should not happen", self, transit)
        raise RuntimeError(f"TransactionalId {self.transactional_id} failed transition to state {transit} due to "
                           "unexpected metadata")

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    def __repr__(self) -> str:
        return (f"TransactionMetadata(transactionalId={self.transactional_id}, producerId={self.producer_id}, "
                f"producerEpoch={self.producer_epoch}, txnTimeoutMs={self.txn_timeout_ms}, state={self.state}, "
                f"pendingState={self.pending_state}, topicPartitions={_partitions_str(self.topic_partitions)}, "
                f"txnStartTimestamp={self.txn_start_timestamp}, "
                f"txnLastUpdateTimestamp={self.txn_last_update_timestamp})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TransactionMetadata):
            return NotImplemented
        return (self.transactional_id == other.transactional_id and self.producer_id == other.producer_id
                and self.producer_epoch == other.producer_epoch
                and self.last_producer_epoch == other.last_producer_epoch
                and self.txn_timeout_ms == other.txn_timeout_ms and self.state is other.state
                and self.topic_partitions == other.topic_partitions
                and self.txn_start_timestamp == other.txn_start_timestamp
                and self.txn_last_update_timestamp == other.txn_last_update_timestamp)

    __hash__ = None  # type: ignore[assignment]  # mutable


__all__ = [
    "CompleteAbort", "CompleteCommit", "Dead", "Empty", "NO_PRODUCER_EPOCH", "NO_PRODUCER_ID", "Ongoing",
    "PrepareAbort", "PrepareCommit", "PrepareEpochFence", "TransactionMetadata", "TransactionState",
    "TxnTransitMetadata", "is_epoch_exhausted", "is_valid_transition",
]
