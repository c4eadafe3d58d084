"""Spring configuration files to `config` chunks (issue 29): keys, values, profiles, lines; bad input skipped."""

from __future__ import annotations

import json

from pipeline.chunking import chunk_source
from pipeline.config_files import MAX_KEYS, config_repo_file, is_config_file
from pipeline.config_keys import SECRET_MARKER, ConfigEntry, Use
from pipeline.model import ChunkerConfig, FileResult, SkipReason, SourceContext, SymbolType
from pipeline.records import chunk_record
from pipeline.scope import Scope

CONTEXT = SourceContext(repo_path="acme/shop", gitlab_project_id=7, commit_sha="c" * 40)
CONFIG = ChunkerConfig()
RESOURCES = "orders/src/main/resources"
SECRETS = ("hunter2", "s3cr3t-default", "jwt-signing-secret", "urlpass", "props-pass", "tok_123")

YAML = """\
# the orders service; the admin password is hunter2 (a comment is never stored)
server:
  port: 8080
  servlet:
    context-path: /orders
spring:
  datasource:
    url: jdbc:postgresql://orders:urlpass@db:5432/orders
    username: orders
    password: hunter2
  kafka:
    bootstrap-servers:
      - k1:9092
      - k2:9092
payment:
  timeout-ms: 30
  retry:
    - attempts: 3
      backoff: 2s
app.jwt.secret: jwt-signing-secret
---
spring:
  config:
    activate:
      on-profile: prod
server:
  port: 80
"""


def chunked(name: str, text: str | bytes, config: ChunkerConfig = CONFIG) -> FileResult:
    raw = text.encode() if isinstance(text, str) else text
    return chunk_source(raw, f"{RESOURCES}/{name}", CONTEXT, config)


def entries(result: FileResult) -> list[ConfigEntry]:
    return [ConfigEntry.decode(e) for c in result.chunks for e in c.config]


def settings(result: FileResult) -> dict[tuple[str, str], tuple[str, int]]:
    return {(e.profile, e.key): (e.value, e.line) for e in entries(result)}


def test_config_file_names() -> None:
    for name in ("application.yml", "application-dev.yaml", "bootstrap.properties", "x/application-prod.properties"):
        assert is_config_file(name), name
    for name in ("Application.java", "logback.xml", "app.yml", "messages.properties"):
        assert not is_config_file(name), name


def test_default_scope_reads_configuration_files_of_main_resources_only() -> None:
    scope = Scope.from_config(CONFIG)
    assert scope.matches("orders/src/main/resources/application.yml")
    assert scope.matches("src/main/resources/config/application-prod.properties")
    assert scope.matches("src/main/resources/bootstrap.yaml")
    assert not scope.matches("src/test/resources/application.yml")
    assert not scope.matches("src/main/resources/logback.xml")


def test_every_key_with_its_value_profile_and_line() -> None:
    result = chunked("application.yml", YAML)

    assert not result.skipped
    assert settings(result) == {
        ("", "server.port"): ("8080", 3),
        ("", "server.servlet.context-path"): ("/orders", 5),
        ("", "spring.datasource.url"): (f"jdbc:postgresql://orders:{SECRET_MARKER}@db:5432/orders", 8),
        ("", "spring.datasource.username"): ("orders", 9),
        ("", "spring.datasource.password"): (SECRET_MARKER, 10),
        ("", "spring.kafka.bootstrap-servers[0]"): ("k1:9092", 13),
        ("", "spring.kafka.bootstrap-servers[1]"): ("k2:9092", 14),
        ("", "payment.timeout-ms"): ("30", 16),
        ("", "payment.retry[0].attempts"): ("3", 18),
        ("", "payment.retry[0].backoff"): ("2s", 19),
        ("", "app.jwt.secret"): (SECRET_MARKER, 20),
        ("prod", "spring.config.activate.on-profile"): ("prod", 25),
        ("prod", "server.port"): ("80", 27),
    }


def test_one_chunk_per_document_and_top_level_name() -> None:
    result = chunked("application.yml", YAML)

    assert [(c.qualified_name, c.line_start, c.line_end) for c in result.chunks] == [
        ("server", 3, 5),
        ("spring", 8, 14),
        ("payment", 16, 19),
        ("app", 20, 20),
        ("spring[prod]", 25, 25),
        ("server[prod]", 27, 27),
    ]
    first = result.chunks[0]
    assert first.symbol_type is SymbolType.CONFIG and first.language == "yaml"
    assert first.config_keys == ("server.port", "server.servlet.contextpath")
    assert first.code == "server.port: 8080\nserver.servlet.context-path: /orders"
    assert result.chunks[-1].signature == "application.yml (profile prod)"
    assert len({c.id for c in result.chunks}) == len(result.chunks)
    assert all(c.text.endswith(c.code) and c.content_hash for c in result.chunks)


def test_no_secret_reaches_a_chunk() -> None:
    result = chunked("application.yml", YAML)
    props = chunked("application-dev.properties", "db.password=props-pass\nauth.token = tok_123\n")

    dumped = json.dumps([chunk_record(c) for c in (*result.chunks, *props.chunks)])
    for secret in SECRETS:
        assert secret not in dumped, secret
    assert settings(props) == {("dev", "db.password"): (SECRET_MARKER, 1), ("dev", "auth.token"): (SECRET_MARKER, 2)}


def test_properties_files_and_their_documents() -> None:
    text = (
        "# comment\n! also a comment\n"
        "server.servlet.context-path=/api\n"
        "spring.mvc.servlet.path : /mvc\n"
        "my.list[0]=a\n"
        "long.value=one \\\n    two\n"
        "escaped\\=name=\\u0041b\n"
        "#---\n"
        "spring.config.activate.on-profile=eu\n"
        "region eu-west\n"
    )
    result = chunked("application-cloud.properties", text)

    assert settings(result) == {
        ("cloud", "server.servlet.context-path"): ("/api", 3),
        ("cloud", "spring.mvc.servlet.path"): ("/mvc", 4),
        ("cloud", "my.list[0]"): ("a", 5),
        ("cloud", "long.value"): ("one two", 6),
        ("cloud", "escaped=name"): ("Ab", 8),
        ("eu", "spring.config.activate.on-profile"): ("eu", 10),
        ("eu", "region"): ("eu-west", 11),
    }
    assert {c.language for c in result.chunks} == {"properties"}


def test_the_older_spring_profiles_key_and_anchors() -> None:
    text = "a: 1\n---\nspring.profiles: legacy\ndefaults: &d\n  pool: 5\ndb:\n  <<: *d\n  name: x\n"
    assert settings(chunked("bootstrap.yml", text)) == {
        ("", "a"): ("1", 1),
        ("legacy", "spring.profiles"): ("legacy", 3),
        ("legacy", "defaults.pool"): ("5", 5),
        ("legacy", "db.pool"): ("5", 5),
        ("legacy", "db.name"): ("x", 8),
    }


def test_broken_yaml_is_a_skip_with_its_reason_and_no_text_of_the_line() -> None:
    result = chunked("application.yml", "a:\n  password: [hunter2\n  b: c\n")

    assert not result.chunks
    (skip,) = result.skipped
    assert skip.reason is SkipReason.SYNTAX_ERROR
    assert skip.detail.startswith("broken YAML at line") and "hunter2" not in skip.detail


def test_binary_empty_and_huge_files_are_skipped_with_their_reason() -> None:
    assert chunked("application.yml", b"\x00\x01\x02binary").skipped[0].reason is SkipReason.BINARY
    assert chunked("application.yml", b"").skipped[0].reason is SkipReason.EMPTY
    small = ChunkerConfig(max_file_bytes=100)
    assert chunked("application.yml", "a: " + "x" * 200, small).skipped[0].reason is SkipReason.TOO_LARGE


def test_an_alias_bomb_is_skipped_not_expanded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 6)]
    result = chunked("application.yml", "\n".join(lines) + "\n")

    assert not result.chunks
    assert result.skipped[0].detail == f"more than {MAX_KEYS} keys"


def test_a_group_over_the_token_budget_is_split_into_parts() -> None:
    text = "big:\n" + "".join(f"  key{i:03}: {'v' * 40}\n" for i in range(200))
    result = chunked("application.yml", text, ChunkerConfig(max_chunk_tokens=200))

    assert len(result.chunks) > 1
    assert {c.part_count for c in result.chunks} == {len(result.chunks)}
    assert [c.part_index for c in result.chunks] == list(range(len(result.chunks)))
    assert sum(len(c.config) for c in result.chunks) == 200


JAVA = """\
package com.acme.orders;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.ConfigurationProperties;

@ConfigurationProperties(prefix = "payment")
public class PaymentProperties {
    private int timeoutMs;
    private static final String UNBOUND = "x";
    @Value("${orders.page-size:20}")
    private int pageSize;

    public PaymentProperties(Environment env, @Value("${app.jwt.secret:s3cr3t-default}") String secret) {
        this.timeoutMs = Integer.parseInt(env.getProperty("payment.timeout-ms"));
    }

    public int getTimeoutMs() {
        return timeoutMs;
    }
}
"""


def test_java_code_records_the_keys_it_reads() -> None:
    result = chunk_source(JAVA.encode(), "orders/src/main/java/com/acme/orders/PaymentProperties.java", CONTEXT, CONFIG)
    members = [c for c in result.chunks if c.symbol_type is not SymbolType.CONSTRUCTOR]
    by_name = {c.qualified_name.rsplit(".", 1)[-1]: c for c in members}

    props = by_name["PaymentProperties"]
    assert props.symbol_type is SymbolType.CLASS
    assert props.config_keys == ("orders.pagesize", "payment", "payment.timeoutms", "payment.pagesize")
    assert [ConfigEntry.decode(e) for e in props.config] == [
        ConfigEntry(use=Use.VALUE, key="orders.page-size", value="20"),
        ConfigEntry(use=Use.BIND, key="payment"),
        ConfigEntry(use=Use.BIND, key="payment.timeout-ms", value="timeoutMs"),
        ConfigEntry(use=Use.BIND, key="payment.page-size", value="pageSize"),
    ]
    constructor = next(c for c in result.chunks if c.symbol_type is SymbolType.CONSTRUCTOR)
    assert [ConfigEntry.decode(e) for e in constructor.config] == [
        ConfigEntry(use=Use.VALUE, key="app.jwt.secret", value=SECRET_MARKER),
        ConfigEntry(use=Use.GET, key="payment.timeout-ms"),
    ]
    assert "s3cr3t-default" not in json.dumps(constructor.config)
    assert by_name["getTimeoutMs"].config == ()


def test_a_file_that_reads_no_configuration_gets_no_config_fields() -> None:
    code = "package a;\nclass A {\n    int f() { return 1; }\n}\n"
    result = chunk_source(code.encode(), "src/main/java/a/A.java", CONTEXT, CONFIG)
    assert all(c.config == () and c.config_keys == () for c in result.chunks)


def test_a_config_repository_file_names_the_application_and_profile_it_configures() -> None:
    shared = "config/src/main/resources/shared"
    cases = {
        f"{shared}/account-service.yml": ("account-service", ""),
        f"{shared}/account-service-dev.yml": ("account-service", "dev"),  # a usual profile name: a profile
        f"{shared}/notification-service.properties": ("notification-service", ""),
        f"{shared}/application.yml": ("application", ""),  # every application
        "config-repo/vets-service-docker.yaml": ("vets-service", "docker"),
        f"{shared}/readme.txt": None,
        "orders/src/main/resources/orders-service.yml": None,  # no config repository there
    }
    for path, expected in cases.items():
        assert config_repo_file(path, CONFIG) == expected, path
    scope = Scope.from_config(CONFIG)
    assert scope.matches(f"{shared}/account-service.yml") and not scope.matches(f"{shared}/readme.txt")
    assert not scope.matches("orders/src/main/resources/orders-service.yml")
    assert not Scope.from_config(ChunkerConfig(config_repos=())).matches(f"{shared}/account-service.yml")


def test_a_config_repository_file_is_chunked_for_its_application() -> None:
    text = b"server:\n  servlet:\n    context-path: /accounts\n---\n"
    text += b"spring.config.activate.on-profile: docker\nserver.port: 1\n"
    result = chunk_source(text, "config-repo/account-service-dev.yml", CONTEXT, CONFIG)
    assert [(c.qualified_name, c.enclosing_type, c.signature) for c in result.chunks] == [
        ("server[dev]", "account-service", "account-service-dev.yml (application account-service, profile dev)"),
        ("spring[docker]", "account-service", "account-service-dev.yml (application account-service, profile docker)"),
        ("server[docker]", "account-service", "account-service-dev.yml (application account-service, profile docker)"),
    ]
    assert settings(result)[("dev", "server.servlet.context-path")] == ("/accounts", 3)
