from collections import Counter
from pathlib import Path

import pytest

from creagraph.core.io import InputError
from creagraph.tig.adapters import (
    default_shared_dir,
    first_content_sentence,
    load_aut_population,
    load_noveltybench_curated,
    noveltybench_partitions,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("George Washington! He was the commander.", "George Washington!"),
        ("Okay, here's a short story featuring Alice:\n\n---\n\nThe Perfect Setup\n\nOnce...",
         "The Perfect Setup"),
        ("Sure!  \n\n- **Random fruit**: Mango  \n- **Random vegetable**: Carrot",
         "Random fruit: Mango"),
        ("Here's a simple cocktail recipe you can try:\n\n**Rum Punch**\n\nIngredients:",
         "Rum Punch"),
        ("1. **Charles Darwin (1809-1882):** Darwin's theory", "Charles Darwin (1809-1882):"
         " Darwin's theory"),
        ("Okapi\n", "Okapi"),
        ("   ", ""),
        ("Sure! Let's go:", "Sure!"),
    ],
)
def test_first_content_sentence(text, expected):
    assert first_content_sentence(text) == expected


def test_first_content_sentence_is_clipped_at_a_word():
    sentence = first_content_sentence("word " * 200, limit=50)
    assert len(sentence) <= 50 and sentence.endswith("word")


def test_default_shared_dir_is_beside_the_repository(monkeypatch):
    monkeypatch.delenv("CREAGRAPH_SHARED_DIR", raising=False)
    repo = Path(__file__).resolve().parents[2]
    assert default_shared_dir() == repo.parent / "shared"
    monkeypatch.setenv("CREAGRAPH_SHARED_DIR", "/somewhere/else")
    assert default_shared_dir() == Path("/somewhere/else")


def test_noveltybench_one_prompt():
    responses = load_noveltybench_curated(task_ids=["curated-1"])
    assert len(responses) == 240
    per_model = Counter(r.model for r in responses)
    assert len(per_model) == 24 and set(per_model.values()) == {10}
    assert {r.sample for r in responses} == set(range(10))
    first = responses[0]
    assert first.task_id == "curated-1" and first.family == "Creativity"
    assert first.brief.startswith("Tell me a story in five sentences")
    assert all(r.core_idea and len(r.core_idea) <= 300 for r in responses)
    # the Core Idea is taken from the generation, which is kept whole
    assert all(r.core_idea.split()[0].strip("*\"'") in r.visual_description for r in responses)
    partitions = noveltybench_partitions(responses)
    assert len(partitions) == 240 and min(partitions.values()) == 0
    full = load_noveltybench_curated(task_ids=["curated-1"], core_idea="full",
                                     models=["gemini-1.5-pro"])
    assert len(full) == 10
    for r in full:
        text = r.visual_description.strip()
        if len(text) <= 2000:
            assert r.core_idea == text
        else:
            assert len(r.core_idea) <= 2000 and text.startswith(r.core_idea)


def test_noveltybench_explicit_shared_dir_and_errors(shared_dir, tmp_path):
    responses = load_noveltybench_curated(shared_dir, task_ids=["curated-2"],
                                          models=["gpt-4o-2024-11-20"])
    assert len(responses) == 10
    with pytest.raises(InputError, match="shared data folder not found"):
        load_noveltybench_curated(tmp_path / "nowhere")
    with pytest.raises(InputError, match="no curated scores.jsonl"):
        load_noveltybench_curated(tmp_path)
    with pytest.raises(ValueError, match="core_idea"):
        load_noveltybench_curated(core_idea="middle")  # type: ignore[arg-type]


def test_aut_population():
    responses = load_aut_population(objects=["brick"], max_runs=2)
    models = Counter(r.model for r in responses)
    assert len(models) == 8
    assert {r.task_id for r in responses} == {"aut-brick"}
    assert len({r.response_id for r in responses}) == len(responses)
    assert all(r.meta["run"] in (0, 1) for r in responses)
    assert all(r.sample == r.meta["run"] * 1000 + r.meta["position"] for r in responses)
    everything = load_aut_population()
    assert {r.task_id for r in everything} == {"aut-brick", "aut-box", "aut-paperclip",
                                               "aut-bottle"}
    assert len(everything) > 15000
