/* The C reader of a Java file's outline (pipeline/outline.py), over the public tree-sitter C API only
 * (tree_sitter/api.h: `ts_parser_*`, `ts_node_*`, `ts_tree_cursor_*`). The former walk over the runtime's
 * subtrees (its private headers) was faster; both are measured in docs/decisions.md ("One Java reader
 * without private headers").
 *
 * It reads facts only: node kinds, spans, rows, fields, source texts (squashed, or reduced to a simple
 * type name). Every rule that turns facts into chunks is Python (pipeline/members.py, calls.py,
 * javadoc.py, render.py), applied to the outline.
 *
 * py-tree-sitter does not export the tree-sitter runtime nor its trees, so scripts/build_native compiles
 * the runtime of the same release (from its sdist) into this extension, which parses the source itself
 * with the grammar of tree_sitter_java's capsule. Offsets in the outline index py-tree-sitter's trees of
 * the same bytes, so both copies must be one release (pipeline/native.py refuses a build for another).
 */
#ifndef JAVAKB_OUTLINE_H
#define JAVAKB_OUTLINE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

#include "tree_sitter/api.h"

/* Node kinds the reader dispatches on, looked up by name: `kind == K_X` is `node.type == "x"`. */
typedef enum {
    K_OTHER = 0,
    K_CLASS_DECLARATION,
    K_INTERFACE_DECLARATION,
    K_ENUM_DECLARATION,
    K_RECORD_DECLARATION,
    K_ANNOTATION_TYPE_DECLARATION,
    K_ENUM_CONSTANT,
    K_METHOD_INVOCATION,
    K_METHOD_REFERENCE,
    K_IDENTIFIER,
    K_FORMAL_PARAMETER,
    K_SPREAD_PARAMETER,
    K_RESOURCE,
    K_ENHANCED_FOR_STATEMENT,
    K_INSTANCEOF_EXPRESSION,
    K_VARIABLE_DECLARATOR,
    K_LOCAL_VARIABLE_DECLARATION,
    K_CATCH_FORMAL_PARAMETER,
    K_CATCH_TYPE,
    K_TYPE_PATTERN,
    K_FIELD_ACCESS,
    K_THIS,
    K_SUPER,
    K_PARENTHESIZED_EXPRESSION,
    K_OBJECT_CREATION_EXPRESSION,
    K_CAST_EXPRESSION,
    K_STRING_LITERAL,
    K_TEXT_BLOCK,
    K_CHARACTER_LITERAL,
    K_TYPE_IDENTIFIER,
    K_SCOPED_TYPE_IDENTIFIER,
    K_GENERIC_TYPE,
    K_ARRAY_TYPE,
    K_INTEGRAL_TYPE,
    K_ANNOTATED_TYPE,
    K_MODIFIERS,
    K_ANNOTATION,
    K_MARKER_ANNOTATION,
    K_LINE_COMMENT,
    K_BLOCK_COMMENT,
    K_ELEMENT_VALUE_PAIR,
    K_ELEMENT_VALUE_ARRAY_INITIALIZER,
    K_BINARY_EXPRESSION,
    K_STRING_FRAGMENT,
    K_ESCAPE_SEQUENCE,
    K_TYPE_ARGUMENTS,
    K_TYPE_LIST,
    K_EXTENDS_INTERFACES,
    K_ENUM_BODY,
    K_ENUM_BODY_DECLARATIONS,
    K_FIELD_DECLARATION,
    K_CONSTANT_DECLARATION,
    K_METHOD_DECLARATION,
    K_CONSTRUCTOR_DECLARATION,
    K_COMPACT_CONSTRUCTOR_DECLARATION,
    K_STATIC_INITIALIZER,
    K_ANNOTATION_TYPE_ELEMENT_DECLARATION,
    K_PACKAGE_DECLARATION,
    K_IMPORT_DECLARATION,
    K_SCOPED_IDENTIFIER,
    K_STATIC,
    K_ASTERISK,
    K_ERROR,
    K_COUNT
} Kind;

/* Fields the reader asks for: `child_by_field_name("name")` is `field(node, F_NAME)`. */
typedef enum {
    F_NAME = 0,
    F_BODY,
    F_OBJECT,
    F_TYPE,
    F_RIGHT,
    F_DECLARATOR,
    F_VALUE,
    F_SUPERCLASS,
    F_INTERFACES,
    F_PARAMETERS,
    F_TYPE_PARAMETERS,
    F_ELEMENT,
    F_ARGUMENTS,
    F_KEY,
    F_FIELD,
    F_LEFT,
    F_COUNT
} Field;

/* The language tables: built once per language from symbol and field names. */
typedef struct {
    const TSLanguage *language;
    uint32_t symbol_count;
    uint8_t *kinds;        /* by symbol slot (see `slot`) */
    PyObject **names;      /* interned node type names by symbol slot, made on first use */
    TSFieldId fields[F_COUNT];
    const char *field_names[F_COUNT]; /* as the language spells them: `ts_node_field_name_for_*` returns these */
} Grammar;

/* The record classes of pipeline/outline.py, bound once by `bind`. */
typedef struct {
    PyTypeObject *annotation_value, *annotation, *modifiers, *param, *field, *member_decl, *type_decl, *call,
        *local_decl, *import, *outline;
    PyObject *no_modifiers, *empty_args, *squash, *scoped_name;
} Records;

/* A child of a node with the field it is in. */
typedef struct {
    TSNode node;
    TSFieldId field;
} Child;

/* One reading of one tree. */
typedef struct {
    const char *data;
    Py_ssize_t size;
    const Grammar *grammar;
    const Records *records;
    TSTreeCursor scratch;  /* lists children into `children` */
    bool scratch_ready;
    Child *children;       /* a stack of child lists (see `push_children`) */
    size_t children_len, children_cap;
    TSNode *nodes;         /* a work stack (string values) */
    size_t nodes_len, nodes_cap;
} Reader;

/* Receiver kinds: pipeline.outline.Receiver. */
enum { R_NONE = 0, R_IDENTIFIER, R_DOTTED, R_CHAIN, R_ORPHAN, R_THIS, R_SUPER, R_FIELD, R_TYPED, R_OTHER };

/* grammar */
static inline uint32_t slot(const Grammar *g, TSSymbol symbol) {
    /* ERROR (65535) and error repetitions (65534) lie past the language's symbols. */
    return symbol < g->symbol_count ? symbol : g->symbol_count + (symbol == (TSSymbol)-1 ? 0 : 1);
}
static inline Kind kind_of(const Reader *r, TSNode node) {
    return ts_node_is_null(node) ? K_OTHER : (Kind)r->grammar->kinds[slot(r->grammar, ts_node_symbol(node))];
}
static inline TSNode field(const Reader *r, TSNode node, Field f) {
    TSFieldId id = r->grammar->fields[f];
    if (id == 0 || ts_node_is_null(node)) {
        TSNode null_node = {{0}, 0, 0};
        return null_node;
    }
    return ts_node_child_by_field_id(node, id);
}
PyObject *type_name(const Reader *r, TSNode node);

/* A piece of a string built by `concat`: a str object (borrowed) or an ASCII literal. */
typedef struct {
    PyObject *str;
    const char *ascii;
} Piece;
#define STR(o) ((Piece){(o), NULL})
#define LIT(s) ((Piece){NULL, (s)})
PyObject *concat(const Piece *pieces, Py_ssize_t n);
#define CONCAT(...) concat((Piece[]){__VA_ARGS__}, sizeof((Piece[]){__VA_ARGS__}) / sizeof(Piece))

/* util.c */
PyObject *make_record(PyTypeObject *cls, PyObject **items, Py_ssize_t n);
#define RECORD(cls, ...)                                                                         \
    make_record((cls), (PyObject *[]){__VA_ARGS__}, sizeof((PyObject *[]){__VA_ARGS__}) / sizeof(PyObject *))

/* children.c */
Py_ssize_t push_children(Reader *r, TSNode node); /* `Child.field` is 0: ask for it below */
Py_ssize_t push_children_with_fields(Reader *r, TSNode node);
static inline void pop_children(Reader *r, size_t base) { r->children_len = base; }
TSNode first_named_of(Reader *r, TSNode node, Kind kind);

/* text.c */
PyObject *text(const Reader *r, TSNode node);
PyObject *text_span(const Reader *r, uint32_t start, uint32_t end);
PyObject *squashed(const Reader *r, TSNode node);
PyObject *squashed_span(const Reader *r, uint32_t start, uint32_t end);
PyObject *simple_type(Reader *r, TSNode node);
PyObject *type_arg(Reader *r, TSNode node);
bool starts_javadoc(const Reader *r, TSNode comment);

/* modifiers.c */
PyObject *read_modifiers(Reader *r, TSNode first_named);
PyObject *string_value(Reader *r, TSNode node);

/* types.c */
PyObject *read_type(Reader *r, TSNode node, PyObject *name, PyObject *nested_name, int outer);

/* calls.c */
PyObject *read_call(Reader *r, uint32_t row, PyObject *name, TSNode receiver);
PyObject *read_local(Reader *r, TSNode name_node, TSNode type_node);

/* walk.c */
PyObject *read_outline_of(Reader *r, TSTree *tree);

#endif
