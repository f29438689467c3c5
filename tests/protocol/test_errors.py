"""Errors: Kafka 2.8.2's codes, lookups, and the bridge to our exceptions."""
from __future__ import annotations

import pytest
from kio.schema.errors import ErrorCode

from kafka_py.clients.common import errors as common_errors
from kafka_py.clients.common.protocol.errors import Errors


def test_codes_cover_minus_one_to_105_without_gaps() -> None:
    # 2.8.2's -1 to 104, and Kafka 3.0's TRANSACTIONAL_ID_NOT_FOUND for DescribeTransactions
    assert [e.code for e in Errors] == list(range(-1, 106))
    assert Errors.TRANSACTIONAL_ID_NOT_FOUND.code == 105 and not Errors.TRANSACTIONAL_ID_NOT_FOUND.retriable
    assert Errors.UNKNOWN_SERVER_ERROR.code == -1
    assert Errors.NONE.code == 0
    assert Errors.CORRUPT_MESSAGE.code == 2
    assert Errors.NOT_LEADER_OR_FOLLOWER.code == 6
    assert Errors.UNSUPPORTED_VERSION.code == 35
    assert Errors.INVALID_REQUEST.code == 42
    assert Errors.POSITION_OUT_OF_RANGE.code == 99
    assert Errors.INCONSISTENT_CLUSTER_ID.code == 104


def test_lookup_by_name_and_code() -> None:
    assert Errors["CORRUPT_MESSAGE"] is Errors.CORRUPT_MESSAGE
    assert Errors(2) is Errors.CORRUPT_MESSAGE
    assert Errors.for_code(47) is Errors.INVALID_PRODUCER_EPOCH
    assert Errors.for_code(-1) is Errors.UNKNOWN_SERVER_ERROR


def test_unknown_code_maps_to_unknown_server_error(caplog) -> None:
    assert Errors.for_code(106) is Errors.UNKNOWN_SERVER_ERROR
    assert Errors.for_code(-2) is Errors.UNKNOWN_SERVER_ERROR
    assert "Unexpected error code: 106" in caplog.text


def test_messages_and_retriable() -> None:
    assert Errors.NONE.default_message is None and Errors.NONE.message == "NONE"
    assert Errors.CORRUPT_MESSAGE.message.startswith("This message has failed its CRC checksum")
    assert Errors.UNKNOWN_TOPIC_OR_PARTITION.message == (
        "This server does not host this topic-partition."
    )
    assert Errors.NOT_LEADER_OR_FOLLOWER.retriable
    assert Errors.REPLICA_NOT_AVAILABLE.retriable  # via InvalidMetadataException
    assert not Errors.INVALID_REQUEST.retriable
    # In 2.8.2 ConcurrentTransactionsException is not retriable (later Kafkas changed it).
    assert not Errors.CONCURRENT_TRANSACTIONS.retriable
    assert all(e.message for e in Errors)


def test_error_code_bridges_to_kio() -> None:
    assert Errors.CORRUPT_MESSAGE.error_code is ErrorCode.corrupt_message
    for error in Errors:
        assert error.error_code.value == error.code
        assert error.error_code.name.upper() == error.name


def test_for_exception_uses_error_name() -> None:
    assert Errors.for_exception(common_errors.CorruptRecordException("bad crc")) is (
        Errors.CORRUPT_MESSAGE
    )
    assert Errors.for_exception(common_errors.NotLeaderOrFollowerException()) is (
        Errors.NOT_LEADER_OR_FOLLOWER
    )
    assert Errors.for_exception(common_errors.InvalidRequestException()) is Errors.INVALID_REQUEST
    assert Errors.for_exception(ValueError("bug")) is Errors.UNKNOWN_SERVER_ERROR
    assert Errors.for_exception(common_errors.InvalidConfigException("x")) is (
        Errors.UNKNOWN_SERVER_ERROR
    )


def test_every_common_api_exception_names_a_real_error() -> None:
    for value in vars(common_errors).values():
        if isinstance(value, type) and issubclass(value, common_errors.ApiException):
            assert value.error_name in Errors.__members__, value
            assert Errors.for_exception(value()) is Errors[value.error_name]


def test_exception_round_trips_through_for_exception() -> None:
    assert Errors.NONE.exception() is None
    for error in Errors:
        if error is Errors.NONE:
            continue
        exc = error.exception("detail")
        assert isinstance(exc, common_errors.ApiException)
        assert str(exc) == "detail"
        assert Errors.for_exception(exc) is error


def test_exception_prefers_our_classes() -> None:
    assert type(Errors.CORRUPT_MESSAGE.exception()) is common_errors.CorruptRecordException
    assert str(Errors.CORRUPT_MESSAGE.exception()) == Errors.CORRUPT_MESSAGE.message
    assert type(Errors.NOT_COORDINATOR.exception()).__name__ == "NotCoordinatorException"


def test_maybe_raise() -> None:
    Errors.NONE.maybe_raise()
    with pytest.raises(common_errors.UnknownTopicOrPartitionException, match="t-0"):
        Errors.UNKNOWN_TOPIC_OR_PARTITION.maybe_raise("t-0")
