"""TransactionLog's record formats and TransactionMetadata's state machine (after Kafka's
TransactionLogTest and TransactionMetadataTest)."""
from __future__ import annotations

import struct

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction import transaction_log
from kafka_py.core.coordinator.transaction.transaction_metadata import (
    CompleteAbort,
    CompleteCommit,
    Dead,
    Empty,
    Ongoing,
    PrepareAbort,
    PrepareCommit,
    PrepareEpochFence,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafka_py.clients.common.protocol.codec import SchemaException
from kafka_py.clients.common.protocol.errors import Errors

TP0 = TopicPartition("topic", 0)
TP1 = TopicPartition("topic", 1)
OTHER = TopicPartition("other", 3)


# ---------------------------------------------------------------------------- record formats


def test_key_is_version_0_and_the_id():
    assert transaction_log.key_to_bytes("tx") == b"\x00\x00" + b"\x00\x02tx"
    assert transaction_log.read_txn_record_key(b"\x00\x00\x00\x02tx").transactional_id == "tx"
    with pytest.raises(SchemaException):
        transaction_log.read_txn_record_key(b"\x00\x01\x00\x02tx")


def test_value_layout_is_kafkas_and_round_trips():
    transit = TxnTransitMetadata(producer_id=7, last_producer_id=-1, producer_epoch=3, last_producer_epoch=-1,
                                 txn_timeout_ms=60_000, txn_state=Ongoing,
                                 topic_partitions=frozenset({TP1, TP0, OTHER}), txn_start_timestamp=100,
                                 txn_last_update_timestamp=200)
    value = transaction_log.value_to_bytes(transit)
    # version, producer id, epoch, timeout, status, then [topic, [partitions]] sorted by topic
    head = struct.pack(">hqhib", 0, 7, 3, 60_000, 1)
    partitions = (struct.pack(">i", 2) + struct.pack(">h", 5) + b"other" + struct.pack(">ii", 1, 3)
                  + struct.pack(">h", 5) + b"topic" + struct.pack(">iii", 2, 0, 1))
    assert value == head + partitions + struct.pack(">qq", 200, 100)
    metadata = transaction_log.read_txn_record_value("tx", value)
    assert (metadata.producer_id, metadata.producer_epoch, metadata.txn_timeout_ms, metadata.state) == \
        (7, 3, 60_000, Ongoing)
    assert metadata.topic_partitions == {TP0, TP1, OTHER}
    assert (metadata.txn_start_timestamp, metadata.txn_last_update_timestamp) == (100, 200)


def test_empty_state_has_null_partitions_and_tombstones_are_none():
    transit = TxnTransitMetadata(5, -1, 0, -1, 1000, Empty, frozenset(), -1, 50)
    value = transaction_log.value_to_bytes(transit)
    assert value[2 + 8 + 2 + 4 + 1:2 + 8 + 2 + 4 + 1 + 4] == b"\xff\xff\xff\xff"
    assert transaction_log.read_txn_record_value("tx", value).topic_partitions == set()
    assert transaction_log.read_txn_record_value("tx", None) is None
    with pytest.raises(RuntimeError):
        transaction_log.value_to_bytes(TxnTransitMetadata(5, -1, 0, -1, 1000, Empty, frozenset({TP0}), -1, 50))


def test_every_state_byte_and_bad_values():
    for state in TransactionState:
        transit = TxnTransitMetadata(1, -1, 0, -1, 10, state, frozenset() if state is Empty else frozenset({TP0}),
                                     1, 2)
        assert transaction_log.read_txn_record_value("x", transaction_log.value_to_bytes(transit)).state is state
    good = transaction_log.value_to_bytes(TxnTransitMetadata(1, -1, 0, -1, 10, Ongoing, frozenset({TP0}), 1, 2))
    bad_state = bytearray(good)
    bad_state[2 + 8 + 2 + 4] = 9
    for damaged in (bytes(bad_state), good[:-3], b"\x00\x01" + good[2:]):
        with pytest.raises(SchemaException):
            transaction_log.read_txn_record_value("x", damaged)


def test_dump_log_text():
    transit = TxnTransitMetadata(7, -1, 3, -1, 60_000, CompleteCommit, frozenset(), 100, 200)
    key, value = transaction_log.format_record_key_and_value(transaction_log.key_to_bytes("tx"),
                                                            transaction_log.value_to_bytes(transit))
    assert key == "transaction_metadata::transactionalId=tx"
    assert value == ("producerId:7,producerEpoch:3,state=CompleteCommit,partitions=[],"
                     "txnLastUpdateTimestamp=200,txnTimeoutMs=60000")
    assert transaction_log.format_record_key_and_value(transaction_log.key_to_bytes("tx"), None)[1] == "<DELETE>"


# ---------------------------------------------------------------------------- the state machine


def _metadata(state=Empty, epoch=0, partitions=()) -> TransactionMetadata:
    m = TransactionMetadata("tx", 7, -1, epoch, -1, 30_000, state, partitions, -1, 0)
    if state in (Ongoing, PrepareCommit, PrepareAbort):
        m.txn_start_timestamp = 1
    return m


def test_add_partitions_then_commit_then_complete():
    m = _metadata()
    transit = m.prepare_add_partitions({TP0}, 10)
    assert m.pending_state is Ongoing
    with pytest.raises(RuntimeError):  # one transition at a time
        m.prepare_add_partitions({TP1}, 11)
    m.complete_transition_to(transit)
    assert (m.state, m.topic_partitions, m.txn_start_timestamp) == (Ongoing, {TP0}, 10)
    m.complete_transition_to(m.prepare_add_partitions({TP1}, 12))
    assert m.topic_partitions == {TP0, TP1} and m.txn_start_timestamp == 10
    m.complete_transition_to(m.prepare_abort_or_commit(PrepareCommit, 13))
    assert m.state is PrepareCommit
    m.remove_partition(TP0)
    complete = m.prepare_complete(14)
    assert complete.txn_state is CompleteCommit and complete.topic_partitions == frozenset()
    m.complete_transition_to(complete)
    assert m.state is CompleteCommit and not m.topic_partitions and m.txn_last_update_timestamp == 14


def test_invalid_transitions_are_refused():
    m = _metadata(Empty)
    with pytest.raises(RuntimeError):
        m.prepare_abort_or_commit(PrepareCommit, 1)
    m = _metadata(Ongoing, partitions=[TP0])
    with pytest.raises(RuntimeError):
        m.prepare_complete(1)  # CompleteAbort needs PrepareAbort
    with pytest.raises(RuntimeError):
        m.remove_partition(TP0)  # only while markers are sent
    m = _metadata(CompleteCommit)
    m.complete_transition_to(m.prepare_add_partitions({TP0}, 5))
    assert m.state is Ongoing


def test_epoch_bumps_and_fencing():
    m = _metadata(Empty, epoch=-1)
    transit = m.prepare_increment_producer_epoch(30_000, None, 5)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (0, -1)
    m.complete_transition_to(transit)
    # the same producer continuing after an error: its epoch is remembered
    transit = m.prepare_increment_producer_epoch(30_000, 0, 6)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (1, 0)
    m.complete_transition_to(transit)
    # a retry of that bump gets the same epoch again
    transit = m.prepare_increment_producer_epoch(30_000, 0, 7)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (1, 0)
    m.pending_state = None
    # an epoch that is neither current nor previous is fenced
    assert m.prepare_increment_producer_epoch(30_000, 5, 8) is Errors.PRODUCER_FENCED
    m = _metadata(Ongoing, epoch=4, partitions=[TP0])
    fence = m.prepare_fence_producer_epoch()
    assert fence.txn_state is PrepareEpochFence and fence.producer_epoch == 5
    m.pending_state = None
    m.has_failed_epoch_fence = True
    assert m.prepare_fence_producer_epoch().producer_epoch == 4


def test_exhausted_epoch_rotates_the_producer_id():
    m = _metadata(CompleteCommit, epoch=32_766)
    assert m.is_producer_epoch_exhausted
    transit = m.prepare_producer_id_rotation(8, 30_000, 9, record_last_epoch=True)
    assert (transit.producer_id, transit.producer_epoch, transit.last_producer_epoch, transit.last_producer_id) == \
        (8, 0, 32_766, 7)
    m.complete_transition_to(transit)
    assert (m.producer_id, m.producer_epoch, m.last_producer_id) == (8, 0, 7)


def test_dead_is_never_completed():
    m = _metadata(CompleteAbort)
    transit = m.prepare_dead()
    with pytest.raises(RuntimeError):
        m.complete_transition_to(transit)
    assert Dead.byte == 6 and Dead.valid_previous_states == {Empty, CompleteAbort, CompleteCommit}
