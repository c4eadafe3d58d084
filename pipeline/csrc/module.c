/* pipeline._native: the module, its grammar tables and the record classes it builds. */
#include <string.h>

#include "outline.h"

#ifndef JAVAKB_TREE_SITTER_VERSION
#error "build with -DJAVAKB_TREE_SITTER_VERSION=\"...\" (scripts/build_native does)"
#endif

static const char *const KIND_NAMES[K_COUNT] = {
    [K_OTHER] = "",
    [K_CLASS_DECLARATION] = "class_declaration",
    [K_INTERFACE_DECLARATION] = "interface_declaration",
    [K_ENUM_DECLARATION] = "enum_declaration",
    [K_RECORD_DECLARATION] = "record_declaration",
    [K_ANNOTATION_TYPE_DECLARATION] = "annotation_type_declaration",
    [K_ENUM_CONSTANT] = "enum_constant",
    [K_METHOD_INVOCATION] = "method_invocation",
    [K_METHOD_REFERENCE] = "method_reference",
    [K_IDENTIFIER] = "identifier",
    [K_FORMAL_PARAMETER] = "formal_parameter",
    [K_SPREAD_PARAMETER] = "spread_parameter",
    [K_RESOURCE] = "resource",
    [K_ENHANCED_FOR_STATEMENT] = "enhanced_for_statement",
    [K_INSTANCEOF_EXPRESSION] = "instanceof_expression",
    [K_VARIABLE_DECLARATOR] = "variable_declarator",
    [K_LOCAL_VARIABLE_DECLARATION] = "local_variable_declaration",
    [K_CATCH_FORMAL_PARAMETER] = "catch_formal_parameter",
    [K_CATCH_TYPE] = "catch_type",
    [K_TYPE_PATTERN] = "type_pattern",
    [K_FIELD_ACCESS] = "field_access",
    [K_THIS] = "this",
    [K_SUPER] = "super",
    [K_PARENTHESIZED_EXPRESSION] = "parenthesized_expression",
    [K_OBJECT_CREATION_EXPRESSION] = "object_creation_expression",
    [K_CAST_EXPRESSION] = "cast_expression",
    [K_STRING_LITERAL] = "string_literal",
    [K_TEXT_BLOCK] = "text_block",
    [K_CHARACTER_LITERAL] = "character_literal",
    [K_TYPE_IDENTIFIER] = "type_identifier",
    [K_SCOPED_TYPE_IDENTIFIER] = "scoped_type_identifier",
    [K_GENERIC_TYPE] = "generic_type",
    [K_ARRAY_TYPE] = "array_type",
    [K_INTEGRAL_TYPE] = "integral_type",
    [K_ANNOTATED_TYPE] = "annotated_type",
    [K_MODIFIERS] = "modifiers",
    [K_ANNOTATION] = "annotation",
    [K_MARKER_ANNOTATION] = "marker_annotation",
    [K_LINE_COMMENT] = "line_comment",
    [K_BLOCK_COMMENT] = "block_comment",
    [K_ELEMENT_VALUE_PAIR] = "element_value_pair",
    [K_ELEMENT_VALUE_ARRAY_INITIALIZER] = "element_value_array_initializer",
    [K_BINARY_EXPRESSION] = "binary_expression",
    [K_STRING_FRAGMENT] = "string_fragment",
    [K_ESCAPE_SEQUENCE] = "escape_sequence",
    [K_TYPE_ARGUMENTS] = "type_arguments",
    [K_TYPE_LIST] = "type_list",
    [K_EXTENDS_INTERFACES] = "extends_interfaces",
    [K_ENUM_BODY] = "enum_body",
    [K_ENUM_BODY_DECLARATIONS] = "enum_body_declarations",
    [K_FIELD_DECLARATION] = "field_declaration",
    [K_CONSTANT_DECLARATION] = "constant_declaration",
    [K_METHOD_DECLARATION] = "method_declaration",
    [K_CONSTRUCTOR_DECLARATION] = "constructor_declaration",
    [K_COMPACT_CONSTRUCTOR_DECLARATION] = "compact_constructor_declaration",
    [K_STATIC_INITIALIZER] = "static_initializer",
    [K_ANNOTATION_TYPE_ELEMENT_DECLARATION] = "annotation_type_element_declaration",
    [K_PACKAGE_DECLARATION] = "package_declaration",
    [K_IMPORT_DECLARATION] = "import_declaration",
    [K_SCOPED_IDENTIFIER] = "scoped_identifier",
    [K_STATIC] = "static",
    [K_ASTERISK] = "asterisk",
    [K_ERROR] = "ERROR",
};

static const char *const FIELD_NAMES[F_COUNT] = {
    [F_NAME] = "name",
    [F_BODY] = "body",
    [F_OBJECT] = "object",
    [F_TYPE] = "type",
    [F_RIGHT] = "right",
    [F_DECLARATOR] = "declarator",
    [F_VALUE] = "value",
    [F_SUPERCLASS] = "superclass",
    [F_INTERFACES] = "interfaces",
    [F_PARAMETERS] = "parameters",
    [F_TYPE_PARAMETERS] = "type_parameters",
    [F_ELEMENT] = "element",
    [F_ARGUMENTS] = "arguments",
    [F_KEY] = "key",
    [F_FIELD] = "field",
    [F_LEFT] = "left",
};

static Grammar grammar;
static Records records;
static bool bound;
static TSParser *parser; /* used with the GIL held, so one per process */

/* Kinds by symbol, from the names `Node.type` reports; ERROR and error repetitions in two extra slots. */
static bool load_grammar(const TSLanguage *language) {
    if (grammar.language == language) return true;
    uint32_t count = ts_language_symbol_count(language);
    uint8_t *kinds = PyMem_Calloc(count + 2, sizeof(uint8_t));
    PyObject **names = PyMem_Calloc(count + 2, sizeof(PyObject *));
    if (kinds == NULL || names == NULL) {
        PyMem_Free(kinds);
        PyMem_Free(names);
        PyErr_NoMemory();
        return false;
    }
    for (uint32_t s = 0; s < count + 2; s++) {
        TSSymbol symbol = s < count ? (TSSymbol)s : (s == count ? (TSSymbol)-1 : (TSSymbol)-2);
        const char *name = ts_language_symbol_name(language, symbol);
        for (int k = 1; name != NULL && k < K_COUNT; k++) {
            if (strcmp(name, KIND_NAMES[k]) == 0) {
                kinds[s] = (uint8_t)k;
                break;
            }
        }
    }
    if (grammar.names != NULL) {
        for (uint32_t s = 0; s < grammar.symbol_count + 2; s++) Py_XDECREF(grammar.names[s]);
    }
    PyMem_Free(grammar.kinds);
    PyMem_Free(grammar.names);
    grammar.kinds = kinds;
    grammar.names = names;
    grammar.symbol_count = count;
    for (int f = 0; f < F_COUNT; f++) {
        grammar.fields[f] = ts_language_field_id_for_name(language, FIELD_NAMES[f], (uint32_t)strlen(FIELD_NAMES[f]));
        grammar.field_names[f] = grammar.fields[f] ? ts_language_field_name_for_id(language, grammar.fields[f]) : NULL;
    }
    grammar.language = language;
    return true;
}

static PyTypeObject *record_class(PyObject *module, const char *name) {
    PyObject *cls = PyObject_GetAttrString(module, name);
    if (cls == NULL) return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type) ||
        ((PyTypeObject *)cls)->tp_basicsize != PyTuple_Type.tp_basicsize) {
        PyErr_Format(PyExc_TypeError, "pipeline.outline.%s must be a named tuple", name);
        Py_DECREF(cls);
        return NULL;
    }
    return (PyTypeObject *)cls;
}

static PyObject *bind(PyObject *self, PyObject *args) {
    PyObject *outline, *squash, *scoped_name;
    if (!PyArg_ParseTuple(args, "OOO:bind", &outline, &squash, &scoped_name)) return NULL;
    Records found = {0};
    found.annotation_value = record_class(outline, "AnnotationValue");
    found.annotation = found.annotation_value ? record_class(outline, "Annotation") : NULL;
    found.modifiers = found.annotation ? record_class(outline, "Modifiers") : NULL;
    found.param = found.modifiers ? record_class(outline, "Param") : NULL;
    found.field = found.param ? record_class(outline, "Field") : NULL;
    found.member_decl = found.field ? record_class(outline, "MemberDecl") : NULL;
    found.type_decl = found.member_decl ? record_class(outline, "TypeDecl") : NULL;
    found.call = found.type_decl ? record_class(outline, "Call") : NULL;
    found.local_decl = found.call ? record_class(outline, "LocalDecl") : NULL;
    found.import = found.local_decl ? record_class(outline, "Import") : NULL;
    found.outline = found.import ? record_class(outline, "Outline") : NULL;
    found.no_modifiers = found.outline ? PyObject_GetAttrString(outline, "NO_MODIFIERS") : NULL;
    found.empty_args = found.no_modifiers ? PyObject_GetAttrString(outline, "EMPTY_ARGS") : NULL;
    if (found.empty_args == NULL) {
        PyTypeObject *classes[] = {found.annotation_value, found.annotation, found.modifiers, found.param,
                                   found.field, found.member_decl, found.type_decl, found.call,
                                   found.local_decl, found.import, found.outline};
        for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) Py_XDECREF(classes[i]);
        Py_XDECREF(found.no_modifiers);
        return NULL;
    }
    Py_INCREF(squash);
    Py_INCREF(scoped_name);
    found.squash = squash;
    found.scoped_name = scoped_name;
    records = found; /* bound once per process; a second bind leaks the first (tiny) */
    bound = true;
    Py_RETURN_NONE;
}

/* The Java grammar, through its public route: the capsule `tree_sitter_java.language()` returns, which
 * py-tree-sitter's `Language` takes too. */
static const TSLanguage *java_language(void) {
    if (grammar.language != NULL) return grammar.language;
    PyObject *module = PyImport_ImportModule("tree_sitter_java");
    PyObject *capsule = module ? PyObject_CallMethod(module, "language", NULL) : NULL;
    Py_XDECREF(module);
    if (capsule == NULL) return NULL;
    const TSLanguage *language = PyCapsule_GetPointer(capsule, "tree_sitter.Language");
    Py_DECREF(capsule); /* the language is static data of tree_sitter_java's module, which stays imported */
    if (language == NULL || !load_grammar(language)) return NULL;
    return language;
}

/* A tree of `data` parsed by this module's copy of the runtime (the same release as py-tree-sitter's,
 * checked by pipeline/native.py), with the public API only. */
static TSTree *parse(PyObject *data) {
    const TSLanguage *language = java_language();
    if (language == NULL) return NULL;
    if (parser == NULL) {
        parser = ts_parser_new();
        if (!ts_parser_set_language(parser, language)) {
            ts_parser_delete(parser);
            parser = NULL;
            PyErr_SetString(PyExc_RuntimeError, "tree_sitter_java's grammar does not fit this tree-sitter runtime");
            return NULL;
        }
    }
    if (PyBytes_GET_SIZE(data) > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "source too large for tree-sitter");
        return NULL;
    }
    TSTree *tree = ts_parser_parse_string(parser, NULL, PyBytes_AS_STRING(data), (uint32_t)PyBytes_GET_SIZE(data));
    if (tree == NULL) PyErr_SetString(PyExc_RuntimeError, "tree-sitter returned no tree");
    return tree;
}

#define TREE_CAPSULE "pipeline._native.tree"

static void delete_tree(PyObject *capsule) {
    TSTree *tree = PyCapsule_GetPointer(capsule, TREE_CAPSULE);
    if (tree != NULL) ts_tree_delete(tree);
}

/* (outline, tree): the outline of `data`, and its tree in a capsule for `locate` and `children`. */
static PyObject *read_outline(PyObject *self, PyObject *data) {
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "read_outline(data: bytes)");
        return NULL;
    }
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "pipeline._native.bind was not called");
        return NULL;
    }
    TSTree *tree = parse(data);
    if (tree == NULL) return NULL;
    PyObject *capsule = PyCapsule_New(tree, TREE_CAPSULE, delete_tree);
    if (capsule == NULL) {
        ts_tree_delete(tree);
        return NULL;
    }
    Reader reader = {0};
    reader.data = PyBytes_AS_STRING(data);
    reader.size = PyBytes_GET_SIZE(data);
    reader.grammar = &grammar;
    reader.records = &records;
    PyObject *outline = read_outline_of(&reader, tree);
    if (reader.scratch_ready) ts_tree_cursor_delete(&reader.scratch);
    PyMem_Free(reader.children);
    PyMem_Free(reader.nodes);
    if (outline == NULL) {
        Py_DECREF(capsule);
        return NULL;
    }
    return Py_BuildValue("(NN)", outline, capsule);
}

static TSTree *tree_arg(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, TREE_CAPSULE);
}

/* The path (child indices from the root) of the node of type `kind` spanning `start`..`end`, found as
 * pipeline.syntax.node_at finds it: down from the root, into the first child that holds the span. */
static PyObject *locate(PyObject *self, PyObject *args) {
    PyObject *capsule;
    unsigned int start, end;
    const char *kind;
    if (!PyArg_ParseTuple(args, "OIIs:locate", &capsule, &start, &end, &kind)) return NULL;
    TSTree *tree = tree_arg(capsule);
    if (tree == NULL) return NULL;
    PyObject *path = PyList_New(0);
    TSNode node = ts_tree_root_node(tree);
    while (path != NULL && !(ts_node_start_byte(node) == start && ts_node_end_byte(node) == end &&
                             strcmp(ts_node_type(node), kind) == 0)) {
        uint32_t count = ts_node_child_count(node), i = 0;
        for (; i < count; i++) {
            TSNode child = ts_node_child(node, i);
            if (ts_node_start_byte(child) <= start && end <= ts_node_end_byte(child)) {
                node = child;
                break;
            }
        }
        PyObject *index = i < count ? PyLong_FromUnsignedLong(i) : NULL;
        if (index == NULL || PyList_Append(path, index) < 0) {
            if (i >= count) PyErr_Format(PyExc_LookupError, "no %s node at bytes %u-%u", kind, start, end);
            Py_XDECREF(index);
            Py_CLEAR(path);
            break;
        }
        Py_DECREF(index);
    }
    PyObject *out = path ? PyList_AsTuple(path) : NULL;
    Py_XDECREF(path);
    return out;
}

/* The named children of the node at `path`: (type, field or None, start byte, end byte, start row, end row,
 * index among all children) each. */
static PyObject *children(PyObject *self, PyObject *args) {
    PyObject *capsule, *path;
    if (!PyArg_ParseTuple(args, "OO!:children", &capsule, &PyTuple_Type, &path)) return NULL;
    TSTree *tree = tree_arg(capsule);
    if (tree == NULL) return NULL;
    TSNode node = ts_tree_root_node(tree);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(path); i++) {
        unsigned long index = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(path, i));
        if (PyErr_Occurred()) return NULL;
        if (index >= ts_node_child_count(node)) {
            PyErr_SetString(PyExc_LookupError, "no such child");
            return NULL;
        }
        node = ts_node_child(node, (uint32_t)index);
    }
    PyObject *out = PyList_New(0);
    TSTreeCursor cursor = ts_tree_cursor_new(node);
    bool more = out != NULL && ts_tree_cursor_goto_first_child(&cursor);
    for (unsigned long index = 0; more; index++, more = ts_tree_cursor_goto_next_sibling(&cursor)) {
        TSNode child = ts_tree_cursor_current_node(&cursor);
        if (!ts_node_is_named(child)) continue;
        const char *field_name = ts_tree_cursor_current_field_name(&cursor);
        PyObject *item = Py_BuildValue("(szIIIIk)", ts_node_type(child), field_name, ts_node_start_byte(child),
                                       ts_node_end_byte(child), ts_node_start_point(child).row,
                                       ts_node_end_point(child).row, index);
        if (item == NULL || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(item);
    }
    ts_tree_cursor_delete(&cursor);
    PyObject *result = out ? PyList_AsTuple(out) : NULL;
    Py_XDECREF(out);
    return result;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(outline_module, squash, scoped_name): the record classes, and the text functions non-ASCII text goes to."},
    {"read_outline", read_outline, METH_O, "read_outline(data): (outline, tree) of the Java source `data` (UTF-8)."},
    {"locate", locate, METH_VARARGS, "locate(tree, start, end, kind): the child-index path of that node."},
    {"children", children, METH_VARARGS, "children(tree, path): the named children of the node at `path`."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pipeline._native", "The C reader of Java outlines (pipeline/outline.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    /* Python's allocator, as py-tree-sitter sets it for its own copy of the runtime: the runtime makes many
     * small allocations, which pymalloc serves for fewer instructions than malloc. Every call into our copy
     * holds the GIL, which PyMem_* requires. */
    ts_set_allocator(PyMem_Malloc, PyMem_Calloc, PyMem_Realloc, PyMem_Free);
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "TREE_SITTER_VERSION", JAVAKB_TREE_SITTER_VERSION) < 0) Py_CLEAR(m);
    return m;
}
