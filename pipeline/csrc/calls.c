/* Calls and local declarations (pipeline/outline.py: Call, LocalDecl; pipeline/calls.py resolves them). */
#include "outline.h"

static PyObject *empty_str(void) { return PyUnicode_FromStringAndSize("", 0); }

/* The links of a chain after its root, innermost first, from the segments read outermost first. */
static PyObject *links_of(PyObject *segments) {
    Py_ssize_t n = PyList_GET_SIZE(segments);
    PyObject *links = PyTuple_New(n);
    for (Py_ssize_t i = 0; links != NULL && i < n; i++) {
        PyObject *segment = PyList_GET_ITEM(segments, n - 1 - i);
        Py_INCREF(segment);
        PyTuple_SET_ITEM(links, i, segment);
    }
    return links;
}

/* `a.b.C` for a chain of field accesses on an identifier, else NULL without an error. */
static PyObject *dotted(Reader *r, TSNode node, bool *failed) {
    PyObject *names = PyList_New(0);
    if (names == NULL) {
        *failed = true;
        return NULL;
    }
    PyObject *result = NULL;
    while (kind_of(r, node) == K_FIELD_ACCESS) {
        TSNode name = field(r, node, F_FIELD), inner = field(r, node, F_OBJECT);
        if (ts_node_is_null(name) || ts_node_is_null(inner)) goto done;
        PyObject *part = text(r, name);
        if (part == NULL || PyList_Append(names, part) < 0) {
            Py_XDECREF(part);
            *failed = true;
            goto done;
        }
        Py_DECREF(part);
        node = inner;
    }
    if (kind_of(r, node) != K_IDENTIFIER || PyList_GET_SIZE(names) == 0) goto done;
    PyObject *first = text(r, node);
    if (first == NULL || PyList_Append(names, first) < 0 || PyList_Reverse(names) < 0) {
        Py_XDECREF(first);
        *failed = true;
        goto done;
    }
    Py_DECREF(first);
    PyObject *dot = PyUnicode_FromString(".");
    result = dot ? PyUnicode_Join(dot, names) : NULL;
    Py_XDECREF(dot);
    *failed = result == NULL;
done:
    Py_DECREF(names);
    return result;
}

static PyObject *call_record(Reader *r, uint32_t row, PyObject *name, int receiver, PyObject *text_, int root,
                             PyObject *root_text, PyObject *alt, PyObject *links) {
    return RECORD(r->records->call, PyLong_FromUnsignedLong(row), name, PyLong_FromLong(receiver), text_,
                  PyLong_FromLong(root), root_text, alt, links);
}

/* The root of a receiver chain: its kind, text and (for a field access) the expression squashed. */
static int root_of(Reader *r, TSNode node, PyObject **root_text, PyObject **alt) {
    while (kind_of(r, node) == K_PARENTHESIZED_EXPRESSION && ts_node_named_child_count(node) == 1)
        node = ts_node_named_child(node, 0); /* a loop: `((((x))))` may nest a thousand deep */
    switch (kind_of(r, node)) {
    case K_IDENTIFIER:
        *root_text = text(r, node);
        return R_IDENTIFIER;
    case K_THIS:
        *root_text = empty_str();
        return R_THIS;
    case K_SUPER:
        *root_text = empty_str();
        return R_SUPER;
    case K_FIELD_ACCESS: /* this.field */
        *root_text = text(r, field(r, node, F_FIELD));
        *alt = squashed(r, node);
        return R_FIELD;
    case K_OBJECT_CREATION_EXPRESSION:
    case K_CAST_EXPRESSION:
        *root_text = simple_type(r, field(r, node, F_TYPE));
        return R_TYPED;
    case K_STRING_LITERAL:
    case K_TEXT_BLOCK:
        *root_text = PyUnicode_FromString("String");
        return R_TYPED;
    case K_CHARACTER_LITERAL:
        *root_text = PyUnicode_FromString("char");
        return R_TYPED;
    case K_TYPE_IDENTIFIER:
    case K_SCOPED_TYPE_IDENTIFIER:
    case K_GENERIC_TYPE:
    case K_ARRAY_TYPE:
        *root_text = simple_type(r, node);
        return R_TYPED;
    default:
        *root_text = squashed(r, node);
        return R_OTHER;
    }
}

/* A call of `name` (on `row`) with its receiver taken apart (pipeline.scan._call); steals `name`. */
PyObject *read_call(Reader *r, uint32_t row, PyObject *name, TSNode node) {
    if (ts_node_is_null(node))
        return call_record(r, row, name, R_NONE, empty_str(), R_NONE, empty_str(), empty_str(), PyTuple_New(0));
    if (kind_of(r, node) == K_IDENTIFIER) { /* `repo.save(x)`, two receivers in three */
        PyObject *ident = text(r, node);
        Py_XINCREF(ident);
        return call_record(r, row, name, R_IDENTIFIER, ident, R_IDENTIFIER, ident, empty_str(), PyTuple_New(0));
    }
    bool failed = false;
    PyObject *dotted_name = dotted(r, node, &failed);
    PyObject *segments = failed ? NULL : PyList_New(0);
    if (segments == NULL) {
        Py_DECREF(name);
        Py_XDECREF(dotted_name);
        return NULL;
    }
    int root = -1;
    for (;;) {
        Kind kind = kind_of(r, node);
        if (kind != K_METHOD_INVOCATION && kind != K_FIELD_ACCESS) break;
        PyObject *segment;
        if (kind == K_METHOD_INVOCATION) {
            PyObject *method = text(r, field(r, node, F_NAME));
            segment = method ? CONCAT(STR(method), LIT("()")) : NULL;
            Py_XDECREF(method);
        } else {
            TSNode object = field(r, node, F_OBJECT);
            if (!ts_node_is_null(object) && kind_of(r, object) == K_THIS) break; /* this.field */
            segment = text(r, field(r, node, F_FIELD));
        }
        if (segment == NULL || PyList_Append(segments, segment) < 0) failed = true;
        Py_XDECREF(segment);
        if (failed) break;
        TSNode inner = field(r, node, F_OBJECT);
        if (ts_node_is_null(inner)) {
            root = R_ORPHAN;
            break;
        }
        node = inner;
    }
    PyObject *root_text = NULL, *alt = NULL;
    if (!failed && root == R_ORPHAN) root_text = empty_str();
    else if (!failed) root = root_of(r, node, &root_text, &alt);
    PyObject *links = failed ? NULL : links_of(segments);
    Py_DECREF(segments);
    if (failed) {
        Py_DECREF(name);
        Py_XDECREF(dotted_name);
        return NULL;
    }
    int receiver = dotted_name != NULL ? R_DOTTED : R_CHAIN;
    return call_record(r, row, name, receiver, dotted_name ? dotted_name : empty_str(), root, root_text,
                       alt ? alt : empty_str(), links);
}

/* A local declaration: the name, and its type's simple name (`var` resolved from `new T(...)`). */
PyObject *read_local(Reader *r, TSNode name_node, TSNode type_node) {
    PyObject *type = simple_type(r, type_node);
    if (type != NULL && PyUnicode_CompareWithASCIIString(type, "var") == 0) {
        Py_DECREF(type);
        TSNode value, type_parent = ts_node_parent(type_node); /* rare: `var` */
        if (kind_of(r, type_parent) == K_RESOURCE) { /* try (var in = new FileInputStream(f)) */
            value = field(r, type_parent, F_VALUE);
        } else {
            value = field(r, ts_node_next_named_sibling(type_node), F_VALUE);
        }
        if (kind_of(r, value) == K_OBJECT_CREATION_EXPRESSION) type = simple_type(r, field(r, value, F_TYPE));
        else type = empty_str();
    }
    return RECORD(r->records->local_decl, PyLong_FromUnsignedLong(ts_node_start_point(name_node).row),
                  text(r, name_node), type);
}
