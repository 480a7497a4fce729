"""Every CREAGRAPH_* variable is declared in creagraph.core.settings and read through it;
command-line settings never go through os.environ; the shared folder resolves one way."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from creagraph.core import settings
from creagraph.core.io import InputError

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"CREAGRAPH_[A-Z][A-Z_]*[A-Z]")


def _package_sources() -> list[Path]:
    return sorted((ROOT / "creagraph").rglob("*.py"))


def test_every_variable_the_package_names_is_declared():
    declared = {v.name for v in settings.VARIABLES}
    named = {
        name
        for path in _package_sources()
        if path.name != "settings.py"
        for name in NAME.findall(path.read_text(encoding="utf-8"))
    }
    named.discard("CREAGRAPH_LLM")  # the prefix CREAGRAPH_LLM_*, said in prose
    assert named <= declared, sorted(named - declared)
    assert len(declared) == len(settings.VARIABLES)


def test_no_module_reads_a_creagraph_variable_from_os_environ_itself():
    direct = re.compile(r"os\.(environ|getenv)[^\n]*CREAGRAPH_|environ\[[^\]]*CREAGRAPH_")
    offenders = [
        str(path.relative_to(ROOT))
        for path in _package_sources()
        if path.name != "settings.py" and direct.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    writes = re.compile(r"os\.environ\[[^\]]+\]\s*=|os\.environ\.(pop|update)\(")
    assert [
        str(p.relative_to(ROOT)) for p in _package_sources()
        if writes.search(p.read_text(encoding="utf-8"))
    ] == []  # fmt: skip


def test_readme_lists_every_variable_with_its_default():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for variable in settings.VARIABLES:
        row = next((line for line in readme.splitlines()
                    if line.startswith(f"| `{variable.name}`")), None)  # fmt: skip
        assert row is not None, variable.name
        assert variable.default in row, (variable.name, row)


def test_value_reads_the_environment_and_overrides_win(monkeypatch):
    monkeypatch.setenv("CREAGRAPH_SPARQL_SEARCH", "  prefix ")
    assert settings.value("CREAGRAPH_SPARQL_SEARCH") == "prefix"
    monkeypatch.setenv("CREAGRAPH_SPARQL_SEARCH", "   ")
    assert settings.value("CREAGRAPH_SPARQL_SEARCH") is None  # blank counts as unset
    before = dict(os.environ)
    with settings.overridden(CREAGRAPH_SPARQL_SEARCH="scan", CREAGRAPH_SPARQL_MAX_MB=None):
        assert settings.value("CREAGRAPH_SPARQL_SEARCH") == "scan"
        with settings.overridden(CREAGRAPH_SPARQL_TIMEOUT=2.5):
            assert settings.worker_environment({"HF_HOME": "/h", "PATH": "/bin"}) == {
                "HF_HOME": "/h", "CREAGRAPH_SPARQL_SEARCH": "scan",
                "CREAGRAPH_SPARQL_TIMEOUT": "2.5",
            }  # fmt: skip
        assert settings.value("CREAGRAPH_SPARQL_TIMEOUT") is None
        assert dict(os.environ) == before  # never written
    assert settings.value("CREAGRAPH_SPARQL_SEARCH") is None
    with pytest.raises(KeyError, match="CREAGRAPH_SPARQL_TIMOUT is not a creagraph setting"):
        settings.value("CREAGRAPH_SPARQL_TIMOUT")
    with pytest.raises(KeyError), settings.overridden(CREAGRAPH_NOPE="1"):
        pass


@pytest.mark.parametrize(("raw", "on"), [("0", False), ("false", False), ("NO", False),
                                         ("off", False), ("1", True), ("yes", True)])
def test_switches(monkeypatch, raw, on):
    monkeypatch.setenv("CREAGRAPH_GROUNDING_CACHE", raw)
    assert settings.enabled("CREAGRAPH_GROUNDING_CACHE") is on
    monkeypatch.delenv("CREAGRAPH_GROUNDING_CACHE")
    assert settings.enabled("CREAGRAPH_GROUNDING_CACHE") is True
    assert settings.enabled("CREAGRAPH_DEBUG", default=False) is False


def test_the_sparql_client_takes_the_run_settings_without_the_environment(monkeypatch):
    from creagraph.kg import SparqlKG

    monkeypatch.delenv("CREAGRAPH_SPARQL_TIMEOUT", raising=False)
    with settings.overridden(CREAGRAPH_SPARQL_TIMEOUT="3", CREAGRAPH_SPARQL_MAX_MB="2"):
        kg = SparqlKG("http://127.0.0.1:9/sparql", cache=False)
        assert "CREAGRAPH_SPARQL_TIMEOUT" not in os.environ
    assert kg.timeout == 3.0 and kg.max_response_bytes == 2 * 2**20
    assert SparqlKG("http://127.0.0.1:9/sparql", cache=False).timeout == 60.0


def test_the_global_options_leave_the_environment_alone(capsys, monkeypatch, tmp_path):
    from creagraph.cli import main

    monkeypatch.delenv("CREAGRAPH_SPARQL_TIMEOUT", raising=False)
    before = dict(os.environ)
    code = main(["--sparql-timeout", "-1", "kg", "info", "--endpoint", "http://127.0.0.1:9/q"])
    assert code == 2
    # the option reached the client as a setting (its check names the variable it stands for)
    assert "$CREAGRAPH_SPARQL_TIMEOUT must be a positive number" in capsys.readouterr().err
    assert dict(os.environ) == before
    assert settings.value("CREAGRAPH_SPARQL_TIMEOUT") is None  # only for that run


def test_shared_folder_one_rule_for_every_job(monkeypatch, tmp_path):
    from creagraph.core.paths import default_slice_path
    from creagraph.judgments.llmfao import default_llmfao_path
    from creagraph.tig.adapters import default_shared_dir

    for name in ("CREAGRAPH_SHARED_DIR", "CREAGRAPH_SLICE", "CREAGRAPH_LLMFAO"):
        monkeypatch.delenv(name, raising=False)
    assert settings.checkout_root() == ROOT
    assert default_shared_dir() == settings.shared_dir() == ROOT.parent / "shared"
    monkeypatch.setenv("CREAGRAPH_SHARED_DIR", str(tmp_path))
    assert default_shared_dir() == tmp_path
    assert default_slice_path() == tmp_path / "data" / "wikidata-slice" / "slice.nt.gz"
    assert default_llmfao_path().is_relative_to(tmp_path)
    assert settings.shared_dir(tmp_path / "given") == tmp_path / "given"


def test_an_installed_package_never_looks_inside_site_packages(monkeypatch):
    from creagraph.tig.adapters import load_aut_population

    monkeypatch.delenv("CREAGRAPH_SHARED_DIR", raising=False)
    monkeypatch.setattr(settings, "checkout_root", lambda: None)
    with pytest.raises(InputError, match="pass --shared-dir DIR or set CREAGRAPH_SHARED_DIR"):
        settings.shared_dir()
    with pytest.raises(InputError, match="CREAGRAPH_SHARED_DIR"):
        load_aut_population()


def test_cache_and_store_defaults(monkeypatch, tmp_path):
    from creagraph.core.embeddings import default_cache_dir
    from creagraph.core.llm import default_reply_cache_path
    from creagraph.core.paths import default_store_dir

    monkeypatch.setenv("CREAGRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CREAGRAPH_STORE", raising=False)
    assert default_cache_dir() == tmp_path and default_store_dir() == tmp_path / "store"
    assert default_reply_cache_path() == tmp_path / "llm-replies.sqlite"
    monkeypatch.setenv("CREAGRAPH_STORE", str(tmp_path / "s"))
    assert default_store_dir() == tmp_path / "s"
