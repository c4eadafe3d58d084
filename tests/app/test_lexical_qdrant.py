from __future__ import annotations

from qdrant_client import QdrantClient, models

from app.store.lexical import document_vector, query_vector
from pipeline.render import embedding_text
from tests.support.java import header_chunk


def _text(qualified_name: str, signature: str, code: str, *, calls: tuple[str, ...] = ()) -> str:
    chunk = header_chunk(
        package=qualified_name.rsplit(".", 2)[0],
        qualified_name=qualified_name,
        signature=signature,
        calls=calls,
        code=code,
    )
    return embedding_text(chunk)


CHUNKS = {
    1: _text(
        "com.acme.shop.repository.OwnerRepository.findById",
        "Optional<Owner> findById(Long id)",
        "/** Finds the owner with this id. */\nOptional<Owner> findById(Long id);",
    ),
    2: _text(
        "com.acme.shop.service.VisitService.schedule",
        "public Visit schedule(Long petId, LocalDate date)",
        "public Visit schedule(Long petId, LocalDate date) {\n"
        "    Pet pet = pets.findById(petId).orElseThrow();\n"
        "    return visits.save(new Visit(pet, date));\n}",
        calls=("PetRepository.findById", "VisitRepository.save"),
    ),
    3: _text(
        "com.acme.shop.order.StandardPricingPolicy.price",
        "public Money price(OrderLine line)",
        "public Money price(OrderLine line) {\n    return line.unitPrice().times(line.quantity());\n}",
    ),
    4: _text(
        "com.acme.shop.notify.MailGateway.send",
        "public void send(String to, String subject, String body)",
        'public void send(String to, String subject, String body) {\n    log.info("mail to {}", to);\n}',
    ),
}


def test_find_owner_by_id_ranks_the_owner_repository_first() -> None:
    client = QdrantClient(location=":memory:")
    client.create_collection(
        "chunks",
        vectors_config={},
        sparse_vectors_config={"lexical": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    points = []
    for point_id, text in CHUNKS.items():
        vector = document_vector(text)
        sparse = models.SparseVector(indices=list(vector.indices), values=list(vector.values))
        points.append(models.PointStruct(id=point_id, vector={"lexical": sparse}))
    client.upsert("chunks", points=points)

    query = query_vector("find owner by id")
    hits = client.query_points(
        "chunks",
        query=models.SparseVector(indices=list(query.indices), values=list(query.values)),
        using="lexical",
        limit=10,
    ).points

    # The caller (2) mentions findById incidentally; the pricing and mail chunks share no term.
    assert [hit.id for hit in hits] == [1, 2]
    assert hits[0].score > hits[1].score
    client.close()
