"""creagraph: measure how creative language models are, using knowledge graphs.

Subpackages, one per job, over a shared core:

- :mod:`creagraph.core` — data types, the knowledge-graph protocol, embeddings, I/O.
- :mod:`creagraph.kg` — knowledge-graph backends (embedded store, SPARQL) and slice tools.
- :mod:`creagraph.scoring` — CREATE scoring (parse, validate, ground, utility, distinctiveness).
- :mod:`creagraph.querygen` — CREATE query generation and the graph's oracle ceiling.
- :mod:`creagraph.tig` — Ekphrasis novelty anchors from Typed Idea Graphs.
- :mod:`creagraph.judgments` — Bradley–Terry and rater-agreement statistics.
- :mod:`creagraph.report` — the self-contained HTML report over the jobs' outputs.

The core install covers the statistics and the knowledge-graph layer; embeddings, the
distributed engines, the report and Parquet come with extras (``pip install
'creagraph[embed]'``; :mod:`creagraph.core.extras`).

"SPEC §x.y" in docstrings and comments means section x.y of creagraph's specification,
``docs/spec.md`` in the repository, shipped as ``creagraph/docs/spec.md``
(:func:`creagraph.core.paths.spec_path`).

CREATE scoring in one call: ``creagraph.score(answers, judge=..., mode=..., store=...)``
(:func:`creagraph.scoring.api.score`), configured by keywords or a
:class:`~creagraph.scoring.config.ScorerConfig`.
"""

from typing import Any

__version__ = "0.1.0"

__all__ = ["score", "ScorerConfig", "ScoreTables", "__version__"]


def __getattr__(name: str) -> Any:
    """``creagraph.score`` and its config/result types, imported on first use (the CLI
    starts without loading the scoring job)."""
    if name in ("score", "ScorerConfig", "ScoreTables"):
        from creagraph.scoring import api

        return getattr(api, name)
    raise AttributeError(f"module 'creagraph' has no attribute {name!r}")
