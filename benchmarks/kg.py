"""Knowledge-graph benchmark: import, reopen and look-up latency, embedded vs SPARQL.

Run: ``.venv/bin/python benchmarks/kg.py [--slice PATH] [--before-tree DIR]
[--synthetic-lines N | --synthetic-sizes N1,N2,...] [--synthetic-no-bulk-load]
[--synthetic-plain] [--rounds N]
[--skip lookups,import,vectors,synthetic]``. Prints:

- *import* (issue 31): ``kg import`` of the slice against pyoxigraph's ``Store.bulk_load`` of
  the same file, each in its own process (wall time and peak RSS), interleaved: before (a
  checkout given by ``--before-tree``, e.g. ``git archive main | tar -x -C DIR``) and after,
  without property vectors (``CREAGRAPH_PROPERTY_VECTORS=0``), by default (vectors saved on
  first use: nothing at import) and with them at import (``=import``); then relation
  linking's name vectors on an empty embedding cache without saving (a cold run's cost),
  on first use (embedded and saved) and once saved, and whether the vectors saved on first
  use are byte-identical to those saved at import; targets: ≤ 1.0× ``bulk_load``'s time at
  ≤ its memory without vectors, ≤ 1.5× the import alone with them; and whether every store
  file is byte-identical before and after; with ``--rounds N``, N rounds of the imports and
  ``bulk_load`` runs and the medians of their ratios (vectors measured once);
- *synthetic* : the import's throughput (lines/s, statements/s), CPU-seconds per million
  lines and peak RSS on synthetic Wikidata-like dumps of N/4 and N lines (default
  N = 2,000,000) or of the sizes given, to show what is linear;
- *lookups*: the import time of the slice, the reopen time (target < 1 s), and median
  latencies of label search, out-edges and class-size look-ups for the embedded backend
  (target: class size < 50 µs) and for the SPARQL backend against a local Oxigraph server
  over HTTP (cache off). Baseline for the ratios: the SPARQL backend on the same machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from creagraph.core.paths import default_slice_path
from creagraph.kg import EmbeddedKG, import_dumps
from creagraph.kg.server import open_oxigraph, serve_in_thread
from creagraph.kg.sparql import SparqlKG


def median_us(fn, args_list) -> float:
    times = []
    for args in args_list:
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


_CHILD = """
import json, resource, sys, time
kind, src, dst = sys.argv[1:4]
start = time.perf_counter()
if kind == "bulk_load":
    import gzip, pyoxigraph
    with (gzip.open(src) if src.endswith(".gz") else open(src, "rb")) as data:
        pyoxigraph.Store(dst).bulk_load(data, format=pyoxigraph.RdfFormat.N_TRIPLES)
    extra = {}
elif kind == "link":  # relation linking's property-name vectors, empty embedding cache
    import pathlib, tempfile
    from creagraph.core.embeddings import CachedEmbedder, SentenceTransformerEmbedder
    from creagraph.core.relations import RelationLinker
    from creagraph.kg import EmbeddedKG
    kg = EmbeddedKG(src)
    cache = pathlib.Path(tempfile.mkdtemp()) / "cache.sqlite"
    embedder = CachedEmbedder(SentenceTransformerEmbedder(), cache)
    names = RelationLinker(kg, embedder)._name_vectors()
    extra = {"names": len(names), "misses": embedder.misses,
             "saved": (pathlib.Path(src) / "propvectors.npz").is_file()}
else:
    from creagraph.kg import import_dumps
    res = import_dumps([src], dst, show_progress=False, force=True)
    extra = {"statements": res.statements, "lines": res.report["lines"]}
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu_s": use.ru_utime + use.ru_stime,
                  "rss_mb": use.ru_maxrss / 1024, **extra}))
"""


def child(kind: str, src: Path, dst: Path, tree: str | None = None, vectors: str = "0"):
    """Run one import (or ``bulk_load``, or ``link``: relation linking's name vectors on an
    empty embedding cache, for the store ``src``) in a fresh process: its seconds, CPU
    seconds and peak RSS (MB). ``vectors``: ``CREAGRAPH_PROPERTY_VECTORS``."""
    env = {**os.environ, "CREAGRAPH_PROGRESS": "0", "CREAGRAPH_PROPERTY_VECTORS": vectors}
    if tree is not None:
        env["PYTHONPATH"] = tree
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(src), str(dst)],
        env=env, cwd=dst.parent, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return "load {:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())


def import_figures(
    slice_path: Path, before_tree: Path | None, vectors: bool = True, rounds: int = 1
) -> None:
    after_tree = str(Path(__file__).resolve().parents[1])
    trees = {"after": after_tree}
    if before_tree is not None:
        trees = {"before": str(before_tree), **trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"import of {slice_path.name} ({load()} on {os.cpu_count()} CPUs):")
        got: dict = {}
        per_round = []
        for k in range(rounds):
            fig = {}
            for name in trees:
                fig[name] = child("import", slice_path, work / name, trees[name])
                fig["bulk_load " + name] = child("bulk_load", slice_path, work / f"ox-{name}")
            per_round.append(fig)
            if rounds > 1:
                print(f"  round {k + 1}: " + "; ".join(
                    f"{name} {fig[name]['seconds']:.2f} s / {fig[name]['cpu_s']:.2f} CPU-s vs "
                    f"bulk_load {fig['bulk_load ' + name]['seconds']:.2f} / "
                    f"{fig['bulk_load ' + name]['cpu_s']:.2f} "
                    f"({fig[name]['seconds'] / fig['bulk_load ' + name]['seconds']:.2f}×, "
                    f"{fig[name]['cpu_s'] / fig['bulk_load ' + name]['cpu_s']:.2f}× CPU)"
                    for name in trees) + f" ({load()})", flush=True)  # fmt: skip
        got.update(per_round[-1])
        if vectors:
            vector_figures(slice_path, work, after_tree, got)
        for name, fig in got.items():
            extra = f" ({fig['misses']} cache misses)" if "misses" in fig else ""
            print(f"  {name:18s} {fig['seconds']:6.2f} s wall, {fig['cpu_s']:6.2f} CPU-s (process, "
                  f"imports included), peak RSS {fig['rss_mb']:6.0f} MB{extra}")
        for name in trees:
            ox = got["bulk_load " + name]
            fig = got[name]
            print(f"  {name}: import/bulk_load time {fig['seconds'] / ox['seconds']:.2f}× "
                  f"({fig['cpu_s'] / ox['cpu_s']:.2f}× in CPU; target ≤ 1.0×), memory "
                  f"{fig['rss_mb'] / ox['rss_mb']:.2f}× (target ≤ 1.0×)")
        if rounds > 1:
            median_ratios(per_round, list(trees))
        if vectors:
            vector_ratios(work, got)
        if "before" in trees:
            b = got["before"]["seconds"] / got["after"]["seconds"]
            c = got["before"]["cpu_s"] / got["after"]["cpu_s"]
            print(f"  before/after ×{b:.2f} wall, ×{c:.2f} CPU")
            files = {
                name: json.loads((work / name / "meta.json").read_text())["files"]
                for name in trees
            }
            same = files["before"] == files["after"]
            print(f"  store files byte-identical before/after (SHA-256 in meta.json): {same}")
        print(f"  ({load()} at end)")


def median_ratios(per_round: list[dict], names: list[str]) -> None:
    """Medians over the rounds of each tree's import time and CPU seconds, and of their
    ratios to ``bulk_load``'s in the same round (the figures the target is judged by)."""
    med = statistics.median
    for name in names:
        ox = "bulk_load " + name
        wall = [r[name]["seconds"] / r[ox]["seconds"] for r in per_round]
        cpu = [r[name]["cpu_s"] / r[ox]["cpu_s"] for r in per_round]
        mem = [r[name]["rss_mb"] / r[ox]["rss_mb"] for r in per_round]
        print(f"  {name}, median of {len(per_round)} rounds: "
              f"{med(r[name]['seconds'] for r in per_round):.2f} s wall, "
              f"{med(r[name]['cpu_s'] for r in per_round):.2f} CPU-s; bulk_load "
              f"{med(r[ox]['seconds'] for r in per_round):.2f} s, "
              f"{med(r[ox]['cpu_s'] for r in per_round):.2f} CPU-s; ratio to bulk_load "
              f"{med(wall):.2f}× wall (range {min(wall):.2f}–{max(wall):.2f}), {med(cpu):.2f}× CPU "
              f"(range {min(cpu):.2f}–{max(cpu):.2f}), memory {med(mem):.2f}× "
              "(targets ≤ 1.0×, aim ≤ 0.85×)")


def vector_figures(slice_path: Path, work: Path, after_tree: str, got: dict) -> None:
    """The import by default and with the vectors at import; relation linking's name vectors
    on an empty cache: not saved, on first use (saved), and read from the saved file."""
    got["after, default"] = child("import", slice_path, work / "vec", after_tree, "1")
    got["after, at import"] = child("import", slice_path, work / "atimp", after_tree,
                                    "import")  # fmt: skip
    # the first kg-judged run's linking on a cold cache: without saving (what a cold run
    # pays anyway), then the first use that saves them, then a run reading them
    got["link, not saved"] = child("link", work / "vec", work, after_tree, "0")
    got["link, first use"] = child("link", work / "vec", work, after_tree, "1")
    got["link, saved file"] = child("link", work / "vec", work, after_tree, "1")


def vector_ratios(work: Path, got: dict) -> None:
    """Print what :func:`vector_figures` measured against the import without vectors."""
    for name in ("after, default", "after, at import"):
        vec, fig = got[name], got["after"]
        print(f"  {name} / without vectors: {vec['seconds'] / fig['seconds']:.2f}× wall, "
              f"{vec['cpu_s'] / fig['cpu_s']:.2f}× CPU (target ≤ 1.5×)")
    first, cold = got["link, first use"], got["link, not saved"]
    print(f"  first use (embeds and saves) / a cold run's linking: "
          f"{first['cpu_s'] / cold['cpu_s']:.2f}× CPU; saved: {first['saved']}; the run "
          f"after reads them: {got['link, saved file']['misses']} cache misses")
    at_import = np.load(work / "atimp" / "propvectors.npz")
    lazily = np.load(work / "vec" / "propvectors.npz")
    same = all(at_import[k].tobytes() == lazily[k].tobytes() for k in at_import.files)
    print(f"  vectors saved on first use byte-identical to those saved at import: {same}")


def synthetic_dump(path: Path, lines: int, seed: int = 1) -> None:
    """A Wikidata-truthy-like dump: 75 % item statements over 2,000 properties, 12 % English
    labels, 5 % aliases, 3 % descriptions, 5 % lines the import skips (other languages);
    gzip-compressed (level 1) unless ``path`` ends in ``.nt``. The random numbers come from
    numpy a chunk at a time (3× faster than drawing them line by line, so that dumps of tens
    of millions of lines are made in minutes)."""
    rng = np.random.default_rng(seed)
    n_items = max(lines // 8, 10)
    wd, wdt = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
    label = "http://www.w3.org/2000/01/rdf-schema#label"
    alias = "http://www.w3.org/2004/02/skos/core#altLabel"
    desc = "http://schema.org/description"
    kinds = np.array([0.75, 0.87, 0.92, 0.95])
    with (
        path.open("w", encoding="utf-8")
        if path.name.endswith(".nt")
        else gzip.open(path, "wt", compresslevel=1, encoding="utf-8")
    ) as handle:
        for start in range(0, lines, 100_000):
            n = min(100_000, lines - start)
            kind = np.searchsorted(kinds, rng.random(n), side="right").tolist()
            qs = rng.integers(1, n_items, n).tolist()
            ps = rng.integers(1, 2000, n).tolist()
            os_ = rng.integers(1, n_items, n).tolist()
            chunk = []
            for i, k, q, p, o in zip(range(start, start + n), kind, qs, ps, os_):
                if k == 0:
                    chunk.append(f"<{wd}Q{q}> <{wdt}P{p}> <{wd}Q{o}> .\n")
                elif k == 1:
                    chunk.append(f'<{wd}Q{q}> <{label}> "item number {q}"@en .\n')
                elif k == 2:
                    chunk.append(f'<{wd}Q{q}> <{alias}> "alias {i} of {q}"@en .\n')
                elif k == 3:
                    chunk.append(f'<{wd}Q{q}> <{desc}> "a synthetic item, {q}"@en .\n')
                else:
                    chunk.append(f'<{wd}Q{q}> <{label}> "objet {q}"@fr .\n')
            handle.write("".join(chunk))


def synthetic_figures(sizes: list[int], bulk_load: bool = True, suffix: str = "nt.gz") -> None:
    """Import synthetic dumps of each size in ``sizes``: time, throughput, peak RSS, CPU and
    the CPU-seconds per million lines (flat when the import is linear)."""
    print(f"synthetic dumps ({load()}):", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            dump = Path(tmp) / f"synthetic-{n}.{suffix}"
            synthetic_dump(dump, n)
            fig = child("import", dump, Path(tmp) / f"store-{n}")
            line = (f"  {n:>11,} lines: import {fig['seconds']:7.1f} s wall, "
                    f"{fig['cpu_s']:7.1f} CPU-s ({fig['cpu_s'] / n * 1e6:5.1f} CPU-s per M lines), "
                    f"{n / fig['seconds']:9,.0f} lines/s, "
                    f"{fig['statements'] / fig['seconds']:9,.0f} statements/s, "
                    f"peak RSS {fig['rss_mb']:6.0f} MB ({fig['rss_mb'] * 1024 / n:.2f} KB/line)")
            if bulk_load:
                ox = child("bulk_load", dump, Path(tmp) / f"ox-{n}")
                line += (f"; bulk_load {ox['seconds']:7.1f} s wall, {ox['cpu_s']:7.1f} CPU-s, "
                         f"{ox['rss_mb']:6.0f} MB")
            print(line + f" ({load()})", flush=True)
            shutil.rmtree(Path(tmp) / f"store-{n}", ignore_errors=True)
            shutil.rmtree(Path(tmp) / f"ox-{n}", ignore_errors=True)
            dump.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice", type=Path, default=default_slice_path())
    parser.add_argument("--n", type=int, default=300, help="look-ups per kind")
    parser.add_argument("--before-tree", type=Path, default=None)
    parser.add_argument("--synthetic-lines", type=int, default=2_000_000,
                        help="synthetic dumps of N/4 and N lines (unless --synthetic-sizes)")
    parser.add_argument("--synthetic-sizes", default="",
                        help="comma-separated line counts, e.g. 5000000,20000000")
    parser.add_argument("--synthetic-no-bulk-load", action="store_true",
                        help="time only the import on the synthetic dumps")
    parser.add_argument("--synthetic-plain", action="store_true",
                        help="synthetic dumps as plain .nt files (no gzip to write or read)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="import figures: rounds of interleaved runs, with medians")
    parser.add_argument("--skip", default="",
                        help="comma-separated: import,vectors,synthetic,lookups")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    if "import" not in skip:
        import_figures(args.slice, args.before_tree, "vectors" not in skip, args.rounds)
    if "synthetic" not in skip:
        sizes = [int(x) for x in args.synthetic_sizes.split(",") if x.strip()] or [
            args.synthetic_lines // 4, args.synthetic_lines]
        synthetic_figures(sizes, not args.synthetic_no_bulk_load,
                          "nt" if args.synthetic_plain else "nt.gz")
    if "lookups" not in skip:
        lookups(args.slice, args.n)


def lookups(slice_path: Path, n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        t = time.perf_counter()
        res = import_dumps([slice_path], store, show_progress=False)
        print(
            f"embedded import: {time.perf_counter() - t:.2f} s "
            f"({res.statements:,} statements, {res.entities:,} entities)"
        )
        t = time.perf_counter()
        kg = EmbeddedKG(store)
        kg.has_triple("Q179051", "P69", "Q174710")
        print(f"embedded reopen: {(time.perf_counter() - t) * 1000:.1f} ms (target < 1000 ms)")

        sample = kg.random_statements(n, seed=1)
        labels = list(kg.labels([e.subject for e in sample]).values())
        t = time.perf_counter()
        server, url = serve_in_thread(open_oxigraph([slice_path], None))
        print(f"oxigraph load (SPARQL server): {time.perf_counter() - t:.2f} s")
        remote = SparqlKG(url, cache=False)
        kinds = {
            "label search (exact)": (
                lambda g: lambda x: g.search(x, fuzzy=False),
                [(x,) for x in labels],
            ),
            "out-edges": (lambda g: g.out_edges, [(e.subject,) for e in sample]),
            "class size |{x:(x,p,o)}|": (
                lambda g: g.count_subjects,
                [(e.property, e.object) for e in sample],
            ),
            "class size |{y:(s,p,y)}|": (
                lambda g: g.count_objects,
                [(e.subject, e.property) for e in sample],
            ),
            "triple exists": (lambda g: g.has_triple, [e.as_tuple() for e in sample]),
        }
        print(f"\nmedian latency over {n} look-ups    embedded      sparql   ratio")
        for name, (get, calls) in kinds.items():
            a = median_us(get(kg), calls)
            b = median_us(get(remote), calls)
            print(f"  {name:32s} {a:9.1f} µs {b:9.0f} µs {b / a:7.0f}x")
        server.shutdown()


if __name__ == "__main__":
    main()
