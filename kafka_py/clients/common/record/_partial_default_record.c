/*
 * The record walk of kafka_py/clients/common/record/partial_default_record.py, compiled.
 *
 * walk(data, count, check_keys, low, high, check_range, exempt) walks `count` magic-2
 * records in `data` exactly as walk_records() does and returns
 *     (max_timestamp_delta or None, index_of_max, offsets_consecutive,
 *      [null key indexes], [(index, timestamp delta) out of range])
 * or None when the records are malformed in any way; the caller then runs the Python
 * walk, which raises InvalidRecordException naming the fault. Keeping the messages in one
 * place is why this returns None instead of raising.
 *
 * Python ints are arbitrary precision; here a varint of up to 5 bytes (int) or 10 bytes
 * (long) is decoded into 64 bits, which holds every value such a varint can encode, and
 * the comparisons against lengths happen in 64 bits as well, so both walks agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct {
    const unsigned char *data;
    Py_ssize_t pos;
    Py_ssize_t end;
} cursor;

/* Zig-zag varint of at most max_bytes bytes; 0 on success, -1 when it runs past the end
 * of the data or is too long. */
static int read_varint(cursor *c, int max_bytes, int64_t *out) {
    uint64_t raw = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (c->pos >= c->end)
            return -1;
        unsigned char b = c->data[c->pos++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            /* a value wider than the type (32 bits for an int, 64 for a long) is refused,
             * as the Python walk does, rather than cut to size */
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

static PyObject *walk(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count;
    int check_keys, check_range;
    long long low, high, exempt;
    if (!PyArg_ParseTuple(args, "y*npLLpL", &view, &count, &check_keys, &low, &high, &check_range, &exempt))
        return NULL;
    PyObject *null_keys = PyList_New(0);
    PyObject *out_of_range = PyList_New(0);
    PyObject *result = NULL;
    if (null_keys == NULL || out_of_range == NULL)
        goto done;

    cursor c = {(const unsigned char *)view.buf, 0, view.len};
    int64_t max_delta = 0;
    Py_ssize_t index_of_max = -1;
    int consecutive = 1;
    if (count < 0 || count > view.len / 7)
        goto malformed;
    for (Py_ssize_t index = 0; index < count; index++) {
        int64_t size, ts_delta, offset_delta, key_len, value_len, num_headers;
        if (read_varint(&c, 5, &size) < 0)
            goto malformed;
        if (size < 6 || size > c.end - c.pos)
            goto malformed;
        Py_ssize_t rec_end = c.pos + (Py_ssize_t)size;
        /* fields of this record must stay inside it */
        cursor r = {c.data, c.pos, rec_end};
        if (r.data[r.pos++] != 0)  /* attributes: no bits are defined */
            goto malformed;
        if (read_varint(&r, 10, &ts_delta) < 0)
            goto malformed;
        if (index_of_max < 0 || ts_delta > max_delta) {
            max_delta = ts_delta;
            index_of_max = index;
        }
        if (check_range && (ts_delta < low || ts_delta > high) && ts_delta != exempt) {
            PyObject *item = Py_BuildValue("(nL)", index, (long long)ts_delta);
            if (item == NULL || PyList_Append(out_of_range, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
        }
        if (read_varint(&r, 5, &offset_delta) < 0)
            goto malformed;
        if (offset_delta != index)
            consecutive = 0;
        if (read_varint(&r, 5, &key_len) < 0)
            goto malformed;
        if (key_len >= 0) {
            if (key_len > r.end - r.pos)
                goto malformed;
            r.pos += (Py_ssize_t)key_len;
        } else if (key_len == -1) {
            if (check_keys) {
                PyObject *i = PyLong_FromSsize_t(index);
                if (i == NULL || PyList_Append(null_keys, i) < 0) {
                    Py_XDECREF(i);
                    goto done;
                }
                Py_DECREF(i);
            }
        } else {
            goto malformed;
        }
        if (read_varint(&r, 5, &value_len) < 0)
            goto malformed;
        if (value_len >= 0) {
            if (value_len > r.end - r.pos)
                goto malformed;
            r.pos += (Py_ssize_t)value_len;
        } else if (value_len != -1) {
            goto malformed;
        }
        if (read_varint(&r, 5, &num_headers) < 0)
            goto malformed;
        if (num_headers < 0 || num_headers * 2 > r.end - r.pos)
            goto malformed;
        for (int64_t h = 0; h < num_headers; h++) {
            int64_t hk_len, hv_len;
            if (read_varint(&r, 5, &hk_len) < 0 || hk_len < 0 || hk_len > r.end - r.pos)
                goto malformed;
            /* header keys are strings: they must be UTF-8 for every client to read them */
            PyObject *key = PyUnicode_DecodeUTF8((const char *)r.data + r.pos, (Py_ssize_t)hk_len, "strict");
            if (key == NULL) {
                PyErr_Clear();
                goto malformed;
            }
            Py_DECREF(key);
            r.pos += (Py_ssize_t)hk_len;
            if (read_varint(&r, 5, &hv_len) < 0)
                goto malformed;
            if (hv_len >= 0) {
                if (hv_len > r.end - r.pos)
                    goto malformed;
                r.pos += (Py_ssize_t)hv_len;
            } else if (hv_len != -1) {
                goto malformed;
            }
        }
        if (r.pos != rec_end)
            goto malformed;
        c.pos = rec_end;
    }
    if (c.pos != c.end)
        goto malformed;
    {
        PyObject *max_obj = index_of_max < 0 ? (Py_INCREF(Py_None), Py_None) : PyLong_FromLongLong(max_delta);
        if (max_obj == NULL)
            goto done;
        result = Py_BuildValue("(NnOOO)", max_obj, index_of_max, consecutive ? Py_True : Py_False,
                               null_keys, out_of_range);
    }
    goto done;
malformed:
    Py_INCREF(Py_None);
    result = Py_None;
done:
    Py_XDECREF(null_keys);
    Py_XDECREF(out_of_range);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS, "Walk magic-2 records; a summary tuple, or None when malformed."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_partial_default_record",
    "The record walk of partial_default_record.py, compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit__partial_default_record(void) {
    return PyModule_Create(&module);
}
