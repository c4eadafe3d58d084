"""Questions over real Kotlin Spring code (issue 29): spring-petclinic-kotlin at `repos.PETCLINIC_KOTLIN`.

Written by reading the pinned code (git show on the mirror) before any search was run on it; none was
reworded or re-picked after seeing results. The model is the real suite's (`tests.quality.real.questions`),
scored by the same code, with one difference: `gold.py` reads Java only, so every answer here is written
by hand, symbol and route answers and set gold included (`SetQuestion.gold`), and checked only for being
declared (`kotlin_names`). What each answer rests on:

- routes: `PetController`'s class-level `@RequestMapping("/owners/{ownerId}")` prefixes its four
  handlers; `VisitController`'s GET pattern has a `*` segment; `VetController`'s `"vets.json"` has no
  leading slash (Spring adds it);
- callers: the controllers call the repositories through their primary-constructor properties
  (`owners.findById`, `this.pets.findPetTypes`), and `Owner.addPet` / `Pet.addVisit` on parameters and locals;
- injections: the primary constructors of the `@Controller` classes and of `@Component PetTypeFormatter`.
"""

from __future__ import annotations

from typing import Final

from tests.quality.kotlin.repos import PETCLINIC_KOTLIN
from tests.quality.real.questions import SetQuestion, Single, _n

REPO: Final = PETCLINIC_KOTLIN.repo_path
_P = "org.springframework.samples.petclinic."


NATURAL: Final[tuple[Single, ...]] = (
    _n("what fields must be filled in when adding a pet", _P + "owner.PetValidator.validate"),
    _n(
        "where is a new pet rejected because the owner already has a pet of that name",
        _P + "owner.PetController.processCreationForm",
    ),
    _n(
        "how is the kind of animal picked in a form converted from text",
        _P + "owner.PetTypeFormatter.parse",
        tags="vocab",
    ),
    _n(
        "how are owners searched by their last name",
        _P + "owner.OwnerController.processFindForm",
        _P + "owner.OwnerRepository.findByLastName",
    ),
    _n(
        "where is an appointment for a pet booked",
        _P + "owner.VisitController.processNewVisitForm",
        _P + "owner.VisitController.loadPetWithVisit",
        tags="vocab",
    ),
    _n(
        "which cache holds the veterinarians and how is it configured",
        _P + "system.CacheConfig.cacheManagerCustomizer",
        _P + "system.CacheConfig.createCacheConfiguration",
        _P + "vet.VetRepository.findAll",
    ),
    _n("how is the list of vets returned as JSON", _P + "vet.VetController.showJsonVetList"),
    _n("how are an owner's pets sorted by name", _P + "owner.Owner.getPets"),
    _n(
        "where does the application throw an error on purpose to show the error page",
        _P + "system.CrashController.triggerException",
        tags="vocab",
    ),
    _n("how is a pet looked up by name among an owner's pets, ignoring case", _P + "owner.Owner.getPet"),
    _n(
        "where are an owner's pets loaded with their visits for the details page",
        _P + "owner.OwnerController.showOwner",
    ),
)


def _s(name: str, *expected: str) -> Single:
    return Single(name, "symbol", frozenset(_P + e for e in expected), repo=REPO, lookup=name)


SYMBOL: Final[tuple[Single, ...]] = (
    _s("PetTypeFormatter", "owner.PetTypeFormatter", "owner.PetTypeFormatter.PetTypeFormatter"),
    _s("OwnerController.processFindForm", "owner.OwnerController.processFindForm"),
    _s("VisitRepository.findByPetId", "visit.VisitRepository.findByPetId"),
    _s("Vets", "vet.Vets", "vet.Vets.Vets"),
    _s("PetValidator.validate", "owner.PetValidator.validate"),
)


def _r(text: str, *expected: str) -> Single:
    verb, path = text.split()[:2]
    return Single(text, "route", frozenset(_P + e for e in expected), repo=REPO, lookup=f"{verb} {path}")


ROUTE: Final[tuple[Single, ...]] = (
    _r("POST /owners/7/pets/new", "owner.PetController.processCreationForm"),
    _r("POST /owners/7/pets/3/edit", "owner.PetController.processUpdateForm"),
    _r("GET /owners/3/pets/5/visits/new", "owner.VisitController.initNewVisitForm"),
    _r("GET /owners/12/edit", "owner.OwnerController.initUpdateOwnerForm"),
    _r("GET /vets.json", "vet.VetController.showJsonVetList"),
    _r("GET /oups", "system.CrashController.triggerException"),
)


def _c(method: str, *gold: str) -> SetQuestion:
    return SetQuestion("callers", method, REPO, gold=frozenset(_P + g for g in gold))


def _i(type_name: str, *gold: str) -> SetQuestion:
    return SetQuestion("injection", type_name, REPO, gold=frozenset(_P + g for g in gold))


def _a(annotation: str, *gold: str) -> SetQuestion:
    return SetQuestion("annotation", annotation, REPO, gold=frozenset(_P + g for g in gold))


SETS: Final[tuple[SetQuestion, ...]] = (
    _c(
        "OwnerRepository.findById",
        "owner.OwnerController.initUpdateOwnerForm",
        "owner.OwnerController.showOwner",
        "owner.PetController.findOwner",
    ),
    _c("PetRepository.findPetTypes", "owner.PetController.populatePetTypes", "owner.PetTypeFormatter.parse"),
    _c("PetRepository.findById", "owner.PetController.initUpdateForm", "owner.VisitController.loadPetWithVisit"),
    _c("VisitRepository.findByPetId", "owner.OwnerController.showOwner"),
    _c(
        "Owner.addPet",
        "owner.PetController.initCreationForm",
        "owner.PetController.processCreationForm",
        "owner.PetController.processUpdateForm",
    ),
    _c("Pet.addVisit", "owner.VisitController.loadPetWithVisit"),
    _c(
        "VetRepository.findAll",
        "vet.VetController.showHtmlVetList",
        "vet.VetController.showJsonVetList",
        "vet.VetController.showXmlVetList",
    ),
    _i("PetRepository", "owner.PetController", "owner.VisitController", "owner.PetTypeFormatter"),
    _i("OwnerRepository", "owner.OwnerController", "owner.PetController"),
    _i("VisitRepository", "owner.OwnerController", "owner.VisitController"),
    _i("VetRepository", "vet.VetController"),
    SetQuestion("inverse", _P + "owner.OwnerController", REPO, gold=frozenset({"OwnerRepository", "VisitRepository"})),
    _a(
        "InitBinder",
        "owner.OwnerController.setAllowedFields",
        "owner.PetController.initOwnerBinder",
        "owner.PetController.initPetBinder",
        "owner.VisitController.setAllowedFields",
    ),
    _a(
        "ModelAttribute",
        "owner.PetController.populatePetTypes",
        "owner.PetController.findOwner",
        "owner.VisitController.loadPetWithVisit",
    ),
    _a(
        "Transactional",
        "owner.OwnerRepository.findByLastName",
        "owner.OwnerRepository.findById",
        "owner.PetRepository.findPetTypes",
        "owner.PetRepository.findById",
        "vet.VetRepository.findAll",
    ),
    SetQuestion(
        "endpoints",
        "/owners/5/edit",
        REPO,
        "POST",
        gold=frozenset({_P + "owner.OwnerController.processUpdateOwnerForm"}),
    ),
)


SINGLES: Final[tuple[Single, ...]] = NATURAL + SYMBOL + ROUTE
