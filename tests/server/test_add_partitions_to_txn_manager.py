"""The pure parts of transaction verification (server/add_partitions_to_txn_manager.py): what a
coordinator's description of a transactional id lets a producer write, how a refusal is
answered to the producer, and the DescribeTransactions messages on the wire."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction.transaction_coordinator import TransactionDescription
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_request, decode_response, encode_request, encode_response, \
    response_schema
from kafka_py.server.add_partitions_to_txn_manager import (
    AddPartitionsToTxnManager,
    description_from_response,
    produce_error,
    verification_errors,
)

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)
PID, EPOCH = 4000, 3


def described(state: str = "Ongoing", producer_id: int = PID, epoch: int = EPOCH, partitions=(TP0,),
              error: Errors = Errors.NONE) -> TransactionDescription:
    return TransactionDescription("tx", error, state, 60_000, 1, producer_id, epoch, frozenset(partitions))


def test_only_the_ongoing_transactions_partitions_at_its_producer_and_epoch() -> None:
    assert verification_errors(described(), PID, EPOCH, [TP0]) == {}
    assert verification_errors(described(), PID, EPOCH, [TP0, TP1]) == {TP1: Errors.INVALID_TXN_STATE}
    assert verification_errors(described(producer_id=PID + 1), PID, EPOCH, [TP0]) == {TP0: Errors.INVALID_TXN_STATE}
    assert verification_errors(described(epoch=EPOCH + 1), PID, EPOCH, [TP0]) == {TP0: Errors.INVALID_PRODUCER_EPOCH}
    assert verification_errors(described(epoch=EPOCH - 1), PID, EPOCH, [TP0]) == {TP0: Errors.INVALID_TXN_STATE}
    for state in ("Empty", "CompleteCommit", "CompleteAbort", "PrepareEpochFence"):
        assert verification_errors(described(state), PID, EPOCH, [TP0]) == {TP0: Errors.INVALID_TXN_STATE}, state
    for state in ("PrepareCommit", "PrepareAbort"):
        assert verification_errors(described(state), PID, EPOCH, [TP0]) == {TP0: Errors.CONCURRENT_TRANSACTIONS}


@pytest.mark.parametrize("coordinator_error, expected", [
    (Errors.TRANSACTIONAL_ID_NOT_FOUND, Errors.INVALID_PRODUCER_ID_MAPPING),
    (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Errors.INVALID_TXN_STATE),
    (Errors.NOT_COORDINATOR, Errors.NOT_COORDINATOR),
    (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_LOAD_IN_PROGRESS),
])
def test_a_coordinator_error_refuses_every_partition(coordinator_error, expected) -> None:
    assert verification_errors(described(error=coordinator_error), PID, EPOCH, [TP0, TP1]) == \
        {TP0: expected, TP1: expected}


def test_what_the_producer_is_told() -> None:
    assert produce_error(Errors.INVALID_TXN_STATE) == (Errors.INVALID_TXN_STATE,
                                                       "Partition was not added to the transaction")
    for retriable in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS,
                      Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION):
        error, message = produce_error(retriable)
        assert error is Errors.NOT_ENOUGH_REPLICAS and error.retriable
        assert message.endswith(f"Underlying error: {retriable.name}")
    assert produce_error(Errors.INVALID_PRODUCER_EPOCH) == (Errors.INVALID_PRODUCER_EPOCH, None)
    assert produce_error(Errors.INVALID_PRODUCER_ID_MAPPING) == (Errors.INVALID_PRODUCER_ID_MAPPING, None)


def test_describe_transactions_on_the_wire() -> None:
    request = AddPartitionsToTxnManager.describe_transactions_request(["a", "tx"])
    header = RequestHeader.for_request(ApiKeys.DESCRIBE_TRANSACTIONS, 0, 9, "broker-1")
    frame = encode_request(header, request)
    parsed_header, parsed = decode_request(frame[4:])
    assert parsed_header.api_key is ApiKeys.DESCRIBE_TRANSACTIONS and list(parsed.transactional_ids) == ["a", "tx"]

    response = build_entity(response_schema(ApiKeys.DESCRIBE_TRANSACTIONS, 0), {
        "throttle_time_ms": 0, "transaction_states": [
            {"error_code": Errors.NONE, "transactional_id": "tx", "transaction_state": "Ongoing",
             "transaction_timeout_ms": 60_000, "transaction_start_time_ms": 1_700_000_000_000, "producer_id": PID,
             "producer_epoch": EPOCH, "topics": [{"topic": "t", "partitions": [0, 1]}]},
            {"error_code": Errors.NOT_COORDINATOR, "transactional_id": "a", "transaction_state": "",
             "transaction_timeout_ms": 0, "transaction_start_time_ms": -1, "producer_id": -1, "producer_epoch": -1,
             "topics": []}]})
    wire = encode_response(header.to_response_header(), response)
    _, decoded = decode_response(wire[4:], ApiKeys.DESCRIBE_TRANSACTIONS, 0)
    ongoing, moved = (description_from_response(s) for s in decoded.transaction_states)
    assert (ongoing.error, ongoing.state, ongoing.producer_id, ongoing.producer_epoch) == \
        (Errors.NONE, "Ongoing", PID, EPOCH)
    assert ongoing.topic_partitions == {TP0, TP1}
    assert verification_errors(ongoing, PID, EPOCH, [TP1]) == {}
    assert moved.error is Errors.NOT_COORDINATOR and moved.transactional_id == "a"
