"""Calls of the `shop` fixture's methods: `Receiver.method` with the declared simple type, compact chains,
method references, and the fully qualified forms of resolved receivers."""

from __future__ import annotations

import pytest

from tests.support.shop import API, CORE, HALF, JOBS, Shop, case_id

# --------------------------------------------------------------------------------------------------
# Calls (compared without order: the rules say what the entries are, not their order)
# --------------------------------------------------------------------------------------------------

CALLS: list[tuple[str, tuple[str, ...] | None, list[str]]] = [
    (
        f"{CORE}.service.OwnerService.find",
        ("Long",),
        ["Objects.requireNonNull", "OwnerRepository.findById", "OwnerRepository.findById().map", "OwnerMapper.toDto"],
    ),
    (f"{CORE}.service.OwnerService.find", ("String",), ["OwnerService.find"]),
    (
        f"{CORE}.service.OwnerService.find",
        ("String", "int"),
        [
            "PageRequest.of",
            "Sort.by",
            "OwnerRepository.findByLastNameStartingWithIgnoreCase",
            "OwnerService.normalize",
            "OwnerMapper.toDtos",
        ],
    ),
    (
        f"{CORE}.service.OwnerService.create",
        None,
        [
            "OwnerMapper.toEntity",
            "OwnerRepository.save",
            "ApplicationEventPublisher.publishEvent",
            "OwnerCreatedEvent.now",
            "Owner.getId",
            "Logger.info",
            "OwnerMapper.toDto",
        ],
    ),
    (
        f"{CORE}.service.OwnerService.update",
        None,
        [
            "OwnerRepository.findById",
            "OwnerRepository.findById().orElseThrow",
            "OwnerMapper.copyInto",  # new OwnerMapper().copyInto(..)
            "OwnerMapper.toDto",
        ],
    ),
    (
        f"{CORE}.service.OwnerService.delete",
        None,
        ["OwnerRepository.existsById", "PetRepository.deleteByOwnerId", "OwnerRepository.deleteById", "Logger.info"],
    ),
    (
        f"{CORE}.service.OwnerService.saveAll",
        None,
        ["List.stream", "List.stream().map", "List.stream().map().toList", "OwnerService.upsert"],  # this::upsert
    ),
    (
        f"{CORE}.service.OwnerService.findPetNames",
        None,
        [
            "PetRepository.findByOwnerId",
            "PetRepository.findByOwnerId().stream",
            "PetRepository.findByOwnerId().stream().filter",
            "pet.getType",  # a lambda parameter has no declared type
            "PetRepository.findByOwnerId().stream().filter().map",
            "Pet.getName",  # Pet::getName
            "PetRepository.findByOwnerId().stream().filter().map().sorted",
            "PetRepository.findByOwnerId().stream().filter().map().sorted().toList",
        ],
    ),
    (
        f"{CORE}.service.OwnerService.sortedByName",
        None,
        [
            "List.sort",
            "Owner.getLastName",
            "Owner.getLastName().compareToIgnoreCase",
            "Owner.getFirstName",
            "Owner.getFirstName().compareToIgnoreCase",
            "List.stream",
            "List.stream().map",
            "List.stream().map().toList",
            "OwnerMapper.toDto",
        ],
    ),
    (f"{CORE}.service.OwnerService.upsert", None, ["OwnerDto.id", "OwnerService.create", "OwnerService.update"]),
    (f"{CORE}.service.OwnerService.normalize", None, ["String.strip"]),
    (f"{API}.web.OwnerController.findOwner", None, ["OwnerService.find", "OwnerService.find().orElseThrow"]),
    (
        f"{API}.web.OwnerController.createOwner",
        None,
        [
            "OwnerService.create",
            "ResponseEntity.created",
            "OwnerController.locationOf",
            "ResponseEntity.created().body",
        ],
    ),
    (
        f"{API}.web.OwnerController.initNewPetForm",
        None,
        [
            "OwnerController.findOwner",
            "Arrays.stream",
            "PetType.values",
            "Arrays.stream().map",
            "Arrays.stream().map().toList",
            "PetType.label",
            "OwnerDto.id",
            "OwnerDto.displayName",
        ],
    ),
    (
        f"{API}.web.OwnerController.locationOf",
        None,
        [
            "ServletUriComponentsBuilder.fromCurrentRequest",
            "ServletUriComponentsBuilder.fromCurrentRequest().path",
            "ServletUriComponentsBuilder.fromCurrentRequest().path().buildAndExpand",
            "OwnerDto.id",
            "ServletUriComponentsBuilder.fromCurrentRequest().path().buildAndExpand().toUri",
        ],
    ),
    (
        f"{API}.web.LegacyOwnerController.showOwner",
        None,
        ["OwnerService.find", "OwnerService.find().orElseThrow", "Model.addAttribute", "OwnerService.findPetNames"],
    ),
    (
        f"{API}.web.LegacyOwnerController.processCreationForm",
        None,
        [
            "BindingResult.hasErrors",
            "OwnerForm.toDto",
            "OwnerService.create",
            "RedirectAttributes.addFlashAttribute",
            "OwnerDto.displayName",
            "OwnerDto.id",
        ],
    ),
    (
        f"{API}.web.InvoiceController.invoiceOwner",
        None,
        ["Long.equals", "InvoiceRequest.ownerId", "BillingClient.createInvoice"],
    ),
    (
        f"{API}.web.ApiExceptionHandler.handleOwnerNotFound",
        None,
        [
            "ProblemDetail.forStatusAndDetail",
            "OwnerNotFoundException.getMessage",
            "ProblemDetail.setTitle",
            "ProblemDetail.setProperty",
            "OwnerNotFoundException.getOwnerId",
        ],
    ),
    (
        f"{API}.web.ApiExceptionHandler.handleBadRequest",
        None,
        [
            "Logger.debug",
            "Exception.getMessage",
            "ProblemDetail.forStatusAndDetail",
            "ResponseEntity.badRequest",
            "ResponseEntity.badRequest().body",
        ],
    ),
    (
        f"{CORE}.service.OrderService.quote",
        None,
        [
            "List.isEmpty",
            "OwnerRepository.findById",
            "OwnerRepository.findById().orElseThrow",
            "PetRepository.findByOwnerId",
            "List.stream",
            "List.stream().map",
            "OrderLine.total",  # OrderLine::total
            "List.stream().map().reduce",
            "BigDecimal.add",  # BigDecimal::add
            "PricingPolicy.discountFor",
            "BigDecimal.subtract",
            "BigDecimal.subtract().compareTo",
            "PricingPolicy.shippingFee",
            "Logger.debug",  # Lombok @Slf4j
            "List.copyOf",
        ],
    ),
    (
        f"{CORE}.service.OrderService.suggestFood",
        None,
        [
            "PetRepository.findByOwnerId",
            "PetRepository.findByOwnerId().forEach",
            "Map.computeIfAbsent",
            "pet.getType",
            "Map.computeIfAbsent().add",
            "OrderLine.of",
            "pet.getType().name",
            "PricingPolicy.unitPrice",
        ],
    ),
    (
        f"{CORE}.service.NotificationService.notifyOwner",
        None,
        [
            "OwnerRepository.findById",
            "OwnerRepository.findById().orElse",
            "Owner.getEmail",
            "NotificationService.sentRecently",
            "Map.put",
            "Owner.getFullName",
            "TemplateRenderer.render",
            "MailGateway.send",
            "NotificationService.subjectFor",
            "Instant.now",
        ],
    ),
    (
        f"{CORE}.service.NotificationService.sentRecently",
        None,
        ["Map.get", "Instant.plus", "Instant.plus().isAfter", "Instant.now"],
    ),
    (
        f"{CORE}.notify.TemplateRenderer.render",
        None,
        [
            "Map.computeIfAbsent",
            "TemplateRenderer.load",  # this::load
            "Map.entrySet",
            "String.replace",
            "Map.Entry.getKey",
            "String.valueOf",
            "Map.Entry.getValue",
        ],
    ),
    (f"{CORE}.notify.TemplateRenderer.load", None, ["Resource.getInputStream", "StreamUtils.copyToString"]),
    (
        f"{CORE}.repository.OwnerSearchRepositoryImpl.searchByCityAndPetType",
        None,
        [
            "EntityManager.getCriteriaBuilder",
            "CriteriaBuilder.createQuery",
            "CriteriaQuery.from",
            "String.isBlank",
            "List.add",
            "CriteriaBuilder.equal",
            "CriteriaBuilder.lower",
            "Root.get",
            "Root.get().get",  # .<String>get(..)
            "String.toLowerCase",
            "Root.join",
            "Join.get",
            "CriteriaQuery.select",
            "CriteriaQuery.select().distinct",
            "CriteriaQuery.select().distinct().where",
            "List.toArray",
            "Predicate[].new",  # Predicate[]::new
            "CriteriaQuery.select().distinct().where().orderBy",
            "CriteriaBuilder.asc",
            "EntityManager.createQuery",
            "EntityManager.createQuery().setMaxResults",
            "EntityManager.createQuery().setMaxResults().getResultList",
        ],
    ),
    (
        f"{CORE}.order.StandardPricingPolicy.discountFor",
        None,
        ["List.size", "PricingPolicy.percentOf", "BigDecimal.compareTo"],
    ),
    (
        f"{CORE}.order.PricingPolicy.percentOf",
        None,
        ["BigDecimal.multiply", "BigDecimal.valueOf", "BigDecimal.multiply().divide"],
    ),
    (f"{CORE}.order.OrderQuote.total", None, ["BigDecimal.subtract", "BigDecimal.subtract().add"]),
    (f"{CORE}.domain.Owner.addPet", None, ["List.contains", "List.add", "Pet.setOwner"]),
    (
        f"{CORE}.domain.Owner.getPet",
        None,
        [
            "List.stream",
            "List.stream().filter",
            "pet.getName",
            "pet.getName().equalsIgnoreCase",
            "List.stream().filter().findFirst",
        ],
    ),
    (
        f"{CORE}.domain.PetType.fromLabel",
        None,
        [
            "Arrays.stream",
            "PetType.values",
            "Arrays.stream().filter",
            "type.label.equalsIgnoreCase",
            "Arrays.stream().filter().findFirst",
            "Arrays.stream().filter().findFirst().orElseThrow",
        ],
    ),
    (f"{CORE}.dto.OwnerDto.OwnerDto", None, ["Objects.requireNonNull", "String.strip"]),
    (
        f"{CORE}.dto.OwnerMapper.toDtos",
        None,
        ["Collection.stream", "Collection.stream().map", "Collection.stream().map().toList", "OwnerMapper.toDto"],
    ),
    (
        f"{CORE}.util.Lists.groupBy",
        None,
        [
            "Map.computeIfAbsent",
            "Function.apply",
            "Map.computeIfAbsent().add",
            "Map.replaceAll",
            "Collections.unmodifiableList",
        ],
    ),
    (f"{CORE}.util.Page.ItemIterator.next", None, ["ItemIterator.hasNext", "List.size", "List.get"]),
    (f"{CORE}.util.Page.max", None, ["T.compareTo"]),
    (f"{CORE}.config.CoreConfiguration.clock", None, ["Clock.systemUTC"]),
    (
        f"{CORE}.service.ReportService.recentVisitsByType",
        None,
        [
            "LocalDate.now",
            "VisitRepository.findByDateBetween",
            "LocalDate.minusDays",
            "Map.merge",
            "Visit.getPet",
            "Visit.getPet().getType",
            "Long.sum",
        ],
    ),
    (f"{HALF}.bonusPoints", None, ["HalfWritten.pointsFor", "List.size"]),
    (
        f"{JOBS}.scheduling.ReminderJob.sendVisitReminders",
        None,
        [
            "LocalDate.now",
            "LocalDate.now().plusDays",
            "VisitRepository.findByDateBetween",
            "Visit.getStatus",
            "Visit.getPet",
            "Visit.getPet().getOwner",
            "Visit.getPet().getOwner().getId",
            "Map.of",
            "Visit.getPet().getName",
            "Visit.getDate",
            "Visit.getVetName",
            "NotificationService.notifyOwner",
            "Logger.info",
        ],
    ),
    (
        f"{JOBS}.scheduling.ReminderJob.markNoShows",
        None,
        [
            "LocalDate.now",
            "LocalDate.now().minusDays",
            "JobsProperties.noShowGraceDays",
            "VisitRepository.findByStatusAndDateBefore",
            "List.forEach",
            "visit.setStatus",
            "VisitRepository.saveAll",
        ],
    ),
    (
        f"{JOBS}.messaging.OwnerEventListener.onOwnerEvent",
        None,
        [
            "OwnerService.create",
            "OwnerEventMapper.toDto",
            "NotificationService.notifyOwner",
            "OwnerDto.id",
            "Map.of",
            "OwnerEvent.Registered.lastName",
            "OwnerEvent.Deleted.isGdprRequest",
            "Logger.info",
            "OwnerEvent.Deleted.ownerId",
            "OwnerService.delete",
            "Logger.debug",
            "OwnerEvent.getClass",
            "OwnerEvent.getClass().getSimpleName",
            "Acknowledgment.acknowledge",
        ],
    ),
    (
        f"{JOBS}.config.JobsConfiguration.ownerEventErrorHandler",
        None,
        ["JobsProperties.retryInterval", "JobsProperties.retryInterval().toMillis", "JobsProperties.maxRetries"],
    ),
    (
        f"{JOBS}.config.JobsConfiguration.kafkaListenerContainerFactory",
        None,
        [
            "ConcurrentKafkaListenerContainerFactory.setConsumerFactory",
            "ConcurrentKafkaListenerContainerFactory.setCommonErrorHandler",
            "ConcurrentKafkaListenerContainerFactory.getContainerProperties",
            "ConcurrentKafkaListenerContainerFactory.getContainerProperties().setAckMode",
        ],
    ),
    (
        f"{JOBS}.rest.VisitResource.getVisit",
        None,
        [
            "VisitRepository.findById",
            "VisitRepository.findById().map",
            "VisitRepresentation.from",
            "VisitRepository.findById().map().orElseThrow",
        ],
    ),
    (
        f"{JOBS}.rest.VisitResource.scheduleVisit",
        None,
        [
            "PetRepository.findById",
            "VisitRepresentation.petId",
            "PetRepository.findById().orElseThrow",
            "Visit.setPet",
            "Visit.setDate",
            "VisitRepresentation.date",
            "Visit.setDescription",
            "VisitRepresentation.description",
            "Visit.setVetName",
            "VisitRepresentation.vetName",
            "VisitRepository.save",
            "UriInfo.getAbsolutePathBuilder",
            "UriInfo.getAbsolutePathBuilder().path",
            "String.valueOf",
            "Visit.getId",
            "UriInfo.getAbsolutePathBuilder().path().build",
            "Response.created",
            "Response.created().entity",
            "VisitRepresentation.from",
            "Response.created().entity().build",
        ],
    ),
    (
        f"{JOBS}.rest.VisitResource.cancelVisit",
        None,
        [
            "VisitRepository.findById",
            "VisitRepository.findById().orElseThrow",
            "Visit.setStatus",
            "Response.noContent",
            "Response.noContent().build",
        ],
    ),
    (f"{JOBS}.rest.JerseyConfig.JerseyConfig", None, ["JerseyConfig.register"]),
    (f"{JOBS}.messaging.OwnerEvent.Deleted.isGdprRequest", None, ["String.startsWith"]),
    (f"{API}.web.OwnerController.updateOwner", None, ["OwnerService.update"]),
    (f"{CORE}.dto.OwnerMapper.toDto", None, ["Owner.getId", "Owner.getFirstName", "Owner.getLastName"]),
    (f"{CORE}.order.StandardPricingPolicy.unitPrice", None, []),
    (f"{CORE}.util.Lists.copy", None, []),
]


@pytest.mark.parametrize(("name", "params", "calls"), CALLS, ids=[case_id(n, p) for n, p, _ in CALLS])
def test_calls(shop: Shop, name: str, params: tuple[str, ...] | None, calls: list[str]) -> None:
    assert sorted(shop.one(name, params).calls) == sorted(calls)


def test_calls_have_no_duplicates(shop: Shop) -> None:
    for chunk in shop.chunks:
        assert len(chunk.calls) == len(set(chunk.calls)), chunk.qualified_name
        assert len(chunk.calls_fq) == len(set(chunk.calls_fq)), chunk.qualified_name


def test_calls_of_an_anonymous_class_belong_to_the_enclosing_method(shop: Shop) -> None:
    assert "Owner.getLastName" in shop.one(f"{CORE}.service.OwnerService.sortedByName").calls


def test_unqualified_call_in_an_inner_class_is_the_inner_class_method(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.util.Page.ItemIterator.next")
    assert "ItemIterator.hasNext" in chunk.calls
    assert "Page.hasNext" not in chunk.calls
