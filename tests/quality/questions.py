"""Written questions about the `shop` fixture (tests/fixtures/java/shop) with their known answers.

Each question is phrased the way a developer new to the code base would ask it, and each answer
comes from the fixture's facts (FIXTURE.md) and its source, never from what the ranker returned.
`expected` holds every chunk an asker would accept as the answer (qualified names); a hit counts
when its qualified name is in that set. Questions were written before the suite was first run and
were not reworded afterwards.

Kinds:
    natural: plain-English behaviour questions, in words the code does not literally contain.
    symbol: a method or type named the way it is written in code.
    route: an HTTP request as a developer would copy it from a log or a client.
    annotation: "which methods are X", where X is expressed by an annotation.
    callers: who calls a method (the answer is the caller, never the callee itself).
    injection: which beans receive a type by dependency injection (the class or its injection point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from app.search.scoping import Filters

Kind = Literal["natural", "symbol", "route", "annotation", "callers", "injection"]
KINDS: Final[tuple[Kind, ...]] = ("natural", "symbol", "route", "annotation", "callers", "injection")

_API = "com.acme.shop.api."
_CORE = "com.acme.shop.core."
_JOBS = "com.acme.shop.jobs."

OWNER_CONTROLLER = _API + "web.OwnerController"
LEGACY_CONTROLLER = _API + "web.LegacyOwnerController"
INVOICE_CONTROLLER = _API + "web.InvoiceController"
EXCEPTION_HANDLER = _API + "web.ApiExceptionHandler"
OWNER_SERVICE = _CORE + "service.OwnerService"
ORDER_SERVICE = _CORE + "service.OrderService"
NOTIFICATION_SERVICE = _CORE + "service.NotificationService"
REPORT_SERVICE = _CORE + "service.ReportService"
PET_TYPE = _CORE + "domain.PetType"
PRICING = _CORE + "order.StandardPricingPolicy"
REMINDER_JOB = _JOBS + "scheduling.ReminderJob"
EVENT_LISTENER = _JOBS + "messaging.OwnerEventListener"
JOBS_CONFIG = _JOBS + "config.JobsConfiguration"
VISIT_RESOURCE = _JOBS + "rest.VisitResource"


@dataclass(frozen=True, slots=True)
class Question:
    """One question, the kind it exercises, and the qualified names that answer it."""

    text: str
    kind: Kind
    expected: frozenset[str]
    filters: Filters | None = None

    def __post_init__(self) -> None:
        if not self.expected:
            raise ValueError(f"question without an answer: {self.text!r}")


def _q(text: str, kind: Kind, *expected: str, filters: Filters | None = None) -> Question:
    return Question(text, kind, frozenset(expected), filters)


def _type_and_constructor(type_name: str) -> tuple[str, str]:
    """A bean that receives a dependency: its class chunk, or its constructor (the injection point)."""
    return type_name, f"{type_name}.{type_name.rsplit('.', 1)[-1]}"


NATURAL: Final[tuple[Question, ...]] = (
    _q("which job reminds customers about upcoming appointments", "natural", f"{REMINDER_JOB}.sendVisitReminders"),
    _q(
        "where do we flag appointments the customer did not turn up for",
        "natural",
        f"{REMINDER_JOB}.markNoShows",
    ),
    _q(
        "how is the discount for customers with lots of animals calculated",
        "natural",
        f"{PRICING}.discountFor",
        PRICING,
    ),
    _q("compute how old an animal is", "natural", _CORE + "domain.Pet.ageInYears"),
    _q(
        "what stops us from e-mailing the same customer too often",
        "natural",
        f"{NOTIFICATION_SERVICE}.sentRecently",
        f"{NOTIFICATION_SERVICE}.notifyOwner",
    ),
    _q("format a customer's mailing address as one string", "natural", _CORE + "domain.Address.format"),
    _q(
        "how often is a failing message retried before we give up on it",
        "natural",
        f"{JOBS_CONFIG}.ownerEventErrorHandler",
        JOBS_CONFIG,
    ),
    _q("reward points earned for money spent", "natural", "com.acme.shop.broken.HalfWritten.pointsFor"),
    _q("monthly revenue statistics for management", "natural", f"{REPORT_SERVICE}.buildMonthlyReport"),
    _q(
        "what happens when the CRM tells us a customer signed up",
        "natural",
        f"{EVENT_LISTENER}.onOwnerEvent",
    ),
    _q(
        "which kinds of animals require vaccines",
        "natural",
        f"{PET_TYPE}.needsVaccination",
        f"{PET_TYPE}.HAMSTER.needsVaccination",
    ),
    _q(
        "where is the not-found response for an unknown customer produced",
        "natural",
        f"{EXCEPTION_HANDLER}.handleOwnerNotFound",
    ),
    _q(
        "what noise does each animal make",
        "natural",
        PET_TYPE,
        f"{PET_TYPE}.DOG.sound",
        f"{PET_TYPE}.CAT.sound",
        f"{PET_TYPE}.HAMSTER.sound",
        f"{PET_TYPE}.BIRD.sound",
    ),
    _q(
        "read an e-mail template file from the resources",
        "natural",
        _CORE + "notify.TemplateRenderer.load",
    ),
    _q(
        "remove a customer through the REST API",
        "natural",
        f"{OWNER_CONTROLLER}.deleteOwner",
        filters=Filters(stereotype="rest_controller"),
    ),
)

SYMBOL: Final[tuple[Question, ...]] = (
    _q("OwnerService.find", "symbol", f"{OWNER_SERVICE}.find"),
    _q("findPetNames", "symbol", f"{OWNER_SERVICE}.findPetNames"),
    _q("OwnerMapper.toDto", "symbol", _CORE + "dto.OwnerMapper.toDto"),
    _q(
        "searchByCityAndPetType",
        "symbol",
        _CORE + "repository.OwnerSearchRepositoryImpl.searchByCityAndPetType",
        _CORE + "repository.OwnerSearchRepository.searchByCityAndPetType",  # bodiless: a chunk since issue 12
        _CORE + "repository.OwnerSearchRepository",
    ),
    _q("PetType.fromLabel", "symbol", f"{PET_TYPE}.fromLabel"),
    _q("Page.ItemIterator.hasNext", "symbol", _CORE + "util.Page.ItemIterator.hasNext"),
    _q("buildMonthlyReport", "symbol", f"{REPORT_SERVICE}.buildMonthlyReport"),
    _q("isGdprRequest()", "symbol", _JOBS + "messaging.OwnerEvent.Deleted.isGdprRequest"),
    _q("StandardPricingPolicy.unitPrice", "symbol", f"{PRICING}.unitPrice"),
    _q(
        "findByDateBetween",
        "symbol",
        _CORE + "repository.VisitRepository.findByDateBetween",  # bodiless: a chunk since issue 12
        _CORE + "repository.VisitRepository",
    ),
    _q("TemplateRenderer", "symbol", _CORE + "notify.TemplateRenderer"),
)

ROUTE: Final[tuple[Question, ...]] = (
    _q("DELETE /api/owners/by-id/7", "route", f"{OWNER_CONTROLLER}.deleteOwner"),
    _q("GET /v2/visits/12", "route", f"{VISIT_RESOURCE}.getVisit"),
    _q("DELETE /v2/visits/3", "route", f"{VISIT_RESOURCE}.cancelVisit"),
    _q("POST /v2/visits", "route", f"{VISIT_RESOURCE}.scheduleVisit"),
    _q("POST /api/owners/42/invoices", "route", f"{INVOICE_CONTROLLER}.invoiceOwner"),
    _q("GET /api/invoices/99", "route", f"{INVOICE_CONTROLLER}.getInvoice"),
    _q("GET /old/owners/new", "route", f"{LEGACY_CONTROLLER}.initCreationForm"),
    _q(
        "/legacy/owners/new form submission",
        "route",
        f"{LEGACY_CONTROLLER}.processCreationForm",
        filters=Filters(http_method="POST"),
    ),
    _q("PUT /api/owners/bulk", "route", f"{OWNER_CONTROLLER}.bulkUpsert"),
    _q("GET /api/owners/search?lastName=Smith&page=2", "route", f"{OWNER_CONTROLLER}.searchOwners"),
    _q("which handler serves GET /api/owners/5/pets/new", "route", f"{OWNER_CONTROLLER}.initNewPetForm"),
    _q("PUT /api/owners/17", "route", f"{OWNER_CONTROLLER}.updateOwner"),
    _q("GET /legacy", "route", f"{LEGACY_CONTROLLER}.ping"),
)

ANNOTATION: Final[tuple[Question, ...]] = (
    _q("scheduled tasks", "annotation", f"{REMINDER_JOB}.sendVisitReminders", f"{REMINDER_JOB}.markNoShows"),
    _q(
        "methods running in a read-only transaction",
        "annotation",
        f"{OWNER_SERVICE}.find",
        f"{OWNER_SERVICE}.findPetNames",
        f"{ORDER_SERVICE}.quote",
        f"{ORDER_SERVICE}.suggestFood",
        f"{NOTIFICATION_SERVICE}.notifyOwner",
        f"{REPORT_SERVICE}.buildMonthlyReport",
        f"{REPORT_SERVICE}.recentVisitsByType",
    ),
    _q("Kafka listener methods", "annotation", f"{EVENT_LISTENER}.onOwnerEvent"),
    _q(
        "where are @Bean methods declared",
        "annotation",
        _CORE + "config.CoreConfiguration.clock",
        f"{JOBS_CONFIG}.ownerEventErrorHandler",
        f"{JOBS_CONFIG}.kafkaListenerContainerFactory",
    ),
    _q("which service methods are audited", "annotation", f"{OWNER_SERVICE}.delete", f"{ORDER_SERVICE}.quote"),
    _q(
        "exception handler methods",
        "annotation",
        f"{EXCEPTION_HANDLER}.handleOwnerNotFound",
        f"{EXCEPTION_HANDLER}.handleBadRequest",
    ),
    _q(
        "JPA entities",
        "annotation",
        _CORE + "domain.Owner",
        _CORE + "domain.Pet",
        _CORE + "domain.Visit",
    ),
    _q(
        "entity lifecycle callbacks that set timestamps",
        "annotation",
        _CORE + "domain.AuditableEntity.onCreate",
        _CORE + "domain.AuditableEntity.onUpdate",
    ),
    _q("Feign clients", "annotation", _API + "client.BillingClient"),
)

CALLERS: Final[tuple[Question, ...]] = (
    _q(
        "who calls NotificationService.notifyOwner",
        "callers",
        f"{REMINDER_JOB}.sendVisitReminders",
        f"{EVENT_LISTENER}.onOwnerEvent",
    ),
    _q(
        "callers of OwnerService.delete", "callers", f"{OWNER_CONTROLLER}.deleteOwner", f"{EVENT_LISTENER}.onOwnerEvent"
    ),
    _q(
        "where is OwnerService.create used",
        "callers",
        f"{OWNER_CONTROLLER}.createOwner",
        f"{LEGACY_CONTROLLER}.processCreationForm",
        f"{EVENT_LISTENER}.onOwnerEvent",
        f"{OWNER_SERVICE}.upsert",
    ),
    # OwnerService.find(String) also calls find(String, int), but it shares the callee's qualified
    # name, so counting it would reward returning the callee itself.
    _q(
        "what calls OwnerService.find",
        "callers",
        f"{OWNER_CONTROLLER}.findOwner",
        f"{OWNER_CONTROLLER}.searchOwners",
        f"{LEGACY_CONTROLLER}.showOwner",
    ),
    _q("who uses PricingPolicy.percentOf", "callers", f"{PRICING}.discountFor"),
    _q(
        "which code calls VisitRepository.findByDateBetween",
        "callers",
        f"{REMINDER_JOB}.sendVisitReminders",
        f"{REPORT_SERVICE}.buildMonthlyReport",
        f"{REPORT_SERVICE}.recentVisitsByType",
    ),
    _q("who calls TemplateRenderer.render", "callers", f"{NOTIFICATION_SERVICE}.notifyOwner"),
    _q("where is BillingClient.createInvoice called", "callers", f"{INVOICE_CONTROLLER}.invoiceOwner"),
)

INJECTION: Final[tuple[Question, ...]] = (
    _q(
        "which classes depend on OwnerRepository",
        "injection",
        *_type_and_constructor(OWNER_SERVICE),
        *_type_and_constructor(REPORT_SERVICE),
        ORDER_SERVICE,
        NOTIFICATION_SERVICE,
    ),
    _q(
        "who injects PetRepository",
        "injection",
        *_type_and_constructor(OWNER_SERVICE),
        *_type_and_constructor(VISIT_RESOURCE),
        ORDER_SERVICE,
    ),
    _q(
        "beans that get NotificationService injected",
        "injection",
        *_type_and_constructor(REMINDER_JOB),
        *_type_and_constructor(EVENT_LISTENER),
    ),
    _q(
        "where is VisitRepository injected",
        "injection",
        *_type_and_constructor(REMINDER_JOB),
        *_type_and_constructor(REPORT_SERVICE),
        *_type_and_constructor(VISIT_RESOURCE),
    ),
    _q(
        "which bean receives the MailGateway",
        "injection",
        NOTIFICATION_SERVICE,
        f"{NOTIFICATION_SERVICE}.setMailGateway",
    ),
    _q(
        "which components need the Clock bean",
        "injection",
        *_type_and_constructor(REMINDER_JOB),
        *_type_and_constructor(REPORT_SERVICE),
    ),
    _q("who depends on BillingClient", "injection", INVOICE_CONTROLLER),
    _q(
        "which beans have OwnerService injected",
        "injection",
        *_type_and_constructor(OWNER_CONTROLLER),
        *_type_and_constructor(LEGACY_CONTROLLER),
        *_type_and_constructor(EVENT_LISTENER),
    ),
)

QUESTIONS: Final[tuple[Question, ...]] = NATURAL + SYMBOL + ROUTE + ANNOTATION + CALLERS + INJECTION
