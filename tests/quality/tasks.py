"""Prompts for `auto_context` (issue 16): work an agent is asked to do, with or without code of the `shop` fixture.

`TASKS` are requests as a developer types them to an agent, each with the chunks (qualified names) that
an agent needs to see to do it; they were written from the fixture's facts (FIXTURE.md), before the
context was first computed. `IRRELEVANT` are prompts that have nothing to do with this code base (the
everyday prompts of a coding agent about other things, and prompts that are not about code at all):
for those the right context is none. Together with the quality questions (`questions.py`) they are
what the relevance threshold of `app.search.context` is measured on (`context_report.py`).
"""

from __future__ import annotations

from typing import Final

from tests.quality.questions import (
    INVOICE_CONTROLLER,
    NOTIFICATION_SERVICE,
    OWNER_CONTROLLER,
    OWNER_SERVICE,
    PET_TYPE,
    PRICING,
    REMINDER_JOB,
    REPORT_SERVICE,
    VISIT_RESOURCE,
    Question,
)

_CORE = "com.acme.shop.core."


def _t(text: str, *expected: str) -> Question:
    return Question(text, "natural", frozenset(expected))


TASKS: Final[tuple[Question, ...]] = (
    _t(
        "Make OwnerService.find throw OwnerNotFoundException instead of returning an empty Optional",
        f"{OWNER_SERVICE}.find",
    ),
    _t("add a unit test for StandardPricingPolicy.discountFor with five pets", f"{PRICING}.discountFor"),
    _t(
        "The visit reminder job sends reminders twice; make sendVisitReminders idempotent",
        f"{REMINDER_JOB}.sendVisitReminders",
    ),
    _t(
        "rename NotificationService.notifyOwner to notifyCustomer and update every caller",
        f"{NOTIFICATION_SERVICE}.notifyOwner",
    ),
    _t("Add pagination to GET /api/owners/search", f"{OWNER_CONTROLLER}.searchOwners"),
    _t("cancelling a visit with DELETE /v2/visits/3 should return 204 instead of 200", f"{VISIT_RESOURCE}.cancelVisit"),
    _t("split buildMonthlyReport into smaller methods", f"{REPORT_SERVICE}.buildMonthlyReport"),
    _t("PetType.fromLabel should ignore case and surrounding spaces", f"{PET_TYPE}.fromLabel"),
    _t("log the invoice number when invoiceOwner succeeds", f"{INVOICE_CONTROLLER}.invoiceOwner"),
    _t("Address.format puts the zip code in the wrong place, fix the order", _CORE + "domain.Address.format"),
    _t("make the owner deletion endpoint require an admin role", f"{OWNER_CONTROLLER}.deleteOwner"),
    _t("add a hamster sound to the pet types", PET_TYPE, f"{PET_TYPE}.HAMSTER.sound"),
)

IRRELEVANT: Final[tuple[str, ...]] = (
    "write a haiku about autumn",
    "fix the CSS of the login button",
    "what is the capital of France",
    "summarize this article for me",
    "translate good morning into Spanish",
    "center a div with flexbox",
    "write a bash one-liner that counts the lines of every file in a folder",
    "explain how TCP congestion control works",
    "draft an email to my manager asking for a day off",
    "what will the weather be like tomorrow",
    "make the navbar sticky in the React app",
    "add dark mode to the settings page",
    "how do I undo the last git commit",
    "recommend a good book about the history of Rome",
    "convert this JSON to YAML",
    "why is my Docker container running out of memory",
    "set up ESLint with Prettier for the frontend",
    "tell me a joke",
    "plan a three day trip to Lisbon",
    "fix the typo in the README",
    "upgrade the Python dependencies to their latest versions",
    "reduce the webpack bundle size",
    "what does the regex ^[a-z]+$ match",
    "thanks, that works",
)
