"""Java and Kotlin as one codebase for the tools that walk types and calls (issue 29).

A Kotlin class implements a Java interface and a Java class extends an open Kotlin class; a Kotlin function
calls Java and Java calls Kotlin; Spring stereotypes sit on both. Each tool must answer across the two
languages as if they were one.
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from fastmcp import Client

from tests.support.checkouts import call, checkout_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO: Final = "acme/alerts"
FILES: Final = {
    "src/main/java/com/acme/alerts/Notifier.java": """package com.acme.alerts;

/** Sends one alert to someone. */
public interface Notifier {
    void send(String to, String text);
}
""",
    "src/main/kotlin/com/acme/alerts/MailNotifier.kt": """package com.acme.alerts

import org.springframework.stereotype.Service

/** Alerts by mail. */
@Service
open class MailNotifier(private val mailer: Mailer) : Notifier {
    override fun send(to: String, text: String) {
        mailer.deliver(to, text.trim())
    }
}
""",
    "src/main/java/com/acme/alerts/Mailer.java": """package com.acme.alerts;

import org.springframework.stereotype.Component;

@Component
public class Mailer {
    public void deliver(String to, String body) {
    }
}
""",
    "src/main/java/com/acme/alerts/AuditedMailNotifier.java": """package com.acme.alerts;

import org.springframework.stereotype.Service;

/** A mail notifier that records what it sent. */
@Service
public class AuditedMailNotifier extends MailNotifier {
    public AuditedMailNotifier(Mailer mailer) {
        super(mailer);
    }

    @Override
    public void send(String to, String text) {
        super.send(to, text);
    }
}
""",
    "src/main/kotlin/com/acme/alerts/Escalation.kt": """package com.acme.alerts

import org.springframework.stereotype.Component

/** Pages the on-call person when an alert is not acknowledged. */
@Component
class Escalation(private val notifier: Notifier) {
    fun page(person: String) {
        notifier.send(person, "unacknowledged")
    }
}
""",
}


deps, client = checkout_fixtures(FILES, REPO)


def _names(answer: dict[str, Any]) -> set[str]:
    return {item["qualified_name"] for item in answer["results"]}


async def test_a_kotlin_class_implements_a_java_interface_and_a_java_class_below_it_too(client: Client[Any]) -> None:
    answer = await call(client, "find_implementations", type="Notifier")
    paths = [r["file_path"] for r in answer["results"]]
    assert paths == [
        "src/main/kotlin/com/acme/alerts/MailNotifier.kt",
        "src/main/java/com/acme/alerts/AuditedMailNotifier.java",
    ], answer


async def test_a_java_class_extends_an_open_kotlin_class(client: Client[Any]) -> None:
    answer = await call(client, "find_implementations", type="com.acme.alerts.MailNotifier")
    paths = [r["file_path"] for r in answer["results"]]
    assert paths == ["src/main/java/com/acme/alerts/AuditedMailNotifier.java"], answer


async def test_callees_of_a_kotlin_method_include_the_java_method_it_calls(client: Client[Any]) -> None:
    answer = await call(client, "get_callees", name="MailNotifier.send")
    targets = {t["qualified_name"] for r in answer["results"] for t in r["targets"]}
    assert targets == {"com.acme.alerts.Mailer.deliver"}, answer


async def test_callers_of_an_interface_method_reach_the_kotlin_caller(client: Client[Any]) -> None:
    answer = await call(client, "get_callers", name="Notifier.send")
    assert "com.acme.alerts.Escalation.page" in _names(answer), answer


async def test_a_stereotype_lists_beans_of_both_languages(client: Client[Any]) -> None:
    answer = await call(client, "find_by_annotation", annotation="@Service")
    assert {"com.acme.alerts.MailNotifier", "com.acme.alerts.AuditedMailNotifier"} <= _names(answer), answer


async def test_a_java_interface_injected_into_a_kotlin_constructor_is_found(client: Client[Any]) -> None:
    answer = await call(client, "find_injections", type="Notifier")
    assert "com.acme.alerts.Escalation" in _names(answer), answer


async def test_a_kotlin_files_outline_lists_its_members(client: Client[Any]) -> None:
    answer = await call(client, "get_file_outline", repo=REPO, path="src/main/kotlin/com/acme/alerts/MailNotifier.kt")
    assert _names(answer) == {
        "com.acme.alerts.MailNotifier",
        "com.acme.alerts.MailNotifier.MailNotifier",
        "com.acme.alerts.MailNotifier.send",
    }, answer


async def test_the_hierarchy_walk_crosses_languages_both_ways(client: Client[Any]) -> None:
    """A call through the Java interface may reach the Java override of the Kotlin class's method."""
    answer = await call(client, "get_callers", name="AuditedMailNotifier.send")
    assert "com.acme.alerts.Escalation.page" in _names(answer), answer
