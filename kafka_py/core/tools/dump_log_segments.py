"""Port of core/src/main/scala/kafka/tools/DumpLogSegments.scala (``bin/kafka-dump-log.sh``).

Prints what a partition directory holds, file by file, in the format of Kafka
2.8's tool so that the output of the two can be compared line for line:

* ``.log``: one line per batch, and with ``--deep-iteration`` (implied by
  ``--print-data-log``) one ``|``-indented line per record;
* ``.index`` / ``.timeindex``: the entries, each checked against the batch of
  the segment it points at (mismatches are summarised on stderr at the end);
* ``.txnindex`` and producer ``.snapshot`` files.

Differences from Kafka's tool, on purpose: a file that cannot be dumped (an
unknown suffix, a missing file, bytes that are not record batches, an index
failing its sanity check) is reported on stderr with its name and, for a log,
the byte position where the valid batches end; the tool then goes on with the
other files and exits with status 1 instead of dying with a stack trace.

How ``--print-data-log`` shows keys and values, as Kafka's ``messageParser`` chooses:

* ``--offsets-decoder``: records of __consumer_offsets, as
  ``GroupMetadataManager.formatRecordKeyAndValue`` words them
  (``offset_commit::group=g,partition=t-0`` / ``offset=5``, ``group_metadata::group=g`` /
  the group as JSON);
* ``--transaction-log-decoder``: records of __transaction_state, as
  ``TransactionLog.formatRecordKeyAndValue`` words them;
* else ``--key-decoder-class`` and ``--value-decoder-class``: Kafka's
  ``kafka.serializer.StringDecoder`` (UTF-8 text, the default), ``DefaultDecoder`` (the
  bytes), ``IntegerDecoder`` and ``LongDecoder`` (a big-endian number from the first 4 or
  8 bytes), or, where Kafka takes a class of its classpath, a Python callable
  (``package.module:function``) that is given the bytes and whose result is printed.

* ``--cluster-metadata-decoder``: the records of KRaft's metadata log (``@metadata-0``), as
  ``ClusterMetadataLogMessageParser`` shows them: no key, and the payload
  ``{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"..."}}``, the
  record read by MetadataRecordSerde and written by its JSON converter
  (kafka_py.metadata.metadata_json_converters).

Any of these options implies ``--print-data-log``, as in Kafka. A record a decoder cannot
read ends the dump of its file with the offset named (Kafka's tool dies there), except
under ``--cluster-metadata-decoder``, where, as in Kafka, the record's payload is
``Error at <offset>, skipping. <why>`` and the dump goes on; the tool then names those
offsets on stderr at the end and exits 1.

Control records print as in Kafka (``endTxnMarker: COMMIT coordinatorEpoch: 3``, else
``controlType: LEADER_CHANGE(3)``). With ``--cluster-metadata-decoder`` a raft
LEADER_CHANGE record also shows its LeaderChangeMessage as JSON (``LeaderChange:
{"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}``), in the manner
Kafka's later releases print their other raft control records; Kafka 2.8.2 prints only the
control type.
"""
from __future__ import annotations

import importlib
import logging
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import click
import crc32c

from kafka_py.log.log_files import (
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
)
from kafka_py.log.offset_index import OffsetIndex
from kafka_py.log.producer_state_manager import PRODUCER_SNAPSHOT_VERSION
from kafka_py.log.time_index import TimeIndex
from kafka_py.clients.common.record.default_record_batch import CURRENT_MAGIC_VALUE, NO_TIMESTAMP, Record, TimestampType
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.core.utils.command_line_utils import run_tool

logger = logging.getLogger(__name__)

RECORD_INDENT = "|"
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024

_CONTROL_RECORD_TYPES = {0: "ABORT", 1: "COMMIT", 2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}

# TransactionIndex.scala's AbortedTxn: version, producerId, firstOffset, lastOffset, lastStableOffset.
_ABORTED_TXN = struct.Struct(">hqqqq")
# ProducerStateManager.scala's snapshot: version int16, crc uint32, then an array of entries.
_SNAPSHOT_HEADER = struct.Struct(">hI")
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")


class DumpFailure(Exception):
    """A file that cannot be dumped; reported with its name, then the tool moves on."""


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _timestamp_type_name(ts_type: int) -> str:
    # Kafka prints TimestampType's own name: CreateTime, LogAppendTime.
    return TimestampType(ts_type).type_name


def _codec_name(codec) -> str:
    # Kafka prints the Java enum constant: NONE, GZIP, SNAPPY, LZ4, ZSTD.
    return getattr(codec, "name", str(codec))


def offset_from_file(path: Path) -> int:
    """Log.offsetFromFile: the base offset is the file name up to its first dot."""
    prefix = path.name.split(".")[0]
    if not prefix.isdigit():
        raise DumpFailure(f"{path}: the file name does not start with a base offset")
    return int(prefix)


def _sibling(path: Path, suffix: str) -> Path:
    return path.absolute().parent / (path.name.split(".")[0] + suffix)


def _decode(data: Optional[bytes]) -> str:
    # Kafka's default StringDecoder: the bytes as UTF-8.
    return bytes(data).decode("utf-8", errors="replace")


# -- how keys and values are shown (DumpLogSegments' MessageParser) --------------------------

# (key text or None, value text or None) of a record; None is not printed.
MessageParser = Callable[[Optional[bytes], Optional[bytes]], tuple[Optional[str], Optional[str]]]
STRING_DECODER = "kafka.serializer.StringDecoder"


def _first_bytes_as(fmt: str, name: str) -> Callable[[bytes], int]:
    size = struct.calcsize(fmt)

    def decode(data: bytes) -> int:
        if len(data) < size:  # Java's ByteBuffer.getInt/getLong: BufferUnderflowException
            raise ValueError(f"{name} needs {size} bytes, the record has {len(data)}")
        return struct.unpack_from(fmt, data)[0]

    return decode


# kafka.serializer's decoders (core/src/main/scala/kafka/serializer/Decoder.scala).
KAFKA_DECODERS: dict[str, Callable[[bytes], Any]] = {
    STRING_DECODER: _decode,
    "kafka.serializer.DefaultDecoder": bytes,
    "kafka.serializer.IntegerDecoder": _first_bytes_as(">i", "IntegerDecoder"),
    "kafka.serializer.LongDecoder": _first_bytes_as(">q", "LongDecoder"),
}


def load_decoder(name: str) -> Callable[[bytes], Any]:
    """A decoder by Kafka's class name, or a Python callable by ``package.module:name``
    (or ``package.module.name``); ValueError saying why it cannot be used."""
    if name in KAFKA_DECODERS:
        return KAFKA_DECODERS[name]
    module_name, sep, attr = name.partition(":")
    if not sep:
        module_name, _, attr = name.rpartition(".")
    if not module_name or not attr:
        raise ValueError(f"{name} is neither one of Kafka's decoders ({', '.join(KAFKA_DECODERS)}) nor a "
                         "Python callable written package.module:name")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise ValueError(f"cannot import {module_name}: {e}") from None
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"{module_name} has no {attr}") from None
    if not callable(target):
        raise ValueError(f"{name} is not callable")
    return target


def decoder_message_parser(key_decoder: Callable[[bytes], Any],
                           value_decoder: Callable[[bytes], Any]) -> MessageParser:
    """DecoderMessageParser: each of key and value through its decoder, when present."""

    def parse(key: Optional[bytes], value: Optional[bytes]) -> tuple[Optional[str], Optional[str]]:
        return (None if key is None else str(key_decoder(bytes(key))),
                None if value is None else str(value_decoder(bytes(value))))

    return parse


def offsets_message_parser(key: Optional[bytes], value: Optional[bytes]) -> tuple[Optional[str], Optional[str]]:
    """OffsetsMessageParser: a __consumer_offsets record as the group coordinator words it."""
    from kafka_py.core.coordinator.group.group_metadata_manager import format_record_key_and_value

    return format_record_key_and_value(None if key is None else bytes(key),
                                       None if value is None else bytes(value))


def transaction_log_message_parser(key: Optional[bytes],
                                   value: Optional[bytes]) -> tuple[Optional[str], Optional[str]]:
    """TransactionLogMessageParser: a __transaction_state record as the transaction coordinator
    words it."""
    from kafka_py.core.coordinator.transaction.transaction_log import format_record_key_and_value

    if key is None:
        raise ValueError("a __transaction_state record has a key")
    return format_record_key_and_value(bytes(key), None if value is None else bytes(value))


class ClusterMetadataLogMessageParser:
    """ClusterMetadataLogMessageParser: a metadata log record as ``{"type", "version",
    "data"}`` JSON. Metadata records have no key. A value that does not read raises
    MetadataParseException; the dumper turns it into Kafka's ``Error at ...`` payload."""

    def __init__(self) -> None:
        from kafka_py.metadata.metadata_record_serde import MetadataRecordSerde

        self.metadata_record_serde = MetadataRecordSerde()

    def __call__(self, key: Optional[bytes], value: Optional[bytes]) -> tuple[Optional[str], Optional[str]]:
        from kafka_py.metadata.metadata_json_converters import metadata_record_json, to_json_string
        from kafka_py.metadata.metadata_parse_exception import MetadataParseException

        if value is None:
            raise MetadataParseException("the record has no value")
        message_and_version = self.metadata_record_serde.read(value)
        return None, to_json_string(metadata_record_json(message_and_version.message,
                                                         message_and_version.version))

    @staticmethod
    def leader_change_json(value: Optional[bytes]) -> str:
        """A LEADER_CHANGE control record's LeaderChangeMessage (version 0) as JSON."""
        from kafka_py.metadata.metadata_json_converters import to_json_string
        from kafka_py.raft.control_record_utils import LeaderChangeMessage

        if value is None:
            raise ValueError("LEADER_CHANGE control record has no value")
        message = LeaderChangeMessage.deserialize(bytes(value))
        return to_json_string({
            "leaderId": message.leader_id,
            "voters": [{"voterId": v} for v in message.voters],
            "grantingVoters": [{"voterId": v} for v in message.granting_voters],
        })


DEFAULT_MESSAGE_PARSER = decoder_message_parser(_decode, _decode)


class _UndecodableRecord(Exception):
    pass


@dataclass
class TimeIndexDumpErrors:
    """What the time-index pass found; printed on stderr after every file has been dumped."""

    mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    shallow_offset_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def record_mismatch_time_index(self, file: Path, index_timestamp: int, log_timestamp: int) -> None:
        self.mismatches.setdefault(str(file.absolute()), []).append((index_timestamp, log_timestamp))

    def record_out_of_order_index_timestamp(self, file: Path, index_timestamp: int, prev_timestamp: int) -> None:
        self.out_of_order.setdefault(str(file.absolute()), []).append((index_timestamp, prev_timestamp))

    def record_shallow_offset_not_found(self, file: Path, index_offset: int, log_offset: int) -> None:
        self.shallow_offset_not_found.setdefault(str(file.absolute()), []).append((index_offset, log_offset))

    def print_errors(self, err: Callable[[str], None]) -> None:
        for name, pairs in self.mismatches.items():
            err(f"Found timestamp mismatch in :{name}")
            for index_ts, log_ts in pairs:
                err(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}")
        for name, pairs in self.out_of_order.items():
            err(f"Found out of order timestamp in :{name}")
            for index_ts, prev_ts in pairs:
                err(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {prev_ts}")
        for pairs in self.shallow_offset_not_found.values():
            err("The following indexed offsets are not found in the log.")
            for index_offset, log_offset in pairs:
                err(f"Indexed offset: {index_offset}, found log offset: {log_offset}")


class DumpLogSegments:
    """Dumps files one at a time and remembers the cross-file findings for the summary."""

    def __init__(self, out: Callable[[str], None], err: Callable[[str], None],
                 print_data_log: bool = False, deep_iteration: bool = False,
                 index_sanity_only: bool = False, verify_only: bool = False,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                 skip_record_metadata: bool = False,
                 message_parser: MessageParser = DEFAULT_MESSAGE_PARSER) -> None:
        self.out = out
        self.err = err
        self.print_data_log = print_data_log
        self.deep_iteration = deep_iteration or print_data_log
        self.index_sanity_only = index_sanity_only
        self.verify_only = verify_only
        self.max_message_size = max_message_size
        self.skip_record_metadata = skip_record_metadata
        self.message_parser = message_parser
        self.mismatches_for_index_files: dict[str, list[tuple[int, int]]] = {}
        self.time_index_dump_errors = TimeIndexDumpErrors()
        self.non_consecutive_pairs_for_log_files: dict[str, list[tuple[int, int]]] = {}
        # Under --cluster-metadata-decoder a record that does not decode is printed as an
        # error and skipped (Kafka's parser catches it); their offsets, by file.
        self.skip_undecodable = isinstance(message_parser, ClusterMetadataLogMessageParser)
        self.undecodable_offsets: list[int] = []
        self.failures: list[str] = []

    # -- driver -----------------------------------------------------------------------------

    def dump(self, files: list[str]) -> int:
        for name in files:
            path = Path(name)
            self.out(f"Dumping {path}")
            try:
                self.dump_file(path)
            except DumpFailure as e:
                self._fail(str(e))
            except BrokenPipeError:
                raise  # nobody reads the output any more (run_tool ends the tool quietly)
            except Exception as e:  # an unreadable file must not hide the others' output
                logger.debug("dumping %s failed", path, exc_info=True)
                self._fail(f"{path}: cannot be dumped: {type(e).__name__}: {e}")
        self.print_summary()
        return 1 if self.failures else 0

    def _fail(self, message: str) -> None:
        self.failures.append(message)
        self.err(f"ERROR: {message}")

    def dump_file(self, path: Path) -> None:
        suffix = path.suffix
        handlers = {
            LOG_FILE_SUFFIX: self.dump_log,
            INDEX_FILE_SUFFIX: self.dump_index,
            TIME_INDEX_FILE_SUFFIX: self.dump_time_index,
            PRODUCER_SNAPSHOT_FILE_SUFFIX: self.dump_producer_id_snapshot,
            TXN_INDEX_FILE_SUFFIX: self.dump_txn_index,
        }
        handler = handlers.get(suffix)
        if handler is None:
            raise DumpFailure(f"Ignoring unknown file {path}: not a log segment, index or snapshot "
                              f"(expected one of {', '.join(handlers)})")
        if not path.is_file():
            raise DumpFailure(f"{path}: no such file")
        handler(path)

    def print_summary(self) -> None:
        for name, pairs in self.mismatches_for_index_files.items():
            self.err(f"Mismatches in :{name}")
            for index_offset, log_offset in pairs:
                self.err(f"  Index offset: {index_offset}, log offset: {log_offset}")
        self.time_index_dump_errors.print_errors(self.err)
        for name, pairs in self.non_consecutive_pairs_for_log_files.items():
            self.err(f"Non-consecutive offsets in {name}")
            for first, second in pairs:
                self.err(f"  {first} is followed by {second}")

    # -- .log -------------------------------------------------------------------------------

    def dump_log(self, file: Path) -> None:
        self.undecodable_offsets = []
        try:
            self._dump_log(file)
        finally:
            if self.undecodable_offsets:
                self._fail(f"{file}: the records at offsets {', '.join(map(str, self.undecodable_offsets))} "
                           "could not be decoded as cluster metadata and were skipped")

    def _dump_log(self, file: Path) -> None:
        start_offset = offset_from_file(file)
        self.out(f"Starting offset: {start_offset}")
        file_records = FileRecords.open(file, file_already_exists=True, mutable=False)
        try:
            valid_bytes = 0
            last_offset = -1
            corrupt: Optional[str] = None
            crc_failures: list[int] = []
            batches = file_records.batches()
            while True:
                try:
                    batch = next(batches, None)
                    if batch is None:
                        break
                    loaded = batch.load()
                except Exception as e:
                    corrupt = f"{type(e).__name__}: {e}"
                    break
                self.print_batch_level(loaded, valid_bytes)
                if not loaded.is_valid():
                    crc_failures.append(valid_bytes)
                if self.deep_iteration:
                    try:
                        if loaded.magic < CURRENT_MAGIC_VALUE:
                            # each message of format v0/v1 with its own CRC, which Kafka prints
                            records = [(Record(offset, message.timestamp, message.key, message.value), message)
                                       for offset, message in loaded.legacy_records()]
                        else:
                            records = [(record, None) for record in loaded.records()]
                    except Exception as e:
                        corrupt = f"the records of the batch cannot be decoded ({type(e).__name__}: {e})"
                        break
                    for record, message in records:
                        if last_offset != -1 and record.offset != last_offset + 1:
                            self.non_consecutive_pairs_for_log_files.setdefault(
                                str(file.absolute()), []).append((last_offset, record.offset))
                        last_offset = record.offset
                        try:
                            line = self.record_line(loaded, record, valid_bytes, message)
                        except _UndecodableRecord as e:
                            raise DumpFailure(f"{file}: the record at offset {record.offset} (position "
                                              f"{valid_bytes}) cannot be decoded: {e}") from None
                        self.out(line)
                valid_bytes += loaded.size_in_bytes
            trailing = file_records.size_in_bytes() - valid_bytes
            # The active segment of a broker with log.preallocate is its full size, zeros
            # after the data: room for the next appends, not damage.
            preallocated = trailing > 0 and file_records.is_zero_filled_from(valid_bytes)
        finally:
            file_records.close_handlers()
        if preallocated:
            self.out(f"Found {trailing} bytes of preallocated space (zeros) after the data of {file.name}")
            return
        if trailing > 0:
            self.out(f"Found {trailing} invalid bytes at the end of {file.name}")
        if corrupt is not None or trailing > 0:
            reason = corrupt or "the bytes there do not form a complete record batch"
            raise DumpFailure(f"{file}: corrupt log data at position {valid_bytes}: {reason}")
        if crc_failures:
            raise DumpFailure(f"{file}: record batches with an invalid CRC at positions "
                              f"{', '.join(map(str, crc_failures))}")

    def print_batch_level(self, batch, position: int) -> None:
        if batch.magic >= CURRENT_MAGIC_VALUE:
            head = (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.record_count}"
                    f" baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence}"
                    f" producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch}"
                    f" partitionLeaderEpoch: {batch.partition_leader_epoch}"
                    f" isTransactional: {_bool(batch.is_transactional)} isControl: {_bool(batch.is_control_batch)}")
        else:
            # a log entry of format v0/v1 knows only its (last) offset
            head = f"offset: {batch.last_offset}"
        self.out(
            f"{head} position: {position} {_timestamp_type_name(batch.timestamp_type)}: {batch.max_timestamp}"
            f" size: {batch.size_in_bytes} magic: {batch.magic}"
            f" compresscodec: {_codec_name(batch.compression_type)} crc: {batch.checksum}"
            f" isvalid: {_bool(batch.is_valid())}")

    def record_line(self, batch, record, position: int, message=None) -> str:
        """One record's line; ``message`` is its LegacyRecord in a log entry of format v0/v1."""
        parts: list[str] = []
        prefix = f"{RECORD_INDENT} "
        key, value = record.key, record.value
        if not self.skip_record_metadata:
            # A LogAppendTime batch stamps every record with its max timestamp.
            ts = batch.max_timestamp if batch.timestamp_type == TimestampType.LOG_APPEND_TIME else record.timestamp
            # a v2 record has no CRC of its own (Kafka prints null and true)
            crc = "null" if message is None else message.checksum
            is_valid = "true" if message is None else _bool(message.is_valid())
            parts.append(
                f"{prefix}offset: {record.offset} isValid: {is_valid} crc: {crc}"
                f" keySize: {-1 if key is None else len(key)} valueSize: {-1 if value is None else len(value)}"
                f" {_timestamp_type_name(batch.timestamp_type)}: {ts}"
                f" baseOffset: {batch.base_offset} lastOffset: {batch.last_offset}"
                f" baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence}"
                f" producerEpoch: {batch.producer_epoch} partitionLeaderEpoch: {batch.partition_leader_epoch}"
                f" batchSize: {batch.size_in_bytes} magic: {batch.magic}"
                f" compressType: {_codec_name(batch.compression_type)} position: {position}")
            if message is None:
                header_keys = ",".join(k for k, _ in (record.headers or ()))
                parts.append(f" sequence: {record.sequence} headerKeys: [{header_keys}]")
            else:
                parts.append(f" crc: {crc} isvalid: {is_valid}")
            prefix = " "
            if batch.is_control_batch:
                parts.append(_control_record_description(key, value))
                if self.skip_undecodable and _is_leader_change(key):
                    parts.append(f" LeaderChange: {self._leader_change_text(record)}")
        if self.print_data_log and not batch.is_control_batch:
            try:
                key_text, value_text = self.message_parser(key, value)
            except Exception as e:  # a decoder's failure on one record: named with its offset
                if not self.skip_undecodable:
                    raise _UndecodableRecord(f"{type(e).__name__}: {e}") from e
                self.undecodable_offsets.append(record.offset)
                key_text, value_text = None, f"Error at {record.offset}, skipping. {e}"
            if key_text is not None:
                parts.append(f"{prefix}key: {key_text}")
                prefix = " "
            if value_text is not None:
                parts.append(f" payload: {value_text}")
        return "".join(parts)

    def _leader_change_text(self, record) -> str:
        try:
            return ClusterMetadataLogMessageParser.leader_change_json(record.value)
        except Exception as e:
            self.undecodable_offsets.append(record.offset)
            return f"Error at {record.offset}, skipping. {e}"

    # -- .index -----------------------------------------------------------------------------

    def dump_index(self, file: Path) -> None:
        start_offset = offset_from_file(file)
        index = OffsetIndex(file, start_offset, writable=False)
        try:
            if index.entries == 0:
                self.out(f"{file} is empty.")
                return
            if self.index_sanity_only:
                self._sanity_check(index, file)
                return
            log_file = _sibling(file, LOG_FILE_SUFFIX)
            if not log_file.is_file():
                raise DumpFailure(f"{file}: cannot verify the index, its segment {log_file} does not exist")
            self._dump_index_entries(file, index, log_file)
        finally:
            index.close_handler()

    def _dump_index_entries(self, file: Path, index, log_file: Path) -> None:
        file_records = FileRecords.open(log_file, file_already_exists=True, mutable=False)
        try:
            log_size = file_records.size_in_bytes()
            for i in range(index.entries):
                entry = index.entry(i)
                # A preallocated index is zero-filled past its last entry (crash before trim).
                if entry.offset == index.base_offset and i > 0:
                    break
                first_batch_last_offset = -1
                if 0 <= entry.position < log_size:
                    try:
                        size = min(self.max_message_size, log_size - entry.position)
                        first = next(iter(file_records.slice(entry.position, size).batches()), None)
                        if first is not None:
                            first_batch_last_offset = first.last_offset
                    except Exception:
                        logger.debug("no batch at position %d of %s", entry.position, log_file, exc_info=True)
                if first_batch_last_offset != entry.offset:
                    self.mismatches_for_index_files.setdefault(str(file.absolute()), []).append(
                        (entry.offset, first_batch_last_offset))
                if not self.verify_only:
                    self.out(f"offset: {entry.offset} position: {entry.position}")
        finally:
            file_records.close_handlers()

    def _sanity_check(self, index, file: Path) -> None:
        try:
            index.sanity_check()
        except Exception as e:
            raise DumpFailure(f"{file} failed sanity check: {e}") from None
        self.out(f"{file} passed sanity check.")

    # -- .timeindex -------------------------------------------------------------------------

    def dump_time_index(self, file: Path) -> None:
        start_offset = offset_from_file(file)
        time_index = TimeIndex(file, start_offset, writable=False)
        try:
            if self.index_sanity_only:
                self._sanity_check(time_index, file)
                return
            log_file = _sibling(file, LOG_FILE_SUFFIX)
            index_file = _sibling(file, INDEX_FILE_SUFFIX)
            for needed in (log_file, index_file):
                if not needed.is_file():
                    raise DumpFailure(f"{file}: cannot verify the time index, {needed} does not exist")
            index = OffsetIndex(index_file, start_offset, writable=False)
            file_records = FileRecords.open(log_file, file_already_exists=True, mutable=False)
            try:
                self._dump_time_index_entries(file, time_index, index, file_records)
            finally:
                file_records.close_handlers()
                index.close_handler()
        finally:
            time_index.close_handler()

    def _dump_time_index_entries(self, file: Path, time_index, index, file_records) -> None:
        errors = self.time_index_dump_errors
        prev_timestamp = NO_TIMESTAMP
        log_size = file_records.size_in_bytes()
        for i in range(time_index.entries):
            entry = time_index.entry(i)
            if entry.offset == time_index.base_offset and i > 0:
                break
            position = index.lookup(entry.offset).position
            found = None
            if 0 <= position < log_size:
                try:
                    for batch in file_records.batches_from(position):
                        if batch.last_offset >= entry.offset:
                            found = batch
                            break
                except Exception:
                    logger.debug("scanning %s from %d failed", file, position, exc_info=True)
            if found is None:
                errors.record_shallow_offset_not_found(file, entry.offset, -1)
            elif found.last_offset != entry.offset:
                errors.record_shallow_offset_not_found(file, entry.offset, found.last_offset)
            else:
                loaded = found.load()
                if loaded.timestamp_type == TimestampType.LOG_APPEND_TIME:
                    max_timestamp = loaded.max_timestamp
                else:
                    max_timestamp = max((r.timestamp for r in loaded.records()), default=NO_TIMESTAMP)
                if max_timestamp != entry.timestamp:
                    errors.record_mismatch_time_index(file, entry.timestamp, max_timestamp)
                if prev_timestamp >= entry.timestamp:
                    errors.record_out_of_order_index_timestamp(file, entry.timestamp, prev_timestamp)
            if not self.verify_only:
                self.out(f"timestamp: {entry.timestamp} offset: {entry.offset}")
            prev_timestamp = entry.timestamp

    # -- .txnindex and .snapshot ------------------------------------------------------------

    def dump_txn_index(self, file: Path) -> None:
        data = file.read_bytes()
        whole = len(data) - len(data) % _ABORTED_TXN.size
        for version, producer_id, first, last, lso in _ABORTED_TXN.iter_unpack(data[:whole]):
            self.out(f"version: {version} producerId: {producer_id} firstOffset: {first} "
                     f"lastOffset: {last} lastStableOffset: {lso}")
        if whole != len(data):
            raise DumpFailure(f"{file}: {len(data) - whole} trailing bytes do not form an aborted "
                              f"transaction entry at position {whole}")

    def dump_producer_id_snapshot(self, file: Path) -> None:
        data = file.read_bytes()
        try:
            entries = read_producer_snapshot(data)
        except ValueError as e:
            raise DumpFailure(f"{file}: {e}") from None
        for (pid, epoch, last_seq, last_offset, offset_delta, timestamp, coordinator_epoch,
             txn_first_offset) in entries:
            txn = f"Some({txn_first_offset})" if txn_first_offset >= 0 else "None"
            line = (f"producerId: {pid} producerEpoch: {epoch} coordinatorEpoch: {coordinator_epoch} "
                    f"currentTxnFirstOffset: {txn} ")
            if last_offset >= 0:
                line += (f"firstSequence: {last_seq - offset_delta} lastSequence: {last_seq} "
                         f"lastOffset: {last_offset} offsetDelta: {offset_delta} timestamp: {timestamp}")
            self.out(line)


def read_producer_snapshot(data: bytes) -> list[tuple]:
    """Decode a producer state snapshot (ProducerStateManager.readSnapshot); ValueError if corrupt."""
    if len(data) < _SNAPSHOT_HEADER.size + 4:
        raise ValueError("Snapshot failed schema validation: file too short")
    version, crc = _SNAPSHOT_HEADER.unpack_from(data)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise ValueError(f"Snapshot contained an unknown file version {version}")
    computed = crc32c.crc32c(data[_SNAPSHOT_HEADER.size:])
    if crc != computed:
        raise ValueError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}")
    (count,) = struct.unpack_from(">i", data, _SNAPSHOT_HEADER.size)
    start = _SNAPSHOT_HEADER.size + 4
    if count < 0 or start + count * _SNAPSHOT_ENTRY.size != len(data):
        raise ValueError(f"Snapshot failed schema validation: {count} entries do not fill {len(data)} bytes")
    return [_SNAPSHOT_ENTRY.unpack_from(data, start + i * _SNAPSHOT_ENTRY.size) for i in range(count)]


def _is_leader_change(key: Optional[bytes]) -> bool:
    return key is not None and len(key) >= 4 and struct.unpack_from(">hh", key)[1] == 3


def _control_record_description(key: Optional[bytes], value: Optional[bytes]) -> str:
    if key is None or len(key) < 4:
        return " controlType: UNKNOWN(-1)"
    _version, type_id = struct.unpack_from(">hh", key)
    name = _CONTROL_RECORD_TYPES.get(type_id, "UNKNOWN")
    if name in ("ABORT", "COMMIT") and value is not None and len(value) >= 6:
        _marker_version, coordinator_epoch = struct.unpack_from(">hi", value)
        return f" endTxnMarker: {name} coordinatorEpoch: {coordinator_epoch}"
    return f" controlType: {name}({type_id})"


@click.command(
    name="kafka-dump-log",
    help="This tool helps to parse a log file and dump its contents to the console, useful for "
         "debugging a seemingly corrupt log segment.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--files", required=True, metavar="file1,file2,...",
              help="REQUIRED: The comma separated list of data and index log files to be dumped.")
@click.option("--print-data-log", is_flag=True,
              help="If set, print the messages content when dumping data logs (implies --deep-iteration). "
                   "Automatically set if any decoder option is specified.")
@click.option("--deep-iteration", is_flag=True,
              help="If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.")
@click.option("--index-sanity-check", is_flag=True,
              help="If set, just checks the index sanity without printing its content. This is the same check "
                   "that is executed on broker startup to determine if an index needs rebuilding or not.")
@click.option("--verify-index-only", is_flag=True,
              help="If set, just verify the index log without printing its content.")
@click.option("--max-message-size", type=click.IntRange(min=1), default=DEFAULT_MAX_MESSAGE_SIZE,
              show_default=True, help="Size of largest message.")
@click.option("--skip-record-metadata", is_flag=True,
              help="Whether to skip printing metadata for each record.")
@click.option("--value-decoder-class", is_flag=False, flag_value=STRING_DECODER, default=None,
              metavar="[decoder]",
              help="If set, used to deserialize the messages: one of Kafka's kafka.serializer.StringDecoder "
                   "(the default), DefaultDecoder, IntegerDecoder, LongDecoder, or a Python callable "
                   "package.module:name given the bytes.")
@click.option("--key-decoder-class", is_flag=False, flag_value=STRING_DECODER, default=None,
              metavar="[decoder]",
              help="If set, used to deserialize the keys (as --value-decoder-class).")
@click.option("--offsets-decoder", is_flag=True,
              help="If set, log data will be parsed as offset data from the __consumer_offsets topic.")
@click.option("--transaction-log-decoder", is_flag=True,
              help="If set, log data will be parsed as transaction metadata from the __transaction_state topic.")
@click.option("--cluster-metadata-decoder", is_flag=True,
              help="If set, log data will be parsed as cluster metadata records.")
def main(files: str, print_data_log: bool, deep_iteration: bool, index_sanity_check: bool,
         verify_index_only: bool, max_message_size: int, skip_record_metadata: bool,
         value_decoder_class: str | None, key_decoder_class: str | None, offsets_decoder: bool,
         transaction_log_decoder: bool, cluster_metadata_decoder: bool) -> None:
    names = [f for f in (s.strip() for s in files.split(",")) if f]
    if not names:
        raise click.BadParameter("no file given", param_hint="--files")
    # DumpLogSegmentsOptions.messageParser: the offsets decoder first, then the transaction
    # log's, then the cluster metadata's, then the key and value decoders.
    parser: MessageParser
    if offsets_decoder:
        parser = offsets_message_parser
    elif transaction_log_decoder:
        parser = transaction_log_message_parser
    elif cluster_metadata_decoder:
        parser = ClusterMetadataLogMessageParser()
    else:
        decoders = []
        for option, name in (("--key-decoder-class", key_decoder_class),
                             ("--value-decoder-class", value_decoder_class)):
            try:
                decoders.append(load_decoder(name or STRING_DECODER))
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint=option) from None
        parser = decoder_message_parser(*decoders)
    print_data_log = (print_data_log or offsets_decoder or transaction_log_decoder
                      or cluster_metadata_decoder or value_decoder_class is not None or key_decoder_class is not None)
    tool = DumpLogSegments(
        out=click.echo,
        err=lambda line: click.echo(line, err=True),
        print_data_log=print_data_log,
        deep_iteration=deep_iteration,
        index_sanity_only=index_sanity_check,
        verify_only=verify_index_only,
        max_message_size=max_message_size,
        skip_record_metadata=skip_record_metadata,
        message_parser=parser,
    )
    status = tool.dump(names)
    if status:
        click.get_current_context().exit(status)


if __name__ == "__main__":
    run_tool(main, "kafka-dump-log.sh", tool_logging=False)
