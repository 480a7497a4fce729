"""The quick-start demo: the main job on the embedded default knowledge graph.

Imports the shared Wikidata slice into the default store (once; later runs reopen it),
prints what the graph holds and a few example look-ups.
"""

from __future__ import annotations

from pathlib import Path

import typer

from creagraph.core.paths import default_slice_path, default_store_dir


def run_demo(slice_path: Path | None = None, store: Path | None = None) -> None:
    """Run the demo, printing to stdout."""
    from creagraph.kg import EmbeddedKG, import_dumps

    source = slice_path or default_slice_path()
    target = store or default_store_dir()
    typer.secho(f"== knowledge graph: {source}", bold=True)
    result = import_dumps([source], target)
    state = "reused store" if result.report.get("reused") else f"imported in {result.seconds:.1f} s"
    typer.echo(f"store {target} ({state})")
    kg = EmbeddedKG(target)
    for key, value in kg.stats().items():
        typer.echo(f"  {key:>20}: {value:,}")
    top = sorted(kg.property_counts().items(), key=lambda kv: -kv[1])[:8]
    names = kg.labels(p for p, _ in top)
    typer.echo(
        "  most used properties: " + ", ".join(f"{p} {names.get(p, '?')} ({n:,})" for p, n in top)
    )

    typer.secho("\n== look-ups", bold=True)
    for text in ("Lew Alcindor", "kareem abdul jabbar", "Goodfellas"):
        hits = kg.search(text, limit=1)
        if hits:
            h = hits[0]
            typer.echo(
                f"  search {text!r:24} -> {h.id} {h.label} ({h.kind} match, score {h.score:.0f})"
            )
    if kg.entity("Q179051") is not None:
        edges = kg.out_edges("Q179051", "P69")
        for e in edges:
            size = kg.count_subjects(e.property, e.object)
            typer.echo(
                f"  (Kareem Abdul-Jabbar, educated at, {kg.label(e.object)}): exists="
                f"{kg.has_triple(*e.as_tuple())}; |{{x : (x, P69, {e.object})}}| = {size}"
            )
    cats = list(kg.categories(["P161"], side="object", min_size=5, max_size=12))
    typer.echo(f"  cast lists (P161) with 5-12 members: {len(cats):,}")
    if cats:
        c = cats[0]
        typer.echo(f"    e.g. {kg.label(c.entity)}: " + ", ".join(kg.labels(c.members).values()))
