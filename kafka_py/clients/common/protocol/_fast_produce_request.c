/*
 * The Produce request reader of kafka_py/clients/common/protocol/fast_produce_request.py, compiled.
 *
 * read(flexible, request_type, topic_type, partition_type, timeouts, view) reads a Produce
 * request body of versions 3 to 8, or of version 9 when `flexible` (compact lengths, tagged
 * fields), from the byte-format memoryview `view` exactly as the Python readers do and returns the request, its three kinds of objects made without
 * their __init__ and filled through their slots (object.__setattr__'s way, which a frozen
 * dataclass's own __setattr__ refuses), the records views of `view` (view[a:b]). It returns
 * None wherever the Python reader returns None (a short buffer, a length or count out of
 * range, a name that is not UTF-8, a tagged field, a varint over four bytes); the caller
 * then hands the bytes to the generic reader,
 * which says what is wrong. `timeouts` is the Python reader's dict of the timedeltas already
 * built, kept to the same bound.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdint.h>

#define TIMEOUTS_KEPT 16 /* fast_produce_request._TIMEOUTS_KEPT */

static PyObject *s_transactional_id, *s_acks, *s_timeout, *s_topic_data, *s_name, *s_partition_data, *s_index,
    *s_records;

static int16_t be16(const unsigned char *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }

static int32_t be32(const unsigned char *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* An unsigned varint of at most four bytes at *pos (fast_produce_request._uvarint); -1 when
 * it runs past `end` or is longer. */
static int64_t uvarint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end) {
    int64_t value = 0;
    for (int shift = 0; shift <= 21; shift += 7) {
        if (*pos >= end)
            return -1;
        unsigned char b = p[(*pos)++];
        value |= (int64_t)(b & 0x7F) << shift;
        if (b < 0x80)
            return value;
    }
    return -1;
}

/* The tagged fields section of a struct when it is empty (one zero byte): 0, else -1. */
static int no_tags(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end) {
    if (*pos >= end || p[*pos] != 0)
        return -1;
    (*pos)++;
    return 0;
}

/* An instance of `type` without its __init__, as object.__new__(type) makes it. */
static PyObject *new_object(PyObject *type) {
    PyTypeObject *t = (PyTypeObject *)type;
    return t->tp_alloc(t, 0);
}

/* object.__setattr__(obj, name, value); steals `value`. */
static int set_field(PyObject *obj, PyObject *name, PyObject *value) {
    if (value == NULL)
        return -1;
    int rc = PyObject_GenericSetAttr(obj, name, value);
    Py_DECREF(value);
    return rc;
}

/* A string of `size` bytes at `p`, or NULL with no error set when it is not UTF-8. */
static PyObject *utf8(const unsigned char *p, Py_ssize_t size) {
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, size, "strict");
    if (s == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        PyErr_Clear();
    return s;
}

static PyObject *timeout_of(PyObject *timeouts, int32_t ms) {
    PyObject *key = PyLong_FromLong(ms);
    if (key == NULL)
        return NULL;
    PyObject *found = PyDict_GetItemWithError(timeouts, key);
    if (found != NULL) {
        Py_DECREF(key);
        Py_INCREF(found);
        return found;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (PyDict_GET_SIZE(timeouts) >= TIMEOUTS_KEPT)
        PyDict_Clear(timeouts);
    /* timedelta(milliseconds=ms), normalized as that is: days (floored), then seconds and
     * microseconds in [0, a day) */
    int64_t us = (int64_t)ms * 1000;
    int64_t days = us / 86400000000LL;
    int64_t rest = us % 86400000000LL;
    if (rest < 0) {
        rest += 86400000000LL;
        days -= 1;
    }
    PyObject *delta = PyDelta_FromDSU((int)days, (int)(rest / 1000000), (int)(rest % 1000000));
    if (delta == NULL || PyDict_SetItem(timeouts, key, delta) < 0) {
        Py_DECREF(key);
        Py_XDECREF(delta);
        return NULL;
    }
    Py_DECREF(key);
    return delta;
}

static PyObject *read_request(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "read(flexible, request_type, topic_type, partition_type, timeouts, view)");
        return NULL;
    }
    int flexible = PyObject_IsTrue(args[0]);
    if (flexible < 0)
        return NULL;
    args++;
    PyObject *request_type = args[0], *topic_type = args[1], *partition_type = args[2], *timeouts = args[3],
             *view = args[4];
    if (!PyType_Check(request_type) || !PyType_Check(topic_type) || !PyType_Check(partition_type) ||
        !PyDict_Check(timeouts) || !PyMemoryView_Check(view)) {
        PyErr_SetString(PyExc_TypeError, "read(type, type, type, dict, memoryview)");
        return NULL;
    }
    Py_buffer buffer;
    if (PyObject_GetBuffer(view, &buffer, PyBUF_SIMPLE) < 0) {
        /* not one flat run of bytes (or released): the generic reader says what it is */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    const unsigned char *p = (const unsigned char *)buffer.buf;
    Py_ssize_t end = buffer.len, pos = 0;
    PyObject *transactional_id = NULL, *topics = NULL, *request = NULL, *result = NULL;

    int64_t size16;
    if (flexible) {
        /* compact nullable string: length + 1, 0 for null */
        size16 = uvarint(p, &pos, end) - 1;
        if (size16 < -1)
            goto done;
    } else {
        if (end - pos < 2)
            goto done;
        size16 = be16(p + pos);
        pos += 2;
    }
    if (size16 >= 0) {
        if (size16 > end - pos)
            goto done;
        transactional_id = utf8(p + pos, size16);
        if (transactional_id == NULL)
            goto done;
        pos += size16;
    } else if (size16 == -1) {
        transactional_id = Py_NewRef(Py_None);
    } else {
        goto done;
    }
    if (end - pos < (flexible ? 6 : 10))
        goto done;
    int16_t acks = be16(p + pos);
    int32_t timeout_ms = be32(p + pos + 2);
    int64_t topic_count;
    if (flexible) {
        pos += 6;
        topic_count = uvarint(p, &pos, end) - 1; /* -1 (null) and -2 (too long) refused below */
    } else {
        topic_count = be32(p + pos + 6);
        pos += 10;
    }
    /* every element takes at least one byte: a longer count is garbage */
    if (topic_count < 0 || topic_count > end - pos)
        goto done;
    topics = PyTuple_New(topic_count);
    if (topics == NULL)
        goto done;
    for (int32_t t = 0; t < topic_count; t++) {
        int64_t name_size;
        if (flexible) {
            name_size = uvarint(p, &pos, end) - 1;
        } else {
            if (end - pos < 2)
                goto done;
            name_size = be16(p + pos);
            pos += 2;
        }
        if (name_size < 0 || name_size > end - pos)
            goto done;
        PyObject *name = utf8(p + pos, name_size);
        if (name == NULL)
            goto done;
        pos += name_size;
        int64_t partition_count;
        if (flexible) {
            partition_count = uvarint(p, &pos, end) - 1;
        } else {
            if (end - pos < 4) {
                Py_DECREF(name);
                goto done;
            }
            partition_count = be32(p + pos);
            pos += 4;
        }
        if (partition_count < 0 || partition_count > end - pos) {
            Py_DECREF(name);
            goto done;
        }
        PyObject *partitions = PyTuple_New(partition_count);
        if (partitions == NULL) {
            Py_DECREF(name);
            goto done;
        }
        int failed = 0;
        for (int32_t i = 0; i < partition_count && !failed; i++) {
            if (end - pos < (flexible ? 5 : 8)) {
                failed = 1;
                break;
            }
            int32_t index = be32(p + pos);
            int64_t records_size;
            if (flexible) {
                pos += 4;
                records_size = uvarint(p, &pos, end) - 1;
                if (records_size < -1) {
                    failed = 1;
                    break;
                }
            } else {
                records_size = be32(p + pos + 4);
                pos += 8;
            }
            PyObject *records;
            if (records_size >= 0) {
                if (records_size > end - pos) {
                    failed = 1;
                    break;
                }
                records = PySequence_GetSlice(view, pos, pos + records_size); /* view[a:b] */
                pos += records_size;
            } else if (records_size == -1) {
                records = Py_NewRef(Py_None);
            } else {
                failed = 1;
                break;
            }
            if (records != NULL && flexible && no_tags(p, &pos, end) < 0) {
                Py_DECREF(records);
                failed = 1;
                break;
            }
            PyObject *partition = records == NULL ? NULL : new_object(partition_type);
            if (partition == NULL) {
                Py_XDECREF(records);
                failed = 2;
                break;
            }
            PyTuple_SET_ITEM(partitions, i, partition);
            if (set_field(partition, s_index, PyLong_FromLong(index)) < 0 ||
                set_field(partition, s_records, records) < 0) {
                failed = 2;
                break;
            }
        }
        if (!failed && flexible && no_tags(p, &pos, end) < 0)
            failed = 1;
        if (failed) {
            Py_DECREF(name);
            Py_DECREF(partitions);
            goto done;
        }
        PyObject *topic = new_object(topic_type);
        if (topic == NULL) {
            Py_DECREF(name);
            Py_DECREF(partitions);
            goto done;
        }
        PyTuple_SET_ITEM(topics, t, topic);
        if (set_field(topic, s_name, name) < 0 || set_field(topic, s_partition_data, partitions) < 0)
            goto done;
    }
    if (flexible && no_tags(p, &pos, end) < 0)
        goto done;
    request = new_object(request_type);
    if (request == NULL)
        goto done;
    if (set_field(request, s_transactional_id, Py_NewRef(transactional_id)) < 0 ||
        set_field(request, s_acks, PyLong_FromLong(acks)) < 0 ||
        set_field(request, s_timeout, timeout_of(timeouts, timeout_ms)) < 0 ||
        set_field(request, s_topic_data, Py_NewRef(topics)) < 0)
        goto done;
    result = Py_NewRef(request);
done:
    PyBuffer_Release(&buffer);
    Py_XDECREF(transactional_id);
    Py_XDECREF(topics);
    Py_XDECREF(request);
    if (result == NULL && !PyErr_Occurred())
        Py_RETURN_NONE; /* unusual bytes: the generic reader reads them */
    return result;
}

static PyMethodDef methods[] = {
    {"read", (PyCFunction)(void (*)(void))read_request, METH_FASTCALL,
     "read(flexible, request_type, topic_type, partition_type, timeouts, view) -> the request, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_fast_produce_request", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fast_produce_request(void) {
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        return NULL;
#define INTERN(var, text)                                   \
    if ((var = PyUnicode_InternFromString(text)) == NULL) \
        return NULL;
    INTERN(s_transactional_id, "transactional_id")
    INTERN(s_acks, "acks")
    INTERN(s_timeout, "timeout")
    INTERN(s_topic_data, "topic_data")
    INTERN(s_name, "name")
    INTERN(s_partition_data, "partition_data")
    INTERN(s_index, "index")
    INTERN(s_records, "records")
#undef INTERN
    return PyModule_Create(&module_def);
}
