/*
 * The ProduceResponse body writer of kafka_py/clients/common/protocol/fast_produce_response.py
 * (_produce_values_writer), compiled.
 *
 * write_values(version, topics, throttle_time_ms, out) appends to the bytearray `out` the
 * body of a ProduceResponse of `version` (3 to 9) written from the same plain values the
 * Python writer takes, in the same bytes, and returns True. Given anything the common case
 * does not hold (a value of another type or out of its field's range, a string too long or
 * not encodable) it appends nothing and returns False: the caller then runs the Python
 * writer, which writes the value or raises as it always did, so the errors stay in one place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *s_code;

typedef struct {
    unsigned char *data;
    Py_ssize_t len, cap;
} buf;

static int reserve(buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    unsigned char *data = PyMem_Realloc(b->data, cap);
    if (data == NULL)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static int put(buf *b, const void *p, Py_ssize_t n) {
    if (reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static int put_byte(buf *b, unsigned char v) { return put(b, &v, 1); }

static int put16(buf *b, int v) {
    unsigned char p[2] = {(unsigned char)(v >> 8), (unsigned char)v};
    return put(b, p, 2);
}

static int put32(buf *b, int64_t v) {
    uint32_t u = (uint32_t)v;
    unsigned char p[4] = {(unsigned char)(u >> 24), (unsigned char)(u >> 16), (unsigned char)(u >> 8),
                          (unsigned char)u};
    return put(b, p, 4);
}

static int put64(buf *b, int64_t v) {
    uint64_t u = (uint64_t)v;
    unsigned char p[8];
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)u;
        u >>= 8;
    }
    return put(b, p, 8);
}

static int put_uvarint(buf *b, uint64_t v) {
    while (v >= 0x80) {
        if (put_byte(b, (unsigned char)((v & 0x7F) | 0x80)) < 0)
            return -1;
        v >>= 7;
    }
    return put_byte(b, (unsigned char)v);
}

/* What the Python writer would not write as the common case: the caller falls back. */
#define UNUSUAL 1
#define FAILED (-1)

/* An int within [low, high]; UNUSUAL for any other value or type. */
static int int_in(PyObject *o, int64_t low, int64_t high, int64_t *out) {
    if (!PyLong_Check(o))
        return UNUSUAL;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return FAILED;
    if (overflow || v < low || v > high)
        return UNUSUAL;
    *out = v;
    return 0;
}

#define I16_MIN (-32768)
#define I16_MAX 32767
#define I32_MIN (-2147483647LL - 1)
#define I32_MAX 2147483647LL

/* A string, legacy (int16 length; None allowed when nullable) or compact (uvarint length + 1;
 * None is 0). */
static int put_string(buf *b, PyObject *o, int flexible, int nullable) {
    if (o == Py_None) {
        if (flexible)
            return put_byte(b, 0);
        return nullable ? put16(b, -1) : UNUSUAL;
    }
    if (!PyUnicode_Check(o))
        return UNUSUAL;
    Py_ssize_t size;
    const char *data = PyUnicode_AsUTF8AndSize(o, &size);
    if (data == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
            return UNUSUAL;
        }
        return FAILED;
    }
    if (flexible) {
        if (put_uvarint(b, (uint64_t)size + 1) < 0)
            return FAILED;
    } else {
        if (size > 0x7FFF)
            return UNUSUAL;
        if (put16(b, (int)size) < 0)
            return FAILED;
    }
    return put(b, data, size) < 0 ? FAILED : 0;
}

static int put_length(buf *b, Py_ssize_t n, int flexible) {
    if (flexible)
        return put_uvarint(b, (uint64_t)n + 1) < 0 ? FAILED : 0;
    return put32(b, n) < 0 ? FAILED : 0;
}

/* A list or tuple as a fast sequence, new reference; NULL (no error set) for anything else,
 * which the Python writer handles (an iterator must not be consumed here before it runs). */
static PyObject *fast_seq(PyObject *o) {
    if (!PyList_Check(o) && !PyTuple_Check(o))
        return NULL;
    return PySequence_Fast(o, "");
}

#define TRY(expr)           \
    do {                    \
        int rc_ = (expr);   \
        if (rc_ != 0) {     \
            rc = rc_;       \
            goto done;      \
        }                   \
    } while (0)

static int write_partition(buf *b, PyObject *partition, long version) {
    int flexible = version >= 9, rc = 0;
    PyObject *seq = fast_seq(partition);
    if (seq == NULL)
        return UNUSUAL;
    PyObject *code_obj = NULL;
    if (PySequence_Fast_GET_SIZE(seq) != 7) {
        rc = UNUSUAL;
        goto done;
    }
    PyObject **f = PySequence_Fast_ITEMS(seq);
    int64_t index, code, base_offset, append_time, log_start_offset = 0;
    TRY(int_in(f[0], I32_MIN, I32_MAX, &index));
    /* an Errors member carries its code; kio's ErrorCode and ints are the code */
    code_obj = PyObject_GetAttr(f[1], s_code);
    if (code_obj == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            rc = FAILED;
            goto done;
        }
        PyErr_Clear();
        code_obj = Py_NewRef(f[1]);
    }
    TRY(int_in(code_obj, I16_MIN, I16_MAX, &code));
    TRY(int_in(f[2], INT64_MIN, INT64_MAX, &base_offset));
    TRY(int_in(f[3], INT64_MIN, INT64_MAX, &append_time));
    if (version >= 5)
        TRY(int_in(f[4], INT64_MIN, INT64_MAX, &log_start_offset));
    if (put32(b, index) < 0 || put16(b, (int)code) < 0 || put64(b, base_offset) < 0 || put64(b, append_time) < 0 ||
        (version >= 5 && put64(b, log_start_offset) < 0)) {
        rc = FAILED;
        goto done;
    }
    if (version >= 8) {
        PyObject *record_errors = f[5];
        if (!PyObject_IsTrue(record_errors)) {
            if (PyErr_Occurred()) {
                rc = FAILED;
                goto done;
            }
            TRY(put_length(b, 0, flexible));
        } else {
            PyObject *errors = fast_seq(record_errors);
            if (errors == NULL) {
                rc = UNUSUAL;
                goto done;
            }
            Py_ssize_t n = PySequence_Fast_GET_SIZE(errors);
            rc = put_length(b, n, flexible);
            for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
                PyObject *pair = fast_seq(PySequence_Fast_GET_ITEM(errors, i));
                if (pair == NULL) {
                    rc = UNUSUAL;
                    break;
                }
                int64_t batch_index;
                if (PySequence_Fast_GET_SIZE(pair) != 2)
                    rc = UNUSUAL;
                else
                    rc = int_in(PySequence_Fast_GET_ITEM(pair, 0), I32_MIN, I32_MAX, &batch_index);
                if (rc == 0)
                    rc = put32(b, batch_index) < 0 ? FAILED : 0;
                if (rc == 0)
                    rc = put_string(b, PySequence_Fast_GET_ITEM(pair, 1), flexible, 1);
                if (rc == 0 && flexible)
                    rc = put_byte(b, 0) < 0 ? FAILED : 0;
                Py_DECREF(pair);
            }
            Py_DECREF(errors);
            if (rc != 0)
                goto done;
        }
        TRY(put_string(b, f[6], flexible, 1));
    }
    if (flexible && put_byte(b, 0) < 0)
        rc = FAILED;
done:
    Py_XDECREF(code_obj);
    Py_DECREF(seq);
    return rc;
}

static int write_topics(buf *b, PyObject *topics, long version) {
    int flexible = version >= 9, rc = 0;
    PyObject *seq = fast_seq(topics);
    if (seq == NULL)
        return UNUSUAL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    rc = put_length(b, n, flexible);
    for (Py_ssize_t t = 0; t < n && rc == 0; t++) {
        PyObject *topic = fast_seq(PySequence_Fast_GET_ITEM(seq, t));
        if (topic == NULL) {
            rc = UNUSUAL;
            break;
        }
        if (PySequence_Fast_GET_SIZE(topic) != 2) {
            rc = UNUSUAL;
        } else {
            rc = put_string(b, PySequence_Fast_GET_ITEM(topic, 0), flexible, 0);
            PyObject *partitions = rc == 0 ? fast_seq(PySequence_Fast_GET_ITEM(topic, 1)) : NULL;
            if (rc == 0 && partitions == NULL)
                rc = UNUSUAL;
            if (partitions != NULL) {
                Py_ssize_t count = PySequence_Fast_GET_SIZE(partitions);
                rc = put_length(b, count, flexible);
                for (Py_ssize_t i = 0; i < count && rc == 0; i++)
                    rc = write_partition(b, PySequence_Fast_GET_ITEM(partitions, i), version);
                if (rc == 0 && flexible)
                    rc = put_byte(b, 0) < 0 ? FAILED : 0;
                Py_DECREF(partitions);
            }
        }
        Py_DECREF(topic);
    }
    Py_DECREF(seq);
    return rc;
}

static PyObject *write_values(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyByteArray_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "write_values(version, topics, throttle_time_ms, out: bytearray)");
        return NULL;
    }
    long version = PyLong_AsLong(args[0]);
    if (version == -1 && PyErr_Occurred())
        return NULL;
    if (version < 3 || version > 9)
        Py_RETURN_FALSE;
    int64_t throttle;
    buf b = {NULL, 0, 0};
    int rc = write_topics(&b, args[1], version);
    if (rc == 0)
        rc = int_in(args[2], I32_MIN, I32_MAX, &throttle);
    if (rc == 0 && (put32(&b, throttle) < 0 || (version >= 9 && put_byte(&b, 0) < 0)))
        rc = FAILED;
    if (rc == 0) {
        PyObject *out = args[3];
        Py_ssize_t start = PyByteArray_GET_SIZE(out);
        if (PyByteArray_Resize(out, start + b.len) < 0)
            rc = FAILED;
        else
            memcpy(PyByteArray_AS_STRING(out) + start, b.data, b.len);
    }
    PyMem_Free(b.data);
    if (rc == FAILED)
        return NULL;
    if (rc == UNUSUAL)
        Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"write_values", (PyCFunction)(void (*)(void))write_values, METH_FASTCALL,
     "write_values(version, topics, throttle_time_ms, out) -> True, or False having written nothing"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_fast_produce_response", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fast_produce_response(void) {
    if ((s_code = PyUnicode_InternFromString("code")) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
