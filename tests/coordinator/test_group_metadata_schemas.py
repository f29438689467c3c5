"""The __consumer_offsets record formats (group_metadata_schemas.py and the key/value functions
of group_metadata_manager.py) against hand-built bytes of Kafka 2.8.2's schemas, and the
group -> partition hash (Java's String.hashCode with Kafka's Utils.abs)."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata import Empty, GroupMetadata, Stable
from kafka_py.core.coordinator.group.group_metadata_manager import (
    GroupMetadataKey,
    OffsetKey,
    format_record_key_and_value,
    group_metadata_key,
    group_metadata_value,
    java_string_hash_code,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from kafka_py.core.coordinator.group.group_metadata_schemas import (
    GroupMetadataValue,
    MemberMetadataValue,
    read_version,
    to_version_prefixed_bytes,
)
from kafka_py.core.coordinator.group.member_metadata import MemberMetadata
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.clients.common.protocol.codec import SchemaException
from kafka_py.clients.common.utils.time import MockTime
from tests.coordinator.coordinator_harness import assignment, subscription


def s16(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def b32(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


# ---------------------------------------------------------------------------- hashing


@pytest.mark.parametrize("text, expected", [
    ("hello", 99162322),
    ("", 0),
    ("abc", 96354),
    ("Hello", 69609650),
    ("test", 3556498),
    # wraps around 32 bits to exactly Integer.MIN_VALUE
    ("polygenelubricants", -2**31),
    # a character outside the BMP counts as its two UTF-16 surrogates, 0xD83D and 0xDE00
    ("\U0001F600", 0xD83D * 31 + 0xDE00),
    ("é", 0xE9),
])
def test_java_string_hash_code(text: str, expected: int) -> None:
    assert java_string_hash_code(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_hash_code_is_a_signed_32_bit_polynomial_over_utf16_units(text: str) -> None:
    units = text.encode("utf-16-be", "surrogatepass")
    expected = 0
    for i in range(0, len(units), 2):
        expected = (expected * 31 + int.from_bytes(units[i:i + 2], "big")) % 2**32
    if expected >= 2**31:
        expected -= 2**32
    assert java_string_hash_code(text) == expected


# ---------------------------------------------------------------------------- keys


def test_offset_commit_key_is_version_1_group_topic_partition() -> None:
    key = offset_commit_key("grp", TopicPartition("topic-a", 7))
    assert key == i16(1) + s16("grp") + s16("topic-a") + i32(7)
    parsed = read_message_key(key)
    assert isinstance(parsed, OffsetKey) and parsed.version == 1
    assert parsed.key.group == "grp" and parsed.key.topic_partition == TopicPartition("topic-a", 7)
    # version 0 has the same layout and is read as an offset key too
    v0 = read_message_key(i16(0) + s16("grp") + s16("topic-a") + i32(7))
    assert isinstance(v0, OffsetKey) and v0.version == 0 and str(v0) == "[grp,topic-a,7]"


def test_group_metadata_key_is_version_2_group() -> None:
    key = group_metadata_key("grp")
    assert key == i16(2) + s16("grp")
    parsed = read_message_key(key)
    assert isinstance(parsed, GroupMetadataKey) and parsed.key == "grp" and parsed.version == 2


def test_unknown_or_truncated_keys_are_schema_errors() -> None:
    with pytest.raises(SchemaException):
        read_message_key(i16(3) + s16("grp"))
    with pytest.raises(SchemaException):
        read_message_key(i16(1) + s16("grp") + s16("t"))  # partition missing
    with pytest.raises(SchemaException):
        read_message_key(i16(2) + i16(-1))  # a null group


def test_utf8_strings_are_length_prefixed_in_bytes() -> None:
    assert offset_commit_key("gé", TopicPartition("t", 0)) == i16(1) + i16(3) + "gé".encode() + s16("t") + i32(0)


# ---------------------------------------------------------------------------- offset values


def test_offset_commit_value_v3_is_the_default() -> None:
    value = offset_commit_value(OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000))
    assert value == i16(3) + i64(42) + i32(5) + s16("meta") + i64(1_700_000_000_000)
    assert read_offset_message_value(value) == OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000, None)
    # no leader epoch is written as -1 and read back as none
    no_epoch = offset_commit_value(OffsetAndMetadata(42, None, "", 9))
    assert no_epoch == i16(3) + i64(42) + i32(-1) + s16("") + i64(9)
    assert read_offset_message_value(no_epoch).leader_epoch is None


def test_offset_commit_value_v1_carries_an_explicit_expire_timestamp() -> None:
    oam = OffsetAndMetadata(42, None, "m", 100, 5000)
    value = offset_commit_value(oam)
    assert value == i16(1) + i64(42) + s16("m") + i64(100) + i64(5000)
    assert read_offset_message_value(value) == oam


@pytest.mark.parametrize("version, body", [
    (0, i64(42) + s16("m") + i64(100)),
    (2, i64(42) + s16("m") + i64(100)),
])
def test_offset_commit_value_v0_and_v2_layouts(version: int, body: bytes) -> None:
    value = offset_commit_value(OffsetAndMetadata(42, None, "m", 100), version=version)
    assert value == i16(version) + body
    assert read_offset_message_value(value) == OffsetAndMetadata(42, None, "m", 100, None)


def test_offset_values_tombstones_and_bad_versions() -> None:
    assert read_offset_message_value(None) is None
    with pytest.raises(SchemaException):
        read_offset_message_value(i16(4) + i64(1))
    with pytest.raises(SchemaException):
        read_offset_message_value(i16(3) + i64(1))  # truncated


@settings(max_examples=100, deadline=None)
@given(offset=st.integers(-1, 2**63 - 1), epoch=st.one_of(st.none(), st.integers(0, 2**31 - 1)),
       metadata=st.text(max_size=50), ts=st.integers(0, 2**62), expire=st.one_of(st.none(), st.integers(0, 2**62)))
def test_offset_values_round_trip(offset, epoch, metadata, ts, expire) -> None:
    oam = OffsetAndMetadata(offset, epoch, metadata, ts, expire)
    decoded = read_offset_message_value(offset_commit_value(oam))
    # v1 (explicit expiry) has no leader epoch field
    assert decoded == (oam if expire is None else OffsetAndMetadata(offset, None, metadata, ts, expire))


# ---------------------------------------------------------------------------- group values


def _member_bytes(version: int, member_id: str, instance: str | None, client: str, host: str, rebalance: int,
                  session: int, sub: bytes, assign: bytes) -> bytes:
    out = s16(member_id)
    if version >= 3:
        out += s16(instance)
    out += s16(client) + s16(host)
    if version >= 1:
        out += i32(rebalance)
    return out + i32(session) + b32(sub) + b32(assign)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_group_metadata_value_layout_per_version(version: int) -> None:
    sub, assign = subscription("t"), assignment({"t": [0, 1]})
    value = GroupMetadataValue(protocol_type="consumer", generation=4, protocol="range", leader="m1", members=(
        MemberMetadataValue("m1", "client-1", "/10.0.0.1", 10_000, sub, assign, 30_000, "inst-1"),),
        current_state_timestamp=1_700_000_000_123)
    expected = s16("consumer") + i32(4) + s16("range") + s16("m1")
    if version >= 2:
        expected += i64(1_700_000_000_123)
    expected += i32(1) + _member_bytes(version, "m1", "inst-1", "client-1", "/10.0.0.1", 30_000, 10_000, sub, assign)
    data = to_version_prefixed_bytes(version, value)
    assert data == i16(version) + expected
    got_version, reader = read_version(data)
    decoded = GroupMetadataValue.read(reader, got_version)
    assert decoded.protocol == "range" and decoded.generation == 4 and decoded.leader == "m1"
    (member,) = decoded.members
    assert (member.member_id, member.client_id, member.client_host, member.session_timeout) == (
        "m1", "client-1", "/10.0.0.1", 10_000)
    assert member.subscription == sub and member.assignment == assign
    assert member.group_instance_id == ("inst-1" if version >= 3 else None)
    assert member.rebalance_timeout == (30_000 if version >= 1 else 0)
    assert decoded.current_state_timestamp == (1_700_000_000_123 if version >= 2 else -1)


def test_group_value_of_a_stable_group_round_trips_through_the_record() -> None:
    time = MockTime(current_time_ms=1_700_000_000_000)
    members = [MemberMetadata("m1", None, "c1", "/h1", 30_000, 10_000, "consumer", [("range", subscription("t"))]),
               MemberMetadata("m2", "static-2", "c2", "/h2", 45_000, 12_000, "consumer",
                              [("range", subscription("t", "u"))])]
    group = GroupMetadata.load_group("grp", Stable, 3, "consumer", "range", "m1", 1_700_000_000_000, members, time)
    value = group_metadata_value(group, {"m1": b"a1", "m2": b"a2"})
    assert value[:2] == i16(3)
    loaded = read_group_message_value("grp", value, time)
    assert loaded.is_(Stable) and loaded.generation_id == 3 and loaded.protocol_name == "range"
    assert loaded.protocol_type == "consumer" and loaded.leader_or_null == "m1"
    assert loaded.current_state_timestamp == 1_700_000_000_000
    assert [m.member_id for m in loaded.all_member_metadata] == ["m1", "m2"]
    m2 = loaded.get("m2")
    assert (m2.group_instance_id, m2.rebalance_timeout_ms, m2.session_timeout_ms, m2.assignment) == (
        "static-2", 45_000, 12_000, b"a2")
    assert loaded.has_static_member("static-2") and loaded.get_static_member_id("static-2") == "m2"
    assert loaded.subscribed_topics == {"t", "u"}


def test_group_value_of_an_empty_group_has_null_protocol_and_leader() -> None:
    time = MockTime(current_time_ms=5000)
    group = GroupMetadata("grp", Empty, time)
    group.protocol_type = "consumer"
    group.generation_id = 7
    value = group_metadata_value(group, {})
    assert value == i16(3) + s16("consumer") + i32(7) + s16(None) + s16(None) + i64(5000) + i32(0)
    loaded = read_group_message_value("grp", value, time)
    assert loaded.is_(Empty) and loaded.generation_id == 7 and loaded.protocol_name is None
    assert read_group_message_value("grp", None, time) is None


def test_version_0_group_value_uses_session_timeout_as_rebalance_timeout() -> None:
    value = i16(0) + s16("consumer") + i32(1) + s16("range") + s16("m1") + i32(1) + _member_bytes(
        0, "m1", None, "c", "/h", 0, 9000, subscription("t"), b"")
    group = read_group_message_value("grp", value, MockTime())
    assert group.get("m1").rebalance_timeout_ms == 9000 and group.current_state_timestamp is None


def test_a_lying_member_count_is_a_schema_error_not_an_allocation() -> None:
    value = i16(3) + s16("consumer") + i32(1) + s16("range") + s16("m1") + i64(0) + i32(2**31 - 1)
    with pytest.raises(SchemaException):
        read_group_message_value("grp", value, MockTime())


# ---------------------------------------------------------------------------- dump formatting


def test_format_record_key_and_value_for_the_dump_tool() -> None:
    key = offset_commit_key("g", TopicPartition("t", 2))
    assert format_record_key_and_value(key, offset_commit_value(OffsetAndMetadata(5, None, "", 1))) == (
        "offset_commit::group=g,partition=t-2", "offset=5")
    assert format_record_key_and_value(key, offset_commit_value(OffsetAndMetadata(5, None, "x", 1)))[1] == \
        "offset=5,metadata=x"
    assert format_record_key_and_value(key, None)[1] == "<DELETE>"
    time = MockTime()
    group = GroupMetadata.load_group("g", Stable, 2, "consumer", "range", "m1", 1, [MemberMetadata(
        "m1", None, "c", "/h", 1, 1, "consumer", [("range", subscription("t"))])], time)
    text_key, text_value = format_record_key_and_value(group_metadata_key("g"), group_metadata_value(
        group, {"m1": assignment({"t": [0, 1]})}))
    assert text_key == "group_metadata::group=g"
    assert '"generationId":2' in text_value and "m1=[t-0, t-1]" in text_value and '"protocol":"range"' in text_value
