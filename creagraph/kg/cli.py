"""``creagraph kg …``: import, inspect, pull and serve knowledge graphs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from creagraph.cliopts import EndpointOpt, StoreOpt, deprecated_alias, open_graph_option
from creagraph.core.graph import EntityRecord, PropertyRecord, is_pid, is_qid
from creagraph.core.io import InputError, dumps

app = typer.Typer(no_args_is_help=True, add_completion=False)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@app.command("import")
def import_cmd(
    paths: Annotated[list[Path], typer.Argument(help="N-Triples dump files (.nt/.nt.gz/.nt.bz2).")],
    store: StoreOpt = None,
    language: Annotated[str, typer.Option(help="Language of labels to keep.")] = "en",
    skip_malformed: Annotated[
        bool, typer.Option(help="Count malformed lines instead of stopping at the first.")
    ] = False,
    force: Annotated[bool, typer.Option(help="Re-import even if the store is up to date.")] = False,
    labels_only: Annotated[
        bool,
        typer.Option(
            "--labels-only",
            help="Only build a label index (names for entity linking against an --endpoint "
            "holding all of Wikidata; search mode 'index'), no store.",
        ),
    ] = False,
    label_index: Annotated[
        Path | None,
        typer.Option(
            help="The label index file --labels-only writes (default $CREAGRAPH_LABEL_INDEX, "
            "else labels.sqlite in $CREAGRAPH_CACHE_DIR)."
        ),
    ] = None,
) -> None:
    """Import Wikidata truthy-dump files into an embedded store (or, with --labels-only,
    their names into a label index)."""
    if labels_only:
        _import_labels(paths, store, label_index, language, skip_malformed)
        return
    if label_index is not None:
        raise InputError("--label-index is written by --labels-only only")
    from creagraph.core.paths import default_store_dir
    from creagraph.kg.embedded import import_dumps

    target = store if store is not None else default_store_dir()
    result = import_dumps(paths, target, language=language, strict=not skip_malformed, force=force)
    reused = result.report.get("reused")
    typer.echo(
        f"{'store already up to date' if reused else 'imported'}: {target}\n"
        f"statements: {result.statements}\nentities: {result.entities}\n"
        f"properties: {result.properties}" + ("" if reused else f"\nseconds: {result.seconds:.1f}")
    )
    skipped = result.report.get("skipped", {})
    if skipped:
        typer.echo("skipped lines:")
        for reason, count in skipped.items():
            typer.echo(f"  {count}\t{reason}")
    elif not reused:
        typer.echo("skipped lines: none")


LABELS_COMMAND = "kg import --labels-only"


def _import_labels(
    paths: list[Path], store: Path | None, label_index: Path | None, language: str,
    skip_malformed: bool,
) -> None:
    """``kg import --labels-only``: the label index is claimed like every output file
    (:func:`creagraph.core.outdir.claim_output_file`): never one of the dumps, and an
    existing file is replaced only when an earlier label-index import wrote it."""
    from creagraph.core.outdir import check_output_file, claim_output_file
    from creagraph.kg.labelindex import build_label_index, default_label_index_path

    if store is not None:
        raise InputError("--labels-only writes a label index (--label-index), not a --store")
    target = label_index if label_index is not None else default_label_index_path()
    check_output_file(target, LABELS_COMMAND, inputs=paths)
    # dumps run to tens of GB: identified by path, size and modification time, not a hash
    dump_ids: list[dict[str, object]] = []
    for p in paths:
        try:
            info = Path(p).stat()
        except OSError:
            dump_ids.append({"path": str(Path(p).absolute()), "missing": True})
            continue
        dump_ids.append({"path": str(Path(p).resolve()), "size": info.st_size,
                         "mtime_ns": info.st_mtime_ns})
    settings = {"dumps": dump_ids, "language": language, "strict": not skip_malformed}
    with claim_output_file(target, LABELS_COMMAND, inputs=paths, fingerprint=settings):
        result = build_label_index(paths, target, language=language, strict=not skip_malformed)
    typer.echo(
        f"label index: {result.path}\nnames: {result.names}\nentities: {result.entities}\n"
        f"descriptions: {result.descriptions}\nseconds: {result.seconds:.1f}"
    )
    for reason, count in result.skipped.items():
        typer.echo(f"  skipped {count}\t{reason}")


@app.command()
def info(store: StoreOpt = None, endpoint: EndpointOpt = None, as_json: JsonOpt = False) -> None:
    """Print statement, entity and property counts."""
    kg = open_graph_option(store, endpoint)
    stats = kg.stats()
    if as_json:
        typer.echo(dumps({"backend": kg.backend, **stats}))
        return
    typer.echo(f"backend: {kg.backend}")
    for key, value in stats.items():
        typer.echo(f"{key}: {value}")


@app.command()
def verify(store: StoreOpt = None) -> None:
    """Checksum every file of an embedded store against the digests recorded at import.

    Opening a store already checks sizes, array shapes and index bounds; this also catches a
    value changed in place. Exits 2 naming the damaged file (re-import with ``--force``).
    """
    from creagraph.core.paths import default_store_dir
    from creagraph.kg.embedded import EmbeddedKG

    target = store if store is not None else default_store_dir()
    kg = EmbeddedKG(target)
    try:
        checked = kg.verify()
    finally:
        kg.close()
    typer.echo(f"store {target}: {len(checked)} files ok")


@app.command()
def entity(
    ident: Annotated[str, typer.Argument(help="A QID (Q42) or PID (P69).")],
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show an entity's or property's label, aliases and description."""
    kg = open_graph_option(store, endpoint)
    record: EntityRecord | PropertyRecord | None
    if is_qid(ident):
        record = kg.entity(ident)
    elif is_pid(ident):
        record = kg.property(ident)
    else:
        raise InputError(f"not a Wikidata id: {ident!r} (expected Q… or P…)")
    if record is None:
        raise InputError(f"unknown id: {ident} is not in the graph")
    if as_json:
        from dataclasses import asdict

        typer.echo(dumps(asdict(record)))
        return
    typer.echo(f"{record.id}: {record.label}")
    if record.description:
        typer.echo(f"  description: {record.description}")
    if record.aliases:
        typer.echo(f"  aliases: {'; '.join(record.aliases)}")
    inverse = getattr(record, "inverse_label", None)
    if inverse:
        typer.echo(f"  inverse: {inverse}")


@app.command()
def search(
    text: Annotated[str, typer.Argument(help="Label or alias to look up.")],
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    limit: Annotated[int, typer.Option(help="Maximum results.")] = 10,
    kind: Annotated[str, typer.Option(help="entity or property.")] = "entity",
    fuzzy: Annotated[bool, typer.Option(help="Fall back to fuzzy matching.")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Find entities (or properties) by label or alias: exact, then fuzzy."""
    kg = open_graph_option(store, endpoint)
    hits = kg.search(text, limit=limit, fuzzy=fuzzy, kind=kind)
    if not hits:
        typer.echo(f"no match for {text!r}", err=True)
        raise typer.Exit(1)
    for hit in hits:
        if as_json:
            typer.echo(dumps(hit.__dict__))
        else:
            how = "exact" if hit.exact else f"fuzzy {hit.score:.0f}"
            typer.echo(f"{hit.id}\t{hit.label}\t[{hit.kind}: {hit.matched}; {how}]")


@app.command()
def neighbors(
    ident: Annotated[str, typer.Argument(help="A QID.")],
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    prop: Annotated[str | None, typer.Option("--property", help="Only this property.")] = None,
    prop_old: Annotated[
        str | None, typer.Option("--prop", hidden=True, help="Deprecated: --property.")
    ] = None,
    direction: Annotated[str, typer.Option(help="out, in or both.")] = "both",
    limit: Annotated[int, typer.Option(help="Maximum edges printed per direction.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List an entity's out- and/or in-edges."""
    prop = deprecated_alias(prop, prop_old, "--property", "--prop")
    if direction not in ("out", "in", "both"):
        raise InputError(f"--direction must be out, in or both, not {direction!r}")
    kg = open_graph_option(store, endpoint)
    if kg.entity(ident) is None:
        raise InputError(f"unknown id: {ident} is not in the graph")
    groups = []
    if direction in ("out", "both"):
        groups.append(("out", kg.out_edges(ident, prop)))
    if direction in ("in", "both"):
        groups.append(("in", kg.in_edges(ident, prop)))
    for name, edges in groups:
        if as_json:
            for e in edges[:limit]:
                typer.echo(
                    dumps(
                        {
                            "direction": name,
                            "subject": e.subject,
                            "property": e.property,
                            "object": e.object,
                        }
                    )
                )
            continue
        typer.echo(f"{name}-edges: {len(edges)}")
        shown = edges[:limit]
        labels = kg.labels([x for e in shown for x in e.as_tuple()])
        for e in shown:
            typer.echo(
                f"  {e.subject} ({labels.get(e.subject, '?')}) -[{e.property} "
                f"{labels.get(e.property, '?')}]-> {e.object} ({labels.get(e.object, '?')})"
            )


@app.command("class-size")
def class_size(
    prop: Annotated[str, typer.Argument(help="A PID.")],
    subject: Annotated[str | None, typer.Option(help="Count |{y : (SUBJECT, PROP, y)}|.")] = None,
    obj: Annotated[
        str | None, typer.Option("--object", help="Count |{x : (x, PROP, OBJECT)}|.")
    ] = None,
    store: StoreOpt = None,
    endpoint: EndpointOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Exact class sizes (SPEC §3.4): members sharing PROP with a given object or subject."""
    if subject is None and obj is None:
        raise InputError("give --object Q… and/or --subject Q…")
    kg = open_graph_option(store, endpoint)
    out: dict[str, int | str] = {"property": prop}
    if obj is not None:
        out["object"] = obj
        out["subjects"] = kg.count_subjects(prop, obj)
    if subject is not None:
        out["subject"] = subject
        out["objects"] = kg.count_objects(subject, prop)
    if as_json:
        typer.echo(json.dumps(out))
        return
    if obj is not None:
        typer.echo(f"|{{x : (x, {prop}, {obj})}}| = {out['subjects']}")
    if subject is not None:
        typer.echo(f"|{{y : ({subject}, {prop}, y)}}| = {out['objects']}")


@app.command()
def pull(
    endpoint: Annotated[str, typer.Option("--endpoint", help="SPARQL endpoint to read from.")],
    out: Annotated[Path, typer.Option("--out", help="Output .nt or .nt.gz file.")],
    prop: Annotated[
        list[str], typer.Option("--property", help="Property to follow (repeat).")
    ] = [],  # noqa: B006
    seed: Annotated[list[str], typer.Option("--seed", help="Seed entity QID (repeat).")] = [],  # noqa: B006
    hops: Annotated[int, typer.Option(help="Expansion depth.")] = 1,
    limit: Annotated[int, typer.Option(help="Statements per property when no seeds.")] = 1000,
    max_entities: Annotated[
        int, typer.Option(help="Stop expanding past this many entities.")
    ] = 50_000,
) -> None:
    """Extract a slice from a SPARQL endpoint into Wikidata truthy-dump N-Triples."""
    from creagraph.kg.pull import pull_slice
    from creagraph.kg.sparql import SparqlKG

    result = pull_slice(
        SparqlKG(endpoint),
        out,
        properties=prop,
        seeds=seed,
        hops=hops,
        per_property_limit=limit,
        max_entities=max_entities,
    )
    typer.echo(
        f"wrote {result.path}: statements {result.statements}, entities {result.entities}, "
        f"properties {result.properties}"
    )


@app.command()
def serve(
    sources: Annotated[list[Path], typer.Argument(help="N-Triples files to serve.")],
    db: Annotated[
        Path | None, typer.Option(help="Oxigraph store directory (reused if loaded).")
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but loopback is warned about.")
    ] = "127.0.0.1",
    port: int = 7878,
    allow_federated: Annotated[
        bool,
        typer.Option(
            "--allow-federated",
            help="Answer federated (SERVICE) queries, which make the server fetch any URL a "
            "client names; refused by default.",
        ),
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Also answer requests whose Host/Origin names "
                     "this host (repeatable); default: loopback names only."),
    ] = None,
    query_timeout: Annotated[
        float, typer.Option(help="Seconds a query may run (HTTP 503 after).")
    ] = 30.0,
    max_result_mb: Annotated[
        float, typer.Option(help="Largest result in MiB (HTTP 413 beyond).")
    ] = 64.0,
    max_request_kb: Annotated[
        float, typer.Option(help="Largest request body in KiB (HTTP 413 beyond).")
    ] = 1024.0,
) -> None:
    """Serve N-Triples files over the SPARQL 1.1 protocol (Oxigraph), for local use.

    --db keeps the loaded store for the next start: it is reused only for the same
    source files (same contents); a folder loaded from other sources, or a user's
    non-empty folder, is refused.
    """
    from creagraph.kg.server import Limits
    from creagraph.kg.server import serve as run

    for name, value in (("--query-timeout", query_timeout), ("--max-result-mb", max_result_mb),
                        ("--max-request-kb", max_request_kb)):
        if not value > 0:
            raise InputError(f"{name} must be a positive number, not {value}")
    limits = Limits(query_timeout=query_timeout, max_result_bytes=int(max_result_mb * 2**20),
                    max_request_bytes=int(max_request_kb * 2**10),
                    allow_hosts=tuple(allow_host or ()))
    run(list(sources), db=db, host=host, port=port, allow_federated=allow_federated,
        limits=limits)
