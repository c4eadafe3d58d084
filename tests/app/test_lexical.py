from __future__ import annotations

from dataclasses import replace

import pytest

from app.store.lexical import (
    STEM_WEIGHT,
    STOP_WORDS,
    SparseVector,
    document_vector,
    query_vector,
    search_terms,
    split_header,
    stem,
    term_id,
    tokenize,
)
from pipeline.render import embedding_text
from tests.support.java import header_chunk

K1 = 1.2
B = 0.75
AVG_LEN = 256.0


def bm25_tf(tf: int, length: int) -> float:
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / AVG_LEN))


def weight_of(vector: SparseVector, token: str) -> float:
    return vector.values[vector.indices.index(term_id(token))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("findById", ["findbyid", "find", "by", "id"]),
        ("OwnerRepository", ["ownerrepository", "owner", "repository"]),
        ("HTTPServerError", ["httpservererror", "http", "server", "error"]),
        ("IOException", ["ioexception", "io", "exception"]),
        ("URLs", ["urls"]),
        ("snake_case_name", ["snake_case_name", "snake", "case", "name"]),
        ("MAX_VALUE", ["max_value", "max", "value"]),
        ("kebab-case-name", ["kebab", "case", "name"]),
        ("owner", ["owner"]),
    ],
)
def test_tokenize_splits_identifiers(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parseJSON2Yaml", ["parsejson2yaml", "parse", "json", "yaml"]),
        ("Base64Encoder", ["base64encoder", "base", "64", "encoder"]),
        ("X509Certificate", ["x509certificate", "509", "certificate"]),
        ("404 100L 0x7f 3.14f 7", ["404", "100", "14"]),
    ],
)
def test_tokenize_splits_digits_off_and_keeps_runs_of_two_or_more(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_tokenize_dotted_name_yields_segments_then_adjacent_pairs() -> None:
    assert tokenize("com.acme.OwnerService.findById") == [
        "com",
        "acme",
        "ownerservice",
        "owner",
        "service",
        "findbyid",
        "find",
        "by",
        "id",
        "com.acme",
        "acme.ownerservice",
        "ownerservice.findbyid",
    ]


def test_tokenize_pairs_skip_stop_words_and_single_letters() -> None:
    assert tokenize("this.repository e.getMessage") == ["repository", "getmessage", "get", "message"]


def test_tokenize_http_path() -> None:
    assert tokenize("/api/owners/{ownerId}") == ["api", "owners", "ownerid", "owner", "id"]


def test_tokenize_drops_stop_words_and_java_noise() -> None:
    text = "public static final void main(String[] args) { return this.of; } the value of a class is new"
    assert tokenize(text) == ["main", "string", "args", "value"]


@pytest.mark.parametrize("word", ["by", "id", "get", "set", "find", "all", "not", "null", "int", "long"])
def test_meaningful_short_words_are_not_stop_words(word: str) -> None:
    assert word not in STOP_WORDS
    assert tokenize(word) == [word]


def test_tokenize_spring_data_name_keeps_every_part() -> None:
    assert tokenize("findAllByLastNameOrderById") == [
        "findallbylastnameorderbyid",
        "find",
        "all",
        "by",
        "last",
        "name",
        "order",
        "by",
        "id",
    ]


def test_tokenize_does_not_split_non_ascii_identifiers_on_case() -> None:
    assert tokenize("größeÄnderung") == ["größeänderung"]


def test_term_id_is_a_stable_contract() -> None:
    assert [term_id("owner"), term_id("findbyid"), term_id("id")] == [2911229241, 1635432877, 516701077]


def test_term_id_is_unsigned_32_bit() -> None:
    ids = [term_id(token) for token in tokenize("com.acme.OwnerService.findById HTTPServerError größe 404")]
    assert all(0 <= i < 2**32 for i in ids)


def test_split_header() -> None:
    assert split_header("symbol: a.B\n---\ncode\n---\nmore") == ("symbol: a.B", "code\n---\nmore")
    assert split_header("just code") == ("", "just code")
    assert split_header("---\ncode") == ("", "code")


def test_document_vector_uses_bm25_term_frequency() -> None:
    vector = document_vector("owner owner service")
    assert weight_of(vector, "owner") == pytest.approx(bm25_tf(2, 3))
    assert weight_of(vector, "service") == pytest.approx(bm25_tf(1, 3))


def test_document_vector_saturates_repeated_terms() -> None:
    once = weight_of(document_vector("owner"), "owner")
    ten_times = weight_of(document_vector(" ".join(["owner"] * 10)), "owner")
    assert once < ten_times < 10 * once
    assert ten_times < K1 + 1


def test_document_vector_counts_boosted_header_lines_twice() -> None:
    assert document_vector("symbol: com.acme.findById\n---\n") == document_vector("com.acme.findById " * 2)
    assert document_vector("calls: findById\n---\n") == document_vector("findById")


def test_document_vector_header_boost_outranks_incidental_mentions() -> None:
    own = document_vector("symbol: OwnerRepository.findById\n---\nfindById(id)")
    caller = document_vector("symbol: VisitService.load\ncalls: findById\n---\nrepo.findById(id)")
    assert weight_of(own, "findbyid") > weight_of(caller, "findbyid")


def test_document_vector_does_not_index_header_labels() -> None:
    vector = document_vector("symbol: Owner\nsignature: Owner\n---\n")
    assert vector.indices == (term_id("owner"),)


def test_document_vector_indices_sorted_unique_and_values_positive() -> None:
    text = "symbol: com.acme.OwnerService.findById\n---\npublic Owner findById(Long id) { return repo.findById(id); }"
    vector = document_vector(text)
    assert list(vector.indices) == sorted(set(vector.indices))
    assert len(vector.values) == len(vector.indices)
    assert all(value > 0 for value in vector.values)


def test_document_vector_merges_terms_that_share_an_id() -> None:
    assert term_id("qvxiaa") == term_id("qxkuga")  # a known blake2b-32 collision
    vector = document_vector("qvxiaa qxkuga")
    assert vector.indices == (term_id("qvxiaa"),)
    assert len(vector.values) == 1
    assert vector.values[0] == pytest.approx(bm25_tf(2, 2))


@pytest.mark.parametrize("text", ["", "   \n", "the public static void", "---\n", "a b c"])
def test_empty_text_gives_empty_vectors(text: str) -> None:
    assert document_vector(text) == SparseVector(indices=(), values=())
    assert query_vector(text) == SparseVector(indices=(), values=())


@pytest.mark.parametrize(("k1", "b", "avg_len"), [(-0.1, 0.75, 256.0), (1.2, 1.5, 256.0), (1.2, 0.75, 0.0)])
def test_document_vector_rejects_bad_parameters(k1: float, b: float, avg_len: float) -> None:
    with pytest.raises(ValueError):
        document_vector("owner", k1=k1, b=b, avg_len=avg_len)


def test_query_vector_weighs_each_distinct_term_once() -> None:
    vector = query_vector("find Owner find owner")
    assert vector.indices == tuple(sorted({term_id("find"), term_id("owner")}))
    assert vector.values == (1.0, 1.0)


def test_sparse_vector_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError):
        SparseVector(indices=(1, 2), values=(1.0,))


def test_the_words_line_is_not_weighed_by_lexical_search() -> None:
    text = embedding_text(replace(header_chunk(), qualified_name="demo.OrderService.getTotal", code="x"))
    assert "words: order service get total" in text
    without = text.replace("words: order service get total\n", "")
    assert document_vector(text) == document_vector(without)


def test_tokenize_pairs_runs_of_chinese_characters() -> None:
    # A comment sentence is one run; its character pairs let a question's words match inside it.
    assert tokenize("查询商品分类") == ["查询商品分类", "查询", "询商", "商品", "品分", "分类"]
    assert tokenize("// 商品 分类") == ["商品", "分类"]  # two-character words are already whole terms


def test_a_chinese_question_matches_words_inside_a_comment_sentence() -> None:
    comment = set(document_vector("/** 根据分类查询商品列表 */ List<Product> list(Long id)").indices)
    assert set(query_vector("商品列表").indices) & comment
    assert not set(query_vector("订单").indices) & comment


@pytest.mark.parametrize(
    "words",
    [
        ("calculate", "calculated", "calculates", "calculating", "calculation"),
        ("create", "created", "creation", "creates"),
        ("map", "mapping", "mapped"),
        ("pay", "payment", "payments"),
        ("category", "categories"),
        ("address", "addresses"),
        ("delete", "deleted", "deletion"),
    ],
)
def test_stem_folds_inflections_of_one_word(words: tuple[str, ...]) -> None:
    assert len({stem(word) for word in words}) == 1


@pytest.mark.parametrize("word", ["string", "status", "need", "class", "owner", "id", "getorder", "商品分类", "404"])
def test_stem_leaves_words_without_a_foldable_suffix(word: str) -> None:
    assert stem(word) == word


def test_stem_keeps_a_vowel_and_three_letters() -> None:
    assert stem("thing") == "thing"
    assert stem("seed") == "seed"
    assert stem("used") == "used"


def test_search_terms_add_stems_and_keep_each_token() -> None:
    terms = search_terms(tokenize("calculatedTotal payments payments owner"))
    assert terms["calculated"] == 1 and terms["payments"] == 2 and terms["owner"] == 1
    assert terms["calcul"] == 1 and terms["pay"] == 2
    assert "own" not in terms


def score(query: SparseVector, document: SparseVector) -> float:
    weights = dict(zip(document.indices, document.values, strict=True))
    return sum(weights.get(index, 0.0) for index in query.indices)


def test_an_inflected_question_matches_the_code_and_the_exact_form_scores_higher() -> None:
    question = query_vector("where is the total calculated")
    inflected = document_vector("symbol: Invoice.calculateTotal\n---\ntotal = sum(lines);")
    exact = document_vector("symbol: Invoice.total\n---\n// the calculated total\ntotal = sum(lines);")
    other = document_vector("symbol: Invoice.printTotal\n---\ntotal = sum(lines);")
    assert score(question, inflected) > score(question, other) > 0.0
    assert weight_of(exact, "calculated") > 0 and weight_of(inflected, "calcul") > 0
    assert term_id("calculated") in question.indices and term_id("calcul") in question.indices
    assert term_id("calculated") not in inflected.indices


def test_stems_do_not_lengthen_the_document() -> None:
    # Two texts of the same token count weigh a shared term alike, whether or not their other words fold.
    folded = document_vector("owner payments")
    plain = document_vector("owner zzyzx")
    assert weight_of(folded, "owner") == pytest.approx(weight_of(plain, "owner"))


def test_a_foldable_question_word_weighs_as_much_as_one_that_is_not() -> None:
    vector = query_vector("payments owner")
    weights = dict(zip(vector.indices, vector.values, strict=True))
    assert weights[term_id("payments")] == pytest.approx(1.0 - STEM_WEIGHT)
    assert weights[term_id("pay")] == pytest.approx(STEM_WEIGHT)
    assert weights[term_id("owner")] == 1.0
    assert sum(vector.values) == pytest.approx(2.0)


def test_a_question_word_and_another_words_stem_add_up() -> None:
    vector = query_vector("pay payments")
    weights = dict(zip(vector.indices, vector.values, strict=True))
    assert weights[term_id("pay")] == pytest.approx(1.0 + STEM_WEIGHT)
