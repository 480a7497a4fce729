"""score(config=…, judge=…): a keyword that says something else than the config is an
error, never silently ignored (issue 30, item 6)."""

from __future__ import annotations

import pytest

import creagraph
from creagraph.scoring.config import ScorerConfig


def test_a_conflicting_keyword_is_an_error(tmp_path):
    config = ScorerConfig(judge="kg", mode="paper", store=str(tmp_path))
    with pytest.raises(ValueError, match=r"judge='stored' conflicts with config\.judge='kg'"):
        creagraph.score([], config=config, judge="stored")
    with pytest.raises(ValueError, match="mode='published' conflicts"):
        creagraph.score([], config=config, mode="published")
    with pytest.raises(ValueError, match="factuality_threshold=0.5 conflicts"):
        creagraph.score([], config=config, factuality_threshold=0.5)
    with pytest.raises(ValueError, match="store="):
        creagraph.score([], config=ScorerConfig(judge="kg", store=str(tmp_path / "a")),
                        store=tmp_path / "b")


def test_keywords_that_agree_with_the_config_are_accepted(tmp_path):
    from creagraph.core.embeddings import HashingEmbedder

    config = ScorerConfig(judge="stored", mode="published")
    tables = creagraph.score([], config=config, judge="stored", mode="published",
                             embedder=HashingEmbedder(8))
    assert tables.summary == [] and tables.queries == []
