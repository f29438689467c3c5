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


class InvalidRequestException(ApiException):
    error_name = "INVALID_REQUEST"


class CorruptRecordException(ApiException):
    error_name = "CORRUPT_MESSAGE"


class InvalidRecordException(ApiException):
    error_name = "INVALID_RECORD"


class InvalidTimestampException(ApiException):
    error_name = "INVALID_TIMESTAMP"


class RecordTooLargeException(ApiException):
    error_name = "MESSAGE_TOO_LARGE"


class RecordBatchTooLargeException(ApiException):
    error_name = "RECORD_LIST_TOO_LARGE"


class UnsupportedCompressionTypeException(ApiException):
    error_name = "UNSUPPORTED_COMPRESSION_TYPE"


class UnsupportedForMessageFormatException(ApiException):
    error_name = "UNSUPPORTED_FOR_MESSAGE_FORMAT"


class OffsetOutOfRangeException(ApiException):
    error_name = "OFFSET_OUT_OF_RANGE"


class InvalidOffsetException(ApiException):
    error_name = "UNKNOWN_SERVER_ERROR"


class UnknownTopicOrPartitionException(ApiException):
    error_name = "UNKNOWN_TOPIC_OR_PARTITION"


class NotLeaderOrFollowerException(ApiException):
    error_name = "NOT_LEADER_OR_FOLLOWER"


class KafkaStorageException(ApiException):
    error_name = "KAFKA_STORAGE_ERROR"


class LogDirNotFoundException(ApiException):
    error_name = "LOG_DIR_NOT_FOUND"


class OutOfOrderSequenceException(ApiException):
    error_name = "OUT_OF_ORDER_SEQUENCE_NUMBER"


class DuplicateSequenceException(ApiException):
    error_name = "DUPLICATE_SEQUENCE_NUMBER"


class InvalidProducerEpochException(ApiException):
    error_name = "INVALID_PRODUCER_EPOCH"


class ProducerFencedException(ApiException):
    error_name = "INVALID_PRODUCER_EPOCH"


class UnknownProducerIdException(ApiException):
    error_name = "UNKNOWN_PRODUCER_ID"


class InvalidTxnStateException(ApiException):
    error_name = "INVALID_TXN_STATE"


class TransactionCoordinatorFencedException(ApiException):
    error_name = "TRANSACTION_COORDINATOR_FENCED"


class PolicyViolationException(ApiException):
    error_name = "POLICY_VIOLATION"


class InvalidConfigurationException(ApiException):
    error_name = "INVALID_CONFIG"


class UnsupportedVersionException(ApiException):
    error_name = "UNSUPPORTED_VERSION"


class ControllerMovedException(ApiException):
    error_name = "NOT_CONTROLLER"


class TopicExistsException(ApiException):
    error_name = "TOPIC_ALREADY_EXISTS"


class InvalidTopicException(ApiException):
    error_name = "INVALID_TOPIC_EXCEPTION"


class InvalidPartitionsException(ApiException):
    error_name = "INVALID_PARTITIONS"


class InvalidReplicationFactorException(ApiException):
    error_name = "INVALID_REPLICATION_FACTOR"


class InvalidReplicaAssignmentException(ApiException):
    error_name = "INVALID_REPLICA_ASSIGNMENT"


class BrokerNotAvailableException(ApiException):
    error_name = "BROKER_NOT_AVAILABLE"


class ThrottlingQuotaExceededException(ApiException):
    error_name = "THROTTLING_QUOTA_EXCEEDED"


# Kafka 3.x's: a KRaft node's StandardAuthorizer asked about a principal that is not a super
# user before it has read the ACLs up to the metadata log's high watermark. No error code of
# its own (Kafka's Errors has none either), so the client sees UNKNOWN_SERVER_ERROR.
class AuthorizerNotReadyException(ApiException):
    error_name = "UNKNOWN_SERVER_ERROR"


class LogSegmentOffsetOverflowException(KafkaException):
    """A segment holds offsets that do not fit its 4-byte relative index entries: the segment
    (a LogSegment) and the first offset that does not fit, as Kafka's exception carries them."""

    def __init__(self, message: str, segment: object = None, offset: int = -1) -> None:
        super().__init__(message)
        self.segment = segment
        self.offset = offset


class InvalidConfigException(KafkaException):
    """A configuration value is invalid; the message names the key, the value and what is allowed."""


class AdminOperationException(KafkaException):
    """core's kafka.admin.AdminOperationException: an admin operation (AdminZkClient, AdminUtils,
    the election tools' input) failed for a reason with no protocol error of its own."""
