/* One depth-first walk over the tree collects types, calls and local declarations in document order,
 * in the order pipeline.scan's tree-sitter query reports them: a type or a method reference when the
 * walk enters it, an invocation or a declaration when it enters the name (the query's last capture). */
#include "outline.h"

typedef struct {
    TSNode node;
    Kind kind;
    TSNode parent;  /* and the node's index among its parent's named children: its field, when asked (`in_field`) */
    uint32_t index;
} Frame;

/* An open node of the walk: its named children are listed one by one. */
typedef struct {
    TSNode node;
    uint32_t next, count;
} Open;

typedef struct {
    uint32_t depth;
    int index;       /* the type's index in `types`, -1 when unnamed */
    PyObject *name;  /* a type's or an enum constant's name */
} Scope;


typedef struct {
    Frame *frames;
    size_t frames_cap;
    Open *open;
    size_t open_cap;
    Scope *scopes;
    size_t scopes_len, scopes_cap;
    PyObject *types, *calls, *refs, *decls;
    uint32_t *call_rows, *ref_rows;
    size_t call_rows_cap, ref_rows_cap;
} Walk;

static bool grow(void **items, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t next = *cap ? *cap : 64;
    while (next < need) next *= 2;
    void *grown = PyMem_Realloc(*items, next * size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return false;
    }
    *items = grown;
    *cap = next;
    return true;
}

static bool add_call(Walk *w, PyObject *list, uint32_t **rows, size_t *cap, uint32_t row, PyObject *call) {
    size_t n = (size_t)PyList_GET_SIZE(list);
    bool ok = call != NULL && grow((void **)rows, cap, n + 1, sizeof(uint32_t)) && PyList_Append(list, call) == 0;
    if (ok) (*rows)[n] = row;
    Py_XDECREF(call);
    (void)w;
    return ok;
}

static bool push_scope(Walk *w, uint32_t depth, int index, PyObject *name) {
    if (!grow((void **)&w->scopes, &w->scopes_cap, w->scopes_len + 1, sizeof(Scope))) {
        Py_DECREF(name);
        return false;
    }
    w->scopes[w->scopes_len++] = (Scope){depth, index, name};
    return true;
}

static void pop_scopes(Walk *w, uint32_t depth) {
    while (w->scopes_len > 0 && w->scopes[w->scopes_len - 1].depth >= depth) Py_DECREF(w->scopes[--w->scopes_len].name);
}

static bool is_type_kind(Kind kind) {
    return kind == K_CLASS_DECLARATION || kind == K_INTERFACE_DECLARATION || kind == K_ENUM_DECLARATION ||
           kind == K_RECORD_DECLARATION || kind == K_ANNOTATION_TYPE_DECLARATION;
}

static bool visit_type(Reader *r, Walk *w, uint32_t depth, TSNode node) {
    PyObject *name = text(r, field(r, node, F_NAME));
    if (name == NULL) return false;
    int outer = -1, index = -1;
    for (size_t i = w->scopes_len; i > 0; i--) {
        if (w->scopes[i - 1].index != -2) { /* -2 marks an enum constant */
            outer = w->scopes[i - 1].index;
            break;
        }
    }
    if (PyUnicode_GET_LENGTH(name) > 0) {
        PyObject *parts = PyList_New(0);
        for (size_t i = 0; parts != NULL && i < w->scopes_len; i++) {
            if (PyList_Append(parts, w->scopes[i].name) < 0) Py_CLEAR(parts);
        }
        if (parts != NULL && PyList_Append(parts, name) < 0) Py_CLEAR(parts);
        PyObject *dot = parts ? PyUnicode_FromString(".") : NULL;
        PyObject *nested = dot ? PyUnicode_Join(dot, parts) : NULL;
        Py_XDECREF(dot);
        Py_XDECREF(parts);
        PyObject *record = nested ? read_type(r, node, name, nested, outer) : NULL;
        Py_XDECREF(nested);
        index = (int)PyList_GET_SIZE(w->types);
        if (record == NULL || PyList_Append(w->types, record) < 0) {
            Py_XDECREF(record);
            Py_DECREF(name);
            return false;
        }
        Py_DECREF(record);
    }
    return push_scope(w, depth, index, name);
}

/* Whether a node matches the query wildcard `(_)`: a named node, but not an ERROR node. */
static bool is_wildcard(const Reader *r, TSNode node) {
    return !ts_node_is_null(node) && ts_node_is_named(node) && kind_of(r, node) != K_ERROR;
}

static bool add_local(Reader *r, Walk *w, TSNode name, TSNode type) {
    if (!is_wildcard(r, type)) return true; /* the query's `type: (_)` */
    PyObject *decl = read_local(r, name, type);
    bool ok = decl != NULL && PyList_Append(w->decls, decl) == 0;
    Py_XDECREF(decl);
    return ok;
}

/* Whether a frame's node is in field `f` of its parent (`ts_tree_cursor_current_field_id`'s answer). */
static bool in_field(const Reader *r, const Frame *frame, Field f) {
    const char *name = r->grammar->field_names[f];
    return name != NULL && !ts_node_is_null(frame->parent) &&
           ts_node_field_name_for_named_child(frame->parent, frame->index) == name;
}

static bool visit_identifier(Reader *r, Walk *w, uint32_t depth) {
    if (depth == 0) return true;
    const Frame *self = &w->frames[depth], *parent = &w->frames[depth - 1];
    TSNode node = self->node;
    if (parent->kind == K_TYPE_PATTERN) {
        /* (type_pattern (_) @vtype (identifier) @vname) matches once per named node before the name:
         * the type, and a comment between type and name too (the query's reading, kept as it is). */
        Py_ssize_t base = push_children(r, parent->node);
        bool ok = base >= 0;
        for (size_t i = (size_t)(ok ? base : 0); ok && i < r->children_len; i++) {
            TSNode type = r->children[i].node;
            if (ts_node_eq(type, node)) break;
            ok = add_local(r, w, node, type);
        }
        if (base >= 0) pop_children(r, (size_t)base);
        return ok;
    }
    switch (parent->kind) { /* the parents below read a `name` child; most identifiers are elsewhere */
    case K_METHOD_INVOCATION:
    case K_FORMAL_PARAMETER:
    case K_RESOURCE:
    case K_ENHANCED_FOR_STATEMENT:
    case K_INSTANCEOF_EXPRESSION:
    case K_VARIABLE_DECLARATOR:
    case K_CATCH_FORMAL_PARAMETER:
        break;
    default:
        return true;
    }
    if (!in_field(r, self, F_NAME)) return true;
    switch (parent->kind) {
    case K_METHOD_INVOCATION: {
        TSNode receiver = field(r, parent->node, F_OBJECT);
        if (!is_wildcard(r, receiver)) receiver = (TSNode){{0}, 0, 0}; /* `object: (_)?` */
        uint32_t row = ts_node_start_point(node).row;
        PyObject *name = text(r, node);
        if (name == NULL) return false;
        return add_call(w, w->calls, &w->call_rows, &w->call_rows_cap, row, read_call(r, row, name, receiver));
    }
    case K_FORMAL_PARAMETER:
    case K_RESOURCE:
    case K_ENHANCED_FOR_STATEMENT:
        return add_local(r, w, node, field(r, parent->node, F_TYPE));
    case K_INSTANCEOF_EXPRESSION:
        return add_local(r, w, node, field(r, parent->node, F_RIGHT));
    case K_VARIABLE_DECLARATOR:
        if (depth >= 2 && in_field(r, parent, F_DECLARATOR) &&
            w->frames[depth - 2].kind == K_LOCAL_VARIABLE_DECLARATION)
            return add_local(r, w, node, field(r, w->frames[depth - 2].node, F_TYPE));
        return true;
    case K_CATCH_FORMAL_PARAMETER: { /* (catch_type . (_) @vtype): the first named child */
        TSNode catch_type = first_named_of(r, parent->node, K_CATCH_TYPE);
        if (ts_node_is_null(catch_type)) return !PyErr_Occurred();
        return add_local(r, w, node, ts_node_named_child(catch_type, 0));
    }
    default:
        return true;
    }
}

static bool visit_reference(Reader *r, Walk *w, TSNode node) {
    Py_ssize_t base = push_children(r, node);
    if (base < 0) return false;
    size_t count = r->children_len - (size_t)base;
    bool ok = true;
    if (count >= 3) {
        TSNode first = r->children[base].node, last = r->children[r->children_len - 1].node;
        uint32_t row = ts_node_start_point(last).row;
        PyObject *name = text(r, last);
        ok = name != NULL && add_call(w, w->refs, &w->ref_rows, &w->ref_rows_cap, row, read_call(r, row, name, first));
    }
    pop_children(r, (size_t)base);
    return ok;
}

static bool visit(Reader *r, Walk *w, uint32_t depth) {
    Frame *frame = &w->frames[depth];
    switch (frame->kind) {
    case K_IDENTIFIER:
        return visit_identifier(r, w, depth);
    case K_METHOD_REFERENCE:
        return visit_reference(r, w, frame->node);
    case K_ENUM_CONSTANT: {
        PyObject *name = text(r, field(r, frame->node, F_NAME));
        return name != NULL && push_scope(w, depth, -2, name);
    }
    default:
        return is_type_kind(frame->kind) ? visit_type(r, w, depth, frame->node) : true;
    }
}

/* Method references after invocations, ordered by row; a stable merge, as `list.sort(key=row)` would do. */
static PyObject *merged_calls(Walk *w) {
    Py_ssize_t n_calls = PyList_GET_SIZE(w->calls), n_refs = PyList_GET_SIZE(w->refs);
    size_t *order = PyMem_Malloc(((size_t)n_refs + 1) * sizeof(size_t));
    PyObject *out = order ? PyList_New(n_calls + n_refs) : NULL;
    if (out == NULL) {
        PyMem_Free(order);
        return order ? NULL : PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n_refs; i++) { /* insertion sort: references come nearly ordered */
        Py_ssize_t j = i;
        while (j > 0 && w->ref_rows[order[j - 1]] > w->ref_rows[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (size_t)i;
    }
    Py_ssize_t i = 0, j = 0, k = 0;
    while (i < n_calls || j < n_refs) {
        PyObject *item;
        if (j >= n_refs || (i < n_calls && w->call_rows[i] <= w->ref_rows[order[j]])) item = PyList_GET_ITEM(w->calls, i++);
        else item = PyList_GET_ITEM(w->refs, order[j++]);
        Py_INCREF(item);
        PyList_SET_ITEM(out, k++, item);
    }
    PyMem_Free(order);
    return out;
}

/* The package name and the imports, from the compilation unit's children. */
static bool read_header(Reader *r, TSNode root, PyObject **package, PyObject *imports) {
    Py_ssize_t base = push_children(r, root);
    if (base < 0) return false;
    size_t end = r->children_len;
    bool ok = true;
    for (size_t i = (size_t)base; i < end && ok; i++) {
        TSNode child = r->children[i].node;
        Kind kind = kind_of(r, child);
        if (!ts_node_is_named(child) || (kind != K_PACKAGE_DECLARATION && kind != K_IMPORT_DECLARATION)) continue;
        Py_ssize_t inner = push_children(r, child);
        if (inner < 0) {
            ok = false;
            break;
        }
        TSNode name = {{0}, 0, 0};
        bool is_static = false, wildcard = false;
        for (size_t j = (size_t)inner; j < r->children_len; j++) {
            TSNode part = r->children[j].node;
            Kind pk = kind_of(r, part);
            if (ts_node_is_null(name) && ts_node_is_named(part) && (pk == K_SCOPED_IDENTIFIER || pk == K_IDENTIFIER))
                name = part;
            is_static = is_static || pk == K_STATIC;
            wildcard = wildcard || pk == K_ASTERISK;
        }
        pop_children(r, (size_t)inner);
        if (kind == K_PACKAGE_DECLARATION) {
            if (*package == NULL) {
                *package = text(r, name);
                ok = *package != NULL;
            }
        } else if (!ts_node_is_null(name)) {
            PyObject *record = RECORD(r->records->import, text(r, name), PyBool_FromLong(is_static),
                                      PyBool_FromLong(wildcard));
            ok = record != NULL && PyList_Append(imports, record) == 0;
            Py_XDECREF(record);
        }
    }
    pop_children(r, (size_t)base);
    return ok;
}


/* Visit every named node in document order (`Node.named_children`, recursively), listing each node's named
 * children with `ts_node_named_child`: anonymous nodes (punctuation, keywords) hold nothing the reader reads,
 * and stepping a `TSTreeCursor` over them cost more (docs/decisions.md, "One Java reader without private
 * headers"). */
static bool walk_tree(Reader *r, Walk *w, const TSTree *tree) {
    TSNode root = ts_tree_root_node(tree), none = {{0}, 0, 0};
    if (!grow((void **)&w->frames, &w->frames_cap, 1, sizeof(Frame)) ||
        !grow((void **)&w->open, &w->open_cap, 1, sizeof(Open)))
        return false;
    w->frames[0] = (Frame){root, kind_of(r, root), none, 0};
    if (!visit(r, w, 0)) return false;
    size_t len = 0;
    w->open[len++] = (Open){root, 0, ts_node_named_child_count(root)};
    while (len > 0) {
        Open *top = &w->open[len - 1];
        if (top->next == top->count) {
            len--;
            continue;
        }
        uint32_t index = top->next++;
        TSNode parent = top->node, node = ts_node_named_child(parent, index);
        uint32_t depth = (uint32_t)len, count = ts_node_named_child_count(node);
        if (depth >= w->frames_cap && !grow((void **)&w->frames, &w->frames_cap, depth + 1, sizeof(Frame))) return false;
        Kind kind = kind_of(r, node);
        w->frames[depth] = (Frame){node, kind, parent, index};
        if (w->scopes_len > 0 && w->scopes[w->scopes_len - 1].depth >= depth) pop_scopes(w, depth);
        if (kind != K_OTHER && !visit(r, w, depth)) return false; /* `visit` reads none of the other kinds */
        if (count > 0) {
            if (len >= w->open_cap && !grow((void **)&w->open, &w->open_cap, len + 1, sizeof(Open))) return false;
            w->open[len++] = (Open){node, 0, count};
        }
    }
    return true;
}

PyObject *read_outline_of(Reader *r, TSTree *tree) {
    Walk w = {0};
    TSNode root = ts_tree_root_node(tree);
    PyObject *package = NULL, *imports = PyList_New(0), *result = NULL;
    w.types = PyList_New(0);
    w.calls = PyList_New(0);
    w.refs = PyList_New(0);
    w.decls = PyList_New(0);
    if (imports && w.types && w.calls && w.refs && w.decls && read_header(r, root, &package, imports) &&
        walk_tree(r, &w, tree) && !PyErr_Occurred()) {
        PyObject *calls = merged_calls(&w);
        result = RECORD(r->records->outline, package ? package : PyUnicode_FromStringAndSize("", 0),
                        PyList_AsTuple(imports), w.types, calls, w.decls, PyBool_FromLong(ts_node_has_error(root)));
        package = NULL;
        w.types = w.decls = NULL; /* stolen */
    }
    pop_scopes(&w, 0);
    Py_XDECREF(package);
    Py_XDECREF(imports);
    Py_XDECREF(w.types);
    Py_XDECREF(w.calls);
    Py_XDECREF(w.refs);
    Py_XDECREF(w.decls);
    PyMem_Free(w.frames);
    PyMem_Free(w.open);
    PyMem_Free(w.scopes);
    PyMem_Free(w.call_rows);
    PyMem_Free(w.ref_rows);
    return result;
}
