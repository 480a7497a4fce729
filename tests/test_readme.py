"""The README's Python example runs as written (against the test store)."""

import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_python_example_runs(store_dir):
    text = README.read_text()
    code = re.search(r"## Python API.*?```python\n(.*?)```", text, re.S).group(1)
    assert 'EmbeddedKG("store")' in code
    namespace: dict = {}
    exec(
        compile(
            code.replace('EmbeddedKG("store")', f"EmbeddedKG({str(store_dir)!r})"),
            "README.md",
            "exec",
        ),
        namespace,
    )
    assert namespace["kg"].count_subjects("P69", "Q174710") == 97
    assert len(namespace["queries"]) == 100
    assert namespace["paths"][0].triples == [("A", "r", "B")]


def test_readme_quick_start_commands_exist():
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    makefile = (README.parent / "Makefile").read_text()
    assert "\ndemo:" in makefile and "\ntest:" in makefile
    assert "make test" in (README.parent / ".ci" / "run").read_text()
