"""MetadataRecordSerde and the generated metadata records: every record round-trips
through the serde (and through kio's own reader), the framing is byte for byte what
Kafka writes, and bad input raises MetadataParseException."""
from __future__ import annotations

import io
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.serial import entity_reader

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.metadata_parse_exception import MetadataParseException
from kafka_py.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_py.metadata.records.metadata_record_type import RECORD_CLASSES, MetadataRecordType
from kafka_py.metadata.records.partition_change_record.v0 import PartitionChangeRecord
from kafka_py.metadata.records.topic_record.v0 import TopicRecord
from kafka_py.clients.common.protocol.codec import write_entity
from tests.metadata.strategies import entities

SERDE = MetadataRecordSerde()
TOPIC_ID = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")


@pytest.mark.parametrize("key_version", sorted(RECORD_CLASSES), ids=lambda kv: f"{kv[0]}v{kv[1]}")
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_record_round_trips(key_version, data) -> None:
    record_class = RECORD_CLASSES[key_version]
    record = data.draw(entities(record_class))
    value = ApiMessageAndVersion(record, key_version[1])
    framed = SERDE.serialize(value)
    assert SERDE.record_size(value) == len(framed)
    assert SERDE.read(framed) == value
    # The header is three one-byte varints (keys and versions below 128); kio's own
    # reader reads the body the codec's reader read.
    body = memoryview(framed[3:]).toreadonly()
    assert entity_reader(record_class)(body, 0) == (record, len(body))


def test_record_type_enum_matches_the_classes() -> None:
    for record_type in MetadataRecordType:
        cls = record_type.record_class(record_type.highest_supported_version)
        assert cls.__api_key__ == record_type.id
        assert record_type.name == "".join(
            f"_{c}" if c.isupper() else c.upper() for c in cls.__name__).lstrip("_")
    assert MetadataRecordType.from_id(15) is MetadataRecordType.PRODUCER_IDS_RECORD
    assert MetadataRecordType.from_id(16) is MetadataRecordType.REMOVE_FEATURE_LEVEL_RECORD


def test_topic_record_framing_is_kafkas() -> None:
    # 2.8.2's TopicRecord is not flexible: an int16-length string, then 16 uuid bytes.
    framed = SERDE.serialize(ApiMessageAndVersion(TopicRecord(name="foo", topic_id=TOPIC_ID), 0))
    expected = (bytes([0, 2, 0])                 # frame version 0, api key 2, version 0
                + b"\x00\x03foo"                 # Name
                + bytes(range(16)))              # TopicId
    assert framed == expected
    out = io.BytesIO()
    SERDE.write(ApiMessageAndVersion(TopicRecord(name="foo", topic_id=TOPIC_ID), 0), out)
    assert out.getvalue() == expected


def test_partition_change_record_tagged_fields_are_kafkas() -> None:
    record = PartitionChangeRecord(partition_id=3, topic_id=TOPIC_ID, isr=(1, 2), leader=5)
    expected = (bytes([0, 5, 0])
                + b"\x00\x00\x00\x03"            # PartitionId
                + bytes(range(16))               # TopicId
                + b"\x02"                        # two tagged fields, in tag order
                + b"\x00\x09" + b"\x03" + b"\x00\x00\x00\x01\x00\x00\x00\x02"  # tag 0: Isr
                + b"\x01\x04" + b"\x00\x00\x00\x05")                         # tag 1: Leader
    framed = SERDE.serialize(ApiMessageAndVersion(record, 0))
    assert framed == expected
    assert SERDE.read(expected).message == record
    # fields at their defaults (Isr null, Leader -2: "no change") are left off the wire
    unchanged = PartitionChangeRecord(partition_id=3, topic_id=TOPIC_ID)
    assert write_entity(unchanged) == b"\x00\x00\x00\x03" + bytes(range(16)) + b"\x00"
    assert SERDE.read(bytes([0, 5, 0]) + write_entity(unchanged)).message == unchanged


def test_unknown_tagged_fields_are_skipped() -> None:
    body = b"\x00\x00\x00\x03" + bytes(range(16)) + b"\x01" + b"\x07\x02\xab\xcd"
    read = SERDE.read(bytes([0, 5, 0]) + body).message
    assert read == PartitionChangeRecord(partition_id=3, topic_id=TOPIC_ID)


@pytest.mark.parametrize("framed, message", [
    (bytes([0, 13, 0]), "Unknown metadata id 13"),
    (bytes([0, 0x80, 0x01, 0]), "Unknown metadata id 128"),
    (bytes([0, 2, 1]) + b"\x00\x03foo" + bytes(16), "TOPIC_RECORD has no version 1"),
    (bytes([1, 2, 0]) + b"\x00\x03foo" + bytes(16), "unknown frame version 1"),
    (bytes([0, 0xff, 0xff, 0x03, 0]), "Value for type was too large"),
    (bytes([0, 2]), "Failed to read variable-length version"),
    (b"", "Failed to read variable-length frame version"),
    (bytes([0, 2, 0]) + b"\x00\x03fo", "TOPIC_RECORD#parse failed"),
    (bytes([0, 2, 0]) + b"\x00\x03foo" + bytes(17), "1 byte(s) of garbage after TOPIC_RECORD"),
])
def test_bad_records_raise_metadata_parse_exception(framed: bytes, message: str) -> None:
    with pytest.raises(MetadataParseException, match=message.replace("(", r"\(").replace(")", r"\)")):
        SERDE.read(framed)


def test_api_message_and_version_checks_the_version() -> None:
    record = TopicRecord(name="t", topic_id=TOPIC_ID)
    assert ApiMessageAndVersion.of(record) == ApiMessageAndVersion(record, 0)
    with pytest.raises(ValueError, match="TopicRecord is version 0, not 1"):
        ApiMessageAndVersion(record, 1)
