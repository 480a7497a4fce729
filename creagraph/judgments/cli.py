"""``creagraph judge …``: Bradley–Terry leaderboards, rater agreement, HCB reports."""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from creagraph.core.io import InputError, dumps, read_records

app = typer.Typer(no_args_is_help=True, add_completion=False)

OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Also write the table (.csv, .jsonl or .parquet)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")]


def _where(path: Path, k: int) -> str:
    """Location of record ``k`` (0-based): CSV line (header = line 1) or record number."""
    return f"{path}:{k + 2}" if path.suffix.lower() == ".csv" else f"{path}: record {k + 1}"


def _read(path: Path) -> list[dict[str, Any]]:
    rows = read_records(path)
    if not rows:
        raise InputError(f"{path}: no records")
    return rows


def _column(path: Path, rows: list[dict[str, Any]], name: str, what: str) -> None:
    if name not in rows[0]:
        raise InputError(
            f"{path}:1: missing {what} column {name!r} (columns: {sorted(rows[0])}); "
            "name it with the matching option"
        )


def _print_table(rows: list[dict[str, Any]], columns: list[str], as_json: bool) -> None:
    if as_json:
        for r in rows:
            typer.echo(dumps({c: r.get(c) for c in columns}))
        return

    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "–"
        if isinstance(v, float):
            return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.1f}"
        return str(v)

    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[k]) for row in cells)) for k, c in enumerate(columns)]
    typer.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for row in cells:
        typer.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))


NA_TOKENS = frozenset(
    {"", "na", "n/a", "nan", "-nan", "none", "null", "<na>", "#n/a", "#na", "missing"}
)
"""Cells read as missing values (case-insensitive; pandas' default ``na_values``)."""


def _is_na(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() in NA_TOKENS


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Show statistical warnings (non-convergence, degenerate designs) as one line each on
    stderr, without the Python source location."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            seen = set()
            for w in caught:
                text = f"warning: {w.category.__name__}: {w.message}"
                if text not in seen:
                    seen.add(text)
                    typer.echo(text, err=True)


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "y", "t"}


@app.command("bt")
def bt_cmd(
    path: Annotated[Path, typer.Argument(help="Comparisons (.csv, .jsonl, .json or .parquet).")],
    left: Annotated[
        str | None, typer.Option(help="Left item column (default: left, else model_a).")
    ] = None,
    right: Annotated[
        str | None, typer.Option(help="Right item column (default: right, else model_b).")
    ] = None,
    winner: Annotated[
        str | None,
        typer.Option(help="Winner column: left/right/tie or an item name "
                     "(default: winner, else chosen)."),
    ] = None,
    weight: Annotated[str | None, typer.Option(help="Optional weight column.")] = None,
    left_empty: Annotated[
        str | None, typer.Option(help="Optional column: left response was empty (true/false).")
    ] = None,
    right_empty: Annotated[
        str | None, typer.Option(help="Optional column: right response was empty.")
    ] = None,
    ties: Annotated[
        str, typer.Option(help="Tie policy: exclude (Ekphrasis), half (Arena) or davidson.")
    ] = "exclude",
    alpha: Annotated[float, typer.Option(help="L2 penalty on log-strengths (0 = ML).")] = 0.0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples (0 = Wald CIs).")] = 0,
    ci: Annotated[float, typer.Option(help="Confidence level.")] = 0.95,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    cluster: Annotated[
        str,
        typer.Option(help="Bootstrap unit: comparison, rater or prompt (whole raters/prompts "
                     "resampled; needs --rater/--prompt)."),
    ] = "comparison",
    rater: Annotated[str | None, typer.Option(help="Rater column (for --cluster rater).")] = None,
    prompt: Annotated[
        str | None, typer.Option(help="Prompt column (for --cluster prompt).")
    ] = None,
    across_components: Annotated[
        bool,
        typer.Option("--across-components",
                     help="Rank groups of items never compared with each other together "
                          "anyway (default: refuse, naming the groups)."),
    ] = False,
    sequential: Annotated[
        bool,
        typer.Option("--sequential-elo",
                     help="Add classic sequential Elo (order-dependent, k=4) as a column."),
    ] = False,
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a Bradley–Terry leaderboard with confidence intervals, tiers and diagnostics.

    The ``elo`` column is the Bradley–Terry estimate on the Elo scale (1000 + 400·log10
    odds), not sequential Elo; ``--sequential-elo`` adds the latter.
    """
    from creagraph.judgments.bradley_terry import bradley_terry, make_comparisons
    from creagraph.judgments.hcb import write_table

    rows = _read(path)
    first = rows[0]
    left = left or ("left" if "left" in first else "model_a")
    right = right or ("right" if "right" in first else "model_b")
    winner = winner or ("winner" if "winner" in first else "chosen")
    for name, what in ((left, "left"), (right, "right"), (winner, "winner")):
        _column(path, rows, name, what)
    for name in (weight, left_empty, right_empty, rater, prompt):
        if name:
            _column(path, rows, name, "optional")
    if cluster not in ("comparison", "rater", "prompt"):
        raise InputError(f"--cluster must be comparison, rater or prompt, not {cluster!r}")
    if cluster == "rater" and not rater:
        raise InputError("--cluster rater needs --rater COLUMN")
    if cluster == "prompt" and not prompt:
        raise InputError("--cluster prompt needs --prompt COLUMN")
    ls, rs, ws, wts = [], [], [], []
    for k, r in enumerate(rows):
        a, b = r.get(left), r.get(right)
        if a in (None, "") or b in (None, ""):
            col = left if a in (None, "") else right
            raise InputError(f"{_where(path, k)}: column {col!r}: empty item")
        if str(a) == str(b):
            raise InputError(f"{_where(path, k)}: column {right!r}: item compared with itself")
        ls.append(str(a))
        rs.append(str(b))
        ws.append(r.get(winner))
        if weight:
            try:
                wts.append(float(r[weight]))
            except (TypeError, ValueError):
                raise InputError(
                    f"{_where(path, k)}: column {weight!r}: not a number: {r.get(weight)!r}"
                ) from None
    try:
        comps = make_comparisons(
            ls, rs, ws,
            weight=wts if weight else None,
            left_empty=[_truthy(r.get(left_empty)) for r in rows] if left_empty else None,
            right_empty=[_truthy(r.get(right_empty)) for r in rows] if right_empty else None,
            raters=[r.get(rater) for r in rows] if rater else None,
            prompts=[r.get(prompt) for r in rows] if prompt else None,
        )
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith("comparison "):
            k = int(msg.split()[1].rstrip(":"))
            raise InputError(
                f"{_where(path, k)}: column {winner!r}: {msg.split(': ', 1)[1]}"
            ) from None
        raise InputError(f"{path}: {msg}") from None
    with _warnings_as_lines():
        res = bradley_terry(comps, ties=ties, alpha=alpha, n_bootstrap=bootstrap,  # type: ignore[arg-type]
                            ci=ci, seed=seed, show_progress=bootstrap > 0,
                            cluster=cluster, across_components=across_components)  # type: ignore[arg-type]
    board = res.leaderboard()
    cols = ["rank", "tier", "item", "theta", "ci_low", "ci_high", "elo", "elo_ci_low",
            "elo_ci_high", "expected_win_rate", "p_rank_1", "n_comparisons", "raw_win_rate",
            "tie_half_win_rate"]
    if res.component is not None and res.component.max() > 0:
        cols.insert(2, "component")
    if sequential:
        from creagraph.judgments.bradley_terry import sequential_elo

        seq = dict(zip(comps.items, sequential_elo(comps).tolist(), strict=True))
        for row in board:
            row["sequential_elo"] = seq[row["item"]]
        cols.append("sequential_elo")
    _print_table(board, cols, as_json)
    if not as_json:
        extra = f", nu {res.nu:.4g}" if res.nu is not None else ""
        typer.echo(
            f"\n{len(comps)} comparisons, {comps.n_items} items, tie rate {res.tie_rate:.3f}, "
            f"ties={ties}{extra}, "
            + (f"{bootstrap} bootstrap resamples of {res.n_clusters} {cluster}s"
               if bootstrap else "Wald intervals")
            + (f" ({res.n_degenerate_resamples} degenerate)" if res.n_degenerate_resamples else "")
            + "\nelo = the Bradley–Terry estimate on the Elo scale (1000 + 400·log10 odds), "
            "not sequential Elo" + ("" if sequential else " (--sequential-elo adds it)")
        )
    if out is not None:
        write_table(out, board)
        if not as_json:
            typer.echo(f"wrote {out}")


@app.command("agreement")
def agreement_cmd(
    path: Annotated[Path, typer.Argument(help="Long ratings table (one rating per row).")],
    unit: Annotated[str, typer.Option(help="Column of the rated unit (item, prompt…).")] = "unit",
    rater: Annotated[str, typer.Option(help="Column of the rater id.")] = "rater",
    value: Annotated[str, typer.Option(help="Column of the rating / label.")] = "value",
    level: Annotated[
        str, typer.Option(help="Krippendorff level: nominal, ordinal, interval or ratio.")
    ] = "interval",
    ties_correction: Annotated[
        bool,
        typer.Option("--ties-correction/--no-ties-correction",
                     help="Kendall's W with (default) or without the correction for ties."),
    ] = True,
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rater agreement: Krippendorff's α, Fleiss' κ, Cohen's κ (two raters), ICC with
    confidence intervals, Kendall's W and Friedman.

    Blank cells and NA, N/A, NaN, None, null (any case) are missing values.
    """
    import numpy as np

    from creagraph.judgments.agreement import (
        MIN_ALPHA_UNITS,
        category_counts,
        cohens_kappa,
        fleiss_kappa,
        friedman,
        icc,
        kendalls_w,
        krippendorff_alpha,
    )
    from creagraph.judgments.hcb import write_table

    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise InputError(f"--level must be nominal, ordinal, interval or ratio, not {level!r}")
    rows = _read(path)
    for name, what in ((unit, "unit"), (rater, "rater"), (value, "value")):
        _column(path, rows, name, what)
    units = sorted({str(r[unit]) for r in rows})
    raters = sorted({str(r[rater]) for r in rows})
    ui = {u: k for k, u in enumerate(units)}
    ri = {r: k for k, r in enumerate(raters)}
    table: list[list[Any]] = [[None] * len(units) for _ in raters]
    numeric = True
    for k, r in enumerate(rows):
        v = r[value]
        if _is_na(v):
            continue
        if isinstance(v, str):
            v = v.strip()
        try:
            as_number: float | None = float(v)
        except (TypeError, ValueError):
            as_number = None
        if as_number is not None and not math.isfinite(as_number):
            raise InputError(
                f"{_where(path, k)}: column {value!r}: {r[value]!r} is not a finite number "
                "(leave the cell blank or write NA for a missing rating)"
            )
        if table[ri[str(r[rater])]][ui[str(r[unit])]] is not None:
            raise InputError(
                f"{_where(path, k)}: column {value!r}: rater {r[rater]!r} rated unit "
                f"{r[unit]!r} twice"
            )
        try:
            float(v)
        except (TypeError, ValueError):
            numeric = False
        table[ri[str(r[rater])]][ui[str(r[unit])]] = v
    if not numeric and level != "nominal":
        raise InputError(f"{path}: column {value!r} has non-numeric labels; use --level nominal")
    results: list[dict[str, Any]] = []

    def add(stat: str, val: float | None, n: int | str, note: str = "") -> None:
        results.append({"statistic": stat, "value": val, "n": n, "note": note})

    levels = ["nominal"] + (["ordinal", "interval", "ratio"] if numeric else [])
    pairable = sum(1 for i in range(len(units))
                   if sum(table[j][i] is not None for j in range(len(raters))) >= 2)
    few = (f"degenerate: only {pairable} unit(s) rated twice or more"
           if pairable < MIN_ALPHA_UNITS else "")
    for lv in levels:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the note column says it
                a = krippendorff_alpha(table, lv)  # type: ignore[arg-type]
        except ValueError as exc:
            add(f"krippendorff_alpha_{lv}", None, len(units), str(exc))
            continue
        note = "; ".join(x for x in ("selected" if lv == level else "", few) if x)
        add(f"krippendorff_alpha_{lv}", a, len(units), note)
    if len(raters) == 2:
        both = [(table[0][i], table[1][i]) for i in range(len(units))]
        try:
            kappa = cohens_kappa([a for a, _ in both], [b for _, b in both])
            add("cohens_kappa", kappa.kappa, kappa.n, "two raters, unweighted")
            if numeric:
                for wt in ("linear", "quadratic"):
                    kw = cohens_kappa([a for a, _ in both], [b for _, b in both], weights=wt)
                    add(f"cohens_kappa_{wt}", kw.kappa, kw.n, "two raters, weighted")
        except ValueError as exc:
            add("cohens_kappa", None, 0, str(exc))
    labels = [[table[j][i] for j in range(len(raters))] for i in range(len(units))]
    counts, cats = category_counts(labels)
    per_unit = counts.sum(axis=1)
    keep = per_unit == per_unit.max()
    if per_unit.max() >= 2 and keep.sum() >= 1:
        add("fleiss_kappa", fleiss_kappa(counts[keep]), int(keep.sum()),
            f"{len(cats)} categories; units with all {int(per_unit.max())} ratings")
    if numeric:
        mat = np.array([[np.nan if v is None else float(v) for v in row] for row in table])
        full_raters = ~np.isnan(mat).any(axis=1)
        # ICC: targets x raters over the raters that rated every unit
        if full_raters.sum() >= 2 and len(units) >= 2:
            r = icc(mat[full_raters].T)
            for name, val in r.as_dict().items():
                lo, hi = r.ci.get(name, (float("nan"), float("nan")))
                add(name, val, len(units),
                    f"{int(full_raters.sum())} complete raters; 95% CI [{lo:.3g}, {hi:.3g}]")
        # Kendall's W / Friedman: raters (blocks) ranking the units
        if full_raters.sum() >= 2 and len(units) >= 2:
            kw = kendalls_w(mat[full_raters], correction=ties_correction)
            add("kendalls_w", kw.w, int(full_raters.sum()),
                f"p = {kw.pvalue:.4g}; " + ("ties corrected" if ties_correction
                                             else "no ties correction"))
            if len(units) >= 3:
                fr = friedman(mat[full_raters])
                add("friedman_chi2", fr.statistic, fr.n_blocks, f"p = {fr.pvalue:.4g}")
                add("friedman_p", fr.pvalue, fr.n_blocks, "")
    _print_table(results, ["statistic", "value", "n", "note"], as_json)
    if out is not None:
        write_table(out, results)
        if not as_json:
            typer.echo(f"wrote {out}")


@app.command("swap")
def swap_cmd(
    path: Annotated[Path, typer.Argument(help="Comparisons judged in both orders.")],
    left: Annotated[str, typer.Option(help="Left item column.")] = "left",
    right: Annotated[str, typer.Option(help="Right item column.")] = "right",
    winner: Annotated[str, typer.Option(help="Winner column.")] = "winner",
    rater: Annotated[str | None, typer.Option(help="Judge column (optional).")] = None,
    prompt: Annotated[str | None, typer.Option(help="Prompt column (optional).")] = None,
) -> None:
    """Order-swap consistency of a (LLM) judge: verdicts that survive swapping sides."""
    from creagraph.judgments.agreement import order_swap_consistency, swapped_pairs
    from creagraph.judgments.bradley_terry import make_comparisons

    rows = _read(path)
    for name in (left, right, winner, rater, prompt):
        if name:
            _column(path, rows, name, "input")
    try:
        comps = make_comparisons(
            [r[left] for r in rows], [r[right] for r in rows], [r[winner] for r in rows],
            raters=[r[rater] for r in rows] if rater else None,
            prompts=[r[prompt] for r in rows] if prompt else None,
        )
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None
    orig, swapped = swapped_pairs(comps)
    if orig.size == 0:
        raise InputError(f"{path}: no pair was judged in both orders")
    res = order_swap_consistency(orig, swapped)
    typer.echo(
        f"pairs judged both ways: {res.n_pairs}\nconsistency: {res.consistency:.4f}\n"
        f"inconsistent, first slot chosen both times: {res.first_position_rate:.4f}\n"
        f"inconsistent, second slot chosen both times: {res.second_position_rate:.4f}"
    )


@app.command("hcb-report")
def hcb_report_cmd(
    directory: Annotated[Path, typer.Argument(help="Directory with the five HCB CSV files.")],
    out: Annotated[Path, typer.Option("--out", help="Output directory for the tables.")],
    ties: Annotated[str, typer.Option(help="Tie policy: exclude, half or davidson.")] = "exclude",
    alpha: Annotated[float, typer.Option(help="L2 penalty for Bradley–Terry.")] = 0.0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples per cell.")] = 200,
    cluster: Annotated[
        str, typer.Option(help="Bootstrap unit: rater (default), prompt or comparison.")
    ] = "rater",
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Per domain × phase tables (CSV) and a convergence summary (convergence.md)."""
    from creagraph.judgments.hcb import hcb_report, read_hcb, write_hcb_report

    if cluster not in ("comparison", "rater", "prompt"):
        raise InputError(f"--cluster must be rater, prompt or comparison, not {cluster!r}")
    data = read_hcb(directory)
    with _warnings_as_lines():
        report = hcb_report(data, ties=ties, alpha=alpha,  # type: ignore[arg-type]
                            n_bootstrap=bootstrap, cluster=cluster,  # type: ignore[arg-type]
                            seed=seed, show_progress=True)
    written = write_hcb_report(report, out)
    typer.echo(report.summary)
    typer.echo(f"wrote {len(written)} files to {out}")


@app.command("hcb-synth")
def hcb_synth_cmd(
    out_old: Annotated[
        Path | None,
        typer.Argument(metavar="OUT", hidden=True, help="Deprecated: --out."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Directory to write the five HCB CSV files to."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    prompts_per_cell: Annotated[int, typer.Option(help="Prompts per domain × stage.")] = 4,
    disjoint: Annotated[
        bool,
        typer.Option("--disjoint-models",
                     help="HCB-shaped: each of 3 domains gets its own 4 of 12 models."),
    ] = False,
) -> None:
    """Write synthetic HCB-format data with known ground truth (for demos and tests)."""
    from creagraph.cliopts import deprecated_alias
    from creagraph.judgments.hcb import write_hcb
    from creagraph.judgments.synthetic import disjoint_design, generate_hcb

    out = deprecated_alias(out, out_old, "--out", "the positional OUT")
    if out is None:
        raise typer.BadParameter("give the output directory with --out", param_hint="--out")
    extra = disjoint_design() if disjoint else {}
    data, truth = generate_hcb(seed=seed, prompts_per_cell=prompts_per_cell, **extra)
    write_hcb(data, out)
    typer.echo(
        f"wrote {out}: {len(data.prompts)} prompts, {len(data.pairwise)} comparisons, "
        f"{len(data.scalar)} scalar ratings\ntrue order: {', '.join(truth.rank_order())}\n"
        f"convergent axes: {', '.join(truth.convergent_axes)}; "
        f"divergent axes: {', '.join(truth.divergent_axes)}"
    )
