/* Source text of nodes, the string rule of pipeline.syntax.squash, and simple type names.
 *
 * Python's str.split() and str.strip() treat Unicode white space as white space and str.islower()
 * knows Unicode case. For pure ASCII text the C versions below give the same results; for any other
 * text they call the Python functions themselves, so the outline and the Python rules always agree.
 */
#include <string.h>

#include "outline.h"

PyObject *text_span(const Reader *r, uint32_t start, uint32_t end) {
    if (end < start || (Py_ssize_t)end > r->size) {
        PyErr_Format(PyExc_ValueError, "node bytes %u-%u outside the source (%zd bytes)", start, end, r->size);
        return NULL;
    }
    return PyUnicode_DecodeUTF8(r->data + start, end - start, NULL);
}

PyObject *text(const Reader *r, TSNode node) {
    if (ts_node_is_null(node)) return PyUnicode_FromStringAndSize("", 0);
    return text_span(r, ts_node_start_byte(node), ts_node_end_byte(node));
}

PyObject *type_name(const Reader *r, TSNode node) {
    uint32_t s = slot(r->grammar, ts_node_symbol(node));
    PyObject *name = r->grammar->names[s];
    if (name == NULL) {
        name = PyUnicode_InternFromString(ts_node_type(node));
        if (name == NULL) return NULL;
        r->grammar->names[s] = name;
    }
    Py_INCREF(name);
    return name;
}

/* Python's white space among ASCII characters (Py_UNICODE_ISSPACE). */
static inline bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

static bool is_ascii(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return false;
    return true;
}

static PyObject *call_python(PyObject *function, const char *s, size_t n) {
    PyObject *value = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, NULL);
    if (value == NULL) return NULL;
    PyObject *result = PyObject_CallOneArg(function, value);
    Py_DECREF(value);
    return result;
}

/* pipeline.syntax.squash of the bytes s[0:n]. */
static PyObject *squash_bytes(const Reader *r, const char *s, size_t n) {
    if (!is_ascii(s, n)) return call_python(r->records->squash, s, n);
    bool collapse = memchr(s, '\n', n) != NULL || memchr(s, '\t', n) != NULL;
    for (size_t i = 0; !collapse && i + 1 < n; i++) collapse = s[i] == ' ' && s[i + 1] == ' ';
    size_t lo = 0, hi = n;
    while (lo < hi && is_space((unsigned char)s[lo])) lo++;
    while (hi > lo && is_space((unsigned char)s[hi - 1])) hi--;
    if (!collapse) return PyUnicode_FromStringAndSize(s + lo, (Py_ssize_t)(hi - lo));
    PyObject *out = PyUnicode_New((Py_ssize_t)(hi - lo), 127);
    if (out == NULL) return NULL;
    char *dst = (char *)PyUnicode_DATA(out);
    size_t len = 0;
    for (size_t i = lo; i < hi; i++) {
        if (is_space((unsigned char)s[i])) {
            if (!is_space((unsigned char)s[i - 1])) dst[len++] = ' ';
        } else {
            dst[len++] = s[i];
        }
    }
    if (len == hi - lo) return out;
    PyObject *exact = PyUnicode_FromStringAndSize(dst, (Py_ssize_t)len);
    Py_DECREF(out);
    return exact;
}

PyObject *squashed_span(const Reader *r, uint32_t start, uint32_t end) {
    if (end < start || (Py_ssize_t)end > r->size) return text_span(r, start, end); /* raises */
    return squash_bytes(r, r->data + start, end - start);
}

PyObject *squashed(const Reader *r, TSNode node) {
    if (ts_node_is_null(node)) return PyUnicode_FromStringAndSize("", 0);
    return squashed_span(r, ts_node_start_byte(node), ts_node_end_byte(node));
}

/* pipeline.types.scoped_name: `java.util.Map.Entry` -> `Map.Entry` (parts stripped, package dropped). */
static PyObject *scoped_name(const Reader *r, TSNode node) {
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    if (end < start || (Py_ssize_t)end > r->size) return text_span(r, start, end); /* raises */
    const char *s = r->data + start;
    size_t n = end - start;
    if (!is_ascii(s, n)) return call_python(r->records->scoped_name, s, n);
    size_t remaining = 1, i = 0;
    for (size_t k = 0; k < n; k++) remaining += s[k] == '.';
    while (remaining > 1) { /* a lowercase first part is a package: drop it while more parts follow */
        size_t j = i, lo = i;
        while (j < n && s[j] != '.') j++;
        while (lo < j && is_space((unsigned char)s[lo])) lo++;
        if (!(lo < j && s[lo] >= 'a' && s[lo] <= 'z')) break;
        i = j + 1;
        remaining--;
    }
    char *buf = PyMem_Malloc(n + 1);
    if (buf == NULL) return PyErr_NoMemory();
    size_t len = 0;
    for (bool first = true;; first = false) {
        size_t j = i;
        while (j < n && s[j] != '.') j++;
        size_t lo = i, hi = j;
        while (lo < hi && is_space((unsigned char)s[lo])) lo++;
        while (hi > lo && is_space((unsigned char)s[hi - 1])) hi--;
        if (!first) buf[len++] = '.';
        memcpy(buf + len, s + lo, hi - lo);
        len += hi - lo;
        if (j >= n) break;
        i = j + 1;
    }
    PyObject *result = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
    PyMem_Free(buf);
    return result;
}

static PyObject *concat_brackets(PyObject *name, int dims) {
    if (name == NULL || dims == 0) return name;
    PyObject *suffix = PyUnicode_New(2 * dims, 127);
    if (suffix == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    char *dst = (char *)PyUnicode_DATA(suffix);
    for (int k = 0; k < dims; k++) dst[2 * k] = '[', dst[2 * k + 1] = ']';
    PyObject *result = PyUnicode_Concat(name, suffix);
    Py_DECREF(name);
    Py_DECREF(suffix);
    return result;
}

/* The simple name of a type node: `Optional<List<X>>` -> `Optional`, `a.b.C` -> `C`, `int[]` -> `int[]`. */
PyObject *simple_type(Reader *r, TSNode node) {
    int dims = 0;
    for (;;) {
        if (ts_node_is_null(node)) return concat_brackets(PyUnicode_FromStringAndSize("", 0), dims);
        switch (kind_of(r, node)) {
        case K_TYPE_IDENTIFIER:
        case K_INTEGRAL_TYPE:
            return concat_brackets(text(r, node), dims);
        case K_GENERIC_TYPE:
            node = ts_node_named_child(node, 0);
            break;
        case K_SCOPED_TYPE_IDENTIFIER:
            return concat_brackets(scoped_name(r, node), dims);
        case K_ARRAY_TYPE:
            dims++;
            node = field(r, node, F_ELEMENT);
            break;
        case K_ANNOTATED_TYPE: {
            uint32_t count = ts_node_named_child_count(node);
            if (count == 0) return concat_brackets(PyUnicode_FromStringAndSize("", 0), dims);
            node = ts_node_named_child(node, count - 1);
            break;
        }
        default:
            return concat_brackets(squashed(r, node), dims);
        }
    }
}

/* The simple name of the sole type argument of a generic type (what `List<Handler>` injects), or None. */
PyObject *type_arg(Reader *r, TSNode node) {
    if (kind_of(r, node) != K_GENERIC_TYPE) Py_RETURN_NONE;
    TSNode args = first_named_of(r, node, K_TYPE_ARGUMENTS);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) != 1) Py_RETURN_NONE;
    return simple_type(r, ts_node_named_child(args, 0));
}

bool starts_javadoc(const Reader *r, TSNode comment) {
    uint32_t start = ts_node_start_byte(comment), end = ts_node_end_byte(comment);
    if (end < start || (Py_ssize_t)end > r->size) return false;
    size_t n = end - start;
    const char *s = r->data + start;
    return n >= 3 && memcmp(s, "/**", 3) == 0 && !(n == 4 && memcmp(s, "/**/", 4) == 0);
}
