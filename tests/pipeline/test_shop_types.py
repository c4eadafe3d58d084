"""Type chunks of the `shop` fixture: signatures, kinds, modifiers, annotations, stereotypes, supertypes,
and the enum-constant, nested, inner, local, anonymous and record cases."""

from __future__ import annotations

import pytest

from pipeline.model import SymbolType
from tests.support.shop import API, API_SRC, CORE, CORE_SRC, HALF, JOBS, Shop, short

# --------------------------------------------------------------------------------------------------
# Type chunks: names, signatures, modifiers, annotations, stereotypes, supertypes
# --------------------------------------------------------------------------------------------------

TYPE_SIGNATURES = [
    (f"{API}.web.OwnerController", "public class OwnerController"),
    (f"{CORE}.domain.Owner", "public class Owner extends AuditableEntity"),
    (
        f"{CORE}.repository.OwnerRepository",
        "public interface OwnerRepository extends JpaRepository<Owner, Long>, OwnerSearchRepository",
    ),
    (f"{CORE}.util.Page", "public class Page<T extends Comparable<T>> implements Iterable<T>"),
    (f"{CORE}.util.Lists", "public final class Lists"),
    (f"{CORE}.domain.AuditableEntity", "public abstract class AuditableEntity"),
    (f"{CORE}.audit.Audited", "public @interface Audited"),
    (f"{CORE}.domain.PetType", "public enum PetType"),
    (f"{CORE}.domain.Visit.Status", "public enum Status"),
    (
        f"{JOBS}.messaging.OwnerEvent",
        "public sealed interface OwnerEvent permits OwnerEvent.Registered, OwnerEvent.Moved, OwnerEvent.Deleted",
    ),
    (f"{CORE}.dto.OwnerDto", "public record OwnerDto(Long id, @NotBlank String firstName, @NotBlank String lastName)"),
    (
        f"{CORE}.order.OrderQuote",
        "public record OrderQuote(Long ownerId, List<OrderLine> lines, BigDecimal subtotal, BigDecimal discount, "
        "BigDecimal shipping)",
    ),
    (f"{CORE}.util.Page.Cursor", "public static class Cursor"),
    (f"{CORE}.util.Page.ItemIterator", "public class ItemIterator implements Iterator<T>"),
    # Members declared without any modifier: the signature is the declaration line, nothing around it.
    (f"{CORE}.notify.MailGateway.Message", "record Message(String to, String subject, String body)"),
    (
        f"{JOBS}.messaging.OwnerEvent.Registered",
        "record Registered(Long ownerId, String firstName, String lastName, String email) implements OwnerEvent",
    ),
    (f"{CORE}.repository.PetRepository.PetTypeCount", "interface PetTypeCount"),
    (f"{CORE}.util.Page.Descending", "class Descending implements Comparator<T>"),
]


@pytest.mark.parametrize(("name", "signature"), TYPE_SIGNATURES, ids=[short(n) for n, _ in TYPE_SIGNATURES])
def test_type_signature(shop: Shop, name: str, signature: str) -> None:
    assert shop.one(name).signature == signature


TYPE_SYMBOL_TYPES = [
    (f"{API}.web.OwnerController", SymbolType.CLASS),
    (f"{API}.client.BillingClient", SymbolType.INTERFACE),
    (f"{API}.client.InvoiceDto", SymbolType.RECORD),
    (f"{CORE}.domain.PetType", SymbolType.ENUM),
    (f"{CORE}.domain.Visit.Status", SymbolType.ENUM),
    (f"{CORE}.audit.Audited", SymbolType.ANNOTATION),
    (f"{CORE}.util.Page.Descending", SymbolType.CLASS),
    (f"{JOBS}.messaging.OwnerEvent.Deleted", SymbolType.RECORD),
]


@pytest.mark.parametrize(("name", "kind"), TYPE_SYMBOL_TYPES, ids=[short(n) for n, _ in TYPE_SYMBOL_TYPES])
def test_type_symbol_type(shop: Shop, name: str, kind: SymbolType) -> None:
    assert shop.one(name).symbol_type is kind


TYPE_MODIFIERS = [
    (f"{CORE}.domain.AuditableEntity", ("public", "abstract")),
    (f"{CORE}.util.Lists", ("public", "final")),
    (f"{CORE}.util.Page.Cursor", ("public", "static")),
    (f"{JOBS}.messaging.OwnerEvent", ("public", "sealed")),
    (f"{CORE}.util.Page.Descending", ()),
    (f"{CORE}.notify.MailGateway.Message", ()),
]


@pytest.mark.parametrize(("name", "modifiers"), TYPE_MODIFIERS, ids=[short(n) for n, _ in TYPE_MODIFIERS])
def test_type_modifiers(shop: Shop, name: str, modifiers: tuple[str, ...]) -> None:
    assert shop.one(name).modifiers == modifiers


TYPE_ANNOTATIONS = [
    (
        f"{CORE}.domain.Owner",
        ("@Entity", '@Table(name = "owners")', "@Getter", "@Setter", "@NoArgsConstructor", "@AllArgsConstructor"),
        ("Entity", "Table", "Getter", "Setter", "NoArgsConstructor", "AllArgsConstructor"),
    ),
    (
        f"{API}.web.LegacyOwnerController",
        ("@Controller", '@RequestMapping({"/legacy", "/old"})'),
        ("Controller", "RequestMapping"),
    ),
    (
        f"{JOBS}.rest.VisitResource",
        (
            "@Component",
            '@Path("/v2/visits")',
            "@Produces(MediaType.APPLICATION_JSON)",
            "@Consumes(MediaType.APPLICATION_JSON)",
        ),
        ("Component", "Path", "Produces", "Consumes"),
    ),
    (
        f"{CORE}.service.OrderService",
        ("@Slf4j", "@Service", "@RequiredArgsConstructor"),
        ("Slf4j", "Service", "RequiredArgsConstructor"),
    ),
    (f"{CORE}.notify.TemplateRenderer", ('@Component("htmlTemplateRenderer")',), ("Component",)),
    (
        f"{CORE}.audit.Audited",
        ("@Documented", "@Retention(RetentionPolicy.RUNTIME)", "@Target({ElementType.METHOD, ElementType.TYPE})"),
        ("Documented", "Retention", "Target"),
    ),
    (f"{API}.client.BillingClient", ('@FeignClient(name = "billing", path = "/billing")',), ("FeignClient",)),
    (f"{CORE}.repository.PetRepository", (), ()),
]


@pytest.mark.parametrize(
    ("name", "annotations", "names"), TYPE_ANNOTATIONS, ids=[short(n) for n, _, _ in TYPE_ANNOTATIONS]
)
def test_type_annotations_as_written(
    shop: Shop, name: str, annotations: tuple[str, ...], names: tuple[str, ...]
) -> None:
    chunk = shop.one(name)
    assert (chunk.annotations, chunk.annotation_names) == (annotations, names)


STEREOTYPES = [
    (f"{API}.web.OwnerController", "rest_controller"),
    (f"{API}.web.InvoiceController", "rest_controller"),
    (f"{API}.web.LegacyOwnerController", "controller"),
    (f"{API}.web.ApiExceptionHandler", "controller_advice"),
    (f"{API}.client.BillingClient", "feign_client"),
    (f"{API}.ShopApiApplication", "application"),
    (f"{JOBS}.ShopJobsApplication", "application"),
    (f"{CORE}.config.CoreConfiguration", "configuration"),
    (f"{JOBS}.config.JobsConfiguration", "configuration"),
    (f"{JOBS}.config.JobsProperties", "configuration_properties"),
    (f"{CORE}.service.OwnerService", "service"),
    (f"{CORE}.service.OrderService", "service"),
    (f"{CORE}.service.NotificationService", "service"),
    (f"{CORE}.service.ReportService", "service"),
    (f"{CORE}.repository.OwnerRepository", "repository"),
    (f"{CORE}.repository.PetRepository", "repository"),  # by inheriting CrudRepository, no annotation
    (f"{CORE}.repository.VisitRepository", "repository"),  # by inheriting JpaRepository, no annotation
    (f"{CORE}.repository.OwnerSearchRepositoryImpl", "repository"),
    (f"{CORE}.repository.OwnerSearchRepository", None),
    (f"{JOBS}.messaging.OwnerEventMapper", "mapper"),
    (f"{JOBS}.rest.VisitResource", "jaxrs_resource"),  # @Path wins over @Component
    (f"{CORE}.domain.Owner", "entity"),
    (f"{CORE}.domain.Pet", "entity"),
    (f"{CORE}.domain.Visit", "entity"),
    (f"{CORE}.domain.AuditableEntity", "entity"),  # @MappedSuperclass
    (f"{CORE}.domain.Address", "embeddable"),
    (f"{CORE}.notify.TemplateRenderer", "component"),
    (f"{CORE}.order.StandardPricingPolicy", "component"),
    (f"{JOBS}.scheduling.ReminderJob", "component"),
    (f"{JOBS}.messaging.OwnerEventListener", "component"),
    (f"{JOBS}.rest.JerseyConfig", "component"),
    (f"{CORE}.dto.OwnerMapper", None),
    (f"{CORE}.dto.OwnerDto", None),
    (f"{CORE}.domain.PetType", None),
    (f"{CORE}.util.Page", None),
    (f"{API}.web.OwnerForm", None),
    (f"{API}.web.OwnerController.NewPetForm", None),
    (HALF, None),
]


@pytest.mark.parametrize(("name", "stereotype"), STEREOTYPES, ids=[short(n) for n, _ in STEREOTYPES])
def test_type_stereotype(shop: Shop, name: str, stereotype: str | None) -> None:
    assert shop.one(name).stereotype == stereotype


def test_methods_carry_the_stereotype_of_their_type(shop: Shop) -> None:
    assert shop.one(f"{CORE}.service.OwnerService.find", ("Long",)).stereotype == "service"


SUPERTYPES = [
    (f"{CORE}.domain.Owner", ("AuditableEntity",), (f"{CORE}.domain.AuditableEntity",), (), ()),
    (
        f"{CORE}.repository.OwnerRepository",
        ("JpaRepository", "OwnerSearchRepository"),
        ("org.springframework.data.jpa.repository.JpaRepository", f"{CORE}.repository.OwnerSearchRepository"),
        (),
        (),
    ),
    (
        f"{CORE}.repository.PetRepository",
        ("CrudRepository",),
        ("org.springframework.data.repository.CrudRepository",),
        (),
        (),
    ),
    (
        f"{CORE}.repository.VisitRepository",
        ("JpaRepository",),
        ("org.springframework.data.jpa.repository.JpaRepository",),
        (),
        (),
    ),
    (f"{CORE}.service.OwnerNotFoundException", ("RuntimeException",), ("java.lang.RuntimeException",), (), ()),
    (f"{JOBS}.rest.JerseyConfig", ("ResourceConfig",), ("org.glassfish.jersey.server.ResourceConfig",), (), ()),
    (f"{CORE}.order.StandardPricingPolicy", (), (), ("PricingPolicy",), (f"{CORE}.order.PricingPolicy",)),
    (
        f"{CORE}.repository.OwnerSearchRepositoryImpl",
        (),
        (),
        ("OwnerSearchRepository",),
        (f"{CORE}.repository.OwnerSearchRepository",),
    ),
    (f"{CORE}.util.Page", (), (), ("Iterable",), ("java.lang.Iterable",)),
    (f"{CORE}.util.Page.ItemIterator", (), (), ("Iterator",), ("java.util.Iterator",)),
    (f"{CORE}.util.Page.Descending", (), (), ("Comparator",), ("java.util.Comparator",)),
    (f"{JOBS}.messaging.OwnerEvent.Registered", (), (), ("OwnerEvent",), (f"{JOBS}.messaging.OwnerEvent",)),
    (f"{API}.web.OwnerController", (), (), (), ()),
]


@pytest.mark.parametrize(
    ("name", "extends", "extends_fq", "implements", "implements_fq"),
    SUPERTYPES,
    ids=[short(s[0]) for s in SUPERTYPES],
)
def test_type_supertypes(
    shop: Shop,
    name: str,
    extends: tuple[str, ...],
    extends_fq: tuple[str, ...],
    implements: tuple[str, ...],
    implements_fq: tuple[str, ...],
) -> None:
    chunk = shop.one(name)
    assert (chunk.extends, chunk.extends_fq, chunk.implements, chunk.implements_fq) == (
        extends,
        extends_fq,
        implements,
        implements_fq,
    )


ENCLOSING_TYPES = [
    (f"{API}.web.OwnerController", None),
    (f"{API}.web.OwnerController.NewPetForm", f"{API}.web.OwnerController"),
    (f"{API}.web.OwnerController.findOwner", f"{API}.web.OwnerController"),
    (f"{CORE}.domain.PetType.DOG.sound", f"{CORE}.domain.PetType.DOG"),
    (f"{CORE}.util.Page.Descending", f"{CORE}.util.Page"),
    (f"{CORE}.util.Page.Descending.compare", f"{CORE}.util.Page.Descending"),
    (f"{CORE}.util.Page.ItemIterator.next", f"{CORE}.util.Page.ItemIterator"),
]


@pytest.mark.parametrize(("name", "enclosing"), ENCLOSING_TYPES, ids=[short(n) for n, _ in ENCLOSING_TYPES])
def test_enclosing_type(shop: Shop, name: str, enclosing: str | None) -> None:
    assert shop.one(name).enclosing_type == enclosing


@pytest.mark.parametrize(
    ("name", "package"),
    [
        (f"{API}.web.OwnerController.findOwner", f"{API}.web"),
        (f"{CORE}.util.Page.Descending.compare", f"{CORE}.util"),
        (f"{JOBS}.ShopJobsApplication", JOBS),
    ],
)
def test_package(shop: Shop, name: str, package: str) -> None:
    assert shop.one(name).package == package


# --------------------------------------------------------------------------------------------------
# Enum constants, nested, inner, local and anonymous classes, records
# --------------------------------------------------------------------------------------------------


def test_enum_constant_body_methods_are_named_after_their_constant(shop: Shop) -> None:
    names = {c.qualified_name for c in shop.result(f"{CORE_SRC}/core/domain/PetType.java").chunks}
    constant_methods = {n for n in names if any(f".{k}." in n for k in ("DOG", "CAT", "HAMSTER", "BIRD"))}
    assert constant_methods == {
        f"{CORE}.domain.PetType.DOG.sound",
        f"{CORE}.domain.PetType.CAT.sound",
        f"{CORE}.domain.PetType.HAMSTER.sound",
        f"{CORE}.domain.PetType.HAMSTER.needsVaccination",
        f"{CORE}.domain.PetType.BIRD.sound",
    }


def test_enum_constant_body_method_is_a_method(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.domain.PetType.BIRD.sound")
    assert (chunk.symbol_type, chunk.name, chunk.line_start, chunk.line_end) == (SymbolType.METHOD, "sound", 33, 36)


def test_anonymous_class_method_has_no_chunk(shop: Shop) -> None:
    names = [c.qualified_name for c in shop.chunks if c.name == "compare"]
    assert names == [f"{CORE}.util.Page.Descending.compare"]


def test_anonymous_class_stays_inside_its_enclosing_method(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.service.OwnerService.sortedByName")
    assert "public int compare(Owner left, Owner right) {" in chunk.code


def test_local_class_gets_a_type_chunk_and_its_method_a_chunk(shop: Shop) -> None:
    local = shop.one(f"{CORE}.util.Page.Descending")
    method = shop.one(f"{CORE}.util.Page.Descending.compare")
    assert (local.symbol_type, method.symbol_type) == (SymbolType.CLASS, SymbolType.METHOD)
    assert (method.line_start, method.line_end) == (110, 113)


def test_inner_class_methods_are_chunks_of_the_inner_class(shop: Shop) -> None:
    names = sorted(c.qualified_name for c in shop.chunks if c.enclosing_type == f"{CORE}.util.Page.ItemIterator")
    assert names == [f"{CORE}.util.Page.ItemIterator.hasNext", f"{CORE}.util.Page.ItemIterator.next"]


def test_static_nested_class_members(shop: Shop) -> None:
    names = sorted(c.qualified_name for c in shop.chunks if c.enclosing_type == f"{CORE}.util.Page.Cursor")
    assert names == [
        f"{CORE}.util.Page.Cursor.Cursor",
        f"{CORE}.util.Page.Cursor.encode",
        f"{CORE}.util.Page.Cursor.next",
    ]


def test_outer_and_inner_method_of_the_same_name_are_distinct(shop: Shop) -> None:
    outer = shop.one(f"{CORE}.util.Page.hasNext")
    inner = shop.one(f"{CORE}.util.Page.ItemIterator.hasNext")
    assert (outer.line_start, inner.line_start) == (135, 69)
    assert outer.id != inner.id


def test_compact_record_constructor_is_a_constructor(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.dto.OwnerDto.OwnerDto")
    assert (chunk.symbol_type, chunk.name) == (SymbolType.CONSTRUCTOR, "OwnerDto")


def test_record_without_body_members_gives_only_its_type_chunk(shop: Shop) -> None:
    names = [c.qualified_name for c in shop.result(f"{API_SRC}/client/InvoiceDto.java").chunks]
    assert names == [f"{API}.client.InvoiceDto"]


def test_nested_record_method(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.service.ReportService.Options.defaults")
    assert (chunk.line_start, chunk.line_end, chunk.modifiers) == (74, 76, ("public", "static"))


def test_enum_nested_in_an_entity_is_its_own_type(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.domain.Visit.Status")
    assert (chunk.symbol_type, chunk.enclosing_type) == (SymbolType.ENUM, f"{CORE}.domain.Visit")
