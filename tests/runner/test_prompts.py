"""Templates: the default prompt, rendering, and templates derived from published files."""

import pytest

from creagraph.core.io import InputError, read_records
from creagraph.runner.prompts import (
    DEFAULT_CREATE_TEMPLATE,
    check_placeholders,
    check_template,
    derive_checked_template,
    derive_template,
    render,
)
from creagraph.scoring.parse import parse_answer


def test_every_published_file_gives_a_template_that_rebuilds_every_prompt(shared_dir):
    folder = shared_dir / "external" / "create-leaderboard" / "sample_outputs"
    files = sorted(folder.glob("*.jsonl"))
    assert len(files) == 4
    for path in files:
        rows = read_records(path)
        template, used, check = derive_checked_template(rows)
        assert check.ok and check.matched == len(rows) == 20, (path.name, check)
        assert rows[used - 1]["entity_a"] not in template
        assert check_template(template, rows).ok
    # a row whose rel_b ("spouse") also occurs in the instructions gives a wrong template:
    # it is caught, and the derivation falls back to another row
    qwen = read_records(folder / "Qwen_Qwen3-32B_32k_model_name_Qwen_Qwen3-32B.jsonl")
    assert qwen[19]["rel_b"] == "spouse"
    assert not check_template(derive_template(qwen[19]), qwen).ok
    _, _, forced = derive_checked_template(qwen, row=20)
    assert not forced.ok and forced.first_mismatch is not None


def test_the_default_prompt_names_every_field_and_its_example_parses():
    record = {"query": "How is A linked to B?", "entity_a": "Ann", "entity_b": "Bob",
              "rel_b": "spouse"}
    prompt = render(DEFAULT_CREATE_TEMPLATE, record)
    assert prompt.startswith("How is A linked to B?") and '"Ann"' in prompt
    assert '"spouse"' in prompt and '"Bob"' in prompt and "{" in prompt
    example = prompt[prompt.index("<answer>"):]
    assert len(parse_answer(example).paths) == 2  # the format asked for is the one read


def test_templates_without_the_query_are_refused():
    with pytest.raises(InputError, match="no {query} or {entity_a} placeholder"):
        check_placeholders("Answer in JSON: {entity_b}")
    with pytest.raises(InputError, match="no stored prompt"):
        derive_template({"query": "q"})
