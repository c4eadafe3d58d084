"""The Java pipeline over the whole `shop` fixture project (tests/fixtures/java/shop/FIXTURE.md): what is read,
what comes out in total, what is skipped, encodings, the broken file and line spans (the code and
embedding texts: `test_shop_chunk_text.py`).

The project is walked and chunked once per module, the way `javakb chunks` does it (the `shop` fixture);
every test then checks one fact. Expectations follow what the Java means under the pipeline's own rules
(spans start at the Javadoc, receivers are declared simple types, compact chains, Feign routes on the type
chunk...), not the pipeline's current output.
"""

from __future__ import annotations

from collections import Counter

import pytest

from pipeline.chunking import chunk_source
from pipeline.model import TYPE_SYMBOLS, ChunkerConfig, SkipReason, SourceContext, SymbolType
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import (
    API,
    API_SRC,
    CORE,
    CORE_SRC,
    HALF,
    JOBS,
    JOBS_SRC,
    REPO,
    Shop,
    case_id,
    short,
)

# --------------------------------------------------------------------------------------------------
# Which files are read
# --------------------------------------------------------------------------------------------------

EXPECTED_FILES = {
    f"{API_SRC}/ShopApiApplication.java",
    f"{API_SRC}/client/BillingClient.java",
    f"{API_SRC}/client/InvoiceDto.java",
    f"{API_SRC}/client/InvoiceRequest.java",
    f"{API_SRC}/web/ApiExceptionHandler.java",
    f"{API_SRC}/web/InvoiceController.java",
    f"{API_SRC}/web/LegacyOwnerController.java",
    f"{API_SRC}/web/OwnerController.java",
    f"{API_SRC}/web/OwnerForm.java",
    f"{CORE_SRC}/broken/HalfWritten.java",
    f"{CORE_SRC}/core/audit/Audited.java",
    f"{CORE_SRC}/core/config/CoreConfiguration.java",
    f"{CORE_SRC}/core/domain/Address.java",
    f"{CORE_SRC}/core/domain/AuditableEntity.java",
    f"{CORE_SRC}/core/domain/Owner.java",
    f"{CORE_SRC}/core/domain/Pet.java",
    f"{CORE_SRC}/core/domain/PetType.java",
    f"{CORE_SRC}/core/domain/Visit.java",
    f"{CORE_SRC}/core/dto/OwnerDto.java",
    f"{CORE_SRC}/core/dto/OwnerMapper.java",
    f"{CORE_SRC}/core/event/OwnerCreatedEvent.java",
    f"{CORE_SRC}/core/notify/MailGateway.java",
    f"{CORE_SRC}/core/notify/TemplateRenderer.java",
    f"{CORE_SRC}/core/order/OrderLine.java",
    f"{CORE_SRC}/core/order/OrderQuote.java",
    f"{CORE_SRC}/core/order/PricingPolicy.java",
    f"{CORE_SRC}/core/order/StandardPricingPolicy.java",
    f"{CORE_SRC}/core/repository/OwnerRepository.java",
    f"{CORE_SRC}/core/repository/OwnerSearchRepository.java",
    f"{CORE_SRC}/core/repository/OwnerSearchRepositoryImpl.java",
    f"{CORE_SRC}/core/repository/PetRepository.java",
    f"{CORE_SRC}/core/repository/VisitRepository.java",
    f"{CORE_SRC}/core/service/NotificationService.java",
    f"{CORE_SRC}/core/service/OrderService.java",
    f"{CORE_SRC}/core/service/OwnerNotFoundException.java",
    f"{CORE_SRC}/core/service/OwnerService.java",
    f"{CORE_SRC}/core/service/ReportService.java",
    f"{CORE_SRC}/core/service/package-info.java",
    f"{CORE_SRC}/core/util/Lists.java",
    f"{CORE_SRC}/core/util/Page.java",
    f"{CORE_SRC}/legacy/Blob.java",
    f"{CORE_SRC}/legacy/Empty.java",
    f"{CORE_SRC}/legacy/LegacyEncoding.java",
    "shop-core/src/main/java/module-info.java",
    f"{JOBS_SRC}/ShopJobsApplication.java",
    f"{JOBS_SRC}/config/JobsConfiguration.java",
    f"{JOBS_SRC}/config/JobsProperties.java",
    f"{JOBS_SRC}/messaging/OwnerEvent.java",
    f"{JOBS_SRC}/messaging/OwnerEventListener.java",
    f"{JOBS_SRC}/messaging/OwnerEventMapper.java",
    f"{JOBS_SRC}/rest/JerseyConfig.java",
    f"{JOBS_SRC}/rest/VisitRepresentation.java",
    f"{JOBS_SRC}/rest/VisitResource.java",
    f"{JOBS_SRC}/scheduling/ReminderJob.java",
}

OUT_OF_SCOPE = (
    "shop-api/src/test/java/com/acme/shop/api/web/OwnerControllerTest.java",
    "shop-core/src/test/java/com/acme/shop/core/service/OwnerServiceTest.java",
    "shop-core/target/generated-sources/annotations/com/acme/shop/core/domain/Owner_.java",
    "shop-jobs/build/generated/sources/annotationProcessor/java/main/com/acme/shop/jobs/messaging/OwnerEventMapperImpl.java",
)


def test_files_in_scope_are_the_54_main_sources(shop: Shop) -> None:
    assert set(shop.files) == EXPECTED_FILES
    assert len(shop.files) == 54


def test_files_are_walked_in_sorted_order(shop: Shop) -> None:
    assert list(shop.files) == sorted(shop.files)


@pytest.mark.parametrize("rel", OUT_OF_SCOPE)
def test_test_generated_and_build_sources_are_out_of_scope(shop: Shop, rel: str) -> None:
    assert (SHOP_DIR / rel).is_file()  # the exclusion is tested, not a missing file
    assert rel not in shop.files


def test_build_files_are_not_sources(shop: Shop) -> None:
    assert not [f for f in shop.files if not f.endswith(".java")]


def test_every_file_in_scope_has_one_result(shop: Shop) -> None:
    assert set(shop.results) == EXPECTED_FILES


# --------------------------------------------------------------------------------------------------
# What comes out, in total
# --------------------------------------------------------------------------------------------------

TYPE_NAMES = {
    f"{API}.ShopApiApplication",
    f"{API}.client.BillingClient",
    f"{API}.client.InvoiceDto",
    f"{API}.client.InvoiceRequest",
    f"{API}.web.ApiExceptionHandler",
    f"{API}.web.InvoiceController",
    f"{API}.web.LegacyOwnerController",
    f"{API}.web.OwnerController",
    f"{API}.web.OwnerController.NewPetForm",
    f"{API}.web.OwnerForm",
    "com.acme.shop.broken.HalfWritten",
    f"{CORE}.audit.Audited",
    f"{CORE}.config.CoreConfiguration",
    f"{CORE}.domain.Address",
    f"{CORE}.domain.AuditableEntity",
    f"{CORE}.domain.Owner",
    f"{CORE}.domain.Pet",
    f"{CORE}.domain.PetType",
    f"{CORE}.domain.Visit",
    f"{CORE}.domain.Visit.Status",
    f"{CORE}.dto.OwnerDto",
    f"{CORE}.dto.OwnerMapper",
    f"{CORE}.event.OwnerCreatedEvent",
    f"{CORE}.notify.MailGateway",
    f"{CORE}.notify.MailGateway.Message",
    f"{CORE}.notify.TemplateRenderer",
    f"{CORE}.order.OrderLine",
    f"{CORE}.order.OrderQuote",
    f"{CORE}.order.PricingPolicy",
    f"{CORE}.order.StandardPricingPolicy",
    f"{CORE}.repository.OwnerRepository",
    f"{CORE}.repository.OwnerSearchRepository",
    f"{CORE}.repository.OwnerSearchRepositoryImpl",
    f"{CORE}.repository.PetRepository",
    f"{CORE}.repository.PetRepository.PetTypeCount",
    f"{CORE}.repository.VisitRepository",
    f"{CORE}.service.NotificationService",
    f"{CORE}.service.OrderService",
    f"{CORE}.service.OwnerNotFoundException",
    f"{CORE}.service.OwnerService",
    f"{CORE}.service.ReportService",
    f"{CORE}.service.ReportService.Options",
    f"{CORE}.service.ReportService.MonthlyReport",
    f"{CORE}.util.Lists",
    f"{CORE}.util.Page",
    f"{CORE}.util.Page.Cursor",
    f"{CORE}.util.Page.ItemIterator",
    f"{CORE}.util.Page.Descending",
    "com.acme.shop.legacy.LegacyEncoding",
    f"{JOBS}.ShopJobsApplication",
    f"{JOBS}.config.JobsConfiguration",
    f"{JOBS}.config.JobsProperties",
    f"{JOBS}.messaging.OwnerEvent",
    f"{JOBS}.messaging.OwnerEvent.Registered",
    f"{JOBS}.messaging.OwnerEvent.Moved",
    f"{JOBS}.messaging.OwnerEvent.Deleted",
    f"{JOBS}.messaging.OwnerEventListener",
    f"{JOBS}.messaging.OwnerEventMapper",
    f"{JOBS}.rest.JerseyConfig",
    f"{JOBS}.rest.VisitRepresentation",
    f"{JOBS}.rest.VisitResource",
    f"{JOBS}.scheduling.ReminderJob",
}

CONSTRUCTOR_NAMES = {
    f"{API}.web.LegacyOwnerController.LegacyOwnerController",
    f"{API}.web.OwnerController.OwnerController",
    f"{CORE}.domain.Owner.Owner",
    f"{CORE}.domain.PetType.PetType",
    f"{CORE}.dto.OwnerDto.OwnerDto",
    f"{CORE}.order.OrderLine.OrderLine",
    f"{CORE}.repository.OwnerSearchRepositoryImpl.OwnerSearchRepositoryImpl",
    f"{CORE}.service.OwnerNotFoundException.OwnerNotFoundException",
    f"{CORE}.service.OwnerService.OwnerService",
    f"{CORE}.service.ReportService.ReportService",
    f"{CORE}.util.Lists.Lists",
    f"{CORE}.util.Page.Page",
    f"{CORE}.util.Page.Cursor.Cursor",
    f"{JOBS}.messaging.OwnerEventListener.OwnerEventListener",
    f"{JOBS}.rest.JerseyConfig.JerseyConfig",
    f"{JOBS}.rest.VisitResource.VisitResource",
    f"{JOBS}.scheduling.ReminderJob.ReminderJob",
}


def test_chunk_counts_per_symbol_type(shop: Shop) -> None:
    counts = Counter(c.symbol_type for c in shop.chunks)
    assert counts == {
        SymbolType.CLASS: 34,
        SymbolType.INTERFACE: 10,
        SymbolType.RECORD: 15,
        SymbolType.ENUM: 2,
        SymbolType.ANNOTATION: 1,
        SymbolType.CONSTRUCTOR: 17,
        SymbolType.METHOD: 130,  # 104 with a body, 26 bodiless (interface, abstract, repository, Feign, elements)
        SymbolType.METHOD_PART: 3,
    }


def test_every_named_type_has_one_type_chunk(shop: Shop) -> None:
    type_chunks = [c.qualified_name for c in shop.chunks if c.symbol_type in TYPE_SYMBOLS]
    assert sorted(type_chunks) == sorted(TYPE_NAMES)


def test_every_constructor_with_a_body_has_one_chunk(shop: Shop) -> None:
    ctors = [c.qualified_name for c in shop.chunks if c.symbol_type is SymbolType.CONSTRUCTOR]
    assert sorted(ctors) == sorted(CONSTRUCTOR_NAMES)


@pytest.mark.parametrize("symbol_type", sorted(TYPE_SYMBOLS))
def test_type_chunks_have_no_parameters_and_no_calls(shop: Shop, symbol_type: SymbolType) -> None:
    chunks = [c for c in shop.chunks if c.symbol_type is symbol_type]
    assert chunks
    assert all(c.parameter_types == () and c.calls == () and c.calls_fq == () for c in chunks)


def test_ids_are_unique_across_the_project(shop: Shop) -> None:
    ids = [c.id for c in shop.chunks]
    assert len(ids) == len(set(ids))


def test_every_chunk_carries_the_source_context(shop: Shop) -> None:
    assert {(c.repo_path, c.gitlab_project_id, c.commit_sha, c.branch, c.language) for c in shop.chunks} == {
        (REPO, None, None, None, "java")
    }


def test_every_chunk_file_path_is_repository_relative(shop: Shop) -> None:
    for path, result in shop.results.items():
        assert all(c.file_path == path for c in result.chunks)


# --------------------------------------------------------------------------------------------------
# Files that give no chunks
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel", [f"{CORE_SRC}/core/service/package-info.java", "shop-core/src/main/java/module-info.java"]
)
def test_package_and_module_info_give_no_chunk_and_no_skip(shop: Shop, rel: str) -> None:
    result = shop.result(rel)
    assert (result.chunks, result.skipped, result.parse_errors) == ((), (), False)


def test_binary_file_is_skipped_as_binary(shop: Shop) -> None:
    result = shop.result(f"{CORE_SRC}/legacy/Blob.java")
    assert result.chunks == ()
    assert [(s.file_path, s.reason) for s in result.skipped] == [(f"{CORE_SRC}/legacy/Blob.java", SkipReason.BINARY)]


def test_empty_file_is_skipped_as_empty(shop: Shop) -> None:
    result = shop.result(f"{CORE_SRC}/legacy/Empty.java")
    assert result.chunks == ()
    assert [(s.file_path, s.reason) for s in result.skipped] == [(f"{CORE_SRC}/legacy/Empty.java", SkipReason.EMPTY)]


def test_only_the_binary_and_the_empty_file_are_skipped(shop: Shop) -> None:
    skipped = sorted((s.file_path, s.reason) for r in shop.results.values() for s in r.skipped)
    assert skipped == [
        (f"{CORE_SRC}/legacy/Blob.java", SkipReason.BINARY),
        (f"{CORE_SRC}/legacy/Empty.java", SkipReason.EMPTY),
    ]


# --------------------------------------------------------------------------------------------------
# Encodings
# --------------------------------------------------------------------------------------------------

LEGACY = f"{CORE_SRC}/legacy/LegacyEncoding.java"


def test_legacy_file_is_decoded_with_the_cp1252_fallback(shop: Shop) -> None:
    assert shop.result(LEGACY).encoding == "cp1252"


def test_every_other_parsed_file_is_utf8(shop: Shop) -> None:
    encodings = {r.encoding for path, r in shop.results.items() if r.chunks and path != LEGACY}
    assert encodings == {"utf-8"}


def test_legacy_method_code_keeps_its_umlauts(shop: Shop) -> None:
    chunk = shop.one("com.acme.shop.legacy.LegacyEncoding.boxSizeFor")
    assert "// Überprüfung für Größe" in chunk.code


def test_legacy_constant_decodes_the_euro_sign(shop: Shop) -> None:
    chunk = shop.one("com.acme.shop.legacy.LegacyEncoding")
    assert 'CURRENCY_SYMBOL = "€"' in chunk.code


def test_legacy_file_gives_its_type_and_two_methods(shop: Shop) -> None:
    names = [c.qualified_name for c in shop.result(LEGACY).chunks]
    assert sorted(names) == [
        "com.acme.shop.legacy.LegacyEncoding",
        "com.acme.shop.legacy.LegacyEncoding.boxSizeFor",
        "com.acme.shop.legacy.LegacyEncoding.priceLabel",
    ]


def test_legacy_file_without_fallback_is_skipped_as_not_utf8() -> None:
    raw = (SHOP_DIR / LEGACY).read_bytes()
    result = chunk_source(raw, LEGACY, SourceContext(repo_path=REPO), ChunkerConfig(fallback_encoding=None))
    assert result.chunks == ()
    assert [s.reason for s in result.skipped] == [SkipReason.NOT_UTF8]


# --------------------------------------------------------------------------------------------------
# The file with a syntax error
# --------------------------------------------------------------------------------------------------

HALF_FILE = f"{CORE_SRC}/broken/HalfWritten.java"


def test_half_written_file_reports_parse_errors(shop: Shop) -> None:
    assert shop.result(HALF_FILE).parse_errors is True


def test_method_with_a_missing_node_stays_a_chunk_with_parse_errors(shop: Shop) -> None:
    chunk = shop.one(f"{HALF}.bonusPoints")
    assert (chunk.line_start, chunk.line_end, chunk.parse_errors) == (29, 35, True)


@pytest.mark.parametrize(("name", "start", "end"), [("pointsFor", 16, 27), ("canRedeem", 37, 45)])
def test_clean_methods_next_to_the_broken_one_have_no_parse_errors(shop: Shop, name: str, start: int, end: int) -> None:
    chunk = shop.one(f"{HALF}.{name}")
    assert (chunk.line_start, chunk.line_end, chunk.parse_errors) == (start, end, False)


def test_type_chunk_of_the_half_written_file_has_no_parse_errors(shop: Shop) -> None:
    # Only bonusPoints holds the MISSING node; the skeleton shows its signature, which parsed cleanly.
    assert shop.one(HALF).parse_errors is False


def test_missing_node_inside_a_method_is_not_reported_as_skipped(shop: Shop) -> None:
    assert shop.result(HALF_FILE).skipped == ()


def test_clean_files_have_no_parse_errors(shop: Shop) -> None:
    broken = {path for path, r in shop.results.items() if r.parse_errors}
    assert broken == {HALF_FILE}


# --------------------------------------------------------------------------------------------------
# Line spans: from the Javadoc (else the first annotation or modifier) to the closing brace
# --------------------------------------------------------------------------------------------------

TYPE_SPANS = [
    (f"{API}.web.OwnerController", 26, 130),
    (f"{API}.web.OwnerController.NewPetForm", 114, 122),
    (f"{API}.client.InvoiceDto", 6, 16),
    (f"{CORE}.service.OwnerService", 27, 192),
    (f"{CORE}.domain.Visit.Status", 31, 37),
    (f"{CORE}.domain.PetType", 5, 75),
    (f"{CORE}.util.Page.Cursor", 35, 60),
    (f"{CORE}.util.Page.ItemIterator", 62, 81),
    (f"{CORE}.util.Page.Descending", 109, 114),  # a local class without Javadoc
    (f"{CORE}.service.ReportService.Options", 61, 77),
    (f"{CORE}.notify.MailGateway.Message", 15, 23),
    (f"{CORE}.repository.PetRepository.PetTypeCount", 37, 43),
    (f"{CORE}.audit.Audited", 9, 25),
    (f"{JOBS}.messaging.OwnerEvent.Deleted", 18, 24),
    ("com.acme.shop.legacy.LegacyEncoding", 5, 38),
    (HALF, 6, 46),
]


@pytest.mark.parametrize(("name", "start", "end"), TYPE_SPANS, ids=[short(n) for n, _, _ in TYPE_SPANS])
def test_type_line_span(shop: Shop, name: str, start: int, end: int) -> None:
    chunk = shop.one(name)
    assert (chunk.line_start, chunk.line_end) == (start, end)


MEMBER_SPANS = [
    (f"{CORE}.service.OwnerService.find", ("Long",), 51, 61),
    (f"{CORE}.service.OwnerService.find", ("String",), 63, 72),
    (f"{CORE}.service.OwnerService.find", ("String", "int"), 74, 87),
    (f"{CORE}.service.OwnerService.OwnerService", None, 44, 49),
    (f"{CORE}.service.OwnerService.sortedByName", None, 164, 183),
    (f"{CORE}.service.OwnerService.upsert", None, 185, 187),
    (f"{API}.web.OwnerController.updateOwner", None, 66, 69),  # no Javadoc: starts at its annotation
    (f"{API}.web.OwnerController.deleteOwner", None, 71, 81),
    (f"{API}.web.LegacyOwnerController.LegacyOwnerController", None, 33, 35),  # no modifier at all
    (f"{API}.web.LegacyOwnerController.ping", None, 77, 81),
    (f"{CORE}.domain.PetType.DOG.sound", None, 10, 13),
    (f"{CORE}.domain.PetType.HAMSTER.needsVaccination", None, 27, 30),
    (f"{CORE}.domain.PetType.PetType", None, 42, 45),
    (f"{CORE}.domain.PetType.fromLabel", None, 62, 74),
    (f"{CORE}.domain.Owner.Owner", None, 63, 72),
    (f"{CORE}.dto.OwnerDto.OwnerDto", None, 18, 23),
    (f"{CORE}.util.Lists.Lists", None, 15, 16),
    (f"{CORE}.util.Page.Cursor.next", None, 48, 55),
    (f"{CORE}.util.Page.ItemIterator.next", None, 74, 80),
    (f"{CORE}.util.Page.Descending.compare", None, 110, 113),
    (f"{CORE}.util.Page.sortedDescending", None, 103, 118),
    (f"{JOBS}.scheduling.ReminderJob.ReminderJob", None, 31, 38),
    (f"{JOBS}.scheduling.ReminderJob.markNoShows", None, 64, 74),
    (f"{JOBS}.config.JobsConfiguration.kafkaListenerContainerFactory", None, 40, 55),
    (f"{JOBS}.messaging.OwnerEvent.Deleted.isGdprRequest", None, 21, 23),
    ("com.acme.shop.legacy.LegacyEncoding.boxSizeFor", None, 17, 32),
]


@pytest.mark.parametrize(
    ("name", "params", "start", "end"),
    MEMBER_SPANS,
    ids=[case_id(n, p) for n, p, _, _ in MEMBER_SPANS],
)
def test_member_line_span(shop: Shop, name: str, params: tuple[str, ...] | None, start: int, end: int) -> None:
    chunk = shop.one(name, params)
    assert (chunk.line_start, chunk.line_end) == (start, end)


# --------------------------------------------------------------------------------------------------
# Embedding text and content hash
# --------------------------------------------------------------------------------------------------
