"""The local label index (issue 28, all of Wikidata): ``kg import --labels-only`` reads the
names of a dump; a SPARQL backend with ``search_mode="index"`` links entities from it and
asks the endpoint only for statements (here: the slice served by a real SPARQL server,
behind a recording proxy that shows which queries reached it)."""

from __future__ import annotations

import gzip
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from creagraph.cli import main
from creagraph.core.io import InputError, read_jsonl
from creagraph.kg.labelindex import LabelIndex, build_label_index
from creagraph.kg.sparql import SEARCH_MODES, SparqlKG

# the slice's names of these items, and every 40th name line of the rest
WANTED = ("Q57067", "Q9021", "Q41148", "Q42047")
NAME_PREDICATES = (b"rdf-schema#label>", b"core#altLabel>", b"schema.org/description>")


@pytest.fixture(scope="module")
def labels_dump(slice_path, tmp_path_factory):
    """The slice's label, alias and description lines (all of WANTED's, a sample of the
    rest): the shape of the Wikidata labels dump."""
    out = []
    with gzip.open(slice_path, "rb") as handle:
        n = 0
        for line in handle:
            if not any(p in line for p in NAME_PREDICATES):
                continue
            n += 1
            if n % 40 == 0 or any(f"entity/{q}>".encode() in line for q in WANTED):
                out.append(line)
    dump = tmp_path_factory.mktemp("labels") / "labels.nt"
    dump.write_bytes(b"".join(out))
    return dump


@pytest.fixture(scope="module")
def index_path(labels_dump, tmp_path_factory):
    path = tmp_path_factory.mktemp("index") / "labels.sqlite"
    args = ["kg", "import", "--labels-only", str(labels_dump), "--label-index", str(path)]
    assert main(args) == 0
    return path


def test_labels_only_import_builds_an_index_of_names(index_path, capsys):
    index = LabelIndex(index_path)
    assert index.names > 1000
    rows = index.rows("max von laue")
    assert ("Q57067", "label", "Max von Laue") in rows
    assert rows[0][0] == "Q57067"  # exact names first
    # a name one edit away in another word is a candidate: it holds the rarest word
    assert "Q41148" in {i for i, _, _ in index.rows("Martin Scorsesse")}
    assert index.rows("") == [] and index.rows("zzqx unheard") == []


def test_labels_only_refuses_a_store_and_keeps_the_old_index_on_a_bad_line(
    index_path, tmp_path, capsys
):
    before = index_path.read_bytes()
    bad = tmp_path / "bad.nt"
    label = '<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "x"'
    bad.write_text(label + "@en .\nnot a triple\n")
    code = main(["kg", "import", "--labels-only", str(bad), "--label-index", str(index_path)])
    assert code == 2
    assert f"{bad}:2" in capsys.readouterr().err
    assert index_path.read_bytes() == before
    assert not [p for p in index_path.parent.iterdir() if p.name.endswith(".tmp")]
    code = main(["kg", "import", "--labels-only", str(bad), "--store", str(tmp_path / "s")])
    assert code == 2 and "not a --store" in capsys.readouterr().err
    with pytest.raises(InputError, match="no label index"):
        LabelIndex(tmp_path / "missing.sqlite")
    with pytest.raises(InputError, match="at least one dump"):
        build_label_index([], tmp_path / "x.sqlite")


class _Proxy(BaseHTTPRequestHandler):
    """Forwards SPARQL requests to the real endpoint and records their query text."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        from urllib.parse import parse_qs

        self.server.queries.append(parse_qs(body.decode())["query"][0])  # type: ignore[attr-defined]
        request = urllib.request.Request(
            self.server.target,  # type: ignore[attr-defined]
            data=body,
            headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
        )
        with urllib.request.urlopen(request) as answer:
            out = answer.read()
            status, content_type = answer.status, answer.headers["Content-Type"]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture()
def proxy(sparql_endpoint):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    httpd.queries = []  # type: ignore[attr-defined]
    httpd.target = sparql_endpoint  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()


def _is_name_search(query: str) -> bool:
    """A search by name (every mode's template), not the look-up of known ids' names."""
    return "?e ?pred ?text" in query and "VALUES ?e" not in query


def test_index_mode_searches_the_index_and_asks_the_endpoint_for_statements(
    index_path, proxy, tmp_path
):
    assert "index" in SEARCH_MODES
    url = f"http://127.0.0.1:{proxy.server_port}/query"
    kg = SparqlKG(url, cache=False, search_mode="index", label_index=index_path, retries=0)
    hits = kg.search("Max von Laue", limit=5, fuzzy=False)
    assert [h.id for h in hits if h.exact] == ["Q57067"]
    fuzzy = kg.search("Martin Scorsesse", limit=5, fuzzy=True, min_score=80)
    assert "Q41148" in [h.id for h in fuzzy]
    assert not [q for q in proxy.queries if _is_name_search(q)]
    assert kg.has_triple("Q57067", "P184", "Q9021")  # a statement: from the endpoint
    assert proxy.queries


def test_score_against_an_endpoint_links_names_from_the_index(
    index_path, proxy, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("CREAGRAPH_SPARQL_SEARCH", "index")
    monkeypatch.setenv("CREAGRAPH_LABEL_INDEX", str(index_path))
    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    triples = [
        ["Max von Laue", "doctoral student of", "Max Planck"],
        ["Martin Scorsese", "directed", "Goodfellas"],
        ["Goodfellas", "directed", "Martin Scorsese"],
    ]
    answer = "<answer>" + json.dumps({str(i + 1): [t] for i, t in enumerate(triples)})
    row = {
        "model": "m", "query_id": "q0", "query": "How are these connected?",
        "entity_a": "Max von Laue", "entity_b": "Goodfellas", "rel_b": "directed",
        "path_prediction": [answer + "</answer>"],
    }  # fmt: skip
    src = tmp_path / "answers.jsonl"
    src.write_text(json.dumps(row) + "\n")
    url = f"http://127.0.0.1:{proxy.server_port}/query"
    out = tmp_path / "out"
    assert main(["score", str(src), "--judge", "kg", "--endpoint", url, "--out", str(out)]) == 0
    judged = {tuple(p["triples"][0]): p["judgments"][0] for p in read_jsonl(out / "paths.jsonl")}
    assert judged[tuple(triples[0])]["status"] == "verified"
    assert judged[tuple(triples[0])]["via"] == "inverse:P184"
    assert judged[tuple(triples[1])]["status"] == "verified"
    assert judged[tuple(triples[2])]["status"] != "verified"  # stated backwards
    assert not [q for q in proxy.queries if _is_name_search(q)]
    assert any("ASK" in q for q in proxy.queries)


def test_labels_only_never_writes_over_an_input_or_a_users_file(labels_dump, tmp_path, capsys):
    """The label index is claimed like every output file: a dump given as --label-index is
    refused before anything is read; a file creagraph did not write is left untouched; the
    index an earlier --labels-only import wrote is replaced by the next one."""
    dump = tmp_path / "labels.nt"
    dump.write_bytes(labels_dump.read_bytes())
    before = dump.read_bytes()
    code = main(["kg", "import", "--labels-only", str(dump), "--label-index", str(dump)])
    assert code == 2 and "input" in capsys.readouterr().err
    assert dump.read_bytes() == before
    linked = tmp_path / "linked.sqlite"
    linked.symlink_to(dump)
    code = main(["kg", "import", "--labels-only", str(dump), "--label-index", str(linked)])
    assert code == 2 and dump.read_bytes() == before

    users = tmp_path / "mine.sqlite"
    users.write_bytes(b"a user's own file")
    code = main(["kg", "import", "--labels-only", str(dump), "--label-index", str(users)])
    err = capsys.readouterr().err
    assert code == 2 and str(users) in err
    assert users.read_bytes() == b"a user's own file"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    ours = tmp_path / "ours.sqlite"
    args = ["kg", "import", "--labels-only", str(dump), "--label-index", str(ours)]
    assert main(args) == 0
    first = LabelIndex(ours).names
    assert main(args) == 0  # its own earlier output: replaced
    assert LabelIndex(ours).names == first > 1000
    ours.write_bytes(ours.read_bytes() + b"edited by hand")  # changed since: no longer ours
    assert main(args) == 2 and "changed" in capsys.readouterr().err.lower()
