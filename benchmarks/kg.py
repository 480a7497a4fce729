"""Knowledge-graph benchmark: import, reopen and look-up latency, embedded vs SPARQL.

Run: ``.venv/bin/python benchmarks/kg.py [--slice PATH]``. Prints the import time of the
slice, the reopen time (target < 1 s), and median latencies of label search, out-edges and
class-size look-ups for the embedded backend (target: class size < 50 µs) and for the SPARQL
backend against a local Oxigraph server over HTTP (cache off). Baseline for the ratios:
the SPARQL backend on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice", type=Path, default=default_slice_path())
    parser.add_argument("--n", type=int, default=300, help="look-ups per kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        t = time.perf_counter()
        res = import_dumps([args.slice], store, show_progress=False)
        print(
            f"embedded import: {time.perf_counter() - t:.2f} s "
            f"({res.statements:,} statements, {res.entities:,} entities)"
        )
        t = time.perf_counter()
        kg = EmbeddedKG(store)
        kg.has_triple("Q179051", "P69", "Q174710")
        print(f"embedded reopen: {(time.perf_counter() - t) * 1000:.1f} ms (target < 1000 ms)")

        sample = kg.random_statements(args.n, seed=1)
        labels = list(kg.labels([e.subject for e in sample]).values())
        t = time.perf_counter()
        server, url = serve_in_thread(open_oxigraph([args.slice], None))
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
        print(f"\nmedian latency over {args.n} look-ups    embedded      sparql   ratio")
        for name, (get, calls) in kinds.items():
            a = median_us(get(kg), calls)
            b = median_us(get(remote), calls)
            print(f"  {name:32s} {a:9.1f} µs {b:9.0f} µs {b / a:7.0f}x")
        server.shutdown()


if __name__ == "__main__":
    main()
