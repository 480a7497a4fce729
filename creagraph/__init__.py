"""creagraph: measure how creative language models are, using knowledge graphs.

Subpackages, one per job, over a shared core:

- :mod:`creagraph.core` — data types, the knowledge-graph protocol, embeddings, I/O.
- :mod:`creagraph.kg` — knowledge-graph backends (embedded store, SPARQL) and slice tools.
- :mod:`creagraph.scoring` — CREATE scoring (parse, validate, ground, utility, distinctiveness).
- :mod:`creagraph.querygen` — CREATE query generation and the graph's oracle ceiling.
- :mod:`creagraph.tig` — Ekphrasis novelty anchors from Typed Idea Graphs.
- :mod:`creagraph.judgments` — Bradley–Terry and rater-agreement statistics.
"""

__version__ = "0.1.0"
