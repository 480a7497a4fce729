"""The data catalogues in wikidata/: content and validation with clear errors."""

from __future__ import annotations

import pytest

from creagraph.core.io import InputError
from creagraph.querygen import (
    load_blocklist,
    load_holder_types,
    load_phrasing,
    load_source_relations,
)

PUBLISHED = {
    "P166": "subject",
    "P39": "subject",
    "P40": "subject",
    "P463": "subject",
    "P54": "subject",
    "P57": "object",
    "P58": "object",
    "P161": "object",
    "P162": "object",
    "P2175": "subject",
    "P2293": "subject",
}


def test_source_relations_are_the_published_eleven():
    rels = load_source_relations()
    assert {r.pid: r.side for r in rels} == PUBLISHED
    assert all(r.label and r.note for r in rels)


def test_blocklist_has_the_non_selective_relations_with_reasons():
    blocklist = load_blocklist()
    for pid in ("P31", "P21", "P103", "P1412", "P569", "P570", "P973", "P17"):
        assert blocklist[pid]
    assert not set(blocklist) & set(PUBLISHED)


def test_phrasing_covers_source_and_common_relations():
    phrasing = load_phrasing()
    for pid in [*PUBLISHED, "P106", "P69", "P19", "P27", "P26", "P1411", "P1344", "P136"]:
        assert pid in phrasing, pid
    assert not set(phrasing) & set(load_blocklist())


def test_holder_types_start_with_humans():
    types = load_holder_types()
    assert types[0].qid == "Q5" and types[0].noun == "someone" and types[0].pronoun == "who"


@pytest.mark.parametrize(
    ("loader", "text", "message"),
    [
        (load_source_relations, "P166\taward received\tsubject\n", "line 1: expected 4"),
        (load_source_relations, "# c\nP166\taward\tsideways\tx\n", ":2: field 'side'"),
        (
            load_source_relations,
            "Q166\taward\tsubject\tx\n",
            "field 'pid' must be a Wikidata property",
        ),
        (
            load_source_relations,
            "P1\ta\tsubject\tx\nP1\tb\tobject\ty\n",
            ":2: field 'pid': P1 is listed twice",
        ),
        (load_source_relations, "# only comments\n", "no source relations"),
        (load_blocklist, "P31\tinstance of\t\n", "field 'reason' is empty"),
        (
            load_phrasing,
            "P106\toccupation\tis a painter\tis {y}\n",
            "field 'active' must contain exactly one",
        ),
        (
            load_phrasing,
            "P106\toccupation\tis {a y} {y}\tis {y}\n",
            "field 'active' must contain exactly one",
        ),
        (
            load_phrasing,
            "P106\toccupation\tis {a y}\tis  {y}\n",
            "field 'passive' has stray spaces",
        ),
        (load_holder_types, "Q5\thuman\tsomeone\twhom\n", "field 'pronoun'"),
        (load_holder_types, "P5\thuman\tsomeone\twho\n", "field 'qid' must be a Wikidata item"),
    ],
)
def test_malformed_catalogues_name_file_line_and_field(tmp_path, loader, text, message):
    path = tmp_path / "catalogue.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        loader(path)
    assert str(path) in str(info.value)
    assert message.replace("line 1", f"{path}:1") in str(info.value) or message in str(info.value)


def test_missing_catalogue_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_blocklist(tmp_path / "absent.tsv")
