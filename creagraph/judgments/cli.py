"""``creagraph judge …``: Bradley–Terry leaderboards, rater agreement, HCB reports."""

from __future__ import annotations

import math
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
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a Bradley–Terry leaderboard with confidence intervals, tiers and diagnostics."""
    from creagraph.judgments.bradley_terry import bradley_terry, make_comparisons
    from creagraph.judgments.hcb import write_table

    rows = _read(path)
    first = rows[0]
    left = left or ("left" if "left" in first else "model_a")
    right = right or ("right" if "right" in first else "model_b")
    winner = winner or ("winner" if "winner" in first else "chosen")
    for name, what in ((left, "left"), (right, "right"), (winner, "winner")):
        _column(path, rows, name, what)
    for name in (weight, left_empty, right_empty):
        if name:
            _column(path, rows, name, "optional")
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
        )
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith("comparison "):
            k = int(msg.split()[1].rstrip(":"))
            raise InputError(
                f"{_where(path, k)}: column {winner!r}: {msg.split(': ', 1)[1]}"
            ) from None
        raise InputError(f"{path}: {msg}") from None
    res = bradley_terry(comps, ties=ties, alpha=alpha, n_bootstrap=bootstrap, ci=ci, seed=seed,
                        show_progress=bootstrap > 0)  # type: ignore[arg-type]
    board = res.leaderboard()
    cols = ["rank", "tier", "item", "theta", "ci_low", "ci_high", "elo", "expected_win_rate",
            "p_rank_1", "n_comparisons", "raw_win_rate", "tie_half_win_rate"]
    _print_table(board, cols, as_json)
    if not as_json:
        extra = f", nu {res.nu:.4g}" if res.nu is not None else ""
        typer.echo(
            f"\n{len(comps)} comparisons, {comps.n_items} items, tie rate {res.tie_rate:.3f}, "
            f"ties={ties}{extra}, "
            + (f"{bootstrap} bootstrap resamples" if bootstrap else "Wald intervals")
            + (f" ({res.n_degenerate_resamples} degenerate)" if res.n_degenerate_resamples else "")
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
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rater agreement: Krippendorff's α, Fleiss' κ, ICC, Kendall's W and Friedman."""
    import numpy as np

    from creagraph.judgments.agreement import (
        category_counts,
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
        if v is None or (isinstance(v, str) and not v.strip()):
            continue
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
    for lv in levels:
        try:
            a = krippendorff_alpha(table, lv)  # type: ignore[arg-type]
        except ValueError as exc:
            add(f"krippendorff_alpha_{lv}", None, len(units), str(exc))
            continue
        add(f"krippendorff_alpha_{lv}", a, len(units), "selected" if lv == level else "")
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
                add(name, val, len(units), f"{int(full_raters.sum())} complete raters")
        # Kendall's W / Friedman: raters (blocks) ranking the units
        if full_raters.sum() >= 2 and len(units) >= 2:
            kw = kendalls_w(mat[full_raters])
            add("kendalls_w", kw.w, int(full_raters.sum()), f"p = {kw.pvalue:.4g}")
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
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples per cell.")] = 0,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Per domain × phase tables (CSV) and a convergence summary (convergence.md)."""
    from creagraph.judgments.hcb import hcb_report, read_hcb, write_hcb_report

    data = read_hcb(directory)
    report = hcb_report(data, ties=ties, alpha=alpha, n_bootstrap=bootstrap,  # type: ignore[arg-type]
                        seed=seed, show_progress=True)
    written = write_hcb_report(report, out)
    typer.echo(report.summary)
    typer.echo(f"wrote {len(written)} files to {out}")


@app.command("hcb-synth")
def hcb_synth_cmd(
    out: Annotated[Path, typer.Argument(help="Directory to write the five HCB CSV files to.")],
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    prompts_per_cell: Annotated[int, typer.Option(help="Prompts per domain × stage.")] = 4,
) -> None:
    """Write synthetic HCB-format data with known ground truth (for demos and tests)."""
    from creagraph.judgments.hcb import write_hcb
    from creagraph.judgments.synthetic import generate_hcb

    data, truth = generate_hcb(seed=seed, prompts_per_cell=prompts_per_cell)
    write_hcb(data, out)
    typer.echo(
        f"wrote {out}: {len(data.prompts)} prompts, {len(data.pairwise)} comparisons, "
        f"{len(data.scalar)} scalar ratings\ntrue order: {', '.join(truth.rank_order())}\n"
        f"convergent axes: {', '.join(truth.convergent_axes)}; "
        f"divergent axes: {', '.join(truth.divergent_axes)}"
    )
