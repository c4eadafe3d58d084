/* pipeline.javadoc.summarize for ASCII comments (the others go to the Python function, bound by `bind`).
 *
 * The Python version is the specification; this one follows it step by step on bytes. After the
 * comment's lines are stripped and their words joined by single spaces (as `" ".join(s.split())`
 * does), the only white space left is " ", which keeps the regular expressions' `\s` simple. */
#include <string.h>

#include "outline.h"

enum { MAX_SUMMARY = 300, HEAD_LINES = 3, MAX_COMMENT = 2000 };

static PyObject *python_summarize;

void bind_summarize(PyObject *function) {
    Py_INCREF(function);
    python_summarize = function;
}

/* A growable byte string. */
typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static bool put(Buf *b, const char *s, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *grown = PyMem_Realloc(b->data, cap);
        if (grown == NULL) return false;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return true;
}

static inline bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }
static inline bool is_break(char c) { return c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e); }
static inline bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
static inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Append the words of s[0:n] to `out`, one space between words (and after what `out` holds). */
static bool put_words(Buf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        while (i < n && is_space(s[i])) i++;
        size_t start = i;
        while (i < n && !is_space(s[i])) i++;
        if (i > start && ((out->len > 0 && !put(out, " ", 1)) || !put(out, s + start, i - start))) return false;
    }
    return true;
}

/* `" ".join(" ".join(_text_lines(lines)).split())` over the first `limit` lines of `s` (str.splitlines). */
static bool text_of_lines(const char *s, size_t n, size_t limit, Buf *out) {
    size_t i = 0;
    for (size_t line = 0; line < limit && i < n; line++) {
        size_t start = i;
        while (i < n && !is_break(s[i])) i++;
        size_t end = i;
        if (i < n) i += (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
        while (start < end && is_space(s[start])) start++; /* strip, removeprefix("*"), strip */
        while (end > start && is_space(s[end - 1])) end--;
        if (start < end && s[start] == '*') start++;
        while (start < end && is_space(s[start])) start++;
        if (start < end && s[start] == '@') break; /* the block tags begin */
        if (!put_words(out, s + start, end - start)) return false;
    }
    return true;
}

/* `_SENTENCE_END.search`: the index just past the first "." followed by a space or the end, else 0. */
static size_t sentence_end(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' && (i + 1 == n || s[i + 1] == ' ')) return i + 1;
    return 0;
}

/* The start of the first `<(?:p|P|pre|ul|ol|table|h\d)\b[^>]*>`, or n. */
static size_t paragraph_start(const char *s, size_t n) {
    static const char *const names[] = {"p", "P", "pre", "ul", "ol", "table"};
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] != '<') continue;
        for (size_t a = 0; a < 7; a++) {
            size_t end;
            if (a < 6) {
                size_t k = strlen(names[a]);
                if (i + 1 + k > n || memcmp(s + i + 1, names[a], k) != 0) continue;
                end = i + 1 + k;
            } else {
                if (i + 2 >= n || s[i + 1] != 'h' || !(s[i + 2] >= '0' && s[i + 2] <= '9')) continue;
                end = i + 3;
            }
            if (end < n && is_word(s[end])) continue; /* no word boundary (the name ends in a word character) */
            if (memchr(s + end, '>', n - end) != NULL) return i;
        }
    }
    return n;
}

/* `_HTML_TAG.sub("", s)` appended to out. */
static bool put_without_tags(Buf *out, const char *s, size_t n) {
    size_t i = 0, kept = 0;
    while (i < n) {
        if (s[i] == '<') {
            size_t j = i + 1;
            if (j < n && s[j] == '/') j++;
            if (j < n && is_alpha(s[j])) {
                const char *gt = memchr(s + j + 1, '>', n - j - 1);
                if (gt != NULL) {
                    if (!put(out, s + kept, i - kept)) return false;
                    i = kept = (size_t)(gt - s) + 1;
                    continue;
                }
            }
        }
        i++;
    }
    return put(out, s + kept, n - kept);
}

/* `_append_plain`: add the plain text, without HTML tags; true when it holds the first sentence's end. */
static bool append_plain(Buf *out, const char *s, size_t n, bool *done) {
    Buf plain = {0};
    bool ok = put_without_tags(&plain, s, n);
    size_t end = ok ? sentence_end(plain.data, plain.len) : 0;
    if (ok) ok = put(out, plain.data, end ? end : plain.len);
    *done = end > 0;
    PyMem_Free(plain.data);
    return ok;
}

/* One `{@tag body}` at s[i] (`_INLINE_TAG`): its end, the tag and the body, or false. */
static bool inline_tag(const char *s, size_t n, size_t i, size_t *end, size_t tag[2], size_t body[2]) {
    if (i + 2 >= n || s[i] != '{' || s[i + 1] != '@') return false;
    size_t j = i + 2;
    while (j < n && is_word(s[j])) j++;
    if (j == i + 2) return false;
    tag[0] = i + 2, tag[1] = j;
    while (j < n && s[j] == ' ') j++;
    body[0] = j;
    for (;;) {
        while (j < n && s[j] != '{' && s[j] != '}') j++;
        if (j < n && s[j] == '{') { /* one level of nested braces */
            size_t k = j + 1;
            while (k < n && s[k] != '{' && s[k] != '}') k++;
            if (k < n && s[k] == '}') {
                j = k + 1;
                continue;
            }
            return false;
        }
        if (j >= n) return false;
        body[1] = j;
        *end = j + 1;
        return true;
    }
}

/* `_render_inline(tag, body.strip())`. */
static bool render_inline(Buf *out, const char *tag, size_t tag_len, const char *body, size_t len) {
    while (len > 0 && body[0] == ' ') body++, len--;
    while (len > 0 && body[len - 1] == ' ') len--;
    bool link = (tag_len == 4 && memcmp(tag, "link", 4) == 0) || (tag_len == 9 && memcmp(tag, "linkplain", 9) == 0) ||
                (tag_len == 3 && memcmp(tag, "see", 3) == 0);
    if (!link) return put(out, body, len);
    size_t depth = 0, cut = len;
    for (size_t i = 0; i < len; i++) { /* `_split_reference`: the first space outside the parameter list */
        if (body[i] == '(') depth++;
        else if (body[i] == ')') depth = depth ? depth - 1 : 0;
        else if (body[i] == ' ' && depth == 0) {
            cut = i;
            break;
        }
    }
    size_t label = cut;
    while (label < len && body[label] == ' ') label++;
    if (label < len) return put(out, body + label, len - label);
    size_t ref = 0;
    while (ref < cut && body[ref] == '#') ref++; /* lstrip("#"), then "#" -> "." */
    for (size_t i = ref; i < cut; i++)
        if (!put(out, body[i] == '#' ? "." : body + i, 1)) return false;
    return true;
}

/* `_finish`: words joined by single spaces, cut at 300 characters; None when empty. */
static PyObject *finish(Buf *raw) {
    Buf words = {0};
    if (!put_words(&words, raw->data, raw->len)) {
        PyMem_Free(words.data);
        return PyErr_NoMemory();
    }
    size_t n = words.len < MAX_SUMMARY ? words.len : MAX_SUMMARY;
    PyObject *result = n ? PyUnicode_FromStringAndSize(words.data, (Py_ssize_t)n) : Py_NewRef(Py_None);
    PyMem_Free(words.data);
    return result;
}

static PyObject *summarize_ascii(const char *s, size_t n) {
    if (n >= 3 && memcmp(s, "/**", 3) == 0) s += 3, n -= 3;
    if (n >= 2 && memcmp(s + n - 2, "*/", 2) == 0) n -= 2;
    Buf text = {0}, out = {0};
    PyObject *result = NULL;
    /* The first lines decide most summaries: a sentence end with no `{` or `<` before it. */
    if (!text_of_lines(s, n, HEAD_LINES, &text)) goto oom;
    size_t end = sentence_end(text.data, text.len);
    if (end > 0 && memchr(text.data, '{', end) == NULL && memchr(text.data, '<', end) == NULL) {
        result = PyUnicode_FromStringAndSize(text.data, (Py_ssize_t)(end < MAX_SUMMARY ? end : MAX_SUMMARY));
        goto done;
    }
    text.len = 0;
    if (!text_of_lines(s, n, (size_t)-1, &text)) goto oom;
    size_t length = text.len, paragraph = paragraph_start(text.data, length);
    if (paragraph > 0 && paragraph < length) length = paragraph;
    if (length == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    size_t pos = 0, at = 0, stop, tag[2], body[2];
    bool ended = false;
    for (; at < length && !ended; at++) {
        if (!inline_tag(text.data, length, at, &stop, tag, body)) continue;
        if (!append_plain(&out, text.data + pos, at - pos, &ended)) goto oom;
        if (ended) break;
        if (!render_inline(&out, text.data + tag[0], tag[1] - tag[0], text.data + body[0], body[1] - body[0])) goto oom;
        pos = stop;
        at = stop - 1;
    }
    if (!ended && !append_plain(&out, text.data + pos, length - pos, &ended)) goto oom;
    result = finish(&out);
    goto done;
oom:
    PyErr_NoMemory();
done:
    PyMem_Free(text.data);
    PyMem_Free(out.data);
    return result;
}

PyObject *summarize(PyObject *self, PyObject *raw) {
    if (!PyUnicode_Check(raw)) {
        PyErr_SetString(PyExc_TypeError, "summarize(raw: str)");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(raw);
    if (n > MAX_COMMENT) n = MAX_COMMENT; /* the summary is capped at 300 characters: 2,000 hold it */
    if (!PyUnicode_IS_ASCII(raw) || python_summarize == NULL) {
        if (python_summarize == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "pipeline._native.bind was not called");
            return NULL;
        }
        return PyObject_CallOneArg(python_summarize, raw);
    }
    return summarize_ascii((const char *)PyUnicode_DATA(raw), (size_t)n);
}
