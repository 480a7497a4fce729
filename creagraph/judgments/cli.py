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
from creagraph.judgments.choices import BootstrapUnit, MeasurementLevel, Ties

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
    _check_header(path)
    rows = read_records(path)
    if not rows:
        raise InputError(f"{path}: no records")
    return rows


def _check_header(path: Path) -> None:
    """A CSV/TSV header naming a column twice would silently keep the last one: refuse."""
    import csv

    if path.suffix.lower() not in (".csv", ".tsv") or not path.is_file():
        return
    with path.open(newline="", encoding="utf-8-sig") as handle:
        header = next(csv.reader(handle, delimiter="\t" if path.suffix.lower() == ".tsv"
                                 else ","), [])
    seen: set[str] = set()
    for k, name in enumerate(header):
        if name in seen:
            raise InputError(f"{path}:1: column {name!r} appears twice (column {k + 1}); "
                             "rename one")
        seen.add(name)


def _json_safe(v: Any) -> Any:
    """NaN / infinity are not JSON: write ``null``."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _column(path: Path, rows: list[dict[str, Any]], name: str, what: str) -> None:
    if name not in rows[0]:
        raise InputError(
            f"{path}:1: missing {what} column {name!r} (columns: {sorted(rows[0])}); "
            "name it with the matching option"
        )


def _print_table(rows: list[dict[str, Any]], columns: list[str], as_json: bool) -> None:
    if as_json:
        for r in rows:
            typer.echo(dumps({c: _json_safe(r.get(c)) for c in columns}))
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


def _check_out(out: Path | None, command: str, path: Path) -> None:
    """Refuse a bad ``--out`` (the input itself, a file creagraph did not write) at once."""
    from creagraph.core.outdir import check_output_file

    if out is not None:
        check_output_file(out, command, inputs=[path])


def _write_out(out: Path | None, rows: list[dict[str, Any]], as_json: bool,
               command: str = "judge", path: Path | None = None,
               settings: dict[str, Any] | None = None) -> None:
    """``--out``: also write the table (claimed: :func:`creagraph.core.outdir.
    claim_output_file`), and say so unless printing JSON."""
    if out is None:
        return
    from creagraph.core.outdir import claim_output_file, file_identity
    from creagraph.judgments.hcb_io import write_table

    fingerprint = {**(settings or {}),
                   "input": file_identity(path) if path is not None else None}
    with claim_output_file(out, command, inputs=[path] if path is not None else [],
                           fingerprint=fingerprint):
        write_table(out, rows)
    if not as_json:
        typer.echo(f"wrote {out}")


def _located(path: Path, exc: Any) -> InputError:
    """A library :class:`~creagraph.judgments.comparisons.RecordError` as an input error
    naming the file, the line (or record) and the column."""
    return InputError(f"{_where(path, exc.index)}: column {exc.column!r}: {exc.detail}")


BT_COLUMNS = ["rank", "tier", "rank_best", "rank_worst", "item", "theta", "ci_low", "ci_high",
              "elo", "elo_ci_low", "elo_ci_high", "expected_win_rate", "p_rank_1",
              "n_comparisons", "raw_win_rate", "tie_half_win_rate"]
"""Columns of the ``judge bt`` table (``component`` and ``sequential_elo`` when present)."""


def _bt_comparisons(path: Path, rows: list[dict[str, Any]], columns: dict[str, str | None],
                    cluster: str) -> Any:
    """Check the named columns and the cluster option, then build the comparisons."""
    from creagraph.judgments.comparisons import RecordError, comparisons_from_records

    first = rows[0]
    left: str = columns["left"] or ("left" if "left" in first else "model_a")
    right: str = columns["right"] or ("right" if "right" in first else "model_b")
    winner: str = columns["winner"] or ("winner" if "winner" in first else "chosen")
    for name, what in ((left, "left"), (right, "right"), (winner, "winner")):
        _column(path, rows, name, what)
    optional = {k: v for k, v in columns.items() if k not in ("left", "right", "winner")}
    for opt in optional.values():
        if opt:
            _column(path, rows, opt, "optional")
    if cluster in ("rater", "prompt") and not optional[cluster]:
        raise InputError(f"--cluster {cluster} needs --{cluster} COLUMN")
    try:
        return comparisons_from_records(rows, left=left, right=right, winner=winner, **optional)
    except RecordError as exc:
        raise _located(path, exc) from None
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None


def _bt_board(res: Any, comps: Any, sequential: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The leaderboard rows and the columns to show."""
    board = res.leaderboard()
    cols = list(BT_COLUMNS)
    if res.component is not None and res.component.max() > 0:
        cols.insert(2, "component")
    if sequential:
        from creagraph.judgments.elo import sequential_elo

        seq = dict(zip(comps.items, sequential_elo(comps).tolist(), strict=True))
        for row in board:
            row["sequential_elo"] = seq[row["item"]]
        cols.append("sequential_elo")
    return board, cols


def _bt_footer(res: Any, comps: Any, ties: str, bootstrap: int, cluster: str,
               sequential: bool) -> str:
    extra = f", nu {res.nu:.4g}" if res.nu is not None else ""
    return (
        f"\n{len(comps)} comparisons, {comps.n_items} items, tie rate {res.tie_rate:.3f}, "
        f"ties={ties}{extra}, "
        + f"intervals: {res.interval_method}"
        + (f"; {bootstrap} bootstrap resamples of {cluster}s" if bootstrap else "")
        + (f" ({res.n_degenerate_resamples} degenerate)" if res.n_degenerate_resamples else "")
        + "\ntier = 1 + the number of items significantly better (rank range: rank_best–"
        "rank_worst)"
        + "\nelo = the Bradley–Terry estimate on the Elo scale (1000 + 400·log10 odds), "
        "not sequential Elo" + ("" if sequential else " (--sequential-elo adds it)")
    )


# long only for its Annotated option declarations; the body calls the library
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
        Ties, typer.Option(help="Tie policy: exclude (Ekphrasis), half (Arena) or davidson.")
    ] = Ties.EXCLUDE,
    alpha: Annotated[float, typer.Option(help="L2 penalty on log-strengths (0 = ML).")] = 0.0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples (0 = Wald CIs).")] = 0,
    ci: Annotated[float, typer.Option(help="Confidence level.")] = 0.95,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    cluster: Annotated[
        BootstrapUnit,
        typer.Option(help="Dependence unit: comparison (independent), rater or prompt "
                     "(cluster-robust t intervals; a bootstrap resamples whole raters or "
                     "prompts; needs --rater/--prompt)."),
    ] = BootstrapUnit.COMPARISON,
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
    by: Annotated[
        str | None,
        typer.Option("--by", help="Rank each value of this column (e.g. a domain) separately."),
    ] = None,
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a Bradley–Terry leaderboard with confidence intervals, ranks and diagnostics.

    The ``elo`` column is the Bradley–Terry estimate on the Elo scale (1000 + 400·log10
    odds), not sequential Elo; ``--sequential-elo`` adds the latter.
    """
    from creagraph.judgments.leaderboard import bradley_terry

    columns = {"left": left, "right": right, "winner": winner, "weight": weight,
               "left_empty": left_empty, "right_empty": right_empty, "rater": rater,
               "prompt": prompt}
    _check_out(out, "judge bt", path)
    rows = _read(path)
    if by:
        _column(path, rows, by, "--by")
    comps = _bt_comparisons(path, rows, columns, cluster.value)  # every row checked once
    fit = {"ties": ties.value, "alpha": alpha, "n_bootstrap": bootstrap, "ci": ci,
           "seed": seed, "show_progress": bootstrap > 0, "cluster": cluster.value,
           "across_components": across_components}
    board: list[dict[str, Any]] = []
    footers = []
    for group, part in _by_groups(rows, comps, by):
        with _warnings_as_lines():
            res = bradley_terry(part, **fit)  # type: ignore[arg-type]
        rows_g, cols = _bt_board(res, part, sequential)
        if by:
            rows_g = [{by: group, **r} for r in rows_g]
            cols = [by, *cols]
        board += rows_g
        footers.append((f"[{by} = {group}] " if by else "")
                       + _bt_footer(res, part, ties.value, bootstrap, cluster.value,
                                    sequential).strip())
    _print_table(board, cols, as_json)
    if not as_json:
        typer.echo("\n" + "\n".join(footers))
    _write_out(out, board, as_json, "judge bt", path,
               {**columns, "ties": ties.value, "alpha": alpha, "bootstrap": bootstrap,
                "ci": ci, "seed": seed, "cluster": cluster.value, "by": by,
                "across_components": across_components, "sequential_elo": sequential})


def _by_groups(rows: list[dict[str, Any]], comps: Any, by: str | None) -> list[tuple[str, Any]]:
    """The comparisons of each value of column ``by`` (restricted to the items that
    group compares), or all of them."""
    import numpy as np

    from creagraph.judgments.comparisons import _restrict

    if not by:
        return [("", comps)]
    keys = np.array([str(r.get(by, "")).strip() for r in rows], dtype=object)
    out = []
    for group in sorted(set(keys.tolist())):
        part = comps.subset(keys == group)
        present = np.union1d(part.left, part.right)
        out.append((group, _restrict(part, present)))
    return out


#: beyond this, squared deviations of ratings overflow float64 (and their sums lose
#: every digit): ratings so large are a unit mistake, not agreement data
MAX_RATING = 1e150


def _check_magnitudes(path: Path, rows: list[dict[str, Any]], value: str) -> None:
    """Refuse ratings whose squares overflow, naming the first such row."""
    for k, r in enumerate(rows):
        try:
            v = abs(float(r[value]))
        except (TypeError, ValueError):
            continue
        if math.isfinite(v) and v > MAX_RATING:
            raise InputError(
                f"{_where(path, k)}: column {value!r}: rating {r[value]!r} is too large "
                f"(> {MAX_RATING:g}: its square overflows); rescale the ratings")


@app.command("agreement")
def agreement_cmd(
    path: Annotated[Path, typer.Argument(help="Long ratings table (one rating per row).")],
    unit: Annotated[str, typer.Option(help="Column of the rated unit (item, prompt…).")] = "unit",
    rater: Annotated[str, typer.Option(help="Column of the rater id.")] = "rater",
    value: Annotated[str, typer.Option(help="Column of the rating / label.")] = "value",
    level: Annotated[
        MeasurementLevel,
        typer.Option(help="Krippendorff level: nominal, ordinal, interval or ratio."),
    ] = MeasurementLevel.INTERVAL,
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
    from creagraph.judgments.agreement import agreement_statistics, rating_labels
    from creagraph.judgments.comparisons import RecordError

    _check_out(out, "judge agreement", path)
    rows = _read(path)
    for name, what in ((unit, "unit"), (rater, "rater"), (value, "value")):
        _column(path, rows, name, what)
    try:
        labels = rating_labels([r[unit] for r in rows], [r[rater] for r in rows],
                               [r[value] for r in rows])
    except RecordError as exc:
        exc.column = value
        raise _located(path, exc) from None
    if not labels.numeric and level != MeasurementLevel.NOMINAL:
        raise InputError(f"{path}: column {value!r} has non-numeric labels; use --level nominal")
    if labels.numeric:
        _check_magnitudes(path, rows, value)
    results = agreement_statistics(labels, level=level.value, ties_correction=ties_correction)
    _print_table(results, ["statistic", "value", "n", "note"], as_json)
    _write_out(out, results, as_json, "judge agreement", path,
               {"unit": unit, "rater": rater, "value": value, "level": level.value,
                "ties_correction": ties_correction})


#: columns that `judge swap` will not silently pool over
_JUDGE_OR_PROMPT_COLUMNS = frozenset(
    {"judge", "rater", "evaluator", "evaluator_id", "annotator", "worker", "prompt",
     "prompt_id", "question", "question_id", "task", "task_id"})


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
    from creagraph.judgments.comparisons import make_comparisons

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
    unnamed = [f"--{opt}" for opt, col in (("rater", rater), ("prompt", prompt)) if not col]
    likely = sorted(set(rows[0]) & _JUDGE_OR_PROMPT_COLUMNS - {rater, prompt})
    if unnamed and likely:
        raise InputError(
            f"{path}: columns {likely} look like judges or prompts but {' and '.join(unnamed)} "
            "not given: verdicts would be paired across them; name them (or rename the "
            "columns to pool on purpose)")
    orig, swapped = swapped_pairs(comps)
    if orig.size == 0:
        raise InputError(f"{path}: no pair was judged in both orders")
    if unnamed:
        typer.echo(f"note: no {' / '.join(unnamed)}: a pair's two orders are matched across "
                   "all judges and prompts", err=True)
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
    ties: Annotated[
        Ties, typer.Option(help="Tie policy: exclude, half or davidson.")
    ] = Ties.EXCLUDE,
    alpha: Annotated[float, typer.Option(help="L2 penalty for Bradley–Terry.")] = 0.0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples per cell.")] = 200,
    cluster: Annotated[
        BootstrapUnit,
        typer.Option(help="Bootstrap unit: rater (default), prompt or comparison."),
    ] = BootstrapUnit.RATER,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Per domain × phase tables (CSV), a convergence summary (convergence.md) and, with
    the report extra, report.html (figures)."""
    from creagraph.core.outdir import claim_output_dir, file_identity
    from creagraph.judgments.hcb import TABLES, hcb_report, read_hcb, write_hcb_report
    from creagraph.judgments.hcb_io import HCB_FILES

    inputs = [directory / name for name in HCB_FILES.values()]
    settings = {"ties": ties.value, "alpha": alpha, "bootstrap": bootstrap,
                "cluster": cluster.value, "seed": seed,
                "inputs": [file_identity(p) for p in inputs]}
    data = read_hcb(directory)  # a missing or bad input file: refused before --out is made
    from creagraph.core.extras import MissingExtraError
    from creagraph.judgments.hcb_figures import write_hcb_html

    skipped = ""
    with claim_output_dir(out, "judge hcb-report", [f"{t}.csv" for t in TABLES]
                          + ["convergence.md", "report.html"], inputs=inputs,
                          fingerprint=settings, fresh=True):
        with _warnings_as_lines():
            report = hcb_report(data, ties=ties.value, alpha=alpha, n_bootstrap=bootstrap,
                                cluster=cluster.value, seed=seed, show_progress=True)
        written = write_hcb_report(report, out)
        try:
            written.append(write_hcb_html(report.tables, out))
        except MissingExtraError as exc:  # the CSVs stand on their own
            skipped = f"figures skipped (report.html not written): {exc}"
    typer.echo(report.summary)
    typer.echo(f"wrote {len(written)} files to {out}")
    if skipped:
        typer.echo(skipped, err=True)


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
    from creagraph.judgments.hcb_io import write_hcb
    from creagraph.judgments.synthetic import disjoint_design, generate_hcb

    out = deprecated_alias(out, out_old, "--out", "the positional OUT")
    if out is None:
        raise typer.BadParameter("give the output directory with --out", param_hint="--out")
    extra = disjoint_design() if disjoint else {}
    from creagraph.core.outdir import claim_output_dir
    from creagraph.judgments.hcb_io import HCB_FILES

    data, truth = generate_hcb(seed=seed, prompts_per_cell=prompts_per_cell, **extra)
    with claim_output_dir(out, "judge hcb-synth", list(HCB_FILES.values()), rewrite=True,
                          fingerprint={"seed": seed, "prompts_per_cell": prompts_per_cell,
                                       "disjoint_models": disjoint}):
        write_hcb(data, out)
    typer.echo(
        f"wrote {out}: {len(data.prompts)} prompts, {len(data.pairwise)} comparisons, "
        f"{len(data.scalar)} scalar ratings\ntrue order: {', '.join(truth.rank_order())}\n"
        f"convergent axes: {', '.join(truth.convergent_axes)}; "
        f"divergent axes: {', '.join(truth.divergent_axes)}"
    )
