/* Type declarations, their fields and members (pipeline/outline.py: TypeDecl, Field, MemberDecl). */
#include "outline.h"

static PyObject *empty_str(void) { return PyUnicode_FromStringAndSize("", 0); }
static PyObject *bool_of(bool value) { return PyBool_FromLong(value); }
static PyObject *int_of(long value) { return PyLong_FromLong(value); }
static bool is_callable(Kind kind) {
    return kind == K_METHOD_DECLARATION || kind == K_CONSTRUCTOR_DECLARATION || kind == K_COMPACT_CONSTRUCTOR_DECLARATION;
}

/* `list.append(item)`, stealing the item. */
static bool append(PyObject *list, PyObject *item) {
    bool ok = item != NULL && PyList_Append(list, item) == 0;
    Py_XDECREF(item);
    return ok;
}

/* A list as a tuple, stealing the list. */
static PyObject *as_tuple(PyObject *list) {
    if (list == NULL) return NULL;
    PyObject *tuple = PyList_AsTuple(list);
    Py_DECREF(list);
    return tuple;
}

/* The javadoc comment among the previous named siblings, line comments skipped (pipeline/javadoc.py reads its text). */
static TSNode javadoc(const Reader *r, TSNode prev) {
    while (!ts_node_is_null(prev) && kind_of(r, prev) == K_LINE_COMMENT) prev = ts_node_prev_named_sibling(prev);
    if (!ts_node_is_null(prev) && kind_of(r, prev) == K_BLOCK_COMMENT && starts_javadoc(r, prev)) return prev;
    TSNode none = {{0}, 0, 0};
    return none;
}

/* Simple names of a node's named children, or of a `type_list` child's (`extends A, B`). */
static PyObject *simple_types(Reader *r, TSNode node) {
    PyObject *names = PyList_New(0);
    if (names == NULL || ts_node_is_null(node)) return as_tuple(names);
    uint32_t count = ts_node_named_child_count(node);
    for (uint32_t i = 0; i < count; i++) {
        if (!append(names, simple_type(r, ts_node_named_child(node, i)))) {
            Py_DECREF(names);
            return NULL;
        }
    }
    return as_tuple(names);
}

static PyObject *type_list(Reader *r, TSNode node) {
    if (ts_node_is_null(node)) return PyTuple_New(0);
    return simple_types(r, first_named_of(r, node, K_TYPE_LIST));
}

static PyObject *read_param(Reader *r, TSNode node) {
    Kind kind = kind_of(r, node);
    TSNode type_node = field(r, node, F_TYPE), first_named = ts_node_named_child(node, 0);
    PyObject *shown, *name;
    if (kind == K_SPREAD_PARAMETER) {
        TSNode shown_node = {{0}, 0, 0}, declarator = {{0}, 0, 0};
        uint32_t count = ts_node_named_child_count(node);
        for (uint32_t i = 0; i < count; i++) {
            TSNode child = ts_node_named_child(node, i);
            Kind ck = kind_of(r, child);
            if (ck == K_VARIABLE_DECLARATOR && ts_node_is_null(declarator)) declarator = child;
            if (ck != K_MODIFIERS && ck != K_VARIABLE_DECLARATOR && ts_node_is_null(shown_node)) shown_node = child;
        }
        PyObject *base = squashed(r, shown_node);
        shown = base ? CONCAT(STR(base), LIT("...")) : NULL;
        Py_XDECREF(base);
        name = ts_node_is_null(declarator) ? empty_str() : text(r, field(r, declarator, F_NAME));
    } else {
        shown = squashed(r, type_node);
        name = text(r, field(r, node, F_NAME));
    }
    return RECORD(r->records->param, type_name(r, node), shown, name, simple_type(r, type_node), type_arg(r, type_node),
                  read_modifiers(r, first_named));
}

/* Formal and varargs parameters of a `formal_parameters` node. */
static PyObject *read_params(Reader *r, TSNode params) {
    PyObject *list = PyList_New(0);
    if (list == NULL || ts_node_is_null(params)) return as_tuple(list);
    uint32_t count = ts_node_named_child_count(params);
    for (uint32_t i = 0; i < count; i++) {
        TSNode child = ts_node_named_child(params, i);
        Kind kind = kind_of(r, child);
        if ((kind == K_FORMAL_PARAMETER || kind == K_SPREAD_PARAMETER) && !append(list, read_param(r, child))) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return as_tuple(list);
}

/* A field's text squashed, or None when the node has no such field (a signature's type parameters, its return type). */
static PyObject *optional_squashed(Reader *r, TSNode node, Field f) {
    TSNode found = field(r, node, f);
    if (ts_node_is_null(found)) Py_RETURN_NONE;
    return squashed(r, found);
}

/* Whether a child other than `body` has an error (all children, as `Node.children`). */
static bool error_beside(Reader *r, TSNode node, TSNode body, bool *failed) {
    Py_ssize_t base = push_children(r, node);
    if (base < 0) {
        *failed = true;
        return false;
    }
    bool found = false;
    for (size_t i = (size_t)base; i < r->children_len && !found; i++) {
        TSNode child = r->children[i].node;
        found = !ts_node_eq(child, body) && ts_node_has_error(child);
    }
    pop_children(r, (size_t)base);
    return found;
}

typedef struct {
    PyObject *owner;
    PyObject *record_params; /* a record's components, for its compact constructor; else empty */
} MemberContext;

static PyObject *read_members(Reader *r, TSNode body, const MemberContext *context, bool callables_only);

static PyObject *read_member(Reader *r, TSNode node, TSNode doc, const MemberContext *context) {
    Kind kind = kind_of(r, node);
    bool is_static = kind == K_STATIC_INITIALIZER, callable = is_callable(kind), failed = false;
    bool element = kind == K_ANNOTATION_TYPE_ELEMENT_DECLARATION;
    TSNode body = field(r, node, F_BODY);
    bool has_error = ts_node_has_error(node);
    bool outside_error = has_error && (ts_node_is_null(body) || !ts_node_has_error(body) ||
                                       error_beside(r, node, body, &failed));
    if (failed) return NULL;
    /* What a skeleton quotes: up to the body, or all of it (comments and static initializers: nothing). */
    PyObject *head;
    if (kind == K_LINE_COMMENT || kind == K_BLOCK_COMMENT || is_static)
        head = PyUnicode_FromStringAndSize("", 0);
    else
        head = squashed_span(r, ts_node_start_byte(node),
                             ts_node_is_null(body) ? ts_node_end_byte(node) : ts_node_start_byte(body));
    if (head == NULL) return NULL;
    if (is_static) {
        uint32_t count = ts_node_named_child_count(node);
        body = count ? ts_node_named_child(node, count - 1) : (TSNode){{0}, 0, 0};
    }
    PyObject *name = text(r, field(r, node, F_NAME));
    if (name == NULL) {
        Py_DECREF(head);
        return NULL;
    }
    PyObject *params;
    if (kind == K_COMPACT_CONSTRUCTOR_DECLARATION) {
        params = context->record_params;
        Py_INCREF(params);
    } else if (kind == K_METHOD_DECLARATION || kind == K_CONSTRUCTOR_DECLARATION) {
        params = read_params(r, field(r, node, F_PARAMETERS));
    } else {
        params = PyTuple_New(0);
    }
    PyObject *type_params = NULL, *returns = NULL, *members = NULL;
    if (callable) {
        type_params = optional_squashed(r, node, F_TYPE_PARAMETERS);
        returns = type_params ? optional_squashed(r, node, F_TYPE) : NULL;
    } else if (element) { /* an annotation element: its type is what it returns */
        type_params = Py_NewRef(Py_None);
        returns = optional_squashed(r, node, F_TYPE);
    } else {
        type_params = Py_NewRef(Py_None);
        returns = Py_NewRef(Py_None);
    }
    if (kind == K_ENUM_CONSTANT && !ts_node_is_null(body)) {
        MemberContext inner = {CONCAT(STR(context->owner), LIT("."), STR(name)), NULL};
        inner.record_params = PyTuple_New(0);
        if (inner.owner && inner.record_params) members = read_members(r, body, &inner, true);
        Py_XDECREF(inner.owner);
        Py_XDECREF(inner.record_params);
    } else {
        members = PyTuple_New(0);
    }
    PyObject *modifiers;
    if (callable || is_static || element) {
        modifiers = read_modifiers(r, ts_node_named_child(node, 0));
    } else {
        modifiers = r->records->no_modifiers;
        Py_INCREF(modifiers);
    }
    bool documented = (callable || is_static || element) && !ts_node_is_null(doc);
    Py_INCREF(context->owner);
    return RECORD(r->records->member_decl, type_name(r, node), int_of(ts_node_start_byte(node)),
                  int_of(ts_node_end_byte(node)), int_of(ts_node_start_point(node).row),
                  int_of(ts_node_end_point(node).row), bool_of(has_error), bool_of(outside_error),
                  int_of(ts_node_is_null(body) ? -1 : (long)ts_node_start_byte(body)), head, context->owner, name,
                  modifiers,
                  type_params, returns, params, int_of(documented ? (long)ts_node_start_byte(doc) : -1),
                  int_of(documented ? (long)ts_node_end_byte(doc) : -1),
                  int_of(documented ? (long)ts_node_start_point(doc).row : -1), members);
}

/* Append the records of a container's named children, tracking the javadoc candidate as
 * `prev_named_sibling` would find it: the last named sibling that is not a line comment. */
static bool read_container(Reader *r, TSNode container, const MemberContext *context, bool callables_only,
                           PyObject *into, bool flatten) {
    Py_ssize_t base = push_children(r, container);
    if (base < 0) return false;
    size_t end = r->children_len;
    TSNode candidate = {{0}, 0, 0};
    bool ok = true;
    for (size_t i = (size_t)base; i < end && ok; i++) {
        TSNode child = r->children[i].node;
        if (!ts_node_is_named(child)) continue;
        Kind kind = kind_of(r, child);
        if (flatten && kind == K_ENUM_BODY_DECLARATIONS) {
            ok = read_container(r, child, context, callables_only, into, false);
        } else if (!callables_only || is_callable(kind)) {
            TSNode doc = ts_node_is_null(candidate) || kind_of(r, candidate) != K_BLOCK_COMMENT ||
                                 !starts_javadoc(r, candidate)
                             ? (TSNode){{0}, 0, 0}
                             : candidate;
            ok = append(into, read_member(r, child, doc, context));
        }
        if (kind != K_LINE_COMMENT) candidate = child;
    }
    pop_children(r, (size_t)base);
    return ok;
}

static PyObject *read_members(Reader *r, TSNode body, const MemberContext *context, bool callables_only) {
    PyObject *list = PyList_New(0);
    if (list != NULL && !read_container(r, body, context, callables_only, list, true)) Py_CLEAR(list);
    return as_tuple(list);
}

/* Fields of a body: field and constant declarations, one per declarator (enum fields after the constants). */
static bool read_fields(Reader *r, TSNode body, PyObject *into) {
    if (kind_of(r, body) == K_ENUM_BODY) {
        body = first_named_of(r, body, K_ENUM_BODY_DECLARATIONS);
        if (ts_node_is_null(body)) return !PyErr_Occurred();
    }
    Py_ssize_t base = push_children(r, body);
    if (base < 0) return false;
    size_t end = r->children_len;
    bool ok = true;
    for (size_t i = (size_t)base; i < end && ok; i++) {
        TSNode member = r->children[i].node;
        Kind kind = kind_of(r, member);
        if (!ts_node_is_named(member) || (kind != K_FIELD_DECLARATION && kind != K_CONSTANT_DECLARATION)) continue;
        TSNode type_node = field(r, member, F_TYPE);
        PyObject *modifiers = read_modifiers(r, ts_node_named_child(member, 0));
        PyObject *type = simple_type(r, type_node), *arg = type_arg(r, type_node);
        Py_ssize_t inner = (modifiers && type && arg) ? push_children_with_fields(r, member) : -1;
        ok = inner >= 0;
        for (size_t j = (size_t)(ok ? inner : 0); ok && j < r->children_len; j++) {
            if (r->children[j].field != r->grammar->fields[F_DECLARATOR]) continue;
            TSNode declarator = r->children[j].node;
            Py_INCREF(type);
            Py_INCREF(arg);
            Py_INCREF(modifiers);
            ok = append(into, RECORD(r->records->field, text(r, field(r, declarator, F_NAME)), type, arg, modifiers,
                                     bool_of(!ts_node_is_null(field(r, declarator, F_VALUE)))));
        }
        if (inner >= 0) pop_children(r, (size_t)inner);
        Py_XDECREF(modifiers);
        Py_XDECREF(type);
        Py_XDECREF(arg);
    }
    pop_children(r, (size_t)base);
    return ok;
}

/* Record components are private final fields of the record (JLS 8.10.3). */
static bool record_fields(PyObject *params, const Records *records, PyObject *into) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(params); i++) {
        PyObject *p = PyTuple_GET_ITEM(params, i); /* kind, type, name, simple, type_arg, modifiers, ... */
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(p, 0), "formal_parameter") != 0) continue;
        PyObject *items[5] = {PyTuple_GET_ITEM(p, 2), PyTuple_GET_ITEM(p, 3), PyTuple_GET_ITEM(p, 4),
                              PyTuple_GET_ITEM(p, 5), Py_False};
        for (int k = 0; k < 5; k++) Py_INCREF(items[k]);
        if (!append(into, make_record(records->field, items, 5))) return false;
    }
    return true;
}

PyObject *read_type(Reader *r, TSNode node, PyObject *name, PyObject *nested_name, int outer) {
    Kind kind = kind_of(r, node);
    TSNode body = field(r, node, F_BODY), mods = ts_node_named_child(node, 0);
    TSNode doc = javadoc(r, ts_node_prev_named_sibling(node));
    bool has_error = ts_node_has_error(node), failed = false;
    bool head_error = has_error && error_beside(r, node, body, &failed);
    if (failed) return NULL;
    PyObject *extends = simple_types(r, field(r, node, F_SUPERCLASS));
    PyObject *implements = type_list(r, field(r, node, F_INTERFACES));
    if (kind == K_INTERFACE_DECLARATION && extends != NULL) {
        Py_DECREF(extends);
        extends = type_list(r, first_named_of(r, node, K_EXTENDS_INTERFACES));
    }
    PyObject *params = kind == K_RECORD_DECLARATION ? read_params(r, field(r, node, F_PARAMETERS)) : PyTuple_New(0);
    PyObject *fields = PyList_New(0), *members = NULL;
    if (params != NULL && fields != NULL && record_fields(params, r->records, fields) &&
        (ts_node_is_null(body) || read_fields(r, body, fields))) {
        MemberContext context = {nested_name, params};
        members = ts_node_is_null(body) ? PyTuple_New(0) : read_members(r, body, &context, false);
    }
    Py_XDECREF(params);
    bool has_doc = !ts_node_is_null(doc);
    Py_INCREF(name);
    Py_INCREF(nested_name);
    return RECORD(r->records->type_decl, type_name(r, node), name, nested_name, int_of(outer),
                  int_of(ts_node_start_byte(node)), int_of(ts_node_end_byte(node)),
                  int_of(ts_node_start_point(node).row), int_of(ts_node_end_point(node).row),
                  int_of(!ts_node_is_null(mods) && kind_of(r, mods) == K_MODIFIERS ? ts_node_end_byte(mods)
                                                                                  : ts_node_start_byte(node)),
                  int_of(ts_node_is_null(body) ? -1 : (long)ts_node_start_byte(body)), bool_of(has_error),
                  bool_of(head_error), bool_of(!ts_node_is_null(body) && ts_node_has_error(body)),
                  int_of(has_doc ? (long)ts_node_start_byte(doc) : -1), int_of(has_doc ? (long)ts_node_end_byte(doc) : -1),
                  int_of(has_doc ? (long)ts_node_start_point(doc).row : -1), read_modifiers(r, mods), extends,
                  implements, as_tuple(fields), members);
}
