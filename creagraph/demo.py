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
    run_querygen_demo(kg)
    run_scoring_demo(target)
    run_tig_demo()


def run_querygen_demo(kg) -> None:
    """Generate a few CREATE queries from the graph and show one source path and its ceiling."""
    from creagraph.querygen import generate_queries, oracle_paths

    typer.secho("\n== CREATE queries generated from the graph (seed 7)", bold=True)
    result = generate_queries(kg, 4, 7)
    for record in result.records:
        typer.echo(f"  [{record['source_relation']}] {record['query']}")
    first = result.records[0]
    path = " ; ".join(
        f"({t['subject_label']}, {t['property_label']}, {t['object_label']})"
        for t in first["source_path"]
    )
    typer.echo(f"  source path of the first: {path}")
    oracle = oracle_paths(kg, first, k=3)
    typer.echo(
        f"  graph ceiling at k=3: {oracle.n_paths} paths, {oracle.n_strong} strong, "
        f"s0.9 = {oracle.ceiling[0.9]:.2f}"
    )


def run_scoring_demo(store: Path) -> None:
    """Score the published sample outputs (stored judge, published mode) and ground a few
    of their triples in the embedded graph."""
    import tempfile

    from creagraph.core.embeddings import default_embedder
    from creagraph.kg import EmbeddedKG
    from creagraph.scoring.grounding import EntityLinker, Grounder, RelationLinker
    from creagraph.scoring.inputs import read_answers
    from creagraph.scoring.judges import StoredJudge
    from creagraph.scoring.parse import parse_answer
    from creagraph.scoring.pipeline import Scorer, score_files, summarize

    samples = sorted(
        (default_slice_path().parents[2] / "external/create-leaderboard/sample_outputs").glob(
            "*.jsonl"
        )
    )
    if not samples:
        typer.echo("(no CREATE sample outputs found beside the slice; skipping scoring demo)")
        return
    typer.secho("\n== CREATE scoring of the published sample outputs", bold=True)
    rows = read_answers(samples)
    embedder = default_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        score_files(rows, Scorer(StoredJudge(), embedder, "published"), tmp)
        from creagraph.core.io import read_jsonl

        table = summarize(read_jsonl(Path(tmp) / "queries.jsonl"))
    typer.echo(f"  {'model':24} {'s0.7':>6} {'s0.9':>6} {'max σ':>6} {'d':>5} {'|U|':>6}")
    for row in table:
        typer.echo(
            f"  {row['model']:24} {row['s_0.7_mean']:6.2f} {row['s_0.9_mean']:6.2f} "
            f"{row['max_quality_mean']:6.2f} {row['mean_pairwise_distance_mean']:5.2f} "
            f"{row['n_kept_mean']:6.2f}"
        )
    typer.echo("  (stored published judge, published utility; `creagraph score --judge kg` grounds")
    typer.echo("   every triple in the knowledge graph instead)")
    kg = EmbeddedKG(store)
    grounder = Grounder(kg, EntityLinker(kg), RelationLinker(kg, embedder))
    shown = 0
    seen: set[tuple[str, ...]] = set()
    typer.secho("\n== grounding sample triples in the graph (kg judge)", bold=True)
    for row in rows:
        for path in parse_answer(row.answer).paths:
            for triple in path.triples:
                if len(triple) != 3 or triple in seen:
                    continue
                seen.add(triple)
                g = grounder.ground(*triple)
                if g.status == "verified" and shown < 5:
                    shown += 1
                    typer.echo(
                        f"  {triple} -> ({g.subject}, {g.property}, {g.object}) verified; "
                        f"class sizes {g.class_size_subjects}/{g.class_size_objects} -> "
                        f"σ = {g.specificity}"
                    )
            if shown >= 5:
                return


def run_tig_demo() -> None:
    """Novelty checklist anchors for one AUT object, leaving out the two compared models."""
    from creagraph.tig import (
        anchors_for_population,
        build_atom_tables,
        l2mo_population,
        load_aut_population,
    )

    try:
        responses = load_aut_population(objects=["paperclip"])
    except FileNotFoundError:
        typer.echo("(no AUT population found in ../shared; skipping the TIG demo)")
        return
    typer.secho("\n== Ekphrasis novelty anchors (AUT 'paperclip', offline extractor)", bold=True)
    table = next(iter(build_atom_tables(responses, show_progress=False).values()))
    pair = ("claude/claude-sonnet-4-20250514", "gpt/gpt-5")
    population = l2mo_population(table, pair)
    typer.echo(
        f"  {len(table.responses)} ideas from {len(table.models)} models; comparing {pair[0]} vs "
        f"{pair[1]}: reference = the other {len(table.models) - 2} models"
    )
    for anchor in anchors_for_population(population, top_k=3):
        typer.echo(f"  [{anchor.cliche_score:.2f}] {anchor.text}")
