"""``creagraph eval create``: run a model on CREATE queries, score its answers (and any
published answer files given for comparison, scored the same way) and write the report."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from creagraph.core.io import InputError
from creagraph.core.llm import Prices, Sampling
from creagraph.runner.common import Endpoint

__all__ = ["eval_create", "EVAL_OUTPUTS"]

#: What ``eval create`` writes in its ``--out``: one folder per step.
EVAL_OUTPUTS = ("run", "score", "report")


def eval_create(
    queries_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    endpoint: Endpoint,
    *,
    sampling: Sampling | None = None,
    samples: int = 1,
    template_path: str | os.PathLike[str] | None = None,
    system_prompt: str | None = None,
    model_name: str | None = None,
    judge: str = "kg",
    judge_args: Mapping[str, Any] | None = None,
    mode: str = "paper",
    store: str | None = None,
    endpoint_url: str | None = None,
    compare: Sequence[str | os.PathLike[str]] = (),
    n_resamples: int = 2000,
    fresh: bool = False,
    prices: Prices | None = None,
) -> dict[str, Any]:
    """Run → score → report into ``out/run``, ``out/score`` and ``out/report``.

    ``out`` is claimed as a whole (:func:`creagraph.core.outdir.claim_output_dir`): it must
    be new, empty or made by ``eval create``; never an input's folder; one run at a time;
    the same settings resume (each step asks or scores only what is missing), other
    settings are refused naming what changed, unless ``fresh`` (which deletes only
    ``run``, ``score`` and ``report``). The score folder's fingerprint holds the run's
    settings (``out/run/run.json``) and every model is compared on the QUERIES file's
    query set (``score --query-set``): a ``compare`` file answering a query outside it is
    refused.

    Returns
    -------
    dict
        ``{"run": …, "score": …, "report": <report.html>, "run_cost": …,
        "judge_cost": …}`` (the cost estimates of the run's requests and, with an LLM
        judge, of the judge's; see :func:`creagraph.core.llm.cost_estimate`).
    """
    from creagraph.core.llm import llm_settings
    from creagraph.core.outdir import claim_output_dir, file_identity
    from creagraph.report import read_scored, write_report
    from creagraph.report.cli import REPORT_OUTPUTS
    from creagraph.runner.create import run_create
    from creagraph.runner.prompts import digest
    from creagraph.scoring.api import score_to_dir
    from creagraph.scoring.config import ScorerConfig

    root = Path(out)
    config = ScorerConfig(judge=judge, judge_args=judge_args, mode=mode, store=store,
                          endpoint=endpoint_url)
    config.validate()
    sampling = sampling or Sampling()
    settings = llm_settings(endpoint.base_url, endpoint.model, None,
                            api_key_env=endpoint.api_key_env)
    inputs = [Path(queries_path), *map(Path, compare)]
    if template_path is not None:
        inputs.append(Path(template_path))
    fingerprint = {
        "queries": file_identity(queries_path),
        "compare": [file_identity(p) for p in compare],
        "template": file_identity(template_path) if template_path is not None else None,
        "system_prompt": digest(system_prompt) if system_prompt else None,
        "base_url": (settings.base_url or "").rstrip("/"),
        "model": settings.model,
        "model_name": model_name,
        "sampling": sampling.as_dict(),
        "samples": samples,
        "judge": judge,
        "mode": mode,
        "store": str(Path(store).resolve()) if store else None,
        "endpoint": endpoint_url,
    }
    if judge_args:  # only when given, so that folders made before the option still resume
        fingerprint["judge_args"] = dict(judge_args)
    run_dir, score_dir, report_dir = root / "run", root / "score", root / "report"
    _check_compare_within(queries_path, compare)  # before any request is sent
    with claim_output_dir(root, "eval create", EVAL_OUTPUTS, inputs=inputs,
                          fingerprint=fingerprint, fresh=fresh):
        summary = run_create(
            queries_path,
            run_dir,
            endpoint,
            sampling=sampling,
            samples=samples,
            template_path=template_path,
            system_prompt=system_prompt,
            model_name=model_name,
            prices=prices,
        )
        if not summary["rows"]:
            raise InputError(f"{run_dir}: no answers came back; nothing to score")
        answers = run_dir / "answers.jsonl"
        run_settings = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["settings"]
        counts = score_to_dir([answers, *map(Path, compare)], score_dir, config,
                              run_settings=run_settings, query_set=Path(queries_path),
                              prices=prices)
        scored = read_scored([score_dir])
        with claim_output_dir(
            report_dir, "report", REPORT_OUTPUTS, inputs=[score_dir / "queries.jsonl"]
        ):
            files = write_report(scored, report_dir, n_resamples=n_resamples,
                                 title="creagraph eval create")
    judge_usage = counts.get("llm_judge") or {}
    return {"run": run_dir, "score": score_dir, "report": Path(files[0]),
            "run_cost": summary["cost"], "judge_cost": judge_usage.get("cost")}


def _check_compare_within(
    queries_path: str | os.PathLike[str], compare: Sequence[str | os.PathLike[str]]
) -> None:
    """Every query a ``--compare`` file answers must be one of QUERIES (the set every
    model is compared on); an error names the file and row."""
    from creagraph.core.io import iter_records
    from creagraph.core.manifest import read_query_set
    from creagraph.core.text import normalize_loose

    if not compare:
        return
    _, _, allowed = read_query_set(queries_path)
    for path in compare:
        for number, record in enumerate(iter_records(path), start=1):
            query = record.get("query") if isinstance(record, dict) else None
            if isinstance(query, str) and normalize_loose(query) not in allowed:
                raise InputError(
                    f"{path}: row {number}: query {query!r} is not in the query set "
                    f"{queries_path}: a comparison needs the same queries; run the model "
                    "on a QUERIES file that holds every compared query"
                )
