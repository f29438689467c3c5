"""Codecs of kafka_py.clients.common.record.compression: Java-compatible framings, interop with
kafka-python's codecs, and hostile input (garbage, truncation, bombs)."""
import gzip
import struct
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import codec as kcodec

from kafka_py.clients.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_py.clients.common.record.compression import (
    XERIAL_MAGIC,
    CompressionType,
    compress,
    decompress,
)

CODECS = list(CompressionType)
COMPRESSED = [c for c in CODECS if c != CompressionType.NONE]

KAFKA_PYTHON_ENCODE = {
    CompressionType.GZIP: kcodec.gzip_encode,
    CompressionType.SNAPPY: kcodec.snappy_encode,
    CompressionType.LZ4: kcodec.lz4_encode,
    CompressionType.ZSTD: kcodec.zstd_encode,
}
KAFKA_PYTHON_DECODE = {
    CompressionType.GZIP: kcodec.gzip_decode,
    CompressionType.SNAPPY: kcodec.snappy_decode,
    CompressionType.LZ4: kcodec.lz4_decode,
    CompressionType.ZSTD: kcodec.zstd_decode,
}

# Compressible and incompressible data, and a size spanning several codec blocks.
SAMPLES = [b"", b"x", b"hello kafka " * 1000, bytes(range(256)) * 700]


def test_names_and_ids():
    assert [c.type_name for c in CODECS] == ["none", "gzip", "snappy", "lz4", "zstd"]
    assert [int(c) for c in CODECS] == [0, 1, 2, 3, 4]
    assert CompressionType.for_name("lz4") is CompressionType.LZ4
    assert CompressionType.for_name("ZSTD") is CompressionType.ZSTD
    assert CompressionType.for_id(2) is CompressionType.SNAPPY
    with pytest.raises(ValueError, match="Unknown compression name: brotli"):
        CompressionType.for_name("brotli")
    with pytest.raises(UnsupportedCompressionTypeException):
        CompressionType.for_id(5)


@pytest.mark.parametrize("ctype", CODECS)
@pytest.mark.parametrize("data", SAMPLES, ids=["empty", "one", "text", "binary"])
def test_round_trip(ctype, data):
    out = compress(ctype, data)
    assert decompress(ctype, out) == data
    assert decompress(ctype, memoryview(out)) == data
    assert compress(ctype, memoryview(data)) == out


@settings(max_examples=60, deadline=None)
@given(ctype=st.sampled_from(CODECS), data=st.binary(max_size=3000))
def test_round_trip_property(ctype, data):
    assert decompress(ctype, compress(ctype, data)) == data


@pytest.mark.parametrize("ctype", COMPRESSED)
@pytest.mark.parametrize("data", SAMPLES[1:], ids=["one", "text", "binary"])
def test_interop_with_kafka_python_codecs(ctype, data):
    assert KAFKA_PYTHON_DECODE[ctype](compress(ctype, data)) == data
    assert decompress(ctype, KAFKA_PYTHON_ENCODE[ctype](data)) == data


def test_gzip_is_a_plain_gzip_stream():
    data = b"abc" * 5000
    out = compress(CompressionType.GZIP, data)
    assert out[:2] == b"\x1f\x8b"
    assert gzip.decompress(out) == data


def test_gzip_reads_concatenated_members_like_gzip_input_stream():
    out = gzip.compress(b"first ") + gzip.compress(b"second")
    assert decompress(CompressionType.GZIP, out) == b"first second"


def test_snappy_writes_xerial_framing_with_32k_blocks():
    data = bytes(range(256)) * 300  # 76800 bytes -> blocks of 32768, 32768, 11264
    out = compress(CompressionType.SNAPPY, data)
    assert out[:8] == XERIAL_MAGIC
    assert struct.unpack(">ii", out[8:16]) == (1, 1)
    pos, blocks = 16, []
    while pos < len(out):
        (n,) = struct.unpack_from(">i", out, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(out[pos + 4:pos + 4 + n])))
        pos += 4 + n
    assert pos == len(out)
    assert [len(b) for b in blocks] == [32768, 32768, 11264]
    assert b"".join(blocks) == data


def test_snappy_reads_raw_blocks_too():
    data = b"raw snappy from a non-xerial producer " * 50
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert decompress(CompressionType.SNAPPY, raw) == data
    assert decompress(CompressionType.SNAPPY, kcodec.snappy_encode(data, xerial_compatible=False)) == data


def test_snappy_xerial_with_little_endian_version_fields():
    # Some writers put the version/compat ints little-endian; the framing is otherwise the same.
    data = b"little endian header " * 10
    block = bytes(cramjam.snappy.compress_raw(data))
    framed = XERIAL_MAGIC + struct.pack("<ii", 1, 1) + struct.pack(">i", len(block)) + block
    assert decompress(CompressionType.SNAPPY, framed) == data


def test_lz4_writes_kafkas_frame_descriptor():
    out = compress(CompressionType.LZ4, b"abc" * 100000)
    assert out[:4] == b"\x04\x22\x4d\x18"
    flg, bd = out[4], out[5]
    assert flg >> 6 == 1  # frame format version 01
    assert flg & 0x20  # independent blocks: Java decodes each block on its own
    assert not flg & 0x10  # no block checksum
    assert not flg & 0x08  # no content size
    assert (bd >> 4) & 0x7 == 4  # 64 KiB maximum block size
    assert lz4.frame.decompress(out) == b"abc" * 100000


def test_zstd_reads_streams_without_content_size_and_several_frames():
    cctx = zstandard.ZstdCompressor(write_content_size=False)
    parts = [b"first frame " * 1000, b"second"]
    data = b"".join(cctx.compress(p) for p in parts)
    assert zstandard.frame_content_size(data) == -1
    assert decompress(CompressionType.ZSTD, data) == b"".join(parts)


@pytest.mark.parametrize("ctype", COMPRESSED)
def test_bomb_is_refused(ctype):
    bomb = compress(ctype, bytes(8 * 1024 * 1024))
    assert len(bomb) < 1024 * 1024
    with pytest.raises(CorruptRecordException, match="exceeds the limit"):
        decompress(ctype, bomb, max_size=1024 * 1024)
    # Exactly at the limit is fine.
    assert len(decompress(ctype, bomb, max_size=8 * 1024 * 1024)) == 8 * 1024 * 1024


def test_zstd_bomb_without_content_size_is_refused():
    bomb = zstandard.ZstdCompressor(write_content_size=False).compress(bytes(16 * 1024 * 1024))
    with pytest.raises(CorruptRecordException, match="exceeds the limit"):
        decompress(CompressionType.ZSTD, bomb, max_size=1024 * 1024)


@pytest.mark.parametrize("ctype", COMPRESSED)
def test_truncated_stream_is_corrupt(ctype):
    data = bytes(range(256)) * 400
    out = compress(ctype, data)
    for cut in (1, 2, 5, len(out) // 2, len(out) - 9):
        with pytest.raises(CorruptRecordException):
            decompress(ctype, out[:-cut])


@settings(max_examples=150, deadline=None)
@given(ctype=st.sampled_from(COMPRESSED), junk=st.binary(max_size=200))
def test_garbage_raises_only_corrupt_record(ctype, junk):
    try:
        decompress(ctype, junk, max_size=1 << 20)
    except CorruptRecordException:
        pass


@settings(max_examples=150, deadline=None)
@given(ctype=st.sampled_from(COMPRESSED), data=st.data())
def test_flipped_byte_raises_only_corrupt_record(ctype, data):
    payload = compress(ctype, b"some records " * 40)
    i = data.draw(st.integers(0, len(payload) - 1))
    bit = data.draw(st.integers(0, 7))
    mutated = bytearray(payload)
    mutated[i] ^= 1 << bit
    try:
        decompress(ctype, bytes(mutated), max_size=1 << 20)
    except CorruptRecordException:
        pass


def test_gzip_garbage_is_corrupt_not_zlib_error():
    with pytest.raises(CorruptRecordException) as info:
        decompress(CompressionType.GZIP, b"\x1f\x8b" + b"\xff" * 30)
    assert isinstance(info.value.__cause__, zlib.error)
    assert info.value.error_name == "CORRUPT_MESSAGE"


def test_zstd_skippable_frames_are_skipped():
    skippable = struct.pack("<II", 0x184D2A53, 5) + b"12345"
    data = skippable + compress(CompressionType.ZSTD, b"payload") + skippable
    assert decompress(CompressionType.ZSTD, data) == b"payload"


def test_zstd_exact_limit_through_the_bounded_decoder():
    # Compressed blocks count as 128 KiB each in the structural bound, so a
    # limit just above the real size takes the incremental, output-checked path.
    data = b"".join(b"line %d of a text log\n" % i for i in range(130_000))
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert decompress(CompressionType.ZSTD, frame, max_size=len(data)) == data
    with pytest.raises(CorruptRecordException, match="exceeds the limit"):
        decompress(CompressionType.ZSTD, frame, max_size=len(data) - 1)
    with pytest.raises(CorruptRecordException, match="truncated"):
        decompress(CompressionType.ZSTD, frame[:-3], max_size=len(data))
