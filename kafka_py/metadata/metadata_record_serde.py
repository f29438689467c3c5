"""Port of raft/src/main/java/org/apache/kafka/raft/metadata/MetadataRecordSerde.java.

How a metadata record is laid out as the value of a record in the metadata log: three
unsigned varints, the frame version (always 0), the record's api key and its version, then
the record body in its version's format (kafka_py.metadata.records). Reading checks each
part in turn, as MetadataParser.java (2.8.2's older reader of the same layout without the
frame version) does, and reports any failure as a MetadataParseException naming the part:
a record the controller or a broker cannot read must stop the replay loudly, never be
skipped. Kafka's serde reports an unknown frame version as a SerializationException and
an unknown api key as an UnsupportedVersionException; here both are the one parse error.
Bytes left over after the body are an error too (MetadataParser's "garbage" check).
"""
from __future__ import annotations

import io
from typing import IO

from kio.serial import entity_writer
from kio.serial.readers import read_unsigned_varint
from kio.serial.writers import write_unsigned_varint
from kio.static.primitive import uvarint

from kafka_py.clients.common.errors import UnsupportedVersionException
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.metadata_parse_exception import MetadataParseException
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.clients.common.protocol.codec import SchemaException, as_buffer, read_entity

DEFAULT_FRAME_VERSION = 0

# Api keys and versions are Java shorts; a larger varint cannot name a record.
_MAX_SHORT = 0x7FFF


class MetadataRecordSerde:
    """Writes and reads ApiMessageAndVersion as metadata log record values."""

    def record_size(self, data: ApiMessageAndVersion) -> int:
        return len(self.serialize(data))

    def write(self, data: ApiMessageAndVersion, out: IO[bytes]) -> None:
        write_unsigned_varint(out, uvarint(DEFAULT_FRAME_VERSION))
        write_unsigned_varint(out, uvarint(int(type(data.message).__api_key__)))
        write_unsigned_varint(out, uvarint(data.version))
        entity_writer(type(data.message))(out, data.message)

    def serialize(self, data: ApiMessageAndVersion) -> bytes:
        out = io.BytesIO()
        self.write(data, out)
        return out.getvalue()

    def read(self, buffer: bytes | bytearray | memoryview) -> ApiMessageAndVersion:
        """The record whose value is all of ``buffer``."""
        view = as_buffer(buffer).toreadonly()
        frame_version, pos = _read_short_varint(view, 0, "frame version")
        if frame_version != DEFAULT_FRAME_VERSION:
            raise MetadataParseException(
                f"Could not deserialize metadata record due to unknown frame version "
                f"{frame_version} (only frame version {DEFAULT_FRAME_VERSION} is supported)")
        api_key, pos = _read_short_varint(view, pos, "type")
        version, pos = _read_short_varint(view, pos, "version")
        try:
            record_type = MetadataRecordType.from_id(api_key)
            record_class = record_type.record_class(version)
        except UnsupportedVersionException as e:
            raise MetadataParseException(str(e)) from e
        try:
            message, used = read_entity(record_class, view, pos)
        except SchemaException as e:
            raise MetadataParseException(f"{record_type.name}#parse failed: {e}") from e
        garbage = len(view) - pos - used
        if garbage:
            raise MetadataParseException(
                f"Found {garbage} byte(s) of garbage after {record_type.name}")
        return ApiMessageAndVersion(message, version)


def _read_short_varint(view: memoryview, offset: int, what: str) -> tuple[int, int]:
    """An unsigned varint that must fit a Java short; returns it and the next offset."""
    try:
        value, used = read_unsigned_varint(view, offset)
    except Exception as e:  # kio's decode errors: the buffer ends inside the varint
        raise MetadataParseException(
            f"Failed to read variable-length {what} number: {type(e).__name__}: {e}") from e
    if value > _MAX_SHORT:
        raise MetadataParseException(f"Value for {what} was too large.")
    return value, offset + used
