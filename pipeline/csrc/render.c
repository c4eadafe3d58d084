/* A chunk's embedding text, content hash and id (pipeline/render.py: compose_text, content_hash,
 * chunk_id_in), in one call per chunk: 52,000 chunks on java.base. The hashes are hashlib's. */
#include <string.h>

#include "outline.h"

static PyObject *sha256_type, *sha1_type; /* hashlib.sha256 and hashlib.sha1 */
static const Py_ssize_t ALL = (Py_ssize_t)((size_t)-1 >> 1);
static const Py_ssize_t MAX_CALLS_SHOWN = 24; /* pipeline.render._MAX_CALLS_IN_HEADER */

void bind_hashes(PyObject *sha256, PyObject *sha1) {
    Py_INCREF(sha256);
    Py_INCREF(sha1);
    sha256_type = sha256;
    sha1_type = sha1;
}

/* `sep.join(items[:limit])` as pieces into `out` (borrowed); returns how many were written. */
static Py_ssize_t joined(Piece *out, PyObject *items, Py_ssize_t limit, const char *sep) {
    Py_ssize_t n = 0, count = PyTuple_GET_SIZE(items);
    if (count > limit) count = limit;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i > 0) out[n++] = LIT(sep);
        out[n++] = STR(PyTuple_GET_ITEM(items, i));
    }
    return n;
}

static bool all_str(PyObject *items) {
    if (!PyTuple_Check(items)) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(items, i))) return false;
    return true;
}

static PyObject *compose(PyObject *const *a, Py_ssize_t part_index, Py_ssize_t part_count) {
    PyObject *repo = a[0], *package = a[1], *qualified = a[2], *kind = a[3], *stereotype = a[4], *signature = a[5],
             *annotations = a[6], *methods = a[7], *paths = a[8], *calls = a[9], *summary = a[10], *code = a[11];
    Py_ssize_t cap = 40 + 2 * (PyTuple_GET_SIZE(annotations) + PyTuple_GET_SIZE(methods) + PyTuple_GET_SIZE(paths)) +
                     2 * MAX_CALLS_SHOWN;
    Piece *p = PyMem_Malloc((size_t)cap * sizeof(Piece));
    if (p == NULL) return PyErr_NoMemory();
    char part[64] = "", more[32] = "";
    Py_ssize_t n = 0;
    p[n++] = LIT("repository: "), p[n++] = STR(repo);
    if (PyUnicode_GET_LENGTH(package) > 0) p[n++] = LIT("\npackage: "), p[n++] = STR(package);
    p[n++] = LIT("\nsymbol: "), p[n++] = STR(qualified);
    p[n++] = LIT("\nkind: "), p[n++] = STR(kind);
    if (stereotype != Py_None && PyUnicode_GET_LENGTH(stereotype) > 0)
        p[n++] = LIT(" ("), p[n++] = STR(stereotype), p[n++] = LIT(")");
    if (part_count > 1) {
        snprintf(part, sizeof(part), " (part %zd of %zd)", part_index + 1, part_count);
        p[n++] = LIT(part);
    }
    p[n++] = LIT("\nsignature: "), p[n++] = STR(signature);
    if (PyTuple_GET_SIZE(annotations) > 0) p[n++] = LIT("\nannotations: "), n += joined(p + n, annotations, ALL, " ");
    if (PyTuple_GET_SIZE(paths) > 0) {
        p[n++] = LIT("\nhttp: ");
        n += joined(p + n, methods, ALL, "|");
        p[n++] = LIT(" ");
        n += joined(p + n, paths, ALL, ", ");
    }
    if (PyTuple_GET_SIZE(calls) > 0) {
        p[n++] = LIT("\ncalls: ");
        n += joined(p + n, calls, MAX_CALLS_SHOWN, ", ");
        if (PyTuple_GET_SIZE(calls) > MAX_CALLS_SHOWN) {
            snprintf(more, sizeof(more), " (+%zd more)", PyTuple_GET_SIZE(calls) - MAX_CALLS_SHOWN);
            p[n++] = LIT(more);
        }
    }
    if (summary != Py_None && PyUnicode_GET_LENGTH(summary) > 0) p[n++] = LIT("\nsummary: "), p[n++] = STR(summary);
    p[n++] = LIT("\n---\n"), p[n++] = STR(code);
    PyObject *text = concat(p, n);
    PyMem_Free(p);
    return text;
}

/* `hashlib.<type>(buffer).<method>()`. */
static PyObject *digest(PyObject *type, const char *data, Py_ssize_t size, const char *method) {
    PyObject *view = PyMemoryView_FromMemory((char *)data, size, PyBUF_READ);
    PyObject *hash = view ? PyObject_CallOneArg(type, view) : NULL;
    Py_XDECREF(view);
    PyObject *result = hash ? PyObject_CallMethod(hash, method, NULL) : NULL;
    Py_XDECREF(hash);
    return result;
}

/* sha256 of the text after its first line (the repository line), as hex. */
static PyObject *content_hash(PyObject *text) {
    PyObject *encoded = NULL;
    const char *data;
    Py_ssize_t size;
    if (PyUnicode_IS_ASCII(text)) {
        data = (const char *)PyUnicode_DATA(text);
        size = PyUnicode_GET_LENGTH(text);
    } else {
        encoded = PyUnicode_AsUTF8String(text);
        if (encoded == NULL) return NULL;
        data = PyBytes_AS_STRING(encoded);
        size = PyBytes_GET_SIZE(encoded);
    }
    const char *newline = memchr(data, '\n', (size_t)size);
    PyObject *result = newline ? digest(sha256_type, newline + 1, size - (newline + 1 - data), "hexdigest") : NULL;
    if (newline == NULL) PyErr_SetString(PyExc_ValueError, "an embedding text has a header line");
    Py_XDECREF(encoded);
    return result;
}

/* uuid5 from the file's id prefix, the key and the part index (RFC 4122 §4.3), as a string. */
static PyObject *chunk_id(PyObject *prefix, PyObject *key, Py_ssize_t part_index) {
    Py_ssize_t key_size;
    const char *key_data = PyUnicode_AsUTF8AndSize(key, &key_size);
    if (key_data == NULL) return NULL;
    char index[32];
    int index_size = snprintf(index, sizeof(index), "\n%zd", part_index);
    Py_ssize_t prefix_size = PyBytes_GET_SIZE(prefix), size = prefix_size + key_size + index_size;
    char *name = PyMem_Malloc((size_t)size);
    if (name == NULL) return PyErr_NoMemory();
    memcpy(name, PyBytes_AS_STRING(prefix), (size_t)prefix_size);
    memcpy(name + prefix_size, key_data, (size_t)key_size);
    memcpy(name + prefix_size + key_size, index, (size_t)index_size);
    PyObject *raw = digest(sha1_type, name, size, "digest");
    PyMem_Free(name);
    if (raw == NULL) return NULL;
    unsigned char b[16];
    memcpy(b, PyBytes_AS_STRING(raw), 16);
    Py_DECREF(raw);
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x50); /* version 5 */
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    char out[36];
    for (int i = 0, j = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[j++] = '-';
        out[j++] = hex[b[i] >> 4];
        out[j++] = hex[b[i] & 15];
    }
    return PyUnicode_FromStringAndSize(out, 36);
}

/* render_chunk(repo_path, package, qualified_name, kind, stereotype, signature, annotations, http_method,
 *              http_path, calls, summary, code, part_index, part_count, id_prefix, key) -> (text, hash, id) */
PyObject *render_chunk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 16 || sha256_type == NULL) {
        PyErr_SetString(PyExc_TypeError, "render_chunk takes 16 arguments (after bind)");
        return NULL;
    }
    bool ok = PyUnicode_Check(args[0]) && PyUnicode_Check(args[1]) && PyUnicode_Check(args[2]) &&
              PyUnicode_Check(args[3]) && (args[4] == Py_None || PyUnicode_Check(args[4])) &&
              PyUnicode_Check(args[5]) && all_str(args[6]) && all_str(args[7]) && all_str(args[8]) &&
              all_str(args[9]) && (args[10] == Py_None || PyUnicode_Check(args[10])) && PyUnicode_Check(args[11]) &&
              PyLong_Check(args[12]) && PyLong_Check(args[13]) && PyBytes_Check(args[14]) && PyUnicode_Check(args[15]);
    if (!ok) {
        PyErr_SetString(PyExc_TypeError, "render_chunk: unexpected argument types");
        return NULL;
    }
    Py_ssize_t part_index = PyLong_AsSsize_t(args[12]), part_count = PyLong_AsSsize_t(args[13]);
    if (PyErr_Occurred()) return NULL;
    PyObject *text = compose(args, part_index, part_count);
    if (text == NULL) return NULL;
    PyObject *hash = content_hash(text);
    PyObject *id = hash ? chunk_id(args[14], args[15], part_index) : NULL;
    if (id == NULL) {
        Py_DECREF(text);
        Py_XDECREF(hash);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(3, text, hash, id);
    Py_DECREF(text);
    Py_DECREF(hash);
    Py_DECREF(id);
    return result;
}
