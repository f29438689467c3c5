"""Exceptions of clients/.../org/apache/kafka/common/errors.

Each ApiException names the protocol error (``error_name``, an ``Errors`` member's
name) it turns into when it reaches a response, so code deep in the log can raise a
precise exception and KafkaApis can answer with Kafka's error code
(``Errors.for_exception``, kafka_py/clients/common/protocol/errors.py) without a mapping table of its
own. The names keep this module below the protocol package: Errors imports these
classes, never the other way round.
"""
from __future__ import annotations


class KafkaException(Exception):
    """Base of every error raised by kafka-py itself."""


class ApiException(KafkaException):
    """An error that has a Kafka protocol error code."""

    error_name = "UNKNOWN_SERVER_ERROR"


def _api(name: str, error_name: str, base: type = ApiException) -> type:
    return type(name, (base,), {"error_name": error_name, "__module__": __name__})


InvalidRequestException = _api("InvalidRequestException", "INVALID_REQUEST")
CorruptRecordException = _api("CorruptRecordException", "CORRUPT_MESSAGE")
InvalidRecordException = _api("InvalidRecordException", "INVALID_RECORD")
InvalidTimestampException = _api("InvalidTimestampException", "INVALID_TIMESTAMP")
RecordTooLargeException = _api("RecordTooLargeException", "MESSAGE_TOO_LARGE")
RecordBatchTooLargeException = _api("RecordBatchTooLargeException", "RECORD_LIST_TOO_LARGE")
UnsupportedCompressionTypeException = _api(
    "UnsupportedCompressionTypeException", "UNSUPPORTED_COMPRESSION_TYPE"
)
UnsupportedForMessageFormatException = _api(
    "UnsupportedForMessageFormatException", "UNSUPPORTED_FOR_MESSAGE_FORMAT"
)
OffsetOutOfRangeException = _api("OffsetOutOfRangeException", "OFFSET_OUT_OF_RANGE")
InvalidOffsetException = _api("InvalidOffsetException", "UNKNOWN_SERVER_ERROR")
UnknownTopicOrPartitionException = _api(
    "UnknownTopicOrPartitionException", "UNKNOWN_TOPIC_OR_PARTITION"
)
NotLeaderOrFollowerException = _api("NotLeaderOrFollowerException", "NOT_LEADER_OR_FOLLOWER")
KafkaStorageException = _api("KafkaStorageException", "KAFKA_STORAGE_ERROR")
LogDirNotFoundException = _api("LogDirNotFoundException", "LOG_DIR_NOT_FOUND")
OutOfOrderSequenceException = _api("OutOfOrderSequenceException", "OUT_OF_ORDER_SEQUENCE_NUMBER")
DuplicateSequenceException = _api("DuplicateSequenceException", "DUPLICATE_SEQUENCE_NUMBER")
InvalidProducerEpochException = _api("InvalidProducerEpochException", "INVALID_PRODUCER_EPOCH")
ProducerFencedException = _api("ProducerFencedException", "INVALID_PRODUCER_EPOCH")
UnknownProducerIdException = _api("UnknownProducerIdException", "UNKNOWN_PRODUCER_ID")
InvalidTxnStateException = _api("InvalidTxnStateException", "INVALID_TXN_STATE")
TransactionCoordinatorFencedException = _api(
    "TransactionCoordinatorFencedException", "TRANSACTION_COORDINATOR_FENCED"
)
PolicyViolationException = _api("PolicyViolationException", "POLICY_VIOLATION")
InvalidConfigurationException = _api("InvalidConfigurationException", "INVALID_CONFIG")
UnsupportedVersionException = _api("UnsupportedVersionException", "UNSUPPORTED_VERSION")
ControllerMovedException = _api("ControllerMovedException", "NOT_CONTROLLER")
TopicExistsException = _api("TopicExistsException", "TOPIC_ALREADY_EXISTS")
InvalidTopicException = _api("InvalidTopicException", "INVALID_TOPIC_EXCEPTION")
InvalidPartitionsException = _api("InvalidPartitionsException", "INVALID_PARTITIONS")
InvalidReplicationFactorException = _api(
    "InvalidReplicationFactorException", "INVALID_REPLICATION_FACTOR"
)
InvalidReplicaAssignmentException = _api(
    "InvalidReplicaAssignmentException", "INVALID_REPLICA_ASSIGNMENT"
)
BrokerNotAvailableException = _api("BrokerNotAvailableException", "BROKER_NOT_AVAILABLE")
ThrottlingQuotaExceededException = _api("ThrottlingQuotaExceededException", "THROTTLING_QUOTA_EXCEEDED")
# Kafka 3.x's: a KRaft node's StandardAuthorizer asked about a principal that is not a super
# user before it has read the ACLs up to the metadata log's high watermark. No error code of
# its own (Kafka's Errors has none either), so the client sees UNKNOWN_SERVER_ERROR.
AuthorizerNotReadyException = _api("AuthorizerNotReadyException", "UNKNOWN_SERVER_ERROR")


class LogSegmentOffsetOverflowException(KafkaException):
    """A segment holds offsets that do not fit its 4-byte relative index entries."""


class InvalidConfigException(KafkaException):
    """A configuration value is invalid; the message names the key, the value and what is allowed."""


class AdminOperationException(KafkaException):
    """core's kafka.admin.AdminOperationException: an admin operation (AdminZkClient, AdminUtils,
    the election tools' input) failed for a reason with no protocol error of its own."""
