"""Calls on what a method returns (issue 29): a Kotlin local typed by inference; an aliased import.

`val pet = pets.findById(id)` has no written type: the Kotlin reader records `pet.addVisit(v)` on its chain
(`PetRepository.findById().addVisit`, the key Java gives `pets.findById(id).addVisit(v)`) with a mark
(`().addVisit`); `get_callers` reads `findById`'s declared return type (another file's) when it is asked.
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from fastmcp import Client

from tests.support.checkouts import call, checkout_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO: Final = "acme/clinic"
_K = "src/main/kotlin/com/acme/clinic/"
FILES: Final = {
    _K + "Pet.kt": """package com.acme.clinic

class Pet {
    fun addVisit(visit: Visit) {}
}

class Toy {
    fun addVisit(visit: Visit) {}
}
""",
    _K + "PetRepository.kt": """package com.acme.clinic

interface PetRepository {
    fun findById(id: Int): Pet
    fun findToy(id: Int): Toy
}
""",
    _K + "VisitController.kt": """package com.acme.clinic

class VisitController(val pets: PetRepository) {
    fun book(petId: Int) {
        val pet = pets.findById(petId)
        pet.addVisit(Visit())
    }

    fun play(id: Int) {
        val toy = pets.findToy(id)
        toy.addVisit(Visit())
    }
}
""",
    "src/main/kotlin/com/acme/front/Front.kt": """package com.acme.front

import com.acme.clinic.Toy as Plaything

class Front {
    fun play() {
        val toy = Plaything()
        toy.addVisit(Visit())
    }
}
""",
    "src/main/java/com/acme/clinic/Desk.java": """package com.acme.clinic;

class Desk {
    private final PetRepository pets;

    Desk(PetRepository pets) { this.pets = pets; }

    void book(int id) {
        pets.findById(id).addVisit(new Visit());
    }
}
""",
}


deps, client = checkout_fixtures(FILES, REPO)


async def test_callers_through_a_local_typed_by_a_call(client: Client[Any]) -> None:
    found = await call(client, "get_callers", name="Pet.addVisit")
    # Java's chain `pets.findById(id).addVisit(v)` is recorded as before, without the mark: it is found only
    # because a marked Kotlin call spells the same chain (a Java chain alone is not followed).
    assert sorted(r["qualified_name"] for r in found["results"]) == [
        "com.acme.clinic.Desk.book",
        "com.acme.clinic.VisitController.book",
    ]


async def test_the_return_type_picks_the_callee_and_an_aliased_import_resolves(client: Client[Any]) -> None:
    found = await call(client, "get_callers", name="Toy.addVisit")
    assert sorted(r["qualified_name"] for r in found["results"]) == [
        "com.acme.clinic.VisitController.play",
        "com.acme.front.Front.play",  # `import com.acme.clinic.Toy as Plaything`
    ]
    callees = await call(client, "get_callees", name="Front.play")
    assert "com.acme.clinic.Toy.addVisit" in str(callees)
