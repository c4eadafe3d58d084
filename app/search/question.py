"""Reading a question: a small tokenizer that classifies each token, then the intent its structure shows.

Tokens (`Token.kind`):
    VERB: an HTTP method, written in capitals (`GET`) or, in any case, right before a route (`get /users`).
    ROUTE: an HTTP path: `/api/v1/users/{id}`, `/` alone when a verb, quotes or a route noun mark it, the
        path of a pasted URL, or `users/{id}` right after a verb.
    CODE: a code name. Marked by its shape (camelCase, PascalCase, dotted, `snake_case`, `CONSTANT_CASE`,
        `call()`, `Type::method`, `Type#method`, `#method`, `List<Owner>`, a file name `OwnerService.java`),
        by backticks or quotes, or by being capitalised anywhere but at the start of a sentence.
    ANNOTATION: `@Transactional`.
    WORD: anything else: English (or another language's) words, acronyms such as `JWT`, numbers.

Intent, from structure rather than from a word list alone:
    - a ROUTE or VERB token makes it a route question, whatever else it says ("what calls GET /users");
    - otherwise a relation cue (a verb, participle or noun of calling, using, injecting, implementing)
      asks about the CODE token it governs: the nearest one on the side its form points to, with only
      glue words (articles, auxiliaries, prepositions, "method", "class", ...) in between. "who calls X",
      "callers of X", "X's callers", "where is X used" ask who calls X; "what does X call" and
      "methods called by X" ask what X calls; "a method called X" only names X. A cue that governs no
      code name asks nothing: "which users are locked" is not about usages.
    - "use" asks for callers when its subject names a member (`A.m`, `m()`, `findById`) and for
      injectors when it names a type (`OwnerService`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from app.store.lexical import singular
from pipeline.glossary import gloss
from pipeline.spring import JAXRS_VERBS

HTTP_VERBS = JAXRS_VERBS
SOURCE_SUFFIXES = (".java", ".kt", ".groovy", ".scala")


class Kind(enum.StrEnum):
    """What one token of a question is."""

    VERB = "verb"
    ROUTE = "route"
    CODE = "code"
    ANNOTATION = "annotation"
    WORD = "word"


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its normalised text, kind, and whether it opens a sentence or was quoted."""

    text: str
    kind: Kind
    sentence_start: bool = False
    quoted: bool = False


class Relation(enum.StrEnum):
    """What a relation question asks for about its subject X."""

    CALLERS = "callers"  # who calls X
    INJECTORS = "injectors"  # who receives X by injection
    IMPLEMENTATIONS = "implementations"  # which types implement or extend X
    CALLEES = "callees"  # what X calls
    DEPENDENCIES = "dependencies"  # what X receives by injection
    SUPERTYPES = "supertypes"  # what X implements or extends


class _Cue(enum.Enum):
    USE = "use"  # callers for a member, injectors for a type


_Meaning = Relation | _Cue
# The inverse of each relation: what "X <active verb>" and "<participle> by X" ask.
INVERSE: dict[_Meaning, Relation] = {
    Relation.CALLERS: Relation.CALLEES,
    Relation.INJECTORS: Relation.DEPENDENCIES,
    Relation.IMPLEMENTATIONS: Relation.SUPERTYPES,
    _Cue.USE: Relation.CALLEES,
}


class _Form(enum.Enum):
    VERB = "verb"  # calls: X after it is the object, X before it the subject
    PARTICIPLE = "participle"  # called: X before it is the object; "by X" after it the subject
    NOUN = "noun"  # callers: "callers of X", "X's callers"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _forms(meaning: _Meaning, verbs: str, participles: str, nouns: str) -> dict[str, tuple[_Meaning, _Form]]:
    table: dict[str, tuple[_Meaning, _Form]] = {}
    for words, form in ((verbs, _Form.VERB), (participles, _Form.PARTICIPLE), (nouns, _Form.NOUN)):
        table.update(dict.fromkeys(words.split(), (meaning, form)))
    return table


CUES: dict[str, tuple[_Meaning, _Form]] = {
    **_forms(
        Relation.CALLERS,
        "call calls calling invoke invokes invoking",
        "called invoked",
        "caller callers invocation invocations callsite callsites",
    ),
    **_forms(_Cue.USE, "use uses using reference references referencing", "used referenced", "usage usages user users"),
    **_forms(
        Relation.INJECTORS,
        "inject injects injecting autowire autowires autowiring wire wires wiring depend depends depending"
        " receive receives receiving need needs require requires",
        "injected autowired wired received needed required",
        "injection injections injector injectors dependent dependents consumer consumers",
    ),
    **_forms(
        Relation.IMPLEMENTATIONS,
        "implement implements implementing extend extends extending subclass subclasses inherit inherits",
        "implemented extended subclassed inherited overridden",
        "implementation implementations implementor implementors implementer implementers subtype subtypes"
        " subclassing child children",
    ),
}
# Relation verbs of Chinese, found inside a run of characters.
FOREIGN_CUES: dict[str, _Meaning] = {
    "调用": Relation.CALLERS,
    "使用": _Cue.USE,
    "用到": _Cue.USE,
    "引用": _Cue.USE,
    "注入": Relation.INJECTORS,
    "依赖": Relation.INJECTORS,
    "实现": Relation.IMPLEMENTATIONS,
    "继承": Relation.IMPLEMENTATIONS,
}
# Nouns that name the other side: "dependencies of X" are what X receives, "callees of X" what X calls.
INVERSE_NOUNS: dict[str, Relation] = {
    "callee": Relation.CALLEES,
    "callees": Relation.CALLEES,
    "dependency": Relation.DEPENDENCIES,
    "dependencies": Relation.DEPENDENCIES,
    "supertype": Relation.SUPERTYPES,
    "supertypes": Relation.SUPERTYPES,
    "superclass": Relation.SUPERTYPES,
    "parent": Relation.SUPERTYPES,
}
# Words that may stand between a relation cue and the code name it governs.
GLUE = _words(
    "the a an this that these those my our its his their any all every some each is are was were be been being"
    " do does did get gets got getting has have had ever actually really currently still also anywhere"
    " everywhere where when directly indirectly exactly ultimately method methods function functions class"
    " classes interface interfaces type types bean beans component components field fields constructor"
    " constructors enum record object objects instance instances service services site sites point points"
    " place places of for to on in into from with by 's s"
)
# Prepositions that, after a participle, introduce its agent: "called by X", "injected into X".
AGENT_PREPOSITIONS = frozenset({"by", "into", "in", "from", "inside", "within"})
# Nouns near which a lone `/` is a route: "the / route", "handler for /".
ROUTE_NOUNS = frozenset({"route", "path", "endpoint", "url", "mapping", "handler", "page", "request", "root"})
NAMING_WORDS = frozenset({"called", "named"})
NOUN_PREPOSITIONS = frozenset({"of", "for", "to", "on"})
WINDOW = 6
QUESTIONS_CACHED = 256
"""Questions whose reading `parse_question` keeps: a tool reads its question again after the search
(`app.search.near.missing_names`), and an agent asks the same question of several tools."""
# The scaffolding of a question: how it is asked, not what it is about (dropped from the lexical query).
SCAFFOLDING = _words(
    "how what where which who whom whose why when whenever whatever whoever do does did doing done"
    " we us our ours i me my you your they them there here happen happens happened please"
    " anything something everything somewhere anywhere everywhere someone anyone"
)

_TOKEN = re.compile(
    r"""
    (?P<tick>`[^`]*`)
    | (?P<url>https?://[^\s/`'"]+(?P<urlpath>/[^\s`'"?#]*)?(?:[?#][^\s`'"]*)?)
    | (?P<slash>(?<![\w/])(?:[\w{}$.~:*-]*/)+[\w{}$.~:*-]*)
    | (?P<annotation>@[A-Za-z_$][\w$.]*)
    | (?P<code>\#?[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|\#)[A-Za-z_$][A-Za-z0-9_$]*)*
        (?:\(\))?(?:<[^<>\s]*(?:<[^<>\s]*>[^<>\s]*)?>)?)
    | (?P<cjk>[^\W\d_A-Za-z]+)
    | (?P<number>\d[\w.]*)
    | (?P<possessive>'s\b)
    | (?P<quote>["“”])
    | (?P<end>[.?!;:]+(?=\s|$))
    """,
    re.VERBOSE,
)
_GENERIC_ARGS = re.compile(r"[A-Za-z_$][\w$.]*")


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What a question names and asks for.

    `identifiers` are its code names, normalised (`Type::m` and `Type#m` → `Type.m`, no `()`, no type
    arguments, `OwnerService.java` → `OwnerService`); `routes` its HTTP paths and `http_methods` its
    verbs; `relation` what it asks about `subjects` (the code names the relation cue governs);
    `annotations` its `@Names`; `words` its words, folded to singular lowercase.
    """

    identifiers: tuple[str, ...]
    routes: tuple[str, ...]
    relation: Relation | None = None
    words: frozenset[str] = frozenset()
    http_methods: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    annotations: tuple[str, ...] = ()
    plurals: tuple[str, ...] = ()
    sequence: tuple[str, ...] = ()
    """Its words in the order written, singular lowercase, repeats kept (`words` as a sequence)."""


@dataclass(frozen=True, slots=True)
class Question:
    """A question read once: its text, its tokens and what they name; every stage of a search reads this value."""

    text: str
    tokens: tuple[Token, ...]
    terms: QueryTerms

    @property
    def lexical(self) -> str:
        """The question as the lexical index should read it (`expand_query`), from the tokens already read."""
        return _expanded(self.text, self.tokens, self.terms)


@lru_cache(maxsize=QUESTIONS_CACHED)
def parse_question(text: str) -> Question:
    """Tokenize a question once and read its terms from those tokens (cached: a `Question` is immutable)."""
    tokens = tuple(tokenize(text))
    return Question(text, tokens, _terms_of(tokens))


def query_terms(query: str) -> QueryTerms:
    """Read a question: its tokens, then the intent their structure shows (see the module docstring)."""
    return parse_question(query).terms


def _terms_of(tokens: Sequence[Token]) -> QueryTerms:
    identifiers = tuple(dict.fromkeys(t.text for t in tokens if t.kind is Kind.CODE))
    routes = tuple(dict.fromkeys(t.text for t in tokens if t.kind is Kind.ROUTE))
    verbs = tuple(dict.fromkeys(t.text for t in tokens if t.kind is Kind.VERB))
    relation, subjects = (None, ()) if routes or verbs else _relation(tokens)
    raw_words = [w.lower() for t in tokens if t.kind is not Kind.ROUTE for w in re.findall(r"[^\W\d_]+", t.text)]
    return QueryTerms(
        identifiers=identifiers,
        routes=routes,
        relation=relation,
        words=frozenset(singular(w) for w in raw_words),
        http_methods=verbs,
        subjects=subjects,
        annotations=tuple(dict.fromkeys(t.text for t in tokens if t.kind is Kind.ANNOTATION)),
        plurals=tuple(dict.fromkeys(w for w in raw_words if singular(w) != w)),
        sequence=tuple(singular(w) for w in raw_words),
    )


def tokenize(query: str, *, quoted: bool = False) -> list[Token]:
    """The classified tokens of a question, in order (see the module docstring for the kinds)."""
    tokens: list[Token] = []
    # A question of one word opens no sentence: `Table` alone names a type, as `Table` mid-sentence does.
    start, in_quotes = len(query.split()) > 1, quoted
    for match in _TOKEN.finditer(query):
        group, text = match.lastgroup, match.group(0)
        if group == "end":
            start = True
            continue
        if group == "quote":
            in_quotes = not in_quotes
            continue
        if group == "possessive":
            tokens.append(Token("'s", Kind.WORD))
            continue
        if group == "tick":
            tokens.extend(tokenize(text.strip("`"), quoted=True))
        elif group == "url":
            tokens.append(Token(match.group("urlpath") or "/", Kind.ROUTE, start, in_quotes))
        else:
            tokens.extend(_classify(group or "", text, start=start, quoted=in_quotes))
        start = False
    return _mark_verbs(tokens)


def _classify(group: str, text: str, *, start: bool, quoted: bool) -> list[Token]:
    if group == "annotation":
        return [Token(text[1:].rsplit(".", 1)[-1], Kind.ANNOTATION, start, quoted)]
    if group == "slash":
        return _slash(text, start=start, quoted=quoted)
    if group == "code":
        return _code(text, start=start, quoted=quoted)
    return [Token(text, Kind.WORD, start, quoted)]


def _slash(text: str, *, start: bool, quoted: bool) -> list[Token]:
    """`/owners/{id}` is a route; `src/main/OwnerService.java` names a file; `and/or` is words."""
    if text.lower().endswith(SOURCE_SUFFIXES):
        return _code(text.rsplit("/", 1)[-1], start=start, quoted=quoted)
    if text.startswith("/"):
        return [Token(text.rstrip(".:") or "/", Kind.ROUTE, start, quoted)]
    # `users/{id}` is a route only right after a verb (see `_mark_verbs`); until then its words.
    return [Token(text, Kind.WORD, start, quoted)]


def _code(text: str, *, start: bool, quoted: bool) -> list[Token]:
    if text.upper() in HTTP_VERBS and text.isupper():
        return [Token(text, Kind.VERB, start, quoted)]
    base, _, generic = text.partition("<")
    name = base.removesuffix("()").replace("::", ".").replace("#", ".").strip(".")
    for suffix in SOURCE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            quoted = True  # a file name names its type
    marked = quoted or base.endswith("()") or "#" in base or "::" in base or bool(generic)
    if not (marked or looks_like_code(name, sentence_start=start)):
        return [Token(text, Kind.WORD, start, quoted)]
    tokens = [Token(name, Kind.CODE, start, quoted)]
    tokens += [Token(arg, Kind.CODE, False, quoted) for arg in _GENERIC_ARGS.findall(generic)]
    return tokens


def looks_like_code(word: str, *, sentence_start: bool) -> bool:
    """camelCase, PascalCase with several words, dotted or snake names; a capitalised word not opening a sentence."""
    segments = word.split(".")
    if len(segments) > 1:
        return all(segments) and max(map(len, segments)) > 1 and not word.isupper()
    if "_" in word.strip("_"):
        return True  # snake_case, CONSTANT_CASE
    if word.isupper():
        return False  # an acronym: JWT, API, CRM
    if any(c.isupper() for c in word[1:]):
        return True  # camelCase, PascalCase with several words
    return word[:1].isupper() and len(word) > 2 and not sentence_start


def _mark_verbs(tokens: list[Token]) -> list[Token]:
    """A verb in any case before a route is an HTTP verb; a path after a verb is a route; a marked `/` is one."""
    out = list(tokens)
    for i, token in enumerate(out):
        following = out[i + 1] if i + 1 < len(out) else None
        if token.text.upper() in HTTP_VERBS and following is not None and _is_path(following):
            out[i] = Token(token.text.upper(), Kind.VERB, token.sentence_start, token.quoted)
            if following.kind is not Kind.ROUTE:
                out[i + 1] = Token("/" + following.text.lstrip("/"), Kind.ROUTE, False, following.quoted)
    return [_lone_slash(out, i) for i in range(len(out))]


def _is_path(token: Token) -> bool:
    return token.kind is Kind.ROUTE or (token.kind is Kind.WORD and "/" in token.text)


def _lone_slash(tokens: list[Token], i: int) -> Token:
    token = tokens[i]
    if token.text != "/" or token.kind is not Kind.ROUTE:
        return token
    near = [t for t in tokens[max(0, i - 2) : i + 3] if t is not token]
    marked = token.quoted or any(t.kind is Kind.VERB or t.text.lower().rstrip("s") in ROUTE_NOUNS for t in near)
    return token if marked else Token("/", Kind.WORD, token.sentence_start, token.quoted)


def _relation(tokens: Sequence[Token]) -> tuple[Relation | None, tuple[str, ...]]:
    for i, token in enumerate(tokens):
        if token.kind is not Kind.WORD:
            continue
        word = token.text.lower()
        found = _governed(tokens, i, word)
        if found is not None:
            return found
    return None, ()


def _governed(tokens: Sequence[Token], i: int, word: str) -> tuple[Relation, tuple[str, ...]] | None:
    if word in INVERSE_NOUNS:
        of = _code_after(tokens, i, through=NOUN_PREPOSITIONS)
        subject = of if of is not None else _code_before(tokens, i, window=2)
        return (INVERSE_NOUNS[word], (subject,)) if subject else None
    cue = CUES.get(word) or _foreign_cue(word)
    if cue is None:
        return None
    meaning, form = cue
    before, after = _code_before(tokens, i), _code_after(tokens, i)
    if form is _Form.VERB:
        if after is not None:
            return _resolve(meaning, after), (after,)
        return (INVERSE[meaning], (before,)) if before is not None else None
    if form is _Form.PARTICIPLE:
        if after is not None and i + 1 < len(tokens) and tokens[i + 1].kind is Kind.CODE and word in NAMING_WORDS:
            return None  # "a method called findById" names it
        agent = after is not None and any(t.text.lower() in AGENT_PREPOSITIONS for t in tokens[i + 1 : i + WINDOW])
        if agent and after is not None:
            return INVERSE[meaning], (after,)
        subject = before if before is not None else after
        return (_resolve(meaning, subject), (subject,)) if subject is not None else None
    # A noun governs "<noun> of X" or "X's <noun>" / "X <noun>": "callers of X", "X's callers".
    of = _code_after(tokens, i, through=NOUN_PREPOSITIONS)
    subject = of if of is not None else _code_before(tokens, i, window=2)
    return (_resolve(meaning, subject), (subject,)) if subject is not None else None


def _foreign_cue(word: str) -> tuple[_Meaning, _Form] | None:
    """A relation verb inside a run of Chinese (written without spaces): "谁调用了" holds 调用, "call".

    Chinese puts the object first as often as after ("X 在哪里被调用", "谁调用了 X"), so it is read as a
    participle: the code name before it, else after it, is what the relation is asked about.
    """
    if word.isascii():
        return None
    return next(((m, _Form.PARTICIPLE) for verb, m in FOREIGN_CUES.items() if verb in word), None)


def _code_after(tokens: Sequence[Token], i: int, *, through: frozenset[str] | None = None) -> str | None:
    """The code name governed after token i; with `through`, only past one of those words ("callers of X")."""
    passed = through is None
    for token in tokens[i + 1 : i + 1 + WINDOW]:
        if token.kind is Kind.CODE:
            return token.text if passed else None
        if not _is_glue(token):
            return None
        passed = passed or token.text.lower() in (through or ())
    return None


def _code_before(tokens: Sequence[Token], i: int, *, window: int = WINDOW) -> str | None:
    for token in reversed(tokens[max(0, i - window) : i]):
        if token.kind is Kind.CODE:
            return token.text
        if not _is_glue(token):
            return None
    return None


def _is_glue(token: Token) -> bool:
    """Glue words, and words of another language, which this grammar cannot read, stand between a cue and X."""
    return token.text.lower() in GLUE or (token.kind is Kind.WORD and not token.text.isascii())


def _resolve(meaning: _Meaning, subject: str) -> Relation:
    """A use (or a call of a type, which is a use) asks for callers of a member and injectors of a type."""
    if meaning is Relation.CALLERS or meaning is _Cue.USE:
        return Relation.CALLERS if is_member(subject) else Relation.INJECTORS
    return meaning


def is_member(identifier: str) -> bool:
    """`OwnerService.create`, `findById` or `MAX_SIZE` name a member; `OwnerService` or `com.acme.Owner` a type."""
    last = identifier.rsplit(".", 1)[-1]
    return last[:1].islower() or (last.isupper() and "_" in last)


def expand_query(query: str, terms: QueryTerms | None = None) -> str:
    """The question as the lexical index should read it.

    Its tokens as `tokenize` normalised them (`Type::method` → `Type.method`, a URL → its path), without
    the question's scaffolding (`SCAFFOLDING`: "how", "where", "does", "we", ...; SQL's `where` and
    comments saying "how" are not what a question is about), plus its plurals' singulars ("entities"
    also finds `@Entity`, "listeners" `Listener`), its annotations' names and the English of its Chinese
    words (`pipeline.glossary`: "数据权限" also finds code that says "data permission" only in English).
    """
    tokens = tokenize(query)
    return _expanded(query, tokens, terms if terms is not None else _terms_of(tokens))


def _expanded(query: str, tokens: Sequence[Token], terms: QueryTerms) -> str:
    kept = [t.text for t in tokens if not (t.kind is Kind.WORD and t.text.lower() in SCAFFOLDING)]
    present = {k.lower() for k in kept}
    extra = [singular(w) for w in terms.plurals if w not in SCAFFOLDING] + list(terms.annotations)
    extra += gloss(query).split()
    return " ".join([*kept, *(w for w in dict.fromkeys(extra) if w.lower() not in present)])
