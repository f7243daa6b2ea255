"""The offline tagger reads the item: tags are the keywords of its own title, description and
text (weighted by where they stand, recurring pairs as phrases, plurals with singulars), the same
every time; and the demo's page merges into the demo user's tags as pg_trgm says."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from adapters.models.keywords import extract_keywords
from adapters.models.offline_tags import OfflineTagProvider
from adapters.models.tag_parsing import parse_tag_answer
from adapters.postgres.tagging import TaggingStore
from contracts.tagging import ApplyTagsRequest, TagPrompt
from policies.tagging import TRIGRAM_MERGE, normalise_suggestions, tag_key
from tollgate.dev.demo_scenes import DEMO_MERGES, DEMO_PAGE, DEMO_USER_TAGS


def names(title: str, description: str = "", text: str = "") -> list[str]:
    return [k.name for k in extract_keywords(title, description, text)]


async def offline(title: str, description: str = "", text: str = "") -> list[tuple[str, float]]:
    prompt = TagPrompt(item_id=1, title=title, description=description, text=text,
                       url="https://example.com/")
    reply = await OfflineTagProvider().suggest_tags(prompt)
    return [(s.tag, s.confidence) for s in parse_tag_answer(reply.raw)]


def test_the_demo_page_gives_its_own_keywords_heaviest_first() -> None:
    found = extract_keywords(DEMO_PAGE.title, DEMO_PAGE.description, DEMO_PAGE.text)
    # "design system" recurs, so it is one phrase (title 3 + description 2 + text 1 + 1), not
    # "design" and "system"; "dashboards" counts with "dashboard"; "components", twice in the
    # text alone, weighs 2, under the floor of 3.
    assert [(k.name, k.weight) for k in found] == [
        ("design system", 7.0), ("Figma", 4.0), ("UI design", 3.0), ("dashboards", 3.0)]
    assert [k.confidence for k in found] == sorted((k.confidence for k in found), reverse=True)


def test_the_text_decides_not_a_table() -> None:
    title = "Weekend notes"
    baking = "Sourdough needs time. A sourdough starter wants feeding; sourdough rewards patience."
    hiking = "The ridge trail is steep. Start the trail early; the trail has no water."
    assert names(title, text=baking) == ["Weekend", "notes", "sourdough"]
    assert names(title, text=hiking) == ["Weekend", "notes", "trail"]
    assert "zorblax" in [n.lower() for n in names("Zorblax", text="zorblax zorblax")]


def test_one_meeting_of_two_words_is_not_a_phrase_but_two_are() -> None:
    assert names("Machine learning pipelines") == ["Machine", "learning", "pipelines"]
    twice = names("Machine learning pipelines", text="Machine learning at scale.")
    assert twice[0] == "Machine learning"


def test_a_page_of_stop_words_has_no_tags_and_that_is_a_valid_answer() -> None:
    assert names("How to do it", "What is this and why?", "It is what it is.") == []


async def test_offline_answer_reads_as_a_model_answer_at_most_five() -> None:
    words = "Kubernetes Terraform Grafana Prometheus Ansible Jenkins Vault"
    got = await offline(words)
    assert [t for t, _ in got] == words.split()[:5]
    assert all(0.5 < c <= 0.95 for _, c in got)
    assert await offline("How to do it") == []


async def test_the_same_item_always_gets_the_same_tags() -> None:
    page = (DEMO_PAGE.title, DEMO_PAGE.description, DEMO_PAGE.text)
    assert await offline(*page) == await offline(*page)


def test_words_keep_their_shape() -> None:
    assert names("Node.js and C++ for e-mail, again Node.js") == ["Node.js", "C++", "e-mail"]
    # Vietnamese syllables are short: "thiết kế" is a phrase when it recurs, and its key is the
    # glossary's "design".
    vi = extract_keywords("Thiết kế UI với Figma", text="Thiết kế giao diện. Figma.")
    assert vi[0].name == "Thiết kế" and tag_key(vi[0].name) == "design"


async def test_the_demo_merges_are_what_pg_trgm_says(pool: asyncpg.Pool) -> None:
    similarity = await pool.fetchval("SELECT similarity($1, $2)", tag_key("design system"),
                                     tag_key("design systems"))
    assert similarity >= TRIGRAM_MERGE and round(similarity, 2) == 0.81
    store, user = TaggingStore(pool), f"u-{uuid.uuid4().hex[:8]}"
    for name in DEMO_USER_TAGS:
        await store.add_user_tag("acme", user, tag_key(name), name)
    saved = await store.save_item("acme", DEMO_PAGE.model_copy(update={"user_id": user}))
    found = await store.claim(saved.item_id, 1)
    answer = await OfflineTagProvider().suggest_tags(TagPrompt(
        item_id=saved.item_id, title=found.title, description=found.description,
        text=found.text, url=found.url))
    tags = normalise_suggestions(parse_tag_answer(answer.raw))
    applied = await store.apply_tags(ApplyTagsRequest(item_id=saved.item_id, attempt=1,
                                                      tags=tags), TRIGRAM_MERGE)
    assert sorted((a.how, a.name) for a in applied) == DEMO_MERGES


@pytest.mark.parametrize("field", ["title", "description", "text"])
def test_every_field_is_read(field: str) -> None:
    fields = {"title": "", "description": "", "text": ""}
    fields[field] = "Photogrammetry photogrammetry photogrammetry"
    # Once in the title is enough; the text has to say it three times (weights 3, 2, 1).
    assert [n.lower() for n in names(**fields)] == ["photogrammetry"]
    fields[field] = "Photogrammetry"
    assert names(**fields) == (["Photogrammetry"] if field == "title" else [])
