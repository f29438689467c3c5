"""Port of the file-naming helpers of the ``Log`` companion object in
core/src/main/scala/kafka/log/Log.scala.

A segment with base offset N lives in ``<N as 20 digits>.log``, ``.index`` and
``.timeindex``; the zero padding makes ``ls`` order match offset order. Suffixes
mark files in transit: ``.deleted`` (awaiting async deletion), ``.cleaned`` and
``.swap`` (the two phases of a crash-safe segment replacement). ``Log`` exposes
every function here as a static method, as Kafka's object does.

Paths are plain ``str``.
"""
from __future__ import annotations

import os
import re
import uuid
from typing import Iterable

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
TMP_FILE_SUFFIX = ".tmp"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"

DELETE_DIR_PATTERN = re.compile(r"^(\S+)-(\S+)\.(\S+)" + re.escape(DELETE_DIR_SUFFIX) + "$")
FUTURE_DIR_PATTERN = re.compile(r"^(\S+)-(\S+)\.(\S+)" + re.escape(FUTURE_DIR_SUFFIX) + "$")

UNKNOWN_OFFSET = -1


def filename_prefix_from_offset(offset: int) -> str:
    return "%020d" % offset


def log_file_name(offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX + suffix


def index_file_name(offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX + suffix


def time_index_file_name(offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX + suffix


def transaction_index_file_name(offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX + suffix


def log_file(dir: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir, log_file_name(offset, suffix))


def offset_index_file(dir: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir, index_file_name(offset, suffix))


def time_index_file(dir: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir, time_index_file_name(offset, suffix))


def transaction_index_file(dir: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir, transaction_index_file_name(offset, suffix))


def producer_snapshot_file(dir: str, offset: int) -> str:
    return os.path.join(dir, filename_prefix_from_offset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX)


def offset_from_file_name(filename: str) -> int:
    return int(filename[: filename.index(".")])


def offset_from_file(file: str) -> int:
    return offset_from_file_name(os.path.basename(file))


def delete_file_if_exists(file: str, suffix: str = "") -> bool:
    try:
        os.remove(file + suffix)
        return True
    except FileNotFoundError:
        return False


def replace_suffix(path: str, old_suffix: str, new_suffix: str) -> str:
    """Kafka's CoreUtils.replaceSuffix."""
    if not path.endswith(old_suffix):
        raise ValueError(f"Expected string to end with '{old_suffix}' but string is '{path}'")
    return path[: len(path) - len(old_suffix)] + new_suffix


def is_index_file(file: str) -> bool:
    name = os.path.basename(file)
    return name.endswith(INDEX_FILE_SUFFIX) or name.endswith(TIME_INDEX_FILE_SUFFIX) or name.endswith(TXN_INDEX_FILE_SUFFIX)


def is_log_file(file: str) -> bool:
    return file.endswith(LOG_FILE_SUFFIX)


def log_dir_name(topic_partition: TopicPartition) -> str:
    return f"{topic_partition.topic}-{topic_partition.partition}"


def log_delete_dir_name(topic_partition: TopicPartition) -> str:
    """``topic-partition.<uuid>-delete``; the topic is shortened so the name stays within 255 bytes."""
    suffix = f"-{topic_partition.partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    prefix_length = min(len(topic_partition.topic), 255 - len(suffix))
    return topic_partition.topic[:prefix_length] + suffix


def log_future_dir_name(topic_partition: TopicPartition) -> str:
    return f"{log_dir_name(topic_partition)}.{uuid.uuid4().hex}{FUTURE_DIR_SUFFIX}"


def parse_topic_partition_name(dir: str) -> TopicPartition:
    """The partition a log directory holds, for ``t-0``, ``t-0.<id>-delete`` and ``t-0.<id>-future``."""
    if dir is None:
        raise KafkaException("dir should not be null")
    dir_name = os.path.basename(os.path.normpath(dir))

    def exception() -> KafkaException:
        return KafkaException(
            f"Found directory {os.path.realpath(dir)}, '{dir_name}' is not in the form of "
            "topic-partition or topic-partition.uniqueId-delete (if marked for deletion).\n"
            "Kafka's log directories (and children) should only contain Kafka topic data."
        )

    if not dir_name or "-" not in dir_name:
        raise exception()
    if (dir_name.endswith(DELETE_DIR_SUFFIX) and not DELETE_DIR_PATTERN.match(dir_name)) or (
        dir_name.endswith(FUTURE_DIR_SUFFIX) and not FUTURE_DIR_PATTERN.match(dir_name)
    ):
        raise exception()
    if dir_name.endswith(DELETE_DIR_SUFFIX) or dir_name.endswith(FUTURE_DIR_SUFFIX):
        name = dir_name[: dir_name.rindex(".")]
    else:
        name = dir_name
    index = name.rfind("-")
    topic, partition_string = name[:index], name[index + 1:]
    if not topic or not partition_string:
        raise exception()
    try:
        partition = int(partition_string)
    except ValueError:
        raise exception() from None
    return TopicPartition(topic, partition)


def size_in_bytes(segments: Iterable) -> int:
    return sum(segment.size for segment in segments)
