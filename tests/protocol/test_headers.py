"""Request headers v0-v2 and response headers v0-v1."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import InvalidRequestException
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.headers import RequestHeader, ResponseHeader, parse_request_header


@pytest.mark.parametrize(
    "api, version, header_version",
    [
        (ApiKeys.CONTROLLED_SHUTDOWN, 0, 0),
        (ApiKeys.CONTROLLED_SHUTDOWN, 1, 1),
        (ApiKeys.CONTROLLED_SHUTDOWN, 3, 2),
        (ApiKeys.METADATA, 8, 1),
        (ApiKeys.METADATA, 9, 2),
        (ApiKeys.PRODUCE, 9, 2),
        (ApiKeys.API_VERSIONS, 3, 2),
        (ApiKeys.OFFSET_DELETE, 0, 1),  # never flexible
    ],
)
def test_header_version_follows_api_version(api, version, header_version) -> None:
    assert api.request_header_version(version) == header_version
    header = RequestHeader.for_request(api, version, correlation_id=1, client_id="c")
    assert header.header_version == header_version


def test_request_header_v0_round_trip() -> None:
    header = RequestHeader(ApiKeys.CONTROLLED_SHUTDOWN, 0, 77, "", 0)
    data = header.to_bytes()
    assert data == struct.pack(">hhi", 7, 0, 77)
    parsed, offset = RequestHeader.parse(data + b"body")
    assert parsed == header and offset == 8


def test_request_header_v1_round_trip() -> None:
    header = RequestHeader(ApiKeys.METADATA, 4, -3, "client-é", 1)
    data = header.to_bytes()
    client = "client-é".encode()
    assert data == struct.pack(">hhih", 3, 4, -3, len(client)) + client
    parsed, offset = parse_request_header(memoryview(data + b"xyz"))
    assert parsed == header and offset == len(data)


def test_request_header_v2_round_trip_with_tagged_fields() -> None:
    tagged = ((0, b""), (3, b"abc"), (200, b"\x01" * 130))
    header = RequestHeader(ApiKeys.PRODUCE, 9, 12345, "producer-1", 2, tagged)
    data = header.to_bytes()
    parsed, offset = RequestHeader.parse(bytearray(data) + b"\x00\x01")
    assert parsed == header
    assert offset == len(data)
    # tag 200 and the 130-byte size both need two varint bytes
    assert data.endswith(b"\xc8\x01\x82\x01" + b"\x01" * 130)


def test_request_header_v2_without_tagged_fields_ends_with_zero_count() -> None:
    header = RequestHeader.for_request(ApiKeys.FETCH, 12, 5, "c")
    assert header.to_bytes() == struct.pack(">hhih", 1, 12, 5, 1) + b"c\x00"


def test_parse_at_offset() -> None:
    header = RequestHeader(ApiKeys.HEARTBEAT, 1, 8, "x", 1)
    parsed, offset = RequestHeader.parse(b"\xff" * 5 + header.to_bytes(), offset=5)
    assert parsed == header and offset == 5 + len(header.to_bytes())


def test_null_client_id_reads_as_empty() -> None:
    data = struct.pack(">hhih", 3, 1, 9, -1)
    parsed, offset = RequestHeader.parse(data)
    assert parsed.client_id == "" and offset == len(data)
    assert RequestHeader(ApiKeys.METADATA, 1, 9, None, 1).to_bytes() == data


def test_unsupported_version_still_parses_its_header() -> None:
    # A too-new ApiVersions request must be answerable, so its header parses (KIP-511).
    data = RequestHeader(ApiKeys.API_VERSIONS, 99, 4, "new-client", 2).to_bytes()
    parsed, _ = RequestHeader.parse(data)
    assert parsed.api_version == 99 and parsed.client_id == "new-client"


def test_to_response_header() -> None:
    fetch_v12 = RequestHeader.for_request(ApiKeys.FETCH, 12, 3)
    assert fetch_v12.to_response_header() == ResponseHeader(3, 1)
    fetch_v11 = RequestHeader.for_request(ApiKeys.FETCH, 11, 3)
    assert fetch_v11.to_response_header() == ResponseHeader(3, 0)
    # ApiVersions responses always carry header v0, even for flexible versions.
    assert RequestHeader.for_request(ApiKeys.API_VERSIONS, 3, 3).to_response_header() == (
        ResponseHeader(3, 0)
    )


@pytest.mark.parametrize("tagged", [(), ((1, b"zz"),)])
def test_response_header_round_trip(tagged) -> None:
    v0 = ResponseHeader(-7, 0)
    assert v0.to_bytes() == struct.pack(">i", -7)
    assert ResponseHeader.parse(v0.to_bytes(), 0) == (v0, 4)
    v1 = ResponseHeader(2**31 - 1, 1, tagged)
    data = v1.to_bytes()
    assert ResponseHeader.parse(data + b"rest", 1) == (v1, len(data))


def test_unknown_api_key_is_invalid_request() -> None:
    with pytest.raises(InvalidRequestException, match="Unknown API key 999"):
        RequestHeader.parse(struct.pack(">hhih", 999, 0, 1, 0))
    with pytest.raises(InvalidRequestException, match="Unknown API key -1"):
        RequestHeader.parse(struct.pack(">hhih", -1, 0, 1, 0))


@pytest.mark.parametrize("header_version", [0, 1, 2])
def test_every_truncation_is_invalid_request(header_version) -> None:
    api, version = {
        0: (ApiKeys.CONTROLLED_SHUTDOWN, 0),
        1: (ApiKeys.METADATA, 1),
        2: (ApiKeys.METADATA, 9),
    }[header_version]
    tagged = ((5, b"abc"),) if header_version == 2 else ()
    data = RequestHeader(api, version, 1, "some-client", header_version, tagged).to_bytes()
    for cut in range(len(data)):
        with pytest.raises(InvalidRequestException):
            RequestHeader.parse(data[:cut])


def test_negative_client_id_length_is_invalid() -> None:
    with pytest.raises(InvalidRequestException, match="negative client id length"):
        RequestHeader.parse(struct.pack(">hhih", 3, 1, 9, -2) + b"abc")


def test_bad_utf8_client_id_is_invalid() -> None:
    with pytest.raises(InvalidRequestException):
        RequestHeader.parse(struct.pack(">hhih", 3, 1, 9, 2) + b"\xff\xfe")


def test_overlong_varint_in_tagged_fields_is_invalid() -> None:
    data = struct.pack(">hhih", 3, 9, 9, 0) + b"\xff" * 6
    with pytest.raises(InvalidRequestException, match="varint"):
        RequestHeader.parse(data)


def test_huge_tagged_field_count_is_invalid() -> None:
    data = struct.pack(">hhih", 3, 9, 9, 0) + b"\xff\xff\xff\xff\x07" + b"\0" * 4
    with pytest.raises(InvalidRequestException, match="tagged fields"):
        RequestHeader.parse(data)


def test_response_header_truncated() -> None:
    with pytest.raises(InvalidRequestException):
        ResponseHeader.parse(b"\x00\x00\x01", 0)
    with pytest.raises(InvalidRequestException):
        ResponseHeader.parse(b"\x00\x00\x00\x01\x01\x05", 1)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_never_crash_the_parser(data: bytes) -> None:
    try:
        header, offset = RequestHeader.parse(data)
    except InvalidRequestException:
        return
    assert 4 <= offset <= len(data)
    assert isinstance(header.api_key, ApiKeys)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(list(ApiKeys)),
    st.integers(0, 20),
    st.integers(-(2**31), 2**31 - 1),
    st.text(max_size=40),
    st.lists(st.tuples(st.integers(0, 2**20), st.binary(max_size=20)), max_size=3,
             unique_by=lambda t: t[0]),
)
def test_round_trip_property(api, version, correlation_id, client_id, tagged) -> None:
    header_version = api.request_header_version(version)
    if header_version != 2:
        tagged = []
    if header_version == 0:
        client_id = ""
    header = RequestHeader(api, version, correlation_id, client_id, header_version,
                           tuple(sorted(tagged)))
    try:
        data = header.to_bytes()
    except (UnicodeEncodeError, ValueError):
        return  # surrogates, or longer than an int16 length allows
    assert RequestHeader.parse(data) == (header, len(data))


# ------------------------------------------------------------- the compiled parse of _headers.c

def _python_parse(buffer, offset=0):
    from kafka_py.clients.common.protocol import headers

    compiled, headers._compiled = headers._compiled, None
    try:
        return RequestHeader.parse(buffer, offset)
    except InvalidRequestException as e:
        return InvalidRequestException, str(e)
    finally:
        headers._compiled = compiled


def _compiled_parse(buffer, offset=0):
    from kafka_py.clients.common.protocol import headers

    return headers._compiled.parse(RequestHeader, headers._API_BY_ID, headers._HEADER_VERSIONS, buffer, offset)


def _assert_same(compiled, python) -> None:
    header, offset = compiled
    assert (header, offset) == python
    assert type(header) is RequestHeader and header.api_key is python[0].api_key
    assert type(header.client_id) is str and header.tagged_fields == ()


needs_compiled = pytest.mark.skipif(
    __import__("kafka_py.clients.common.protocol.headers", fromlist=["_compiled"])._compiled is None,
    reason="the compiled parse was not built")


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(api=st.sampled_from(list(ApiKeys)), version=st.integers(0, 13), correlation_id=st.integers(-(2**31), 2**31 - 1),
       client_id=st.one_of(st.none(), st.text(max_size=20)), prefix=st.binary(max_size=3),
       tail=st.binary(max_size=4))
def test_the_compiled_parse_reads_what_the_python_one_reads(api, version, correlation_id, client_id, prefix,
                                                            tail) -> None:
    header = RequestHeader.for_request(api, version, correlation_id, client_id)
    data = prefix + header.to_bytes() + tail
    python = _python_parse(data, len(prefix))  # also puts the header version in the memo
    compiled = _compiled_parse(memoryview(bytearray(data)), len(prefix))
    if compiled is None:
        return  # an unusual header, read by the Python parse
    _assert_same(compiled, python)
    # and through RequestHeader.parse, from bytes as from a view
    _assert_same(RequestHeader.parse(data, len(prefix)), python)


@needs_compiled
def test_the_compiled_parse_leaves_what_it_is_not_sure_of_to_the_python_one() -> None:
    flexible = RequestHeader.for_request(ApiKeys.METADATA, 9, 5, "client").to_bytes()
    legacy = RequestHeader.for_request(ApiKeys.METADATA, 8, 5, "client").to_bytes()
    v0 = RequestHeader(ApiKeys.CONTROLLED_SHUTDOWN, 0, 77, "", 0).to_bytes()
    _python_parse(flexible), _python_parse(legacy), _python_parse(v0)  # the versions memoised
    cases = [flexible[:cut] for cut in range(len(flexible))] + [legacy[:cut] for cut in range(len(legacy))]
    cases += [v0[:cut] for cut in range(len(v0))]
    cases += [
        struct.pack(">hhih", 3, 8, 5, -2) + b"client",  # a negative client id length
        struct.pack(">hhih", 3, 8, 5, 7) + b"client",  # a client id running past the end
        struct.pack(">hhih", 3, 8, 5, 2) + b"\xff\xfe",  # not UTF-8
        struct.pack(">hhih", 3, 9, 5, -1) + b"\x01\x00\x00",  # a tagged field
        struct.pack(">hhih", 3, 9, 5, -1) + b"\x80",  # a tagged field count that is a long varint
        struct.pack(">hhi", 999, 0, 5) + b"\0\0",  # an unknown api key
        struct.pack(">hhi", 3, 31_000, 5) + b"\0\0",  # a version not met before
    ]
    unusual = 0
    for data in cases:
        compiled = _compiled_parse(data)
        python = _python_parse(data)
        if compiled is None:
            unusual += 1
        else:
            _assert_same(compiled, python)
        # RequestHeader.parse answers as the Python parse does, errors included
        try:
            got = RequestHeader.parse(data)
        except InvalidRequestException as e:
            got = InvalidRequestException, str(e)
        assert got == python
    assert unusual >= len(cases) - 5
    # a null client id reads as an empty one, as the Python parse reads it
    data = struct.pack(">hhih", 3, 8, 5, -1)
    _assert_same(_compiled_parse(data), _python_parse(data))
    # an offset outside the buffer, and a buffer that is no bytes at all
    assert _compiled_parse(legacy, -1) is None and _compiled_parse(legacy, len(legacy) + 1) is None
    assert _compiled_parse("text", 0) is None
