/* Records, strings and child lists. */
#include <string.h>

#include "outline.h"

/* An instance of a named tuple class, items stolen; NULL (with the items released) if any is NULL.
 * A named tuple is a tuple subclass without slots of its own, so it is allocated as `tuple.__new__`
 * would allocate it, without running the class's Python `__new__`. */
PyObject *make_record(PyTypeObject *cls, PyObject **items, Py_ssize_t n) {
    bool ok = true;
    for (Py_ssize_t i = 0; i < n; i++) ok = ok && items[i] != NULL;
    PyObject *record = ok ? cls->tp_alloc(cls, n) : NULL;
    if (record == NULL) {
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(items[i]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(record, i, items[i]);
    return record;
}

/* The pieces joined (what an f-string does); NULL with an error if a piece is NULL. */
PyObject *concat(const Piece *pieces, Py_ssize_t n) {
    Py_ssize_t length = 0;
    Py_UCS4 widest = 127;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pieces[i].str != NULL) {
            length += PyUnicode_GET_LENGTH(pieces[i].str);
            Py_UCS4 most = PyUnicode_MAX_CHAR_VALUE(pieces[i].str);
            if (most > widest) widest = most;
        } else if (pieces[i].ascii != NULL) {
            length += (Py_ssize_t)strlen(pieces[i].ascii);
        } else {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "concat: missing piece");
            return NULL;
        }
    }
    PyObject *out = PyUnicode_New(length, widest);
    if (out == NULL) return NULL;
    int kind = PyUnicode_KIND(out);
    void *data = PyUnicode_DATA(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pieces[i].str != NULL) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(pieces[i].str);
            if (len > 0 && PyUnicode_CopyCharacters(out, at, pieces[i].str, 0, len) < 0) {
                Py_DECREF(out);
                return NULL;
            }
            at += len;
        } else {
            for (const char *c = pieces[i].ascii; *c; c++) PyUnicode_WRITE(kind, data, at++, (Py_UCS4)(unsigned char)*c);
        }
    }
    return out;
}

/* Append the children of `node` (named or not, as `Node.children`) to the reader's child stack and
 * return where they start; the caller pops back to that index when done (`pop_children`).
 * Nested calls push above, so an index into the stack stays valid, a pointer does not. */
static Py_ssize_t push(Reader *r, TSNode node, bool fields) {
    size_t base = r->children_len;
    if (!r->scratch_ready) {
        r->scratch = ts_tree_cursor_new(node);
        r->scratch_ready = true;
    } else {
        ts_tree_cursor_reset(&r->scratch, node);
    }
    if (!ts_tree_cursor_goto_first_child(&r->scratch)) return (Py_ssize_t)base;
    do {
        if (r->children_len == r->children_cap) {
            size_t cap = r->children_cap ? 2 * r->children_cap : 256;
            Child *grown = PyMem_Realloc(r->children, cap * sizeof(Child));
            if (grown == NULL) {
                PyErr_NoMemory();
                r->children_len = base;
                return -1;
            }
            r->children = grown;
            r->children_cap = cap;
        }
        Child *child = &r->children[r->children_len++];
        child->node = ts_tree_cursor_current_node(&r->scratch);
        child->field = fields ? ts_tree_cursor_current_field_id(&r->scratch) : 0;
    } while (ts_tree_cursor_goto_next_sibling(&r->scratch));
    return (Py_ssize_t)base;
}

Py_ssize_t push_children(Reader *r, TSNode node) { return push(r, node, false); }

Py_ssize_t push_children_with_fields(Reader *r, TSNode node) { return push(r, node, true); }

/* The first named child of a kind (`next(c for c in node.named_children if c.type == kind)`).
 * Out of memory, it sets the error and returns a null node; the walk checks for errors at its end. */
TSNode first_named_of(Reader *r, TSNode node, Kind kind) {
    TSNode found = {{0}, 0, 0};
    uint32_t count = ts_node_child_count(node);
    if (count <= 8) { /* `ts_node_child(i)` walks from the first child: fine for a few */
        for (uint32_t i = 0; i < count; i++) {
            TSNode child = ts_node_child(node, i);
            if (ts_node_is_named(child) && kind_of(r, child) == kind) return child;
        }
        return found;
    }
    Py_ssize_t base = push_children(r, node);
    if (base < 0) return found;
    for (size_t i = (size_t)base; i < r->children_len; i++) {
        if (ts_node_is_named(r->children[i].node) && kind_of(r, r->children[i].node) == kind) {
            found = r->children[i].node;
            break;
        }
    }
    pop_children(r, (size_t)base);
    return found;
}
