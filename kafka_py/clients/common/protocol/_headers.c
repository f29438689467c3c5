/*
 * RequestHeader.parse of kafka_py/clients/common/protocol/headers.py, compiled, for the headers every
 * request carries.
 *
 * parse(header_type, api_by_id, header_versions, buffer, offset) reads a request header at
 * `offset` of `buffer` as RequestHeader.parse does and returns (header, body offset), the
 * header made without __init__ (as headers._parsed makes it) and filled through its slots.
 * It returns None for anything but the common case: an unknown api key, an (api key,
 * version) not yet in `header_versions` (RequestHeader.parse works it out and keeps it), a
 * short buffer, a negative client id length other than -1, a client id that is not UTF-8,
 * or a v2 header with tagged fields. RequestHeader.parse then reads the header itself,
 * keeping its error messages in one place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *s_api_key, *s_api_version, *s_correlation_id, *s_client_id, *s_header_version, *s_tagged_fields,
    *empty_string, *empty_tuple;

static int set_field(PyObject *obj, PyObject *name, PyObject *value) {
    if (value == NULL)
        return -1;
    int rc = PyObject_GenericSetAttr(obj, name, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *parse(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyType_Check(args[0]) || !PyDict_Check(args[1]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "parse(header_type, api_by_id: dict, header_versions: dict, buffer, offset)");
        return NULL;
    }
    PyObject *header_type = args[0], *api_by_id = args[1], *header_versions = args[2];
    Py_ssize_t offset = PyLong_AsSsize_t(args[4]);
    if (offset == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_buffer buffer;
    if (PyObject_GetBuffer(args[3], &buffer, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    const unsigned char *p = (const unsigned char *)buffer.buf;
    Py_ssize_t end = buffer.len;
    PyObject *key = NULL, *api_key = NULL, *client_id = NULL, *header = NULL, *result = NULL;
    if (offset < 0 || end - offset < 8)
        goto done;
    p += offset;
    end -= offset;
    int api_key_id = (int16_t)((p[0] << 8) | p[1]);
    int api_version = (int16_t)((p[2] << 8) | p[3]);
    int32_t correlation_id = (int32_t)(((uint32_t)p[4] << 24) | ((uint32_t)p[5] << 16) | ((uint32_t)p[6] << 8) | p[7]);
    key = PyLong_FromLong(api_key_id);
    if (key == NULL)
        goto done;
    api_key = PyDict_GetItemWithError(api_by_id, key); /* borrowed */
    Py_CLEAR(key);
    if (api_key == NULL)
        goto done;
    Py_INCREF(api_key);
    key = Py_BuildValue("(ii)", api_key_id, api_version);
    if (key == NULL)
        goto done;
    PyObject *version_obj = PyDict_GetItemWithError(header_versions, key); /* borrowed */
    if (version_obj == NULL)
        goto done;
    long header_version = PyLong_AsLong(version_obj);
    if (header_version == -1 && PyErr_Occurred())
        goto done;
    Py_ssize_t used = 8;
    if (header_version == 0) {
        client_id = Py_NewRef(empty_string);
    } else if (header_version == 1 || header_version == 2) {
        if (end < 10)
            goto done;
        int length = (int16_t)((p[8] << 8) | p[9]);
        used = 10;
        if (length == -1) {
            client_id = Py_NewRef(empty_string); /* as Kafka: a null client id is read as an empty one */
        } else if (length < -1 || end - used < length) {
            goto done;
        } else {
            client_id = PyUnicode_DecodeUTF8((const char *)p + used, length, "strict");
            if (client_id == NULL) {
                if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                    PyErr_Clear();
                goto done;
            }
            used += length;
        }
        if (header_version == 2) {
            if (end - used < 1 || p[used] != 0)
                goto done; /* tagged fields, or none where some must be: read in Python */
            used += 1;
        }
    } else {
        goto done;
    }
    header = ((PyTypeObject *)header_type)->tp_alloc((PyTypeObject *)header_type, 0);
    if (header == NULL)
        goto done;
    if (set_field(header, s_api_key, Py_NewRef(api_key)) < 0 ||
        set_field(header, s_api_version, PyLong_FromLong(api_version)) < 0 ||
        set_field(header, s_correlation_id, PyLong_FromLong(correlation_id)) < 0 ||
        set_field(header, s_client_id, Py_NewRef(client_id)) < 0 ||
        set_field(header, s_header_version, Py_NewRef(version_obj)) < 0 ||
        set_field(header, s_tagged_fields, Py_NewRef(empty_tuple)) < 0)
        goto done;
    result = Py_BuildValue("(On)", header, offset + used);
done:
    PyBuffer_Release(&buffer);
    Py_XDECREF(key);
    Py_XDECREF(api_key);
    Py_XDECREF(client_id);
    Py_XDECREF(header);
    if (result == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return result;
}

static PyMethodDef methods[] = {
    {"parse", (PyCFunction)(void (*)(void))parse, METH_FASTCALL,
     "parse(header_type, api_by_id, header_versions, buffer, offset) -> (header, body offset), or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_headers", NULL, -1, methods};

PyMODINIT_FUNC PyInit__headers(void) {
#define INTERN(var, text)                                   \
    if ((var = PyUnicode_InternFromString(text)) == NULL) \
        return NULL;
    INTERN(s_api_key, "api_key")
    INTERN(s_api_version, "api_version")
    INTERN(s_correlation_id, "correlation_id")
    INTERN(s_client_id, "client_id")
    INTERN(s_header_version, "header_version")
    INTERN(s_tagged_fields, "tagged_fields")
    INTERN(empty_string, "")
#undef INTERN
    if ((empty_tuple = PyTuple_New(0)) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
