"""The postmortem validator (ADR 0046): a draft stands only on the packet. It refuses an
invented figure, an unknown ref, a sentence with no ref, personal data and an empty section;
the offline draft of the same packet passes it."""

from __future__ import annotations

import asyncio

from adapters.models.offline_postmortem import OfflinePostmortemProvider, offline_postmortem
from contracts.incident import Postmortem, PostmortemSentence
from policies.incident_packet import build_packet
from policies.postmortem import validate_postmortem
from policies.postmortem_prompt import build_postmortem_prompt
from tests.policies.incident_rows import SINCE, UNTIL, rows

PACKET = build_packet(rows(), since=SINCE, until=UNTIL, tenant="acme")
GOOD = PostmortemSentence(text="Two unknown writes answered target_504.", refs=["code:target_504"])


def draft(*sentences: PostmortemSentence) -> Postmortem:
    """A draft whose impact is ``sentences``, every other section one good sentence."""
    return Postmortem(impact=list(sentences), timeline=[GOOD], suspected_cause=[GOOD],
                      open_items=[GOOD])


def codes(d: Postmortem) -> list[tuple[str, str]]:
    return [(f.code, f.what) for f in validate_postmortem(d, PACKET)]


def test_figures_the_cited_items_hold_are_accepted() -> None:
    ok = draft(PostmortemSentence(
        text="The circuit closed messaging for acme after 2 signals (limit 2) at 03:00:14.",
        refs=["cc:7"]),
        PostmortemSentence(text="An unknown write recovered after 2.3 s [uw:41].", refs=[]))

    assert codes(ok) == []


def test_an_invented_figure_is_refused() -> None:
    """The packet holds 2 writes under target_504; 5 is nowhere in what the sentence cites."""
    invented = draft(PostmortemSentence(text="5 unknown writes answered target_504.",
                                        refs=["code:target_504"]))

    assert codes(invented) == [("figure_not_in_packet", "5")]


def test_a_count_is_never_read_off_a_timestamp() -> None:
    """The window ends at 04:00:05: its digits are a time, not a count of anything."""
    borrowed = draft(PostmortemSentence(text="5 dead letters were written.",
                                        refs=["sum:window"]))

    assert codes(borrowed) == [("figure_not_in_packet", "5")]


def test_a_time_must_be_one_the_cited_item_holds() -> None:
    right = draft(PostmortemSentence(text="At 03:00:14 UTC the circuit closed messaging.",
                                     refs=["cc:7"]))
    wrong = draft(PostmortemSentence(text="At 03:07 UTC the circuit closed messaging.",
                                     refs=["cc:7"]))

    assert codes(right) == []
    assert codes(wrong) == [("figure_not_in_packet", "03:07")]


def test_a_version_is_quoted_whole_not_counted() -> None:
    quoted = draft(PostmortemSentence(text="Refused under policy 2026-12-02.1.",
                                      refs=["fv:43v1"]))
    other = draft(PostmortemSentence(text="Refused under policy 2026-12-09.1.",
                                     refs=["fv:43v1"]))

    assert codes(quoted) == []
    assert codes(other) != []


def test_a_figure_spelled_out_is_still_a_figure() -> None:
    spelled = draft(PostmortemSentence(text="Seven writes answered target_504.",
                                       refs=["code:target_504"]))

    assert codes(spelled) == [("figure_not_in_packet", "7")]


def test_a_figure_of_an_item_not_cited_does_not_count() -> None:
    """3 is a figure of the bad_signature group, not of the target_504 group cited."""
    borrowed = draft(PostmortemSentence(text="3 writes answered target_504.",
                                        refs=["code:target_504"]))

    assert codes(borrowed) == [("figure_not_in_packet", "3")]


def test_an_unknown_ref_is_refused() -> None:
    unknown = draft(PostmortemSentence(text="A dead letter was written.", refs=["dl:99"]),
                    PostmortemSentence(text="Another was written [dl:13].", refs=[]))

    assert codes(unknown) == [("unknown_ref", "dl:99"), ("unknown_ref", "dl:13")]


def test_a_sentence_without_a_ref_is_refused() -> None:
    bare = draft(PostmortemSentence(text="The target was slow.", refs=[]))

    assert codes(bare) == [("no_ref", "")]


def test_personal_data_in_a_sentence_is_refused() -> None:
    leaked = draft(PostmortemSentence(text="Write to lan.nguyen@example.com about it.",
                                      refs=["dl:12"]))

    assert ("personal_data", "") in codes(leaked)


def test_an_empty_section_is_refused() -> None:
    empty = Postmortem(impact=[GOOD], timeline=[], suspected_cause=[GOOD], open_items=[GOOD])

    assert codes(empty) == [("empty_section", "")]


def test_the_offline_draft_of_the_packet_passes_and_cites_every_section() -> None:
    answer = asyncio.run(OfflinePostmortemProvider().postmortem(build_postmortem_prompt(PACKET)))

    assert validate_postmortem(answer.postmortem, PACKET) == []
    assert answer.postmortem == offline_postmortem(PACKET)  # deterministic
    cause = " ".join(s.text for s in answer.postmortem.suspected_cause)
    assert "policy 2026-12-02.1" in cause and "policy 2026-12-01" in cause
    opened = " ".join(s.text for s in answer.postmortem.open_items)
    assert "Dead letter 12" in opened and "no recorded outcome" in opened


def test_the_offline_draft_counts_one_in_the_singular() -> None:
    # A window with one dead letter said "1 failures: 1 dead letters".
    one = {kind: found[:1] if kind == "dead_letters" else [] for kind, found in rows().items()}
    packet = build_packet(one, since=SINCE, until=UNTIL, tenant="acme")
    written = offline_postmortem(packet)

    assert validate_postmortem(written, packet) == []  # the figures stay the packet's
    impact = " ".join(s.text for s in written.impact)
    assert "holds 1 failure: 1 dead letter, 0 unknown writes (0 recovered by lookup), " \
           "0 quarantined events and 0 refused drafts." in impact
    assert "0 circuit closures, 0 kill switch changes by operators and 0 dead-letter " \
           "replay steps." in impact
    cause = " ".join(s.text for s in written.suspected_cause)
    assert cause.endswith(": 1 failure.") and "failures" not in cause


def test_the_offline_draft_of_the_full_packet_says_each_count_so() -> None:
    written = offline_postmortem(PACKET)
    text = " ".join(s.text for section in (written.impact, written.timeline)
                    for s in section)

    assert "8 failures: 1 dead letter, 2 unknown writes" in text
    assert "and 1 refused draft." in text
    assert "1 circuit closure, 1 kill switch change by operators and 1 dead-letter replay " \
           "step." in text
    assert "after 2 signals" in text
    assert "an event quarantined as" in text and "the first of 3 events quarantined" in text
