"""Method and constructor chunks of the `shop` fixture: signatures, parameters, modifiers, annotations,
HTTP routes and injection points."""

from __future__ import annotations

import pytest

from pipeline.model import TYPE_SYMBOLS, SymbolType
from tests.support.shop import API, CORE, JOBS, Shop, case_id, short

# --------------------------------------------------------------------------------------------------
# Methods: signatures, parameter types, modifiers, annotations
# --------------------------------------------------------------------------------------------------

SIGNATURES = [
    (f"{CORE}.service.OwnerService.find", ("Long",), "find(Long id): Optional<OwnerDto>"),
    (f"{CORE}.service.OwnerService.find", ("String",), "find(String lastName): List<OwnerDto>"),
    (f"{CORE}.service.OwnerService.find", ("String", "int"), "find(String lastName, int page): List<OwnerDto>"),
    (
        f"{CORE}.service.OwnerService.OwnerService",
        None,
        "OwnerService(OwnerRepository ownerRepository, PetRepository petRepository, ApplicationEventPublisher events)",
    ),
    (f"{CORE}.util.Lists.copy", None, "<T> copy(List<? extends T> src): List<T>"),
    (
        f"{CORE}.util.Lists.groupBy",
        None,
        "<K, V> groupBy(List<V> elements, Function<? super V, ? extends K> keyFn): Map<K, List<V>>",
    ),
    (f"{CORE}.util.Page.map", None, "<R extends Comparable<R>> map(Function<? super T, ? extends R> mapper): Page<R>"),
    (
        f"{API}.web.LegacyOwnerController.processCreationForm",
        None,
        "processCreationForm(OwnerForm form, BindingResult result, RedirectAttributes redirect): String",
    ),
    (f"{API}.ShopApiApplication.main", None, "main(String[] args): void"),
    (f"{CORE}.dto.OwnerDto.OwnerDto", None, "OwnerDto(Long id, String firstName, String lastName)"),
    (f"{CORE}.domain.PetType.PetType", None, "PetType(String label, boolean vaccinationRequired)"),
    (f"{CORE}.domain.PetType.DOG.sound", None, "sound(): String"),
    (f"{CORE}.util.Lists.Lists", None, "Lists()"),
]


@pytest.mark.parametrize(("name", "params", "signature"), SIGNATURES, ids=[case_id(n, p) for n, p, _ in SIGNATURES])
def test_member_signature(shop: Shop, name: str, params: tuple[str, ...] | None, signature: str) -> None:
    assert shop.one(name, params).signature == signature


PARAMETER_TYPES = [
    (f"{API}.web.OwnerController.bulkUpsert", ("List<@Valid OwnerDto>",)),
    (f"{API}.web.OwnerController.searchOwners", ("String", "int")),  # @RequestParam dropped
    (f"{JOBS}.messaging.OwnerEventListener.onOwnerEvent", ("OwnerEvent", "String", "Acknowledgment")),
    (f"{CORE}.util.Lists.groupBy", ("List<V>", "Function<? super V, ? extends K>")),
    (f"{CORE}.util.Page.Descending.compare", ("T", "T")),
    (f"{CORE}.notify.TemplateRenderer.render", ("String", "Map<String, Object>")),
    (f"{CORE}.dto.OwnerDto.OwnerDto", ("Long", "String", "String")),  # compact constructor: the components
    (f"{JOBS}.scheduling.ReminderJob.sendVisitReminders", ()),
]


@pytest.mark.parametrize(("name", "params"), PARAMETER_TYPES, ids=[short(n) for n, _ in PARAMETER_TYPES])
def test_member_parameter_types(shop: Shop, name: str, params: tuple[str, ...]) -> None:
    assert shop.one(name).parameter_types == params


MODIFIERS = [
    (f"{API}.web.LegacyOwnerController.LegacyOwnerController", ()),
    (f"{API}.ShopApiApplication.main", ("public", "static")),
    (f"{CORE}.order.PricingPolicy.shippingFee", ("default",)),
    (f"{CORE}.order.PricingPolicy.percentOf", ("static",)),
    (f"{CORE}.service.OwnerService.sortedByName", ()),
    (f"{CORE}.service.OwnerService.normalize", ("private", "static")),
    (f"{CORE}.util.Lists.Lists", ("private",)),
    (f"{JOBS}.rest.VisitRepresentation.from", ("static",)),
    (f"{CORE}.domain.PetType.HAMSTER.needsVaccination", ("public",)),
]


@pytest.mark.parametrize(("name", "modifiers"), MODIFIERS, ids=[short(n) for n, _ in MODIFIERS])
def test_member_modifiers(shop: Shop, name: str, modifiers: tuple[str, ...]) -> None:
    assert shop.one(name).modifiers == modifiers


MEMBER_ANNOTATIONS = [
    (
        f"{CORE}.service.OwnerService.delete",
        ('@Audited("owner.delete")', "@Transactional"),
        ("Audited", "Transactional"),
    ),
    (
        f"{CORE}.service.OrderService.quote",
        ('@Audited(value = "order.quote", includeArguments = true)', "@Transactional(readOnly = true)"),
        ("Audited", "Transactional"),
    ),
    (
        f"{JOBS}.scheduling.ReminderJob.markNoShows",
        (
            '@Scheduled(fixedDelayString = "${shop.jobs.no-show-check-delay:PT15M}", initialDelay = 60_000)',
            "@Transactional",
        ),
        ("Scheduled", "Transactional"),
    ),
    (
        f"{API}.web.OwnerController.bulkUpsert",
        ('@RequestMapping(path="/bulk", method = {RequestMethod.POST, RequestMethod.PUT})',),
        ("RequestMapping",),
    ),
    (f"{API}.web.OwnerController.findOwner", ('@GetMapping("/{ownerId}")',), ("GetMapping",)),  # not @PathVariable
    (f"{JOBS}.rest.VisitResource.getVisit", ("@GET", '@Path("/{visitId}")'), ("GET", "Path")),
    (
        f"{API}.web.ApiExceptionHandler.handleBadRequest",
        ("@ExceptionHandler({IllegalArgumentException.class, MethodArgumentNotValidException.class})",),
        ("ExceptionHandler",),
    ),
    (
        f"{JOBS}.messaging.OwnerEventListener.onOwnerEvent",
        ('@KafkaListener(topics = "owner-events", groupId = "shop")',),
        ("KafkaListener",),
    ),
    (f"{JOBS}.rest.VisitResource.VisitResource", ("@Inject",), ("Inject",)),
    (f"{CORE}.domain.PetType.DOG.sound", ("@Override",), ("Override",)),
    (f"{CORE}.service.OwnerService.upsert", (), ()),
]


@pytest.mark.parametrize(
    ("name", "annotations", "names"), MEMBER_ANNOTATIONS, ids=[short(n) for n, _, _ in MEMBER_ANNOTATIONS]
)
def test_member_annotations_as_written(
    shop: Shop, name: str, annotations: tuple[str, ...], names: tuple[str, ...]
) -> None:
    chunk = shop.one(name)
    assert (chunk.annotations, chunk.annotation_names) == (annotations, names)


BODILESS = [
    # (symbol, signature, first and last line: the javadoc included, as for methods with a body)
    (
        f"{CORE}.order.PricingPolicy.discountFor",
        "discountFor(Owner owner, List<Pet> pets, BigDecimal subtotal): BigDecimal",
        21,
        29,
    ),
    (f"{CORE}.order.PricingPolicy.unitPrice", "unitPrice(PetType type): BigDecimal", 31, 31),
    (
        f"{CORE}.repository.OwnerRepository.findByTelephone",
        "findByTelephone(String telephone): Optional<Owner>",
        31,
        31,
    ),
    (f"{CORE}.repository.OwnerRepository.updateTelephone", "updateTelephone(Long id, String telephone): int", 46, 48),
    (f"{CORE}.domain.PetType.sound", "sound(): String", 47, 52),
    (f"{API}.client.BillingClient.getInvoice", "getInvoice(Long id): InvoiceDto", 17, 24),
    (f"{JOBS}.messaging.OwnerEvent.ownerId", "ownerId(): Long", 8, 8),
    (f"{CORE}.audit.Audited.value", "value(): String", 20, 21),
]


@pytest.mark.parametrize(("name", "signature", "first", "last"), BODILESS, ids=[short(b[0]) for b in BODILESS])
def test_bodiless_members_have_a_chunk_of_their_own(
    shop: Shop, name: str, signature: str, first: int, last: int
) -> None:
    chunk = shop.one(name)
    assert (chunk.symbol_type, chunk.signature, chunk.line_start, chunk.line_end) == (
        SymbolType.METHOD, signature, first, last,
    )  # fmt: skip
    assert chunk.calls == ()
    assert chunk.signature.split(":")[0].split("(")[0] in shop.one(chunk.enclosing_type or "").code  # still listed


def test_repository_method_chunk_carries_its_annotations(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.repository.OwnerRepository.updateTelephone")
    assert chunk.annotation_names == ("Modifying", "Query")


# --------------------------------------------------------------------------------------------------
# HTTP routes
# --------------------------------------------------------------------------------------------------

ROUTES = [
    (f"{API}.web.OwnerController.findOwner", ("GET",), ("/api/owners/{ownerId}",)),
    (f"{API}.web.OwnerController.createOwner", ("POST",), ("/api/owners",)),
    (f"{API}.web.OwnerController.updateOwner", ("PUT",), ("/api/owners/{ownerId}",)),
    (
        f"{API}.web.OwnerController.deleteOwner",
        ("DELETE",),
        ("/api/owners/{ownerId}", "/api/owners/by-id/{ownerId}"),
    ),
    (f"{API}.web.OwnerController.searchOwners", ("GET",), ("/api/owners/search",)),
    (f"{API}.web.OwnerController.bulkUpsert", ("POST", "PUT"), ("/api/owners/bulk",)),
    (f"{API}.web.OwnerController.initNewPetForm", ("GET",), ("/api/owners/{ownerId}/pets/new",)),
    (
        f"{API}.web.LegacyOwnerController.showOwner",
        ("GET",),
        ("/legacy/owners/{ownerId}", "/old/owners/{ownerId}"),
    ),
    (f"{API}.web.LegacyOwnerController.initCreationForm", ("GET",), ("/legacy/owners/new", "/old/owners/new")),
    (f"{API}.web.LegacyOwnerController.processCreationForm", ("POST",), ("/legacy/owners/new", "/old/owners/new")),
    (f"{API}.web.LegacyOwnerController.ping", ("GET",), ("/legacy", "/old")),
    (f"{API}.web.InvoiceController.getInvoice", ("GET",), ("/api/invoices/{id}",)),
    (f"{API}.web.InvoiceController.invoiceOwner", ("POST",), ("/api/owners/{ownerId}/invoices",)),
    (f"{JOBS}.rest.VisitResource.getVisit", ("GET",), ("/v2/visits/{visitId}",)),
    (f"{JOBS}.rest.VisitResource.scheduleVisit", ("POST",), ("/v2/visits",)),
    (f"{JOBS}.rest.VisitResource.cancelVisit", ("DELETE",), ("/v2/visits/{visitId}",)),
]


@pytest.mark.parametrize(("name", "methods", "paths"), ROUTES, ids=[short(n) for n, _, _ in ROUTES])
def test_route(shop: Shop, name: str, methods: tuple[str, ...], paths: tuple[str, ...]) -> None:
    chunk = shop.one(name)
    assert (chunk.http_method, chunk.http_path) == (methods, paths)


FEIGN_ROUTES = [
    (f"{API}.client.BillingClient.getInvoice", ("GET",), ("/billing/invoices/{id}",)),
    (f"{API}.client.BillingClient.createInvoice", ("POST",), ("/billing/invoices",)),
]


def test_exactly_the_16_handler_methods_and_2_feign_methods_carry_a_route(shop: Shop) -> None:
    routed = {c.qualified_name for c in shop.chunks if c.http_path and c.symbol_type is SymbolType.METHOD}
    assert routed == {name for name, _, _ in ROUTES + FEIGN_ROUTES}


@pytest.mark.parametrize(("name", "methods", "paths"), FEIGN_ROUTES, ids=[short(n) for n, _, _ in FEIGN_ROUTES])
def test_feign_method_carries_its_route_with_the_client_path(
    shop: Shop, name: str, methods: tuple[str, ...], paths: tuple[str, ...]
) -> None:
    chunk = shop.one(name)
    assert (chunk.http_method, chunk.http_path) == (methods, paths)


def test_no_type_chunk_carries_a_route(shop: Shop) -> None:
    assert [c.qualified_name for c in shop.chunks if c.http_path and c.symbol_type in TYPE_SYMBOLS] == []


@pytest.mark.parametrize(
    "name",
    [
        f"{API}.web.ApiExceptionHandler.handleOwnerNotFound",
        f"{API}.web.ApiExceptionHandler.handleBadRequest",
        f"{JOBS}.scheduling.ReminderJob.sendVisitReminders",
        f"{JOBS}.messaging.OwnerEventListener.onOwnerEvent",
        f"{API}.web.OwnerController.locationOf",
    ],
    ids=short,
)
def test_non_handler_methods_have_no_route(shop: Shop, name: str) -> None:
    chunk = shop.one(name)
    assert (chunk.http_method, chunk.http_path) == ((), ())


def test_route_is_in_the_embedding_header(shop: Shop) -> None:
    assert "\nhttp: POST|PUT /api/owners/bulk\n" in shop.one(f"{API}.web.OwnerController.bulkUpsert").text


# --------------------------------------------------------------------------------------------------
# Injection
# --------------------------------------------------------------------------------------------------

TYPE_INJECTS = [
    (f"{API}.web.OwnerController", {"OwnerService": f"{CORE}.service.OwnerService"}),
    (f"{API}.web.LegacyOwnerController", {"OwnerService": f"{CORE}.service.OwnerService"}),  # package-private ctor
    (f"{API}.web.InvoiceController", {"BillingClient": f"{API}.client.BillingClient"}),  # Lombok
    (f"{API}.web.ApiExceptionHandler", {}),
    (
        f"{CORE}.service.OwnerService",
        {
            "OwnerRepository": f"{CORE}.repository.OwnerRepository",
            "PetRepository": f"{CORE}.repository.PetRepository",
            "ApplicationEventPublisher": "org.springframework.context.ApplicationEventPublisher",
        },
    ),
    (
        f"{CORE}.service.OrderService",
        {
            "OwnerRepository": f"{CORE}.repository.OwnerRepository",
            "PetRepository": f"{CORE}.repository.PetRepository",
            "PricingPolicy": f"{CORE}.order.PricingPolicy",
        },
    ),
    (
        f"{CORE}.service.NotificationService",
        {
            "OwnerRepository": f"{CORE}.repository.OwnerRepository",
            "TemplateRenderer": f"{CORE}.notify.TemplateRenderer",
            "MailGateway": f"{CORE}.notify.MailGateway",
        },
    ),
    (
        f"{CORE}.service.ReportService",
        {
            "VisitRepository": f"{CORE}.repository.VisitRepository",
            "OwnerRepository": f"{CORE}.repository.OwnerRepository",
            "Clock": "java.time.Clock",
        },
    ),
    (f"{CORE}.repository.OwnerSearchRepositoryImpl", {"EntityManager": "jakarta.persistence.EntityManager"}),
    (f"{CORE}.notify.TemplateRenderer", {}),
    (f"{CORE}.order.StandardPricingPolicy", {}),
    (f"{CORE}.config.CoreConfiguration", {}),
    (
        f"{JOBS}.config.JobsConfiguration",
        {
            "KafkaTemplate": "org.springframework.kafka.core.KafkaTemplate",
            "JobsProperties": f"{JOBS}.config.JobsProperties",
            "ConsumerFactory": "org.springframework.kafka.core.ConsumerFactory",
            "DefaultErrorHandler": "org.springframework.kafka.listener.DefaultErrorHandler",
        },
    ),
    (
        f"{JOBS}.scheduling.ReminderJob",
        {
            "VisitRepository": f"{CORE}.repository.VisitRepository",
            "NotificationService": f"{CORE}.service.NotificationService",
            "JobsProperties": f"{JOBS}.config.JobsProperties",
            "Clock": "java.time.Clock",
        },
    ),
    (
        f"{JOBS}.messaging.OwnerEventListener",
        {
            "OwnerService": f"{CORE}.service.OwnerService",
            "NotificationService": f"{CORE}.service.NotificationService",
            "OwnerEventMapper": f"{JOBS}.messaging.OwnerEventMapper",
        },
    ),
    (
        f"{JOBS}.rest.VisitResource",
        {
            "VisitRepository": f"{CORE}.repository.VisitRepository",
            "PetRepository": f"{CORE}.repository.PetRepository",
        },
    ),
    (f"{JOBS}.rest.JerseyConfig", {}),
    (f"{API}.ShopApiApplication", {}),
    (f"{JOBS}.ShopJobsApplication", {}),
    (f"{CORE}.domain.Owner", {}),  # an entity is no bean: its Lombok constructors inject nothing
    (f"{JOBS}.messaging.OwnerEventMapper", {}),
]


@pytest.mark.parametrize(("name", "injects"), TYPE_INJECTS, ids=[short(n) for n, _ in TYPE_INJECTS])
def test_type_injects(shop: Shop, name: str, injects: dict[str, str]) -> None:
    chunk = shop.one(name)
    assert sorted(chunk.injects) == sorted(injects)


@pytest.mark.parametrize(("name", "injects"), TYPE_INJECTS, ids=[short(n) for n, _ in TYPE_INJECTS])
def test_type_injects_fq(shop: Shop, name: str, injects: dict[str, str]) -> None:
    chunk = shop.one(name)
    assert sorted(chunk.injects_fq) == sorted(injects.values())


MEMBER_INJECTS = [
    (
        f"{CORE}.service.OwnerService.OwnerService",
        ("OwnerRepository", "PetRepository", "ApplicationEventPublisher"),
    ),
    (f"{API}.web.LegacyOwnerController.LegacyOwnerController", ("OwnerService",)),
    (f"{CORE}.service.NotificationService.setMailGateway", ("MailGateway",)),
    (f"{JOBS}.config.JobsConfiguration.ownerEventErrorHandler", ("KafkaTemplate", "JobsProperties")),
    (f"{JOBS}.config.JobsConfiguration.kafkaListenerContainerFactory", ("ConsumerFactory", "DefaultErrorHandler")),
    (
        f"{JOBS}.scheduling.ReminderJob.ReminderJob",
        ("VisitRepository", "NotificationService", "JobsProperties", "Clock"),
    ),
    (f"{JOBS}.rest.VisitResource.VisitResource", ("VisitRepository", "PetRepository")),
    (f"{CORE}.config.CoreConfiguration.clock", ()),
    (f"{CORE}.domain.Owner.Owner", ()),  # not a bean
    (f"{CORE}.service.OwnerNotFoundException.OwnerNotFoundException", ()),
    (f"{CORE}.service.OwnerService.create", ()),
    (f"{JOBS}.rest.JerseyConfig.JerseyConfig", ()),
]


@pytest.mark.parametrize(("name", "injects"), MEMBER_INJECTS, ids=[short(n) for n, _ in MEMBER_INJECTS])
def test_member_injects(shop: Shop, name: str, injects: tuple[str, ...]) -> None:
    assert shop.one(name).injects == injects


def test_constructor_injects_fq(shop: Shop) -> None:
    chunk = shop.one(f"{JOBS}.scheduling.ReminderJob.ReminderJob")
    assert chunk.injects_fq == (
        f"{CORE}.repository.VisitRepository",
        f"{CORE}.service.NotificationService",
        f"{JOBS}.config.JobsProperties",
        "java.time.Clock",
    )
