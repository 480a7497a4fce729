"""The specification is in the repository and shipped with the package: every
"SPEC §x.y" cited anywhere in ``creagraph/`` is a heading of ``docs/spec.md``."""

from __future__ import annotations

import re
from pathlib import Path

from creagraph.core.paths import spec_path

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"SPEC §(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)*)\.? ", re.MULTILINE)


def _headings(text: str) -> set[str]:
    return set(HEADING.findall(text))


def _citations() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    for path in sorted((ROOT / "creagraph").rglob("*")):
        if path.suffix not in (".py", ".j2", ".md", ".tsv", ".rq") or not path.is_file():
            continue
        for number in CITATION.findall(path.read_text(encoding="utf-8")):
            cited.setdefault(number, []).append(str(path.relative_to(ROOT)))
    return cited


def test_every_spec_citation_in_the_package_is_a_heading_of_docs_spec():
    headings = _headings((ROOT / "docs" / "spec.md").read_text(encoding="utf-8"))
    cited = _citations()
    assert len(cited) >= 20  # the package cites the spec throughout
    missing = {number: files[:3] for number, files in cited.items() if number not in headings}
    assert not missing, f"SPEC sections cited but not in docs/spec.md: {missing}"


def test_the_data_folder_citations_resolve_too():
    headings = _headings((ROOT / "docs" / "spec.md").read_text(encoding="utf-8"))
    for path in sorted((ROOT / "wikidata").rglob("*")):
        if path.is_file():
            for number in CITATION.findall(path.read_text(encoding="utf-8")):
                assert number in headings, f"{path}: SPEC §{number} is not in docs/spec.md"


def test_spec_sections_are_numbered_in_order():
    numbers = HEADING.findall((ROOT / "docs" / "spec.md").read_text(encoding="utf-8"))
    assert numbers[:2] == ["1", "2"]
    as_tuples = [tuple(int(part) for part in n.split(".")) for n in numbers]
    assert as_tuples == sorted(as_tuples)
    assert len(set(as_tuples)) == len(as_tuples)
    assert {f"3.{i}" for i in range(1, 9)} | {f"4.{i}" for i in range(1, 13)} <= set(numbers)


def test_the_heading_pattern_catches_a_missing_section():
    assert _headings("## 3. CREATE\n### 3.1 Query generation\n") == {"3", "3.1"}
    assert "3.9" not in _headings("## 3. CREATE\n### 3.1 Query generation\n")


def test_spec_path_finds_the_document():
    path = spec_path()
    assert path.name == "spec.md"
    assert path.read_text(encoding="utf-8") == (ROOT / "docs" / "spec.md").read_text(
        encoding="utf-8"
    )
