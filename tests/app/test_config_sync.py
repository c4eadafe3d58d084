"""Spring configuration files through the GitLab sync (issue 29): indexed by default, replaced and removed per
file, secrets in no payload and no log line, `find_config` and context paths inside the caller's access."""

from __future__ import annotations

import json
import logging

import pytest

from app.auth.access import Access, everything
from app.search.config import KeyAnswer
from pipeline.config_keys import SECRET_MARKER
from testkit.sync_env import SyncEnv

RES = "orders/src/main/resources/"
JAVA = "orders/src/main/java/com/acme/orders/"
SECRETS = ("hunter2", "urlpass", "jwt-signing-secret", "tok_123")  # set in configuration files
JAVA_DEFAULT = "s3cr3t-default"  # a secret key's default in Java: in the code (it is code), masked in `config`
APPLICATION = """\
# admin password: hunter2
server:
  servlet:
    context-path: /orders
payment:
  timeout-ms: 30
spring:
  datasource:
    url: jdbc:postgresql://orders:urlpass@db/orders
    password: hunter2
app:
  jwt:
    secret: jwt-signing-secret
"""
DEV = "payment.timeout-ms=5\nauth.token=tok_123\n"
CONTROLLER = """\
package com.acme.orders;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class OrderController {
    @Value("${payment.timeout-ms:10}")
    private int timeout;

    @GetMapping("/api/orders/{id}")
    public String order(String id, @Value("${app.jwt.secret:s3cr3t-default}") String key) {
        return id;
    }
}
"""
PROPERTIES = """\
package com.acme.orders;

@ConfigurationProperties(prefix = "payment")
public class PaymentProperties {
    private int timeoutMs;
}
"""
FILES: dict[str, str | bytes | None] = {
    RES + "application.yml": APPLICATION,
    RES + "application-dev.properties": DEV,
    JAVA + "OrderController.java": CONTROLLER,
    JAVA + "PaymentProperties.java": PROPERTIES,
}
ALL = everything("test")


def said(answer: object) -> str:
    return json.dumps(answer, default=repr)


async def test_configuration_is_indexed_replaced_and_removed_with_no_secret_anywhere(
    env: SyncEnv, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    project = env.gitlab.create_project("acme/orders")
    await env.push(project, FILES)
    await env.work()
    await env.audit(project)

    points = await env.points(project.id)
    config = {p["file_path"] for p in points.values() if p["symbol_type"] == "config"}
    assert config == {RES + "application.yml", RES + "application-dev.properties"}
    search = env.deps.search
    found = await search.find_config(ALL, "PAYMENT_TIMEOUTMS")
    assert [(u.profile, u.hit.file_path, u.entry.line, u.entry.value) for u in found.settings] == [
        ("default", RES + "application.yml", 6, "30"),
        ("dev", RES + "application-dev.properties", 1, "5"),
    ]
    assert [(u.hit.qualified_name, u.entry.use.value, u.entry.value) for u in found.readers] == [
        ("com.acme.orders.OrderController", "value", "10"),
        ("com.acme.orders.PaymentProperties", "bind", "timeoutMs"),
    ]
    by_field = await search.find_config(ALL, "PaymentProperties.timeoutMs")  # a field: its key and values
    assert (by_field.key, [u.entry.value for u in by_field.settings]) == ("payment.timeoutms", ["30", "5"])
    prefix = await search.find_config(ALL, "payment.retries")  # not a field: the class binds its prefix
    assert [(u.hit.qualified_name, u.entry.key) for u in prefix.readers] == [
        ("com.acme.orders.PaymentProperties", "payment")
    ]
    password = await search.find_config(ALL, "spring.datasource.password")
    assert [u.entry.value for u in password.settings] == [SECRET_MARKER]

    changed = APPLICATION.replace("30", "45")
    await env.push(project, {RES + "application.yml": changed, RES + "application-dev.properties": None})
    await env.work()
    await env.audit(project, gone_paths=[RES + "application-dev.properties"])

    found = await search.find_config(ALL, "payment.timeoutMs")
    assert [(u.profile, u.entry.value) for u in found.settings] == [("default", "45")]
    stored = await env.points(project.id)
    everything_stored = said(stored)
    assert JAVA_DEFAULT not in said([p["config"] for p in stored.values()])
    for secret in SECRETS:
        assert secret not in everything_stored, secret
        assert secret not in caplog.text, secret


async def test_find_config_and_context_paths_read_only_what_the_caller_may(env: SyncEnv) -> None:
    orders = env.gitlab.create_project("acme/orders")
    other = env.gitlab.create_project("acme/other")
    await env.push(orders, FILES)
    await env.push(other, {RES + "application.yml": "payment:\n  timeout-ms: 99\n"})
    await env.work()
    search = env.deps.search
    only_other = Access(subject="u", project_ids=frozenset({other.id}))
    nobody = Access(subject="n", project_ids=frozenset())

    assert {u.hit.repo_path for u in (await search.find_config(ALL, "payment.timeout-ms")).settings} == {
        "acme/orders",
        "acme/other",
    }
    mine = await search.find_config(only_other, "payment.timeout-ms")
    assert [(u.hit.repo_path, u.entry.value) for u in mine.settings] == [("acme/other", "99")]
    assert mine.readers == []
    assert await search.find_config(nobody, "server.servlet.context-path") == KeyAnswer(
        key="server.servlet.contextpath", settings=[], readers=[]
    )

    # The context path the orders service's own configuration sets prefixes its routes.
    routed = await search.endpoint(ALL, "/orders/api/orders/7", "GET")
    assert [h.qualified_name for h in routed] == ["com.acme.orders.OrderController.order"]
    assert [h.qualified_name for h in await search.endpoint(ALL, "/api/orders/7", "GET")] == [
        "com.acme.orders.OrderController.order"
    ]
    assert await search.endpoint(ALL, "/elsewhere/api/orders/7", "GET") == []
    assert await search.endpoint(only_other, "/orders/api/orders/7", "GET") == []


async def test_a_broken_configuration_file_is_skipped_and_nothing_else_is_lost(
    env: SyncEnv, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    project = env.gitlab.create_project("acme/orders")
    await env.push(project, {**FILES, RES + "application.yml": "db:\n  password: [hunter2\n  x: y\n"})
    await env.work()

    points = await env.points(project.id)
    files = {p["file_path"] for p in points.values()}
    assert RES + "application.yml" not in files
    assert {RES + "application-dev.properties", JAVA + "OrderController.java"} <= files
    [run] = await env.runs(project.id)
    assert (run["status"], run["files_skipped"]) == ("DONE", 1)
    assert "hunter2" not in caplog.text and "hunter2" not in said(points)
