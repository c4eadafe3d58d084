"""Fully qualified calls (`calls_fq`) of the `shop` fixture's methods: each call with the package of its type.

The short forms (`calls`) and the rules both share: `test_shop_calls.py`.
"""

from __future__ import annotations

import pytest

from tests.support.shop import API, CORE, JOBS, Shop, case_id

CALLS_FQ: list[tuple[str, tuple[str, ...] | None, list[str]]] = [
    (
        f"{CORE}.service.OwnerService.find",
        ("Long",),
        [
            "java.util.Objects.requireNonNull",
            f"{CORE}.repository.OwnerRepository.findById",
            f"{CORE}.dto.OwnerMapper.toDto",
        ],
    ),
    (f"{CORE}.service.OwnerService.find", ("String",), [f"{CORE}.service.OwnerService.find"]),
    (
        f"{CORE}.service.OwnerService.find",
        ("String", "int"),
        [
            "org.springframework.data.domain.PageRequest.of",
            "org.springframework.data.domain.Sort.by",
            f"{CORE}.repository.OwnerRepository.findByLastNameStartingWithIgnoreCase",
            f"{CORE}.service.OwnerService.normalize",
            f"{CORE}.dto.OwnerMapper.toDtos",
        ],
    ),
    (
        f"{CORE}.service.OwnerService.create",
        None,
        [
            f"{CORE}.dto.OwnerMapper.toEntity",
            f"{CORE}.repository.OwnerRepository.save",
            "org.springframework.context.ApplicationEventPublisher.publishEvent",
            f"{CORE}.event.OwnerCreatedEvent.now",
            f"{CORE}.domain.Owner.getId",
            "org.slf4j.Logger.info",
            f"{CORE}.dto.OwnerMapper.toDto",
        ],
    ),
    (
        f"{CORE}.service.OwnerService.saveAll",
        None,
        ["java.util.List.stream", f"{CORE}.service.OwnerService.upsert"],
    ),
    (
        f"{CORE}.service.OwnerService.findPetNames",
        None,
        [f"{CORE}.repository.PetRepository.findByOwnerId", f"{CORE}.domain.Pet.getName"],
    ),
    (
        f"{CORE}.service.OrderService.quote",
        None,
        [
            "java.util.List.isEmpty",
            f"{CORE}.repository.OwnerRepository.findById",
            f"{CORE}.repository.PetRepository.findByOwnerId",
            "java.util.List.stream",
            f"{CORE}.order.OrderLine.total",
            "java.math.BigDecimal.add",
            f"{CORE}.order.PricingPolicy.discountFor",
            "java.math.BigDecimal.subtract",
            f"{CORE}.order.PricingPolicy.shippingFee",
            "org.slf4j.Logger.debug",  # the field Lombok's @Slf4j generates is an org.slf4j.Logger
            "java.util.List.copyOf",
        ],
    ),
    (
        f"{CORE}.notify.TemplateRenderer.render",
        None,
        [
            "java.util.Map.computeIfAbsent",
            f"{CORE}.notify.TemplateRenderer.load",
            "java.util.Map.entrySet",
            "java.lang.String.replace",
            "java.util.Map.Entry.getKey",
            "java.lang.String.valueOf",
            "java.util.Map.Entry.getValue",
        ],
    ),
    (
        # Resource is org.springframework.core.io.Resource here, not jakarta.annotation.Resource.
        f"{CORE}.notify.TemplateRenderer.load",
        None,
        [
            "org.springframework.core.io.Resource.getInputStream",
            "org.springframework.util.StreamUtils.copyToString",
        ],
    ),
    (
        f"{CORE}.repository.OwnerSearchRepositoryImpl.searchByCityAndPetType",
        None,
        [
            "jakarta.persistence.EntityManager.getCriteriaBuilder",
            "jakarta.persistence.criteria.CriteriaBuilder.createQuery",
            "jakarta.persistence.criteria.CriteriaQuery.from",
            "java.lang.String.isBlank",
            "java.util.List.add",
            "jakarta.persistence.criteria.CriteriaBuilder.equal",
            "jakarta.persistence.criteria.CriteriaBuilder.lower",
            "jakarta.persistence.criteria.Root.get",
            "java.lang.String.toLowerCase",
            "jakarta.persistence.criteria.Root.join",
            "jakarta.persistence.criteria.Join.get",
            "jakarta.persistence.criteria.CriteriaQuery.select",
            "java.util.List.toArray",
            "jakarta.persistence.criteria.Predicate[].new",  # Predicate is imported
            "jakarta.persistence.criteria.CriteriaBuilder.asc",
            "jakarta.persistence.EntityManager.createQuery",
        ],
    ),
    (
        f"{CORE}.util.Page.ItemIterator.next",
        None,
        [f"{CORE}.util.Page.ItemIterator.hasNext", "java.util.List.size", "java.util.List.get"],
    ),
    # T is a type variable, not a class of the package: nothing to qualify.
    (f"{CORE}.util.Page.max", None, []),
    (f"{CORE}.util.Page.Descending.compare", None, []),
    (
        f"{API}.web.LegacyOwnerController.processCreationForm",
        None,
        [
            "org.springframework.validation.BindingResult.hasErrors",
            f"{API}.web.OwnerForm.toDto",  # same package, no wildcard import
            f"{CORE}.service.OwnerService.create",
            "org.springframework.web.servlet.mvc.support.RedirectAttributes.addFlashAttribute",
            f"{CORE}.dto.OwnerDto.displayName",
            f"{CORE}.dto.OwnerDto.id",
        ],
    ),
    (
        f"{API}.web.ApiExceptionHandler.handleBadRequest",
        None,
        [
            "org.slf4j.Logger.debug",
            "java.lang.Exception.getMessage",
            "org.springframework.http.ProblemDetail.forStatusAndDetail",
            "org.springframework.http.ResponseEntity.badRequest",
        ],
    ),
    (
        f"{JOBS}.messaging.OwnerEventListener.onOwnerEvent",
        None,
        [
            f"{CORE}.service.OwnerService.create",
            f"{JOBS}.messaging.OwnerEventMapper.toDto",
            f"{CORE}.service.NotificationService.notifyOwner",
            f"{CORE}.dto.OwnerDto.id",
            "java.util.Map.of",
            f"{JOBS}.messaging.OwnerEvent.Registered.lastName",
            f"{JOBS}.messaging.OwnerEvent.Deleted.isGdprRequest",
            "org.slf4j.Logger.info",
            f"{JOBS}.messaging.OwnerEvent.Deleted.ownerId",
            f"{CORE}.service.OwnerService.delete",
            "org.slf4j.Logger.debug",
            f"{JOBS}.messaging.OwnerEvent.getClass",
            "org.springframework.kafka.support.Acknowledgment.acknowledge",
        ],
    ),
    # VisitResource imports jakarta.ws.rs.*, so same-package names (VisitRepresentation) stay unresolved.
    (f"{JOBS}.rest.VisitResource.getVisit", None, [f"{CORE}.repository.VisitRepository.findById"]),
    (
        f"{JOBS}.rest.VisitResource.scheduleVisit",
        None,
        [
            f"{CORE}.repository.PetRepository.findById",
            f"{CORE}.domain.Visit.setPet",
            f"{CORE}.domain.Visit.setDate",
            f"{CORE}.domain.Visit.setDescription",
            f"{CORE}.domain.Visit.setVetName",
            f"{CORE}.repository.VisitRepository.save",
            "jakarta.ws.rs.core.UriInfo.getAbsolutePathBuilder",
            "java.lang.String.valueOf",
            f"{CORE}.domain.Visit.getId",
            "jakarta.ws.rs.core.Response.created",
        ],
    ),
    (f"{JOBS}.rest.JerseyConfig.JerseyConfig", None, [f"{JOBS}.rest.JerseyConfig.register"]),
    (f"{CORE}.config.CoreConfiguration.clock", None, ["java.time.Clock.systemUTC"]),
]


@pytest.mark.parametrize(("name", "params", "calls_fq"), CALLS_FQ, ids=[case_id(n, p) for n, p, _ in CALLS_FQ])
def test_calls_fq(shop: Shop, name: str, params: tuple[str, ...] | None, calls_fq: list[str]) -> None:
    assert sorted(shop.one(name, params).calls_fq) == sorted(calls_fq)
