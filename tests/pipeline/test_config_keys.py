"""Configuration keys (issue 29): one canonical form for every binding form, secrets masked, placeholders read."""

from __future__ import annotations

import pytest

from pipeline.chunking import chunk_source
from pipeline.config_keys import (
    SECRET_MARKER,
    ConfigEntry,
    Use,
    canonical_key,
    key_of_field,
    looks_secret,
    masked,
    placeholders,
)
from pipeline.model import ChunkerConfig, SourceContext

# Spring Boot's relaxed binding (reference, "Relaxed Binding"): each row's spellings name one property.
BINDING_FORMS = [
    ("kebab case (canonical)", "my.main-project.person.first-name", "my.mainproject.person.firstname"),
    ("camel case", "my.main-project.person.firstName", "my.mainproject.person.firstname"),
    ("underscore", "my.main_project.person.first_name", "my.mainproject.person.firstname"),
    ("environment variable", "MY_MAINPROJECT_PERSON_FIRSTNAME", "my.mainproject.person.firstname"),
    ("a.b-c", "a.b-c", "a.bc"),
    ("a.bC", "a.bC", "a.bc"),
    ("a.b_c", "a.b_c", "a.bc"),
    ("env A_BC", "A_BC", "a.bc"),
    ("env A_B_C is a.b.c", "A_B_C", "a.b.c"),
    ("list index", "my.servers[0].host-name", "my.servers[0].hostname"),
    ("env list index", "MY_SERVERS_0_HOSTNAME", "my.servers[0].hostname"),
    ("map key in brackets kept", "my.map[Key.With.Dots]", "my.map[key.with.dots]"),
    ("upper-case dotted", "SERVER.PORT", "server.port"),
]


@pytest.mark.parametrize(("form", "written", "canonical"), BINDING_FORMS, ids=[row[0] for row in BINDING_FORMS])
def test_every_binding_form_has_the_canonical_key(form: str, written: str, canonical: str) -> None:
    assert canonical_key(written) == canonical


def test_a_configuration_properties_field_binds_its_kebab_key() -> None:
    assert key_of_field("app.mail", "smtpHost") == "app.mail.smtp-host"
    assert canonical_key(key_of_field("app.mail", "smtpHost")) == canonical_key("APP_MAIL_SMTPHOST")
    assert key_of_field("", "port") == "port"


SECRETS = [
    ("spring.datasource.password", "hunter2", True),
    ("app.jwt.secret", "s", True),
    ("app.client-secret", "s", True),
    ("github.token", "t", True),
    ("aws.credentials.access-key", "AKIA", True),
    ("stripe.api-key", "sk_live", True),
    ("myPassword", "x", True),
    ("server.port", "8080", False),
    ("spring.application.name", "shop", False),
    ("key.store.type", "PKCS12", False),  # `key` as the first name only: not a key's value
]


@pytest.mark.parametrize(("key", "value", "secret"), SECRETS)
def test_secret_looking_keys(key: str, value: str, secret: bool) -> None:
    assert looks_secret(key) is secret
    assert (masked(key, value) == SECRET_MARKER) is secret


def test_a_bare_reference_is_no_secret_but_a_default_is() -> None:
    assert masked("spring.datasource.password", "${DB_PASSWORD}") == "${DB_PASSWORD}"
    assert masked("spring.datasource.password", "${DB_PASSWORD:hunter2}") == SECRET_MARKER


def test_credentials_in_urls_are_masked_under_any_key() -> None:
    url = "jdbc:postgresql://app:hunter2@db:5432/shop?sslmode=require&password=s3cret"
    shown = masked("spring.datasource.url", url)
    assert "hunter2" not in shown and "s3cret" not in shown
    assert shown == f"jdbc:postgresql://app:{SECRET_MARKER}@db:5432/shop?sslmode=require&password={SECRET_MARKER}"
    assert masked("eureka.url", "http://eureka:8761/eureka") == "http://eureka:8761/eureka"


def test_placeholders_outermost_first_with_nested_defaults() -> None:
    assert placeholders("${a.b:30}") == [("a.b", "30")]
    assert placeholders("${a.b}") == [("a.b", "")]
    assert placeholders("${a:${b:c}}/x/${d}") == [("a", "${b:c}"), ("b", "c"), ("d", "")]
    assert placeholders("#{${x.y} * 2}") == [("x.y", "")]
    assert placeholders("plain") == []


def test_an_entry_survives_its_encoding_with_tabs_in_the_value() -> None:
    entry = ConfigEntry(use=Use.SET, key="a.b", value="x\ty", profile="dev", line=7)
    assert ConfigEntry.decode(entry.encode()) == entry
    with pytest.raises(ValueError):
        ConfigEntry.decode("nonsense")


# Each way code reads a key, against each way a file writes it: all meet on one canonical key (the table above).
READERS = {
    "@Value field": '@Value("${clients.visits.base-url}") private String url;',
    "@Value camel case": '@Value("${clients.visits.baseUrl:http://x}") private String url;',
    "@ConfigurationProperties field": None,  # `Reader` below: prefix `clients.visits`, field `baseUrl`
    "Environment.getProperty": 'String url() { return env.getProperty("clients.visits.base_url"); }',
}
WRITERS = {
    "yaml kebab": ("application.yml", "clients:\n  visits:\n    base-url: http://v\n"),
    "properties camel": ("application.properties", "clients.visits.baseUrl=http://v\n"),
    "properties env form": ("application.properties", "CLIENTS_VISITS_BASEURL=http://v\n"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_reader_form_meets_every_writer_form_on_one_key(reader: str, writer: str) -> None:
    member = READERS[reader]
    source = (
        'package demo;\n@ConfigurationProperties(prefix = "clients.visits")\n'
        "public class Reader { private String baseUrl; }\n"
        if member is None
        else f"package demo;\npublic class Reader {{ private Environment env; {member} }}\n"
    )
    context = SourceContext(repo_path="acme/demo")
    java = chunk_source(source.encode(), "src/main/java/demo/Reader.java", context, ChunkerConfig())
    read = {k for c in java.chunks for k in c.config_keys}
    name, text = WRITERS[writer]
    written = chunk_source(text.encode(), f"src/main/resources/{name}", context, ChunkerConfig())
    assert {k for c in written.chunks for k in c.config_keys} == {"clients.visits.baseurl"}
    assert "clients.visits.baseurl" in read
