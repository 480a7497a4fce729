"""``creagraph eval create``: run a model on CREATE queries, score its answers (and any
published answer files given for comparison, scored the same way) and write the report."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from creagraph.core.io import InputError
from creagraph.core.llm import Sampling
from creagraph.runner.common import Endpoint

__all__ = ["eval_create"]


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
    mode: str = "paper",
    store: str | None = None,
    endpoint_url: str | None = None,
    compare: Sequence[str | os.PathLike[str]] = (),
    n_resamples: int = 2000,
) -> dict[str, Path]:
    """Run → score → report into ``out/run``, ``out/score`` and ``out/report``.

    The score folder's fingerprint holds the answers file's identity (which the run's
    settings determine) and the run's settings themselves (in ``out/run/run.json``), so a
    re-run with other sampling settings never mixes with the first run's scores.

    Returns
    -------
    dict
        ``{"run": …, "score": …, "report": <index.html>}``.
    """
    from creagraph.report import read_scored, write_report
    from creagraph.report.cli import REPORT_OUTPUTS
    from creagraph.runner.create import run_create
    from creagraph.scoring.api import score_to_dir
    from creagraph.scoring.config import ScorerConfig

    root = Path(out)
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: exists and is not a directory; give a directory as --out")
    config = ScorerConfig(judge=judge, mode=mode, store=store, endpoint=endpoint_url)
    config.validate()
    run_dir, score_dir, report_dir = root / "run", root / "score", root / "report"
    summary = run_create(
        queries_path,
        run_dir,
        endpoint,
        sampling=sampling,
        samples=samples,
        template_path=template_path,
        system_prompt=system_prompt,
        model_name=model_name,
    )
    if not summary["rows"]:
        raise InputError(f"{run_dir}: no answers came back; nothing to score")
    answers = run_dir / "answers.jsonl"
    run_settings = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["settings"]
    score_to_dir([answers, *map(Path, compare)], score_dir, config, run_settings=run_settings)
    from creagraph.core.outdir import claim_output_dir

    scored = read_scored([score_dir])
    with claim_output_dir(
        report_dir, "report", REPORT_OUTPUTS, inputs=[score_dir / "queries.jsonl"]
    ):
        files = write_report(scored, report_dir, n_resamples=n_resamples,
                             title="creagraph eval create")
    return {"run": run_dir, "score": score_dir, "report": Path(files[0])}
