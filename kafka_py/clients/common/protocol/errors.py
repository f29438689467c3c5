"""Port of clients/src/main/java/org/apache/kafka/common/protocol/Errors.java (Kafka 2.8.2).

Every error code Kafka 2.8.2 can put in a response, from UNKNOWN_SERVER_ERROR (-1)
to INCONSISTENT_CLUSTER_ID (104), and Kafka 3.0's TRANSACTIONAL_ID_NOT_FOUND (105) for
DescribeTransactions. Each member carries its wire code, whether a
client may retry it (Kafka's ``RetriableException`` subclasses), the simple name
of Kafka's exception class, and the default message clients print.

Broker code raises the precise exception from ``kafka_py.clients.common.errors`` and
turns it into a response code with ``Errors.for_exception``; responses built with
kio's message classes take ``Errors.X.error_code`` (kio's ``ErrorCode``).
"""
from __future__ import annotations

import enum
import logging
from functools import cache

from kio.schema.errors import ErrorCode

from kafka_py.clients.common import errors as common_errors

logger = logging.getLogger(__name__)


class Errors(enum.Enum):
    """Kafka's protocol errors; ``Errors["CORRUPT_MESSAGE"]`` and ``Errors(2)`` both work."""

    code: int
    retriable: bool
    exception_name: str | None
    default_message: str | None

    def __new__(
        cls, code: int, retriable: bool, exception_name: str | None, default_message: str | None
    ) -> Errors:
        member = object.__new__(cls)
        member._value_ = code
        member.code = code
        member.retriable = retriable
        member.exception_name = exception_name
        member.default_message = default_message
        return member

    UNKNOWN_SERVER_ERROR = (
        -1,
        False,
        "UnknownServerException",
        "The server experienced an unexpected error when processing the request.",
    )
    NONE = (0, False, None, None)
    OFFSET_OUT_OF_RANGE = (
        1,
        False,
        "OffsetOutOfRangeException",
        "The requested offset is not within the range of offsets maintained by the "
        "server.",
    )
    CORRUPT_MESSAGE = (
        2,
        True,
        "CorruptRecordException",
        "This message has failed its CRC checksum, exceeds the valid size, has a null key"
        " for a compacted topic, or is otherwise corrupt.",
    )
    UNKNOWN_TOPIC_OR_PARTITION = (
        3,
        True,
        "UnknownTopicOrPartitionException",
        "This server does not host this topic-partition.",
    )
    INVALID_FETCH_SIZE = (
        4,
        False,
        "InvalidFetchSizeException",
        "The requested fetch size is invalid.",
    )
    LEADER_NOT_AVAILABLE = (
        5,
        True,
        "LeaderNotAvailableException",
        "There is no leader for this topic-partition as we are in the middle of a "
        "leadership election.",
    )
    NOT_LEADER_OR_FOLLOWER = (
        6,
        True,
        "NotLeaderOrFollowerException",
        "For requests intended only for the leader, this error indicates that the broker "
        "is not the current leader. For requests intended for any replica, this error "
        "indicates that the broker is not a replica of the topic partition.",
    )
    REQUEST_TIMED_OUT = (7, True, "TimeoutException", "The request timed out.")
    BROKER_NOT_AVAILABLE = (
        8,
        False,
        "BrokerNotAvailableException",
        "The broker is not available.",
    )
    REPLICA_NOT_AVAILABLE = (
        9,
        True,
        "ReplicaNotAvailableException",
        "The replica is not available for the requested topic-partition. Produce/Fetch "
        "requests and other requests intended only for the leader or follower return "
        "NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.",
    )
    MESSAGE_TOO_LARGE = (
        10,
        False,
        "RecordTooLargeException",
        "The request included a message larger than the max message size the server will "
        "accept.",
    )
    STALE_CONTROLLER_EPOCH = (
        11,
        False,
        "ControllerMovedException",
        "The controller moved to another broker.",
    )
    OFFSET_METADATA_TOO_LARGE = (
        12,
        False,
        "OffsetMetadataTooLarge",
        "The metadata field of the offset request was too large.",
    )
    NETWORK_EXCEPTION = (
        13,
        True,
        "NetworkException",
        "The server disconnected before a response was received.",
    )
    COORDINATOR_LOAD_IN_PROGRESS = (
        14,
        True,
        "CoordinatorLoadInProgressException",
        "The coordinator is loading and hence can't process requests.",
    )
    COORDINATOR_NOT_AVAILABLE = (
        15,
        True,
        "CoordinatorNotAvailableException",
        "The coordinator is not available.",
    )
    NOT_COORDINATOR = (16, True, "NotCoordinatorException", "This is not the correct coordinator.")
    INVALID_TOPIC_EXCEPTION = (
        17,
        False,
        "InvalidTopicException",
        "The request attempted to perform an operation on an invalid topic.",
    )
    RECORD_LIST_TOO_LARGE = (
        18,
        False,
        "RecordBatchTooLargeException",
        "The request included message batch larger than the configured segment size on "
        "the server.",
    )
    NOT_ENOUGH_REPLICAS = (
        19,
        True,
        "NotEnoughReplicasException",
        "Messages are rejected since there are fewer in-sync replicas than required.",
    )
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = (
        20,
        True,
        "NotEnoughReplicasAfterAppendException",
        "Messages are written to the log, but to fewer in-sync replicas than required.",
    )
    INVALID_REQUIRED_ACKS = (
        21,
        False,
        "InvalidRequiredAcksException",
        "Produce request specified an invalid value for required acks.",
    )
    ILLEGAL_GENERATION = (
        22,
        False,
        "IllegalGenerationException",
        "Specified group generation id is not valid.",
    )
    INCONSISTENT_GROUP_PROTOCOL = (
        23,
        False,
        "InconsistentGroupProtocolException",
        "The group member's supported protocols are incompatible with those of existing "
        "members or first group member tried to join with empty protocol type or empty "
        "protocol list.",
    )
    INVALID_GROUP_ID = (24, False, "InvalidGroupIdException", "The configured groupId is invalid.")
    UNKNOWN_MEMBER_ID = (
        25,
        False,
        "UnknownMemberIdException",
        "The coordinator is not aware of this member.",
    )
    INVALID_SESSION_TIMEOUT = (
        26,
        False,
        "InvalidSessionTimeoutException",
        "The session timeout is not within the range allowed by the broker (as configured"
        " by group.min.session.timeout.ms and group.max.session.timeout.ms).",
    )
    REBALANCE_IN_PROGRESS = (
        27,
        False,
        "RebalanceInProgressException",
        "The group is rebalancing, so a rejoin is needed.",
    )
    INVALID_COMMIT_OFFSET_SIZE = (
        28,
        False,
        "InvalidCommitOffsetSizeException",
        "The committing offset data size is not valid.",
    )
    TOPIC_AUTHORIZATION_FAILED = (
        29,
        False,
        "TopicAuthorizationException",
        "Topic authorization failed.",
    )
    GROUP_AUTHORIZATION_FAILED = (
        30,
        False,
        "GroupAuthorizationException",
        "Group authorization failed.",
    )
    CLUSTER_AUTHORIZATION_FAILED = (
        31,
        False,
        "ClusterAuthorizationException",
        "Cluster authorization failed.",
    )
    INVALID_TIMESTAMP = (
        32,
        False,
        "InvalidTimestampException",
        "The timestamp of the message is out of acceptable range.",
    )
    UNSUPPORTED_SASL_MECHANISM = (
        33,
        False,
        "UnsupportedSaslMechanismException",
        "The broker does not support the requested SASL mechanism.",
    )
    ILLEGAL_SASL_STATE = (
        34,
        False,
        "IllegalSaslStateException",
        "Request is not valid given the current SASL state.",
    )
    UNSUPPORTED_VERSION = (
        35,
        False,
        "UnsupportedVersionException",
        "The version of API is not supported.",
    )
    TOPIC_ALREADY_EXISTS = (
        36,
        False,
        "TopicExistsException",
        "Topic with this name already exists.",
    )
    INVALID_PARTITIONS = (
        37,
        False,
        "InvalidPartitionsException",
        "Number of partitions is below 1.",
    )
    INVALID_REPLICATION_FACTOR = (
        38,
        False,
        "InvalidReplicationFactorException",
        "Replication factor is below 1 or larger than the number of available brokers.",
    )
    INVALID_REPLICA_ASSIGNMENT = (
        39,
        False,
        "InvalidReplicaAssignmentException",
        "Replica assignment is invalid.",
    )
    INVALID_CONFIG = (40, False, "InvalidConfigurationException", "Configuration is invalid.")
    NOT_CONTROLLER = (
        41,
        True,
        "NotControllerException",
        "This is not the correct controller for this cluster.",
    )
    INVALID_REQUEST = (
        42,
        False,
        "InvalidRequestException",
        "This most likely occurs because of a request being malformed by the client "
        "library or the message was sent to an incompatible broker. See the broker logs "
        "for more details.",
    )
    UNSUPPORTED_FOR_MESSAGE_FORMAT = (
        43,
        False,
        "UnsupportedForMessageFormatException",
        "The message format version on the broker does not support the request.",
    )
    POLICY_VIOLATION = (
        44,
        False,
        "PolicyViolationException",
        "Request parameters do not satisfy the configured policy.",
    )
    OUT_OF_ORDER_SEQUENCE_NUMBER = (
        45,
        False,
        "OutOfOrderSequenceException",
        "The broker received an out of order sequence number.",
    )
    DUPLICATE_SEQUENCE_NUMBER = (
        46,
        False,
        "DuplicateSequenceException",
        "The broker received a duplicate sequence number.",
    )
    INVALID_PRODUCER_EPOCH = (
        47,
        False,
        "InvalidProducerEpochException",
        "Producer attempted to produce with an old epoch.",
    )
    INVALID_TXN_STATE = (
        48,
        False,
        "InvalidTxnStateException",
        "The producer attempted a transactional operation in an invalid state.",
    )
    INVALID_PRODUCER_ID_MAPPING = (
        49,
        False,
        "InvalidPidMappingException",
        "The producer attempted to use a producer id which is not currently assigned to "
        "its transactional id.",
    )
    INVALID_TRANSACTION_TIMEOUT = (
        50,
        False,
        "InvalidTxnTimeoutException",
        "The transaction timeout is larger than the maximum value allowed by the broker "
        "(as configured by transaction.max.timeout.ms).",
    )
    CONCURRENT_TRANSACTIONS = (
        51,
        False,
        "ConcurrentTransactionsException",
        "The producer attempted to update a transaction while another concurrent "
        "operation on the same transaction was ongoing.",
    )
    TRANSACTION_COORDINATOR_FENCED = (
        52,
        False,
        "TransactionCoordinatorFencedException",
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer"
        " the current coordinator for a given producer.",
    )
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = (
        53,
        False,
        "TransactionalIdAuthorizationException",
        "Transactional Id authorization failed.",
    )
    SECURITY_DISABLED = (54, False, "SecurityDisabledException", "Security features are disabled.")
    OPERATION_NOT_ATTEMPTED = (
        55,
        False,
        "OperationNotAttemptedException",
        "The broker did not attempt to execute this operation. This may happen for "
        "batched RPCs where some operations in the batch failed, causing the broker to "
        "respond without trying the rest.",
    )
    KAFKA_STORAGE_ERROR = (
        56,
        True,
        "KafkaStorageException",
        "Disk error when trying to access log file on the disk.",
    )
    LOG_DIR_NOT_FOUND = (
        57,
        False,
        "LogDirNotFoundException",
        "The user-specified log directory is not found in the broker config.",
    )
    SASL_AUTHENTICATION_FAILED = (
        58,
        False,
        "SaslAuthenticationException",
        "SASL Authentication failed.",
    )
    UNKNOWN_PRODUCER_ID = (
        59,
        False,
        "UnknownProducerIdException",
        "This exception is raised by the broker if it could not locate the producer "
        "metadata associated with the producerId in question. This could happen if, for "
        "instance, the producer's records were deleted because their retention time had "
        "elapsed. Once the last records of the producerId are removed, the producer's "
        "metadata is removed from the broker, and future appends by the producer will "
        "return this exception.",
    )
    REASSIGNMENT_IN_PROGRESS = (
        60,
        False,
        "ReassignmentInProgressException",
        "A partition reassignment is in progress.",
    )
    DELEGATION_TOKEN_AUTH_DISABLED = (
        61,
        False,
        "DelegationTokenDisabledException",
        "Delegation Token feature is not enabled.",
    )
    DELEGATION_TOKEN_NOT_FOUND = (
        62,
        False,
        "DelegationTokenNotFoundException",
        "Delegation Token is not found on server.",
    )
    DELEGATION_TOKEN_OWNER_MISMATCH = (
        63,
        False,
        "DelegationTokenOwnerMismatchException",
        "Specified Principal is not valid Owner/Renewer.",
    )
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = (
        64,
        False,
        "UnsupportedByAuthenticationException",
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on"
        " delegation token authenticated channels.",
    )
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = (
        65,
        False,
        "DelegationTokenAuthorizationException",
        "Delegation Token authorization failed.",
    )
    DELEGATION_TOKEN_EXPIRED = (
        66,
        False,
        "DelegationTokenExpiredException",
        "Delegation Token is expired.",
    )
    INVALID_PRINCIPAL_TYPE = (
        67,
        False,
        "InvalidPrincipalTypeException",
        "Supplied principalType is not supported.",
    )
    NON_EMPTY_GROUP = (68, False, "GroupNotEmptyException", "The group is not empty.")
    GROUP_ID_NOT_FOUND = (69, False, "GroupIdNotFoundException", "The group id does not exist.")
    FETCH_SESSION_ID_NOT_FOUND = (
        70,
        True,
        "FetchSessionIdNotFoundException",
        "The fetch session ID was not found.",
    )
    INVALID_FETCH_SESSION_EPOCH = (
        71,
        True,
        "InvalidFetchSessionEpochException",
        "The fetch session epoch is invalid.",
    )
    LISTENER_NOT_FOUND = (
        72,
        True,
        "ListenerNotFoundException",
        "There is no listener on the leader broker that matches the listener on which "
        "metadata request was processed.",
    )
    TOPIC_DELETION_DISABLED = (
        73,
        False,
        "TopicDeletionDisabledException",
        "Topic deletion is disabled.",
    )
    FENCED_LEADER_EPOCH = (
        74,
        True,
        "FencedLeaderEpochException",
        "The leader epoch in the request is older than the epoch on the broker.",
    )
    UNKNOWN_LEADER_EPOCH = (
        75,
        True,
        "UnknownLeaderEpochException",
        "The leader epoch in the request is newer than the epoch on the broker.",
    )
    UNSUPPORTED_COMPRESSION_TYPE = (
        76,
        False,
        "UnsupportedCompressionTypeException",
        "The requesting client does not support the compression type of given partition.",
    )
    STALE_BROKER_EPOCH = (77, False, "StaleBrokerEpochException", "Broker epoch has changed.")
    OFFSET_NOT_AVAILABLE = (
        78,
        True,
        "OffsetNotAvailableException",
        "The leader high watermark has not caught up from a recent leader election so the"
        " offsets cannot be guaranteed to be monotonically increasing.",
    )
    MEMBER_ID_REQUIRED = (
        79,
        False,
        "MemberIdRequiredException",
        "The group member needs to have a valid member id before actually entering a "
        "consumer group.",
    )
    PREFERRED_LEADER_NOT_AVAILABLE = (
        80,
        True,
        "PreferredLeaderNotAvailableException",
        "The preferred leader was not available.",
    )
    GROUP_MAX_SIZE_REACHED = (
        81,
        False,
        "GroupMaxSizeReachedException",
        "The consumer group has reached its max size.",
    )
    FENCED_INSTANCE_ID = (
        82,
        False,
        "FencedInstanceIdException",
        "The broker rejected this static consumer since another consumer with the same "
        "group.instance.id has registered with a different member.id.",
    )
    ELIGIBLE_LEADERS_NOT_AVAILABLE = (
        83,
        True,
        "EligibleLeadersNotAvailableException",
        "Eligible topic partition leaders are not available.",
    )
    ELECTION_NOT_NEEDED = (
        84,
        True,
        "ElectionNotNeededException",
        "Leader election not needed for topic partition.",
    )
    NO_REASSIGNMENT_IN_PROGRESS = (
        85,
        False,
        "NoReassignmentInProgressException",
        "No partition reassignment is in progress.",
    )
    GROUP_SUBSCRIBED_TO_TOPIC = (
        86,
        False,
        "GroupSubscribedToTopicException",
        "Deleting offsets of a topic is forbidden while the consumer group is actively "
        "subscribed to it.",
    )
    INVALID_RECORD = (
        87,
        False,
        "InvalidRecordException",
        "This record has failed the validation on broker and hence will be rejected.",
    )
    UNSTABLE_OFFSET_COMMIT = (
        88,
        True,
        "UnstableOffsetCommitException",
        "There are unstable offsets that need to be cleared.",
    )
    THROTTLING_QUOTA_EXCEEDED = (
        89,
        True,
        "ThrottlingQuotaExceededException",
        "The throttling quota has been exceeded.",
    )
    PRODUCER_FENCED = (
        90,
        False,
        "ProducerFencedException",
        "There is a newer producer with the same transactionalId which fences the current"
        " one.",
    )
    RESOURCE_NOT_FOUND = (
        91,
        False,
        "ResourceNotFoundException",
        "A request illegally referred to a resource that does not exist.",
    )
    DUPLICATE_RESOURCE = (
        92,
        False,
        "DuplicateResourceException",
        "A request illegally referred to the same resource twice.",
    )
    UNACCEPTABLE_CREDENTIAL = (
        93,
        False,
        "UnacceptableCredentialException",
        "Requested credential would not meet criteria for acceptability.",
    )
    INCONSISTENT_VOTER_SET = (
        94,
        False,
        "InconsistentVoterSetException",
        "Indicates that the either the sender or recipient of a voter-only request is not"
        " one of the expected voters",
    )
    INVALID_UPDATE_VERSION = (
        95,
        False,
        "InvalidUpdateVersionException",
        "The given update version was invalid.",
    )
    FEATURE_UPDATE_FAILED = (
        96,
        False,
        "FeatureUpdateFailedException",
        "Unable to update finalized features due to an unexpected server error.",
    )
    PRINCIPAL_DESERIALIZATION_FAILURE = (
        97,
        False,
        "PrincipalDeserializationException",
        "Request principal deserialization failed during forwarding. This indicates an "
        "internal error on the broker cluster security setup.",
    )
    SNAPSHOT_NOT_FOUND = (
        98,
        False,
        "SnapshotNotFoundException",
        "Requested snapshot was not found",
    )
    POSITION_OUT_OF_RANGE = (
        99,
        False,
        "PositionOutOfRangeException",
        "Requested position is not greater than or equal to zero, and less than the size "
        "of the snapshot.",
    )
    UNKNOWN_TOPIC_ID = (
        100,
        True,
        "UnknownTopicIdException",
        "This server does not host this topic ID.",
    )
    DUPLICATE_BROKER_REGISTRATION = (
        101,
        False,
        "DuplicateBrokerRegistrationException",
        "This broker ID is already in use.",
    )
    BROKER_ID_NOT_REGISTERED = (
        102,
        False,
        "BrokerIdNotRegisteredException",
        "The given broker ID was not registered.",
    )
    INCONSISTENT_TOPIC_ID = (
        103,
        True,
        "InconsistentTopicIdException",
        "The log's topic ID did not match the topic ID in the request",
    )
    INCONSISTENT_CLUSTER_ID = (
        104,
        False,
        "InconsistentClusterIdException",
        "The clusterId in the request does not match that found on the server",
    )
    # Kafka 3.0's, for DescribeTransactions (the one later API served here)
    TRANSACTIONAL_ID_NOT_FOUND = (
        105,
        False,
        "TransactionalIdNotFoundException",
        "The transactionalId could not be found",
    )

    @property
    def message(self) -> str:
        """The default description, or the member name for NONE (as Kafka's ``message()``)."""
        return self.default_message if self.default_message is not None else self.name

    @property
    def error_code(self) -> ErrorCode:
        """This error as kio's ``ErrorCode``, the type kio's response classes expect."""
        return ErrorCode(self.code)

    @classmethod
    def for_code(cls, code: int) -> Errors:
        """The error with this wire code; an unknown code maps to UNKNOWN_SERVER_ERROR."""
        try:
            return cls(code)
        except ValueError:
            logger.warning("Unexpected error code: %s.", code)
            return cls.UNKNOWN_SERVER_ERROR

    @classmethod
    def for_exception(cls, exc: BaseException) -> Errors:
        """The error an exception turns into on the wire.

        An ApiException names its error (``error_name``); anything else is a bug
        or an I/O failure the client cannot act on, so UNKNOWN_SERVER_ERROR.
        """
        if isinstance(exc, common_errors.ApiException):
            try:
                return cls[exc.error_name]
            except KeyError:
                logger.warning("%s names unknown error %r", type(exc).__name__, exc.error_name)
        return cls.UNKNOWN_SERVER_ERROR

    def exception(self, message: str | None = None) -> common_errors.ApiException | None:
        """An exception for this error (None for NONE), carrying ``message`` or the default one."""
        if self is Errors.NONE:
            return None
        return _exception_class(self)(message if message is not None else self.message)

    @property
    def exception_class(self) -> type[common_errors.ApiException]:
        """The exception class of this error (not of NONE): what ``exception`` makes, to raise
        or catch by its type."""
        return _exception_class(self)

    def maybe_raise(self, message: str | None = None) -> None:
        """Raise this error's exception unless it is NONE (Kafka's ``maybeThrow``)."""
        exc = self.exception(message)
        if exc is not None:
            raise exc


@cache
def _exception_class(error: Errors) -> type[common_errors.ApiException]:
    # Prefer the class kafka_py.clients.common.errors defines under Kafka's own name so
    # callers can catch it; errors the broker never raises itself get a subclass
    # made on demand, named as in Kafka and tagged with the error's name.
    existing = getattr(common_errors, error.exception_name or "", None)
    if isinstance(existing, type) and issubclass(existing, common_errors.ApiException):
        if existing.error_name == error.name:
            return existing
    name = error.exception_name or f"{error.name.title().replace('_', '')}Exception"
    return type(
        name,
        (common_errors.ApiException,),
        {"error_name": error.name, "__module__": __name__, "__qualname__": name},
    )
