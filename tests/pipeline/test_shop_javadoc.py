"""Javadoc summaries of the `shop` fixture's types and methods."""

from __future__ import annotations

import pytest

from tests.support.shop import API, CORE, HALF, JOBS, Shop, case_id

SUMMARIES: list[tuple[str, tuple[str, ...] | None, str | None]] = [
    (f"{API}.web.OwnerController", None, "JSON API for owners."),
    (f"{API}.web.OwnerController.findOwner", None, "Returns one owner."),
    (f"{API}.web.OwnerController.createOwner", None, "Registers a new owner."),
    (f"{API}.web.OwnerController.updateOwner", None, None),
    (f"{API}.web.OwnerController.deleteOwner", None, "Deletes an owner and the owner's pets."),
    (
        f"{API}.web.OwnerController.initNewPetForm",
        None,
        'Returns what the "add pet" dialog needs: the owner\'s name and the selectable pet types.',
    ),
    (f"{API}.web.ApiExceptionHandler.handleOwnerNotFound", None, "Maps an unknown owner to 404 Not Found."),
    (f"{API}.client.BillingClient", None, "Declarative HTTP client of the billing service."),
    (f"{API}.web.InvoiceController", None, "Proxies invoice requests to the billing service."),
    (f"{CORE}.service.OwnerService", None, "Use cases around owners: lookup, search, registration and removal."),
    (f"{CORE}.service.OwnerService.find", ("Long",), "Looks an owner up by id."),
    (
        f"{CORE}.service.OwnerService.find",
        ("String",),
        "Returns the first page of owners whose last name starts with lastName.",
    ),
    (f"{CORE}.service.OwnerService.sortedByName", None, "Sorts owners by last name, then first name, ignoring case"),
    (f"{CORE}.service.OwnerService.create", None, "Registers a new owner and publishes an OwnerCreatedEvent."),
    (
        f"{CORE}.service.NotificationService",
        None,
        "Sends templated e-mails to owners, at most one per owner every MIN_INTERVAL.",
    ),
    (f"{CORE}.service.OrderService.quote", None, "Prices an order for an owner."),
    (
        f"{CORE}.service.ReportService.MonthlyReport",
        None,
        "Result of ReportService.buildMonthlyReport(YearMonth, Options).",
    ),
    (
        f"{CORE}.notify.TemplateRenderer.render",
        None,
        'Renders a template such as "Dear ${owner}. Your pet is due." with the given model.',
    ),
    (f"{CORE}.notify.TemplateRenderer", None, "Renders the shop's mail templates by replacing ${name} placeholders."),
    (
        f"{CORE}.util.Page",
        None,
        "An immutable page of comparable items, as returned by the shop's list endpoints.",
    ),
    (f"{CORE}.util.Page.max", None, "Returns the largest item on this page."),
    (f"{CORE}.util.Lists.copy", None, "Copies a list into a new, modifiable list of a wider element type."),
    (f"{CORE}.dto.OwnerMapper.copyInto", None, None),
    (f"{CORE}.dto.OwnerMapper", None, "Converts between Owner entities and OwnerDto values."),
    (f"{CORE}.dto.OwnerDto", None, "Immutable view of an owner as exchanged with API clients."),
    (f"{CORE}.domain.Pet", None, "A pet registered at the shop, always belonging to exactly one Owner."),
    (f"{CORE}.domain.Visit.Status", None, "Life cycle of an appointment."),
    (f"{CORE}.repository.OwnerRepository", None, "Spring Data repository for Owner aggregates."),
    (f"{CORE}.repository.VisitRepository", None, "Data access for appointments."),
    (f"{CORE}.repository.PetRepository.PetTypeCount", None, "Projection row of countByType()."),
    (f"{CORE}.order.PricingPolicy.percentOf", None, "Computes percent percent of amount, rounded half-up to cents."),
    (f"{CORE}.audit.Audited", None, "Marks a service method whose invocations are written to the audit log."),
    (f"{CORE}.config.CoreConfiguration.clock", None, "The system clock in UTC."),
    (f"{JOBS}.config.JobsProperties", None, "Tuning knobs of the worker, bound from shop.jobs.*."),
    (f"{JOBS}.messaging.OwnerEvent", None, "Events about owners published by the CRM on the owner-events topic."),
    (f"{JOBS}.scheduling.ReminderJob.sendVisitReminders", None, "Reminds owners of tomorrow's visits."),
    (
        f"{JOBS}.scheduling.ReminderJob.markNoShows",
        None,
        "Marks scheduled visits that are past the grace period as Visit.Status.NO_SHOW.",
    ),
    (f"{JOBS}.messaging.OwnerEventListener.onOwnerEvent", None, "Handles one owner event."),
    (f"{HALF}.pointsFor", None, "Converts an amount of money into loyalty points, rounding down."),
    ("com.acme.shop.legacy.LegacyEncoding", None, "Größenklassen für Transportboxen aus dem alten Kassensystem."),
    (
        "com.acme.shop.legacy.LegacyEncoding.boxSizeFor",
        None,
        "Ordnet einem Gewicht in Kilogramm die passende Boxgröße zu.",
    ),
]


@pytest.mark.parametrize(("name", "params", "summary"), SUMMARIES, ids=[case_id(n, p) for n, p, _ in SUMMARIES])
def test_javadoc_summary(shop: Shop, name: str, params: tuple[str, ...] | None, summary: str | None) -> None:
    assert shop.one(name, params).javadoc_summary == summary
