"""Values that flow out of the Java pipeline: chunks, skipped inputs and per-file results.

Every value is a frozen dataclass. Field names of `Chunk` are the payload contract that the store,
the search module and the CLI share (issue 2), so renaming one is a breaking change.
"""

from __future__ import annotations

import enum

from pipeline._values import value

LANGUAGE = "java"
LANGUAGES = (LANGUAGE, "kotlin")
"""The values of `Chunk.language`: what a `language` filter may ask for."""


class SymbolType(enum.StrEnum):
    """What a chunk stands for."""

    METHOD = "method"
    CONSTRUCTOR = "constructor"
    METHOD_PART = "method_part"
    CLASS = "class"
    INTERFACE = "interface"
    ENUM = "enum"
    RECORD = "record"
    ANNOTATION = "annotation"
    CONFIG = "config"  # keys a Spring configuration file sets (`pipeline.config_files`, issue 29)


SYMBOL_TYPES = frozenset(t.value for t in SymbolType)
"""The values a `symbol_type` filter may take."""

TYPE_SYMBOLS = frozenset(
    {SymbolType.CLASS, SymbolType.INTERFACE, SymbolType.ENUM, SymbolType.RECORD, SymbolType.ANNOTATION}
)
"""The symbol types of a type's chunk (its skeleton), as opposed to a member's: the one copy (issue 11)."""


class SkipReason(enum.StrEnum):
    """Why a file or a part of one was not turned into chunks."""

    EMPTY = "empty"
    BINARY = "binary"
    NOT_UTF8 = "not_utf8"
    TOO_LARGE = "too_large"
    SYNTAX_ERROR = "syntax_error"
    UNREADABLE = "unreadable"


@value
class SourceContext:
    """Where a file comes from: the repository-level metadata copied into every chunk."""

    repo_path: str
    gitlab_project_id: int | None = None
    commit_sha: str | None = None
    branch: str | None = None
    library: bool = False  # a library's sources jar (`maven:<group>:<artifact>:<version>`), not the org's code


CONFIG_EXTENSIONS = (".yml", ".yaml", ".properties")
"""The file name endings of Spring configuration files."""


@value
class ChunkerConfig:
    """Pipeline knobs, built from the service Settings by the entrypoints."""

    include: tuple[str, ...] = (
        "**/src/main/java/**/*.java",
        "**/src/main/kotlin/**/*.kt",
        # Spring configuration files (issue 29; `pipeline.config_files` reads those named application*/bootstrap*)
        "**/src/main/resources/**/application*.yml",
        "**/src/main/resources/**/application*.yaml",
        "**/src/main/resources/**/application*.properties",
        "**/src/main/resources/**/bootstrap*.yml",
        "**/src/main/resources/**/bootstrap*.yaml",
        "**/src/main/resources/**/bootstrap*.properties",
    )
    # Spring Cloud Config repositories (issue 29): `<application>[-<profile>].yml|yaml|properties` files here are
    # indexed as the named application's configuration (`pipeline.config_files.config_repo_file`).
    config_repos: tuple[str, ...] = ("**/src/main/resources/shared/**", "**/config-repo/**")
    exclude: tuple[str, ...] = (
        "**/generated/**",
        "**/generated-sources/**",
        "**/target/**",
        "**/build/**",
        "**/out/**",
    )
    # Test code: its `.java` files are indexed only with `index_tests`, flagged `test` (search scope `tests`).
    tests: tuple[str, ...] = ("**/src/test/**", "**/src/testFixtures/**")
    index_tests: bool = False
    max_chunk_tokens: int = 1500
    max_file_bytes: int = 1024 * 1024
    fallback_encoding: str | None = "cp1252"


@value
class Chunk:
    """One searchable unit: a method, a constructor, a part of a long method, or a type skeleton."""

    id: str
    repo_path: str
    gitlab_project_id: int | None
    commit_sha: str | None
    branch: str | None
    file_path: str
    package: str
    qualified_name: str
    symbol_type: SymbolType
    name: str
    signature: str
    enclosing_type: str | None
    parameter_types: tuple[str, ...] = ()
    modifiers: tuple[str, ...] = ()
    annotations: tuple[str, ...] = ()
    annotation_names: tuple[str, ...] = ()
    stereotype: str | None = None
    http_method: tuple[str, ...] = ()
    http_path: tuple[str, ...] = ()
    # A handler's routes through annotations no rule knows, `Annotation /path` each: counted at query time
    # when the annotation type (declared in another file) is a composed mapping (`maps_http`, issue 12).
    routes_if_mapping: tuple[str, ...] = ()
    # An annotation type's HTTP methods when it carries a mapping itself (`@RequestMapping(method = POST)`).
    maps_http: tuple[str, ...] = ()
    # HTTP calls this chunk makes to other services, each `pipeline.outbound.OutboundRoute.encode()`d:
    # `client METHOD service path` (issue 16); a Feign or `@HttpExchange` method's own routes, as a client.
    outbound: tuple[str, ...] = ()
    # Spring configuration keys (issue 29), each in `pipeline.config_keys.canonical_key`'s form: those a
    # `config` chunk sets, or those this code reads (`@Value`, `@ConfigurationProperties`, `getProperty`).
    config_keys: tuple[str, ...] = ()
    # What it says about them, each a `pipeline.config_keys.ConfigEntry.encode()`d line (secret values masked).
    config: tuple[str, ...] = ()
    extends: tuple[str, ...] = ()
    implements: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    injects: tuple[str, ...] = ()
    extends_fq: tuple[str, ...] = ()
    implements_fq: tuple[str, ...] = ()
    calls_fq: tuple[str, ...] = ()
    injects_fq: tuple[str, ...] = ()
    # What a class that is no known bean would inject if its type-level annotations make it one (its
    # lone or @Autowired constructor, Lombok's constructor): counted at query time when one of its
    # annotations is a stereotype learned from the index (a meta-annotated @Component, issue 12).
    injects_if_bean: tuple[str, ...] = ()
    injects_if_bean_fq: tuple[str, ...] = ()
    javadoc_summary: str | None = None
    line_start: int
    line_end: int
    part_index: int = 0
    part_count: int = 1
    content_hash: str
    language: str = LANGUAGE
    parse_errors: bool = False
    generated: bool = False  # written by a code generator (`pipeline.generated`)
    library: bool = False  # from a library's sources jar (issue 16), copied from `SourceContext.library`
    test: bool = False  # test code (`ChunkerConfig.tests`): read with the search scope `tests` only (issue 27)
    code: str
    text: str


@value
class Skipped:
    """A file, or a span of one, that produced no chunk, and why."""

    file_path: str
    reason: SkipReason
    detail: str
    line_start: int | None = None
    line_end: int | None = None


@value
class FileResult:
    """Everything the pipeline learned from one file."""

    file_path: str
    chunks: tuple[Chunk, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    encoding: str | None = None
    parse_errors: bool = False
