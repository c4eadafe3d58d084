/* Modifiers and annotations with their arguments by element name, the single unnamed one under `value` (JLS 9.7.3). */
#include <string.h>

#include "outline.h"

static bool is_comment(Kind kind) { return kind == K_LINE_COMMENT || kind == K_BLOCK_COMMENT; }

/* pipeline.annotations.string_value: literals joined, `a + b` followed, anything else as `${...}`. */
PyObject *string_value(Reader *r, TSNode node) {
    PyObject *parts = PyList_New(0);
    if (parts == NULL) return NULL;
    size_t base = r->nodes_len;
    bool failed = false;
#define PUSH(n)                                                                          \
    do {                                                                                 \
        if (r->nodes_len == r->nodes_cap) {                                              \
            size_t cap = r->nodes_cap ? 2 * r->nodes_cap : 64;                           \
            TSNode *grown = PyMem_Realloc(r->nodes, cap * sizeof(TSNode));               \
            if (grown == NULL) {                                                         \
                PyErr_NoMemory();                                                        \
                failed = true;                                                           \
                break;                                                                   \
            }                                                                            \
            r->nodes = grown;                                                            \
            r->nodes_cap = cap;                                                          \
        }                                                                                \
        r->nodes[r->nodes_len++] = (n);                                                  \
    } while (0)
    PUSH(node);
    while (!failed && r->nodes_len > base) {
        TSNode current = r->nodes[--r->nodes_len];
        Kind kind = kind_of(r, current);
        PyObject *piece = NULL;
        if (kind == K_STRING_LITERAL) {
            Py_ssize_t first = push_children(r, current);
            if (first < 0) break;
            size_t end = r->children_len;
            for (size_t i = (size_t)first; i < end && !failed; i++) {
                TSNode child = r->children[i].node;
                Kind ck = kind_of(r, child);
                if (!ts_node_is_named(child) || (ck != K_STRING_FRAGMENT && ck != K_ESCAPE_SEQUENCE)) continue;
                PyObject *fragment = text(r, child);
                failed = fragment == NULL || PyList_Append(parts, fragment) < 0;
                Py_XDECREF(fragment);
            }
            pop_children(r, (size_t)first);
            continue;
        }
        if (kind == K_BINARY_EXPRESSION) {
            TSNode left = field(r, current, F_LEFT), right = field(r, current, F_RIGHT);
            if (!ts_node_is_null(left) && !ts_node_is_null(right)) {
                PUSH(right); /* left is popped first */
                PUSH(left);
                continue;
            }
        }
        if (kind == K_PARENTHESIZED_EXPRESSION && ts_node_named_child_count(current) == 1) {
            PUSH(ts_node_named_child(current, 0));
            continue;
        }
        /* A constant such as ApiPaths.OWNERS cannot be resolved without compiling; keep it readable. */
        PyObject *expression = squashed(r, current);
        if (expression != NULL) piece = CONCAT(LIT("${"), STR(expression), LIT("}"));
        Py_XDECREF(expression);
        failed = piece == NULL || PyList_Append(parts, piece) < 0;
        Py_XDECREF(piece);
    }
#undef PUSH
    r->nodes_len = base;
    if (failed || PyErr_Occurred()) {
        Py_DECREF(parts);
        return NULL;
    }
    PyObject *empty = PyUnicode_FromStringAndSize("", 0);
    PyObject *joined = empty ? PyUnicode_Join(empty, parts) : NULL;
    Py_XDECREF(empty);
    Py_DECREF(parts);
    return joined;
}

static PyObject *annotation_value(Reader *r, TSNode node) {
    return RECORD(r->records->annotation_value, text(r, node), string_value(r, node));
}

/* An argument's values: an array initializer's elements (comments left out), else the value. */
static PyObject *flatten(Reader *r, TSNode value) {
    if (ts_node_is_null(value)) return PyTuple_New(0);
    if (kind_of(r, value) != K_ELEMENT_VALUE_ARRAY_INITIALIZER) {
        PyObject *one = annotation_value(r, value);
        return one ? PyTuple_Pack(1, one) : NULL;
    }
    PyObject *values = PyList_New(0);
    Py_ssize_t base = values ? push_children(r, value) : -1;
    if (base < 0) {
        Py_XDECREF(values);
        return NULL;
    }
    size_t end = r->children_len;
    for (size_t i = (size_t)base; i < end; i++) {
        TSNode child = r->children[i].node;
        if (!ts_node_is_named(child) || is_comment(kind_of(r, child))) continue;
        PyObject *item = annotation_value(r, child);
        if (item == NULL || PyList_Append(values, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(values);
            break;
        }
        Py_DECREF(item);
    }
    pop_children(r, (size_t)base);
    if (values == NULL) return NULL;
    PyObject *result = PyList_AsTuple(values);
    Py_DECREF(values);
    return result;
}

/* `args[key] = values`, stealing both. */
static bool set_arg(PyObject *args, PyObject *key, PyObject *values) {
    bool ok = key != NULL && values != NULL && PyDict_SetItem(args, key, values) == 0;
    Py_XDECREF(key);
    Py_XDECREF(values);
    return ok;
}

static PyObject *read_arguments(Reader *r, TSNode arguments) {
    PyObject *args = PyDict_New();
    Py_ssize_t base = args ? push_children(r, arguments) : -1;
    if (base < 0) {
        Py_XDECREF(args);
        return NULL;
    }
    size_t end = r->children_len;
    bool ok = true;
    for (size_t i = (size_t)base; i < end && ok; i++) {
        TSNode arg = r->children[i].node;
        if (!ts_node_is_named(arg)) continue;
        Kind kind = kind_of(r, arg);
        if (kind == K_ELEMENT_VALUE_PAIR) {
            ok = set_arg(args, text(r, field(r, arg, F_KEY)), flatten(r, field(r, arg, F_VALUE)));
        } else if (!is_comment(kind)) {
            ok = set_arg(args, PyUnicode_FromString("value"), flatten(r, arg));
        }
    }
    pop_children(r, (size_t)base);
    PyObject *proxy = ok ? PyDictProxy_New(args) : NULL;
    Py_DECREF(args);
    return proxy;
}

static PyObject *read_annotation(Reader *r, TSNode node) {
    TSNode name_node = field(r, node, F_NAME);
    PyObject *name;
    if (ts_node_is_null(name_node)) {
        name = PyUnicode_FromStringAndSize("", 0);
    } else { /* `.rsplit(".", 1)[-1]` */
        uint32_t start = ts_node_start_byte(name_node), end = ts_node_end_byte(name_node);
        if (end <= (uint32_t)r->size && start <= end) {
            for (uint32_t i = end; i > start; i--) {
                if (r->data[i - 1] == '.') {
                    start = i;
                    break;
                }
            }
        }
        name = text_span(r, start, end);
    }
    TSNode arguments = field(r, node, F_ARGUMENTS);
    PyObject *args;
    if (ts_node_is_null(arguments)) {
        args = r->records->empty_args;
        Py_INCREF(args);
    } else {
        args = read_arguments(r, arguments);
    }
    return RECORD(r->records->annotation, squashed(r, node), name, args);
}

/* pipeline.annotations.read_modifiers: the keywords and annotations of a declaration's `modifiers`,
 * given the declaration's first named child (the grammar puts `modifiers` first when present). */
PyObject *read_modifiers(Reader *r, TSNode mods) {
    if (ts_node_is_null(mods) || kind_of(r, mods) != K_MODIFIERS) {
        Py_INCREF(r->records->no_modifiers);
        return r->records->no_modifiers;
    }
    PyObject *keywords = PyList_New(0), *annotations = PyList_New(0);
    Py_ssize_t base = keywords && annotations ? push_children(r, mods) : -1;
    bool ok = base >= 0;
    size_t end = r->children_len;
    for (size_t i = (size_t)(ok ? base : 0); ok && i < end; i++) {
        TSNode child = r->children[i].node;
        Kind kind = kind_of(r, child);
        PyObject *item = NULL, *into = keywords;
        if (kind == K_ANNOTATION || kind == K_MARKER_ANNOTATION) {
            item = read_annotation(r, child);
            into = annotations;
        } else if (!ts_node_is_named(child)) {
            /* A keyword's type is its text; a token that error recovery inserted has none. */
            item = ts_node_is_missing(child) ? PyUnicode_FromStringAndSize("", 0) : type_name(r, child);
        } else if (!is_comment(kind)) {
            item = text(r, child);
        } else {
            continue;
        }
        ok = item != NULL && PyList_Append(into, item) == 0;
        Py_XDECREF(item);
    }
    if (base >= 0) pop_children(r, (size_t)base);
    PyObject *result = NULL;
    if (ok) result = RECORD(r->records->modifiers, PyList_AsTuple(keywords), PyList_AsTuple(annotations));
    Py_XDECREF(keywords);
    Py_XDECREF(annotations);
    return result;
}
