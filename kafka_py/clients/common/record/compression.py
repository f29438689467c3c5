"""Port of clients/src/main/java/org/apache/kafka/common/record/CompressionType.java.

Also covers the codec framings Kafka's Java client writes and reads:

* gzip: a plain gzip stream (java.util.zip.GZIPOutputStream, deflate level 6).
* snappy: xerial's ``SnappyOutputStream`` block framing (a 16-byte header, then
  ``[int32 length][raw snappy block]`` per 32 KiB of input). xerial's input stream
  falls back to a single raw snappy block when the header is absent, so both are
  read here.
* lz4: the standard LZ4 frame (KafkaLZ4BlockOutputStream / InputStream) with
  independent 64 KiB blocks; the Java reader decodes every block on its own, so
  linked blocks must never be written.
* zstd: zstd frames (zstd-jni streams).

Every decompression is bounded by ``max_size`` so that a small compressed batch
cannot expand into gigabytes ("decompression bomb"), and every library error is
turned into CorruptRecordException: a bad batch from the network must become a
CORRUPT_MESSAGE response, not an unexpected exception in a request handler.
"""
from __future__ import annotations

import logging
import struct
import threading
import zlib
from enum import IntEnum

import cramjam
import lz4.frame
import zstandard

from kafka_py.clients.common.errors import CorruptRecordException, UnsupportedCompressionTypeException

logger = logging.getLogger(__name__)

# Upper bound on the decompressed size of one batch's records. Producers bound
# their batches by (estimated) size, so legitimate batches are far below this.
MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024

GZIP_LEVEL = 6  # java.util.zip.Deflater.DEFAULT_COMPRESSION
ZSTD_LEVEL = 3  # zstd-jni's default level
LZ4_BLOCK_SIZE = lz4.frame.BLOCKSIZE_MAX64KB
SNAPPY_BLOCK_SIZE = 32 * 1024  # xerial SnappyOutputStream default

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_HEADER_SIZE = len(_XERIAL_HEADER)  # 16
_INT32 = struct.Struct(">i")

_ZSTD_INPUT_SLICE = 4096
_tls = threading.local()


class CompressionType(IntEnum):
    """The codec id stored in the low three bits of a batch's attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def type_name(self) -> str:
        return self.name.lower()

    @property
    def id(self) -> int:
        return int(self)

    @classmethod
    def for_id(cls, type_id: int) -> "CompressionType":
        try:
            return cls(type_id)
        except ValueError:
            raise UnsupportedCompressionTypeException(
                f"Unknown compression type id: {type_id}"
            ) from None

    @classmethod
    def for_name(cls, name: str) -> "CompressionType":
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"Unknown compression name: {name}") from None

    def __str__(self) -> str:
        return self.type_name


def compress(ctype: CompressionType | int, data) -> bytes:
    """Compress ``data`` (any bytes-like object) in the framing Kafka's Java client uses."""
    if ctype == CompressionType.NONE:
        return bytes(data)
    if ctype == CompressionType.GZIP:
        c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if ctype == CompressionType.SNAPPY:
        return _xerial_snappy_compress(data)
    if ctype == CompressionType.LZ4:
        return lz4.frame.compress(
            data,
            block_size=LZ4_BLOCK_SIZE,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
    if ctype == CompressionType.ZSTD:
        cctx = getattr(_tls, "zstd_cctx", None)
        if cctx is None:
            cctx = _tls.zstd_cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
        return cctx.compress(data)
    raise UnsupportedCompressionTypeException(f"Unknown compression type id: {int(ctype)}")


def decompress(ctype: CompressionType | int, data, max_size: int = MAX_DECOMPRESSED_SIZE) -> bytes:
    """Decompress ``data``; CorruptRecordException on garbage, truncation or more than ``max_size`` bytes."""
    if ctype == CompressionType.NONE:
        return bytes(data)
    try:
        if ctype == CompressionType.GZIP:
            return _gzip_decompress(data, max_size)
        if ctype == CompressionType.SNAPPY:
            return _snappy_decompress(data, max_size)
        if ctype == CompressionType.LZ4:
            return _lz4_decompress(data, max_size)
        if ctype == CompressionType.ZSTD:
            return _zstd_decompress(data, max_size)
    except CorruptRecordException:
        raise
    except MemoryError:
        raise CorruptRecordException(
            f"Out of memory while decompressing a {CompressionType(ctype).type_name} batch"
        ) from None
    except Exception as e:  # noqa: BLE001 - every codec library has its own error types
        raise CorruptRecordException(
            f"Invalid {CompressionType(ctype).type_name} compressed data: {e}"
        ) from e
    raise UnsupportedCompressionTypeException(f"Unknown compression type id: {int(ctype)}")


def _too_large(codec: str, max_size: int) -> CorruptRecordException:
    return CorruptRecordException(
        f"Decompressed {codec} data exceeds the limit of {max_size} bytes"
    )


def _gzip_decompress(data, max_size: int) -> bytes:
    out = bytearray()
    pending = memoryview(data)
    while True:
        d = zlib.decompressobj(31)
        chunk = d.decompress(pending, max_size + 1 - len(out))
        out += chunk
        if len(out) > max_size or d.unconsumed_tail:
            raise _too_large("gzip", max_size)
        if not d.eof:
            raise CorruptRecordException("Truncated gzip stream")
        # Concatenated members are read, as GZIPInputStream and Python's gzip both do,
        # and zero padding after a member is skipped as Python's gzip does. Java ignores
        # any other trailing bytes, but Python's gzip (kafka-python) refuses them, so a
        # batch with them is refused: it would stop that consumer.
        rest = d.unused_data.lstrip(b"\x00")
        if not rest:
            return bytes(out)
        if rest[:2] != b"\x1f\x8b":
            raise CorruptRecordException(f"{len(rest)} bytes that are not a gzip member follow the gzip stream")
        pending = memoryview(rest)


def _xerial_snappy_compress(data) -> bytes:
    mv = memoryview(data)
    parts = [_XERIAL_HEADER]
    for start in range(0, len(mv), SNAPPY_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(mv[start:start + SNAPPY_BLOCK_SIZE]))
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _raw_snappy_block(block, max_size: int, produced: int) -> bytes:
    # The block's preamble states its uncompressed length; check it before
    # allocating anything.
    if produced + cramjam.snappy.decompress_raw_len(block) > max_size:
        raise _too_large("snappy", max_size)
    return bytes(cramjam.snappy.decompress_raw(block))


def _snappy_decompress(data, max_size: int) -> bytes:
    mv = memoryview(data)
    if len(mv) < _XERIAL_HEADER_SIZE or mv[:8] != XERIAL_MAGIC:
        return _raw_snappy_block(mv, max_size, 0)
    # The version/compat ints after the magic are not checked: some writers put
    # them in little-endian, and only one xerial framing exists.
    parts = []
    produced = 0
    pos = _XERIAL_HEADER_SIZE
    end = len(mv)
    while pos < end:
        if end - pos < 4:
            raise CorruptRecordException("Truncated xerial snappy block length")
        (size,) = _INT32.unpack_from(mv, pos)
        pos += 4
        if size < 0 or size > end - pos:
            raise CorruptRecordException(f"Invalid xerial snappy block length {size}")
        block = _raw_snappy_block(mv[pos:pos + size], max_size, produced)
        produced += len(block)
        parts.append(block)
        pos += size
    return b"".join(parts)


def _lz4_decompress(data, max_size: int) -> bytes:
    # The decompressor allocates ``max_length`` up front, so ask for output in
    # growing steps instead of max_size at once.
    d = lz4.frame.LZ4FrameDecompressor()
    parts = []
    total = 0
    step = min(max_size + 1, max(64 * 1024, 4 * len(data)))
    pending = data
    while True:
        out = d.decompress(pending, max_length=step)
        pending = b""
        total += len(out)
        if total > max_size:
            raise _too_large("lz4", max_size)
        parts.append(out)
        if d.eof:
            # Java's KafkaLZ4BlockInputStream stops at the end mark, but librdkafka refuses
            # a batch with bytes after it; a batch only one client could read is refused.
            if d.unused_data:
                raise CorruptRecordException(
                    f"{len(d.unused_data)} bytes follow the end of the lz4 frame")
            break
        if d.needs_input:
            raise CorruptRecordException("Truncated lz4 frame")
        step = min(max_size + 1 - total, step * 2)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    # Creating a zstd context costs more than decoding a small batch, so each
    # thread keeps one (a context must not be used by two threads at once).
    dctx = getattr(_tls, "zstd_dctx", None)
    if dctx is None:
        dctx = _tls.zstd_dctx = zstandard.ZstdDecompressor()
    return dctx


def _zstd_decompress(data, max_size: int) -> bytes:
    mv = memoryview(data)
    bound = zstd_output_bound(mv)
    if bound is None:
        raise CorruptRecordException("Malformed or truncated zstd frame")
    out = []
    if bound <= max_size:
        # Every frame is complete and cannot expand past ``bound``: decode each
        # in one call.
        pos = 0
        end = len(mv)
        while pos < end:
            dobj = _zstd_decompressor().decompressobj()
            out.append(dobj.decompress(mv[pos:]))
            if not dobj.eof:
                raise CorruptRecordException("Truncated zstd frame")
            pos = end - len(dobj.unused_data)
        return out[0] if len(out) == 1 else b"".join(out)
    return _zstd_decompress_sliced(mv, max_size)


def _zstd_decompress_sliced(mv: memoryview, max_size: int) -> bytes:
    # The structural bound is above the limit (it counts 128 KiB for every
    # compressed block), so decode with a real output check: the incremental
    # decoder has no output limit, so it is fed slices small enough that one
    # call cannot produce much (a 4-byte RLE block makes at most 128 KiB).
    out = bytearray()
    pos = 0
    end = len(mv)
    while pos < end:
        dobj = _zstd_decompressor().decompressobj()
        while not dobj.eof:
            if pos >= end:
                raise CorruptRecordException("Truncated zstd frame")
            piece = mv[pos:pos + _ZSTD_INPUT_SLICE]
            pos += len(piece)
            out += dobj.decompress(piece)
            if len(out) > max_size:
                raise _too_large("zstd", max_size)
        # Bytes of this slice past the frame's end start the next frame.
        pos -= len(dobj.unused_data)
    return bytes(out)


_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
_ZSTD_SKIPPABLE_MAGIC = 0x184D2A50
_ZSTD_BLOCK_MAX = 128 * 1024
_ZSTD_DICT_ID_SIZES = (0, 1, 2, 4)
_ZSTD_FCS_SIZES = (0, 2, 4, 8)


def zstd_output_bound(mv: memoryview) -> int | None:
    """Upper bound of what the zstd frames in ``mv`` decompress to, from their block headers.

    None when the bytes are not a sequence of complete, well-formed frames
    (RFC 8878 layout: frame header, blocks with 3-byte headers, optional checksum).
    """
    pos = 0
    end = len(mv)
    bound = 0
    while pos < end:
        if end - pos < 8:
            return None
        magic = int.from_bytes(mv[pos:pos + 4], "little")
        if magic & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE_MAGIC:
            pos += 8 + int.from_bytes(mv[pos + 4:pos + 8], "little")
            continue
        if magic != _ZSTD_MAGIC:
            return None
        fhd = mv[pos + 4]
        if fhd & 0x08:  # reserved bit
            return None
        single_segment = (fhd >> 5) & 1
        fcs_size = _ZSTD_FCS_SIZES[fhd >> 6] or single_segment
        pos += 5 + (0 if single_segment else 1) + _ZSTD_DICT_ID_SIZES[fhd & 3] + fcs_size
        while True:
            if end - pos < 3:
                return None
            header = mv[pos] | (mv[pos + 1] << 8) | (mv[pos + 2] << 16)
            pos += 3
            block_type = (header >> 1) & 3
            block_size = header >> 3
            if block_type == 0:  # raw
                pos += block_size
                bound += block_size
            elif block_type == 1:  # RLE: one byte repeated block_size times
                pos += 1
                bound += block_size
            elif block_type == 2:  # compressed: regenerates at most one maximum block
                pos += block_size
                bound += _ZSTD_BLOCK_MAX
            else:
                return None
            if pos > end:
                return None
            if header & 1:  # last block
                break
        if fhd & 0x04:  # content checksum
            pos += 4
        if pos > end:
            return None
    return bound
