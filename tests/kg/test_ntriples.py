import bz2
import gzip

import pytest

# ruff: noqa: E501
from creagraph.core.io import InputError
from creagraph.kg.ntriples import (
    Literal_,
    ParseReport,
    Statement,
    escape_literal,
    parse_dump,
    unescape_literal,
)

E = "http://www.wikidata.org/entity/"
DUMP = f"""# a comment
<{E}Q1> <http://www.wikidata.org/prop/direct/P31> <{E}Q5> .
<{E}Q1> <http://www.w3.org/2000/01/rdf-schema#label> "Ann \\"the\\" \\\\ Smith\\n\\u00e9"@en .
<{E}Q1> <http://www.w3.org/2000/01/rdf-schema#label> "Anne"@fr .
<{E}Q1> <http://www.w3.org/2004/02/skos/core#altLabel> "A. S."@en .
<{E}Q1> <http://schema.org/description> "a person"@en .
<{E}Q1> <http://www.wikidata.org/prop/direct/P569> "1970-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<{E}Q1> <http://www.wikidata.org/prop/direct/P856> <https://example.org/> .
<{E}Q1> <http://www.wikidata.org/prop/P31> <http://www.wikidata.org/entity/statement/Q1-abc> .
<http://www.wikidata.org/entity/statement/Q1-abc> <http://www.wikidata.org/prop/qualifier/P580> "2000"^^<http://www.w3.org/2001/XMLSchema#gYear> .
<{E}P31> <http://www.w3.org/2000/01/rdf-schema#label> "instance of"@en .
<{E}P31> <http://www.wikidata.org/prop/direct/P1647> <{E}P279> .
<{E}L7> <http://www.wikidata.org/prop/direct/P5185> <{E}Q1> .

"""


def write(tmp_path, name, text):
    path = tmp_path / name
    data = text.encode()
    if name.endswith(".gz"):
        data = gzip.compress(data)
    elif name.endswith(".bz2"):
        data = bz2.compress(data)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", ["d.nt", "d.nt.gz", "d.nt.bz2"])
def test_parse_keeps_used_kinds_and_counts_skips(tmp_path, name):
    path = write(tmp_path, name, DUMP)
    report = ParseReport()
    items = list(parse_dump(path, report=report))
    assert Statement("Q1", "P31", "Q5") in items
    assert Literal_("Q1", "label", 'Ann "the" \\ Smith\né') in items
    assert Literal_("Q1", "alias", "A. S.") in items
    assert Literal_("Q1", "description", "a person") in items
    assert Literal_("P31", "label", "instance of") in items
    assert report.statements == 1 and report.literals == 4
    skipped = report.skipped
    assert skipped["literal not in language 'en'"] == 1
    assert skipped["non-item object (literal, value or other IRI)"] == 2
    assert skipped["unused predicate"] == 2
    assert skipped["non-item subject (property, lexeme, ...)"] == 2


def test_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path, "bad.nt", DUMP + "this is not a triple\n")
    with pytest.raises(InputError, match=r"bad\.nt:15: malformed"):
        list(parse_dump(path))
    report = ParseReport()
    list(parse_dump(path, strict=False, report=report))
    assert report.skipped["malformed line"] == 1


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        list(parse_dump(tmp_path / "nope.nt"))


def test_escape_round_trip():
    text = 'quote " backslash \\ newline \n tab \t brace {}'
    assert unescape_literal(escape_literal(text)) == text
