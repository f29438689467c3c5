/*
 * The per-record step of kafka_py/clients/common/record/records_util.py's down-conversion, compiled.
 *
 * convert(data, count, base_offset, base_timestamp, to_magic, attributes,
 *         has_log_append_time, log_append_time, relative, first_offset)
 * reads `count` magic-2 records from `data` (a batch's record bytes, decompressed) and
 * writes each as a log entry of message format `to_magic` (0 or 1), exactly as
 * records_util._convert_records does, returning
 *     (entries, records_written, max_timestamp, last_offset)
 * or None when the records are malformed in any way; the caller then runs the Python
 * conversion, which raises InvalidRecordException naming the fault. Keeping the messages
 * in one place is why this returns None instead of raising.
 *
 * A record whose absolute offset is below `first_offset` is left out. With `relative`
 * each entry's offset is its distance from the first record written (the inner offsets of
 * a v1 wrapper); otherwise it is the record's absolute offset. Timestamps are the batch's
 * base timestamp plus each record's delta, or `log_append_time` for every record when
 * `has_log_append_time`; format 0 has none. Headers are dropped: formats 0 and 1 have no
 * place for them.
 *
 * convert_batches(window, to_magic, first_offset) does the same for a run of whole v2
 * batches: from the start of `window` it converts every uncompressed batch (their records
 * below `first_offset` left out) and skips control batches, into one buffer, and stops at
 * the first batch it leaves to Python: a compressed one, one of another format, or one it
 * cannot read. It returns (entries, bytes of window consumed, records written).
 *
 * scan_entries(buffer, stop_above_magic) walks the log entries at the start of `buffer` by
 * their headers alone (offset, length, and the magic at byte 16, where every format has it),
 * as a legacy consumer steps through the messages of an answer: it returns
 *     (bytes of whole entries, entries, highest magic, offset of the last whole entry, corrupt)
 * stopping at a partial entry, after the first entry whose magic is above `stop_above_magic`,
 * or at an entry whose length is below a v0 message's overhead (then `corrupt` is true and
 * the first value is that entry's position). The highest magic and last offset are -1 when
 * there is no whole entry.
 *
 * The message CRC is the plain CRC-32 (zlib's polynomial): by carry-less multiplication on
 * x86-64 processors that have it (PCLMULQDQ, SSE4.1), else for longer messages zlib's own
 * crc32 when the process has zlib loaded (Python's zlib module links it), else the
 * slicing-by-8 tables here; nothing beyond Python's headers is needed to build.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

static uint32_t crc_tables[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_tables[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = crc_tables[0][i];
        for (int t = 1; t < 8; t++) {
            c = crc_tables[0][c & 0xFF] ^ (c >> 8);
            crc_tables[t][i] = c;
        }
    }
}

typedef unsigned long (*zlib_crc32_fn)(unsigned long, const unsigned char *, unsigned int);
static zlib_crc32_fn zlib_crc32 = NULL;

static uint32_t table_crc32_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^
            crc_tables[5][(lo >> 16) & 0xFF] ^ crc_tables[4][lo >> 24] ^
            crc_tables[3][hi & 0xFF] ^ crc_tables[2][(hi >> 8) & 0xFF] ^
            crc_tables[1][(hi >> 16) & 0xFF] ^ crc_tables[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = crc_tables[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CLMUL_CRC 1

/* The CRC register advanced over `n` bytes (a multiple of 16, at least 64) by carry-less
 * multiplication (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
 * Instruction", Intel, 2009): four 128-bit lanes folded forward 64 bytes at a time, folded
 * into one, then 16 bytes at a time, and the last 128 bits reduced to 32 (Barrett). The
 * constants are powers of x modulo the reflected CRC-32 polynomial: x^(4*128+32) and
 * x^(4*128-32) for the 4-lane fold, x^(128+32) and x^(128-32) for the 1-lane fold, x^64 for
 * the 64-bit step, and the polynomial with its Barrett quotient. `state` is the register,
 * not the CRC (no inversion here). */
__attribute__((target("pclmul,sse4.1")))
static uint32_t clmul_crc32_update(uint32_t state, const unsigned char *p, Py_ssize_t n) {
    const __m128i fold4 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i fold1 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    const __m128i x64 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i barrett = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
    __m128i a = _mm_loadu_si128((const __m128i *)(p + 0));
    __m128i b = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i d = _mm_loadu_si128((const __m128i *)(p + 48));
    a = _mm_xor_si128(a, _mm_cvtsi32_si128((int)state));
    p += 64;
    n -= 64;
    for (; n >= 64; p += 64, n -= 64) {
        __m128i a0 = _mm_clmulepi64_si128(a, fold4, 0x00), a1 = _mm_clmulepi64_si128(a, fold4, 0x11);
        __m128i b0 = _mm_clmulepi64_si128(b, fold4, 0x00), b1 = _mm_clmulepi64_si128(b, fold4, 0x11);
        __m128i c0 = _mm_clmulepi64_si128(c, fold4, 0x00), c1 = _mm_clmulepi64_si128(c, fold4, 0x11);
        __m128i d0 = _mm_clmulepi64_si128(d, fold4, 0x00), d1 = _mm_clmulepi64_si128(d, fold4, 0x11);
        a = _mm_xor_si128(_mm_xor_si128(a0, a1), _mm_loadu_si128((const __m128i *)(p + 0)));
        b = _mm_xor_si128(_mm_xor_si128(b0, b1), _mm_loadu_si128((const __m128i *)(p + 16)));
        c = _mm_xor_si128(_mm_xor_si128(c0, c1), _mm_loadu_si128((const __m128i *)(p + 32)));
        d = _mm_xor_si128(_mm_xor_si128(d0, d1), _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    /* the four lanes into one */
    __m128i lanes[3] = {b, c, d};
    for (int i = 0; i < 3; i++)
        a = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, fold1, 0x00), _mm_clmulepi64_si128(a, fold1, 0x11)),
                          lanes[i]);
    for (; n >= 16; p += 16, n -= 16)
        a = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, fold1, 0x00), _mm_clmulepi64_si128(a, fold1, 0x11)),
                          _mm_loadu_si128((const __m128i *)p));
    /* 128 bits to 64 */
    __m128i t = _mm_clmulepi64_si128(a, fold1, 0x10);
    a = _mm_xor_si128(_mm_srli_si128(a, 8), t);
    t = _mm_srli_si128(a, 4);
    a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), x64, 0x00), t);
    /* 64 bits to 32 */
    t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), barrett, 0x10), low32);
    t = _mm_clmulepi64_si128(t, barrett, 0x00);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(a, t), 1);
}

static int have_clmul = 0;
#endif

static uint32_t table_crc32_update(uint32_t state, const unsigned char *p, Py_ssize_t n) {
    while (n-- > 0)
        state = crc_tables[0][(state ^ *p++) & 0xFF] ^ (state >> 8);
    return state;
}

/* Carry-less multiplication needs one 64-byte block, and is faster than the tables from there. */
#define CLMUL_CRC_FROM 64
/* zlib's crc32 costs more to set up than the tables on a short message, and is about twice
 * as fast on a long one; they break even near 600 bytes. */
#define ZLIB_CRC_FROM 640

static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
#ifdef HAVE_CLMUL_CRC
    if (have_clmul && n >= CLMUL_CRC_FROM) {
        Py_ssize_t blocks = n & ~(Py_ssize_t)15;
        uint32_t state = clmul_crc32_update(0xFFFFFFFFu, p, blocks);
        return table_crc32_update(state, p + blocks, n - blocks) ^ 0xFFFFFFFFu;
    }
#endif
    if (zlib_crc32 != NULL && n >= ZLIB_CRC_FROM && n < 0x7FFFFFFF)
        return (uint32_t)zlib_crc32(0, p, (unsigned int)n);
    return table_crc32_of(p, n);
}

/* Zig-zag varint of at most max_bytes bytes ending before `end`; 0 on success, -1 when it
 * runs past the end or is too long (the same rules as the record walk's). */
static inline __attribute__((always_inline)) int read_varint(const unsigned char *data, Py_ssize_t *pos, Py_ssize_t end, int max_bytes, int64_t *out) {
    /* one byte (values of -64 to 63): no loop */
    if (*pos < end && data[*pos] < 0x80) {
        uint64_t raw = data[(*pos)++];
        *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
        return 0;
    }
    uint64_t raw = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos >= end)
            return -1;
        unsigned char b = data[(*pos)++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            if (max_bytes == 5 && (raw >> 32) != 0)
                return -1;
            if (i == 9 && b > 1)
                return -1;
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 0;
        }
        shift += 7;
    }
    return -1;
}

/* Big-endian stores and loads, by one byte swap (none on a big-endian host) and an unaligned move each. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TO_BE32(x) (x)
#define TO_BE64(x) (x)
#else
#define TO_BE32(x) __builtin_bswap32(x)
#define TO_BE64(x) __builtin_bswap64(x)
#endif

static inline void put_i32(unsigned char *p, int32_t v) {
    uint32_t u = TO_BE32((uint32_t)v);
    memcpy(p, &u, 4);
}

static inline void put_i64(unsigned char *p, int64_t v) {
    uint64_t u = TO_BE64((uint64_t)v);
    memcpy(p, &u, 8);
}

static inline int32_t get_i32(const unsigned char *p) {
    uint32_t u;
    memcpy(&u, p, 4);
    return (int32_t)TO_BE32(u);
}

static inline int64_t get_i64(const unsigned char *p) {
    uint64_t u;
    memcpy(&u, p, 8);
    return (int64_t)TO_BE64(u);
}

#define LOG_OVERHEAD 12
#define RECORD_OVERHEAD_V1 22

typedef struct {
    const unsigned char *data;
    Py_ssize_t end;
    Py_ssize_t count;
    int64_t base_offset, base_timestamp, log_append_time, first_offset;
    int to_magic, attributes, has_log_append_time, relative;
    /* results */
    unsigned char *dst;
    Py_ssize_t written, records;
    int64_t max_timestamp, last_offset;
} conversion;

/* A zig-zag varint of at most `max_bytes` bytes from *q, before `end`; advances *q. 0 on
 * success, -1 when it runs past the end or is too long (the record walk's rules). The loop is
 * unrolled by hand for the one- and two-byte forms, which most of a record's varints take. */
static inline __attribute__((always_inline)) int take_varint(const unsigned char **q, const unsigned char *end,
                                                             int max_bytes, int64_t *out) {
    const unsigned char *p = *q;
    uint64_t raw;
    if (p < end && p[0] < 0x80) {
        raw = p[0];
        *q = p + 1;
    } else if (end - p >= 2 && p[1] < 0x80) {
        raw = (uint64_t)(p[0] & 0x7F) | (uint64_t)p[1] << 7;
        *q = p + 2;
    } else {
        Py_ssize_t pos = 0;
        if (read_varint(p, &pos, end - p, max_bytes, out))
            return -1;
        *q = p + pos;
        return 0;
    }
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    return 0;
}

/* The conversion itself, over plain memory only, so it may run without the GIL;
 * 0 on success, -1 when the records are malformed. */
static int run(conversion *c) {
    const unsigned char *q = c->data, *const end = c->data + c->end;
    Py_ssize_t written = 0;
    int64_t origin = 0;
    int has_origin = 0;
    c->records = 0;
    c->max_timestamp = -1;
    c->last_offset = -1;
    for (Py_ssize_t i = 0; i < c->count; i++) {
        int64_t size, ts_delta, offset_delta, key_len, value_len, headers;
        if (take_varint(&q, end, 5, &size) || size < 6 || size > end - q)
            return -1;
        const unsigned char *rec_end = q + size;
        q += 1; /* attributes: unused in v2 */
        if (take_varint(&q, rec_end, 10, &ts_delta) || take_varint(&q, rec_end, 5, &offset_delta) ||
            take_varint(&q, rec_end, 5, &key_len))
            return -1;
        if (key_len < -1 || (key_len > 0 && key_len > rec_end - q))
            return -1;
        const unsigned char *key = q;
        if (key_len > 0)
            q += key_len;
        if (take_varint(&q, rec_end, 5, &value_len))
            return -1;
        if (value_len < -1 || (value_len > 0 && value_len > rec_end - q))
            return -1;
        const unsigned char *value = q;
        if (value_len > 0)
            q += value_len;
        if (take_varint(&q, rec_end, 5, &headers) || headers < 0 || headers * 2 > rec_end - q)
            return -1;
        for (int64_t h = 0; h < headers; h++) {
            int64_t hk, hv;
            if (take_varint(&q, rec_end, 5, &hk) || hk < 0 || hk > rec_end - q)
                return -1;
            q += hk;
            if (take_varint(&q, rec_end, 5, &hv) || hv < -1 || (hv > 0 && hv > rec_end - q))
                return -1;
            if (hv > 0)
                q += hv;
        }
        if (q != rec_end)
            return -1;

        int64_t offset = c->base_offset + offset_delta;
        if (offset < c->first_offset)
            continue;
        int64_t timestamp = c->has_log_append_time ? c->log_append_time : c->base_timestamp + ts_delta;
        if (!has_origin) {
            origin = c->relative ? offset : 0;
            has_origin = 1;
        }
        Py_ssize_t message = (c->to_magic == 0 ? RECORD_OVERHEAD_V1 - 8 : RECORD_OVERHEAD_V1)
            + (key_len > 0 ? (Py_ssize_t)key_len : 0) + (value_len > 0 ? (Py_ssize_t)value_len : 0);
        unsigned char *entry = c->dst + written;
        put_i64(entry, offset - origin);
        put_i32(entry + 8, (int32_t)message);
        unsigned char *m = entry + LOG_OVERHEAD;
        m[4] = (unsigned char)c->to_magic;
        m[5] = (unsigned char)c->attributes;
        unsigned char *p = m + 6;
        if (c->to_magic > 0) {
            put_i64(p, timestamp);
            p += 8;
        }
        put_i32(p, (int32_t)key_len);
        p += 4;
        if (key_len > 0) {
            memcpy(p, key, (size_t)key_len);
            p += key_len;
        }
        put_i32(p, (int32_t)value_len);
        p += 4;
        if (value_len > 0)
            memcpy(p, value, (size_t)value_len);
        put_i32(m, (int32_t)crc32_of(m + 4, message - 4));
        written += LOG_OVERHEAD + message;
        c->records += 1;
        if (timestamp > c->max_timestamp)
            c->max_timestamp = timestamp;
        c->last_offset = offset;
    }
    if (q != end)
        return -1;
    c->written = written;
    return 0;
}

/* Below this many bytes of records the GIL is kept: handing it over costs more than the
 * conversion would let another thread do meanwhile. */
#define RELEASE_GIL_FROM 65536

static PyObject *convert(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count;
    long long base_offset, base_timestamp, log_append_time, first_offset;
    int to_magic, attributes, has_log_append_time, relative;
    if (!PyArg_ParseTuple(args, "y*nLLiipLpL", &view, &count, &base_offset, &base_timestamp, &to_magic,
                          &attributes, &has_log_append_time, &log_append_time, &relative, &first_offset))
        return NULL;
    if (count < 0 || count > view.len || (to_magic != 0 && to_magic != 1)) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    /* Each record is at least 7 bytes and becomes at most its key and value plus a
     * message's overhead and a log entry's: this bound holds every output. */
    PyObject *out = PyBytes_FromStringAndSize(NULL, view.len + count * (LOG_OVERHEAD + RECORD_OVERHEAD_V1));
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    conversion c = {
        .data = (const unsigned char *)view.buf, .end = view.len, .count = count,
        .base_offset = base_offset, .base_timestamp = base_timestamp, .log_append_time = log_append_time,
        .first_offset = first_offset, .to_magic = to_magic, .attributes = attributes,
        .has_log_append_time = has_log_append_time, .relative = relative,
        .dst = (unsigned char *)PyBytes_AS_STRING(out),
    };
    int failed;
    if (view.len >= RELEASE_GIL_FROM) {
        /* the view is held and the output is ours alone until returned */
        Py_BEGIN_ALLOW_THREADS
        failed = run(&c);
        Py_END_ALLOW_THREADS
    } else {
        failed = run(&c);
    }
    PyBuffer_Release(&view);
    if (failed) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    if (_PyBytes_Resize(&out, c.written) < 0)
        return NULL;
    return Py_BuildValue("(NnLL)", out, c.records, (long long)c.max_timestamp, (long long)c.last_offset);
}

/* A v2 batch header's fields, at their offsets (DefaultRecordBatch.java). */
#define BATCH_LENGTH_AT 8
#define BATCH_MAGIC_AT 16
#define BATCH_ATTRIBUTES_AT 21
#define BATCH_BASE_TIMESTAMP_AT 27
#define BATCH_MAX_TIMESTAMP_AT 35
#define BATCH_COUNT_AT 57
#define BATCH_RECORDS_AT 61

/* The whole batches at the start of `data` that convert_batches converts or skips, up to the
 * first it leaves to Python: their bytes, and in *bound the most their conversion can write. */
static Py_ssize_t convertible_run(const unsigned char *data, Py_ssize_t end, Py_ssize_t *bound) {
    Py_ssize_t pos = 0;
    *bound = 0;
    while (end - pos >= BATCH_RECORDS_AT) {
        const unsigned char *b = data + pos;
        int32_t length = get_i32(b + BATCH_LENGTH_AT);
        if (b[BATCH_MAGIC_AT] != 2 || length < BATCH_RECORDS_AT - LOG_OVERHEAD || length > end - pos - LOG_OVERHEAD)
            break;
        int attributes = (b[BATCH_ATTRIBUTES_AT] << 8) | b[BATCH_ATTRIBUTES_AT + 1];
        int32_t count = get_i32(b + BATCH_COUNT_AT);
        if (!(attributes & 0x20)) {
            if ((attributes & 0x07) != 0 || count < 0 || count > length)
                break;
            *bound += length + (Py_ssize_t)count * (LOG_OVERHEAD + RECORD_OVERHEAD_V1);
        }
        pos += LOG_OVERHEAD + length;
    }
    return pos;
}

static PyObject *convert_batches(PyObject *self, PyObject *args) {
    Py_buffer view;
    int to_magic;
    long long first_offset;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iL", &view, &to_magic, &first_offset))
        return NULL;
    if (to_magic != 0 && to_magic != 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "down-conversion is to message format 0 or 1");
        return NULL;
    }
    const unsigned char *data = (const unsigned char *)view.buf;
    Py_ssize_t bound;
    Py_ssize_t run_end = convertible_run(data, view.len, &bound);
    PyObject *out = PyBytes_FromStringAndSize(NULL, bound);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t pos = 0, written = 0, records = 0;
    PyThreadState *released = run_end >= RELEASE_GIL_FROM ? PyEval_SaveThread() : NULL;
    while (pos < run_end) {
        const unsigned char *b = data + pos;
        Py_ssize_t size = LOG_OVERHEAD + get_i32(b + BATCH_LENGTH_AT);
        int attributes = (b[BATCH_ATTRIBUTES_AT] << 8) | b[BATCH_ATTRIBUTES_AT + 1];
        if (!(attributes & 0x20)) {
            int log_append = (attributes & 0x08) != 0;
            conversion c = {
                .data = b + BATCH_RECORDS_AT, .end = size - BATCH_RECORDS_AT, .count = get_i32(b + BATCH_COUNT_AT),
                .base_offset = get_i64(b), .base_timestamp = get_i64(b + BATCH_BASE_TIMESTAMP_AT),
                .log_append_time = get_i64(b + BATCH_MAX_TIMESTAMP_AT), .first_offset = first_offset,
                .to_magic = to_magic, .attributes = (to_magic > 0 && log_append) ? 0x08 : 0,
                .has_log_append_time = log_append, .relative = 0, .dst = dst + written,
            };
            if (run(&c))
                break; /* left to Python, which names the fault */
            written += c.written;
            records += c.records;
        }
        pos += size;
    }
    if (released != NULL)
        PyEval_RestoreThread(released);
    PyBuffer_Release(&view);
    if (_PyBytes_Resize(&out, written) < 0)
        return NULL;
    return Py_BuildValue("(Nnn)", out, pos, records);
}

/* Every format's log entry: offset (8), length (4); the magic is at byte 16 of the entry. */
#define HEADER_SIZE_UP_TO_MAGIC 17
#define RECORD_OVERHEAD_V0 14

static PyObject *scan_entries(PyObject *self, PyObject *args) {
    Py_buffer view;
    int stop_above_magic;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*i", &view, &stop_above_magic))
        return NULL;
    const unsigned char *data = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len, pos = 0, entries = 0, last = -1;
    int max_magic = -1, corrupt = 0;
    while (end - pos >= HEADER_SIZE_UP_TO_MAGIC) {
        int32_t length = get_i32(data + pos + BATCH_LENGTH_AT);
        if (length < RECORD_OVERHEAD_V0) {
            corrupt = 1;
            break;
        }
        if ((Py_ssize_t)length > end - pos - LOG_OVERHEAD)
            break; /* a partial entry: where the read was cut */
        int magic = data[pos + BATCH_MAGIC_AT];
        if (magic > max_magic)
            max_magic = magic;
        last = pos;
        entries += 1;
        pos += LOG_OVERHEAD + length;
        if (magic > stop_above_magic)
            break;
    }
    long long last_offset = last < 0 ? -1 : (long long)get_i64(data + last);
    PyBuffer_Release(&view);
    return Py_BuildValue("(nniLO)", pos, entries, max_magic, last_offset, corrupt ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"convert", convert, METH_VARARGS,
     "Magic-2 record bytes as log entries of message format 0 or 1 (see records_util.py)."},
    {"convert_batches", convert_batches, METH_VARARGS,
     "The uncompressed v2 batches at the start of a buffer as log entries of format 0 or 1."},
    {"scan_entries", scan_entries, METH_VARARGS,
     "The whole log entries at the start of a buffer, walked by their headers (see records_util.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_records_util", NULL, -1, methods,
};

PyMODINIT_FUNC PyInit__records_util(void) {
    crc_init();
#ifdef HAVE_CLMUL_CRC
    __builtin_cpu_init();
    have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
    /* zlib as Python's zlib module loaded it (no new library is mapped when it is there) */
    void *zlib = dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (zlib == NULL)
        zlib = dlopen("libz.so.1", RTLD_NOW);
    if (zlib != NULL)
        zlib_crc32 = (zlib_crc32_fn)dlsym(zlib, "crc32");
    return PyModule_Create(&module);
}
