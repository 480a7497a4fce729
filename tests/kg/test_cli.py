"""The `creagraph kg` commands, on the embedded store and on the SPARQL endpoint."""

import json

import pytest

from creagraph.kg import EmbeddedKG, import_dumps
from tests.clirun import run


def test_import_and_info(tmp_path, slice_path, capsys):
    store = tmp_path / "store"
    code, out, _ = run(capsys, "kg", "import", str(slice_path), "--store", str(store))
    assert code == 0
    assert "statements: 413419" in out and "entities: 86812" in out and "properties: 427" in out
    assert "skipped lines: none" in out
    code, out, _ = run(capsys, "kg", "import", str(slice_path), "--store", str(store))
    assert code == 0 and "already up to date" in out
    code, out, _ = run(capsys, "kg", "info", "--store", str(store))
    assert code == 0 and "statements: 413419" in out and "backend: embedded" in out


@pytest.fixture(params=["store", "endpoint"])
def backend(request, store_dir, sparql_endpoint):
    if request.param == "store":
        return ["--store", str(store_dir)]
    return ["--endpoint", sparql_endpoint]


def test_lookups_on_both_backends(capsys, backend):
    code, out, _ = run(capsys, "kg", "info", *backend, "--json")
    assert code == 0 and json.loads(out)["entities"] == 86812
    code, out, _ = run(capsys, "kg", "entity", "Q179051", *backend)
    assert code == 0 and "Kareem Abdul-Jabbar" in out and "Lew Alcindor" in out
    code, out, _ = run(capsys, "kg", "entity", "P161", *backend)
    assert code == 0 and "cast member" in out and "inverse: appeared in" in out
    code, out, _ = run(capsys, "kg", "search", "Lew Alcindor", *backend)
    assert code == 0 and out.startswith("Q179051\tKareem Abdul-Jabbar")
    code, out, _ = run(capsys, "kg", "neighbors", "Q179051", "--property", "P69", *backend)
    assert code == 0 and "Q174710" in out and "out-edges: 1" in out
    code, out, _ = run(
        capsys,
        "kg",
        "class-size",
        "P69",
        "--object",
        "Q174710",
        "--subject",
        "Q179051",
        "--json",
        *backend,
    )
    assert code == 0 and json.loads(out) == {
        "property": "P69",
        "object": "Q174710",
        "subjects": 97,
        "subject": "Q179051",
        "objects": 1,
    }


def test_clear_errors(capsys, store_dir, tmp_path):
    code, _, err = run(capsys, "kg", "entity", "Q999999999", "--store", str(store_dir))
    assert code == 2 and "unknown id: Q999999999" in err
    code, _, err = run(capsys, "kg", "entity", "Kareem", "--store", str(store_dir))
    assert code == 2 and "not a Wikidata id" in err
    code, _, err = run(
        capsys, "kg", "import", str(tmp_path / "missing.nt"), "--store", str(tmp_path / "s")
    )
    assert code == 2 and "missing.nt: file not found" in err
    bad = tmp_path / "bad.nt"
    bad.write_text("<http://www.wikidata.org/entity/Q1> oops\n")
    code, _, err = run(capsys, "kg", "import", str(bad), "--store", str(tmp_path / "s"))
    assert code == 2 and "bad.nt:1: malformed" in err
    code, _, err = run(capsys, "kg", "info", "--store", str(tmp_path / "nothing"))
    assert code == 2 and "no creagraph store here" in err
    code, _, err = run(capsys, "kg", "info", "--store", str(store_dir), "--endpoint", "http://x/q")
    assert code == 2 and "not both" in err


def test_pull_round_trips_through_import(capsys, sparql_endpoint, kg, tmp_path):
    out = tmp_path / "pulled.nt.gz"
    code, text, _ = run(
        capsys,
        "kg",
        "pull",
        "--endpoint",
        sparql_endpoint,
        "--seed",
        "Q179051",
        "--hops",
        "1",
        "--out",
        str(out),
    )
    assert code == 0 and "wrote" in text
    import_dumps([out], tmp_path / "pulled", show_progress=False)
    pulled = EmbeddedKG(tmp_path / "pulled")
    assert pulled.out_edges("Q179051") == kg.out_edges("Q179051")
    assert pulled.in_edges("Q179051") == kg.in_edges("Q179051")
    assert pulled.entity("Q179051") == kg.entity("Q179051")
    assert pulled.property("P69").label == "educated at"
    code, _, err = run(capsys, "kg", "pull", "--endpoint", sparql_endpoint, "--out", str(out))
    assert code == 2 and "--property or --seed" in err


def test_serve_command_answers_sparql(tmp_path):
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    dump = tmp_path / "tiny.nt"
    dump.write_text(
        "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P31> "
        "<http://www.wikidata.org/entity/Q5> .\n"
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "creagraph.cli", "kg", "serve", str(dump), "--port", str(port)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.2)
        from creagraph.kg import SparqlKG

        remote = SparqlKG(f"http://127.0.0.1:{port}/query", cache=False)
        assert remote.has_triple("Q1", "P31", "Q5")
        assert remote.count_subjects("P31", "Q5") == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
