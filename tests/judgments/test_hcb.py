from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

from creagraph.core.io import InputError
from creagraph.judgments import (
    AXES,
    bradley_terry,
    generate_hcb,
    hcb_comparisons,
    hcb_report,
    read_hcb,
    write_hcb,
    write_hcb_report,
)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    data, truth = generate_hcb(seed=3)
    d = tmp_path_factory.mktemp("hcb")
    write_hcb(data, d)
    return d, data, truth


@pytest.fixture(scope="module")
def report(synthetic):
    d, _, _ = synthetic
    return hcb_report(read_hcb(d))


def test_round_trip_keeps_every_row(synthetic):
    d, data, _ = synthetic
    back = read_hcb(d)
    assert len(back.prompts) == len(data.prompts) == 36
    assert len(back.pairwise) == len(data.pairwise)
    assert len(back.scalar) == len(data.scalar)
    assert back.empty_outputs() == data.empty_outputs()
    assert back.scalar[0]["prompt_adherence"] == data.scalar[0]["prompt_adherence"]


def test_generator_is_seeded():
    a, _ = generate_hcb(seed=5, prompts_per_cell=1)
    b, _ = generate_hcb(seed=5, prompts_per_cell=1)
    c, _ = generate_hcb(seed=6, prompts_per_cell=1)
    assert a.pairwise == b.pairwise and a.scalar == b.scalar
    assert a.pairwise != c.pairwise


def test_bt_recovers_generating_rank_order_and_ties(synthetic):
    d, data, truth = synthetic
    comps = hcb_comparisons(read_hcb(d))
    res = bradley_terry(comps, ties="davidson")
    order = [row["item"] for row in res.leaderboard()]
    assert order == truth.rank_order()
    # empty responses were decided by the rule, so theta is close to the truth but the tie
    # parameter is estimated from real ties only approximately
    truth_theta = dict(zip(truth.models, truth.theta, strict=True))
    est = dict(zip(res.items, res.theta, strict=True))
    for m in truth.models:
        assert est[m] == pytest.approx(truth_theta[m], abs=0.2)
    assert res.nu == pytest.approx(truth.nu, abs=0.08)


def test_report_recovers_convergent_and_divergent_axes(report, synthetic):
    _, _, truth = synthetic
    assert truth.convergent_axes == ("prompt_adherence",)
    assert truth.divergent_axes == ("visual_appeal",)
    phase = {(r["stage"], r["axis"]): r for r in report.tables["convergence_phase"]}
    for stage in ("ideation", "mockup", "refinement"):
        a = {axis: phase[(stage, axis)]["alpha_interval"] for axis in AXES}
        assert a["prompt_adherence"] > a["usability"] > a["visual_appeal"]
        assert phase[(stage, "prompt_adherence")]["verdict"] == "convergent"
        assert phase[(stage, "visual_appeal")]["verdict"] == "divergent"
        for axis in ("prompt_adherence", "visual_appeal"):
            assert a[axis] == pytest.approx(truth.expected_alpha[axis], abs=0.15)
        # the models genuinely differ in quality on every axis
        assert phase[(stage, "prompt_adherence")]["models_differ"]
    verdicts = {r["verdict"] for r in report.tables["convergence"] if r["axis"] == "visual_appeal"}
    assert verdicts <= {"divergent", "mixed"}
    assert "visual_appeal" in report.summary and "convergent" in report.summary


def test_report_tables_cover_every_domain_and_phase(report, synthetic):
    _, data, truth = synthetic
    cells = {(p["domain"], p["stage"]) for p in data.prompts}
    t = report.tables
    assert {(r["domain"], r["stage"]) for r in t["bradley_terry"]} == cells
    assert {(r["domain"], r["stage"]) for r in t["friedman"]} == cells
    assert len(t["win_rates"]) == len(cells) * len(truth.models)
    assert len(t["head_to_head"]) == len(cells) * len(truth.models) * (len(truth.models) - 1)
    assert len(t["krippendorff"]) == len(cells) * len(truth.models) * len(AXES)
    # one phase row (pooled over domains) and one row per domain, per stage and axis
    n_domains = len({p["domain"] for p in data.prompts})
    assert len(t["kendalls_w_phase"]) == 3 * len(AXES) * (1 + n_domains)
    # every domain shows the same models: the phase pools its blocks
    phase = [r for r in t["kendalls_w_phase"] if r["scope"] == "phase"]
    assert {r["method"] for r in phase} == {"pooled blocks"}
    assert all(r["kendalls_w"] is not None for r in phase)
    # head-to-head is antisymmetric: w(a, b) + w(b, a) = 1
    h2h = {(r["domain"], r["stage"], r["model"], r["opponent"]): r["pairwise_win_rate"]
           for r in t["head_to_head"]}
    for (dom, st, a, b), w in h2h.items():
        assert w + h2h[(dom, st, b, a)] == pytest.approx(1.0)
    # mean scalar ratings follow the models' quality
    means = {}
    for r in t["scalar_means"]:
        if r["axis"] == "prompt_adherence":
            means.setdefault(r["model"], []).append(r["mean"])
    ranked = sorted(means, key=lambda m: -np.mean(means[m]))
    assert ranked == truth.rank_order()
    for r in t["krippendorff"]:
        assert r["alpha_interval"] is None or -1.0 <= r["alpha_interval"] <= 1.0


def test_write_report(report, tmp_path):
    written = write_hcb_report(report, tmp_path)
    names = {p.name for p in written}
    assert {"win_rates.csv", "head_to_head.csv", "bradley_terry.csv", "krippendorff.csv",
            "friedman.csv", "kendalls_w_phase.csv", "scalar_means.csv", "convergence.csv",
            "convergence.md"} <= names
    with (tmp_path / "friedman.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(report.tables["friedman"])
    assert float(rows[0]["friedman_p"]) == pytest.approx(report.tables["friedman"][0]["friedman_p"])


def test_empty_response_rule_applies(tmp_path):
    data, _ = generate_hcb(seed=1, prompts_per_cell=1, empty_rate=0.0)
    victim = data.outputs[0]
    victim["empty"], victim["output"] = True, ""
    write_hcb(data, tmp_path)
    back = read_hcb(tmp_path)
    comps = hcb_comparisons(back)
    pid, model = victim["prompt_id"], victim["model"]
    k = comps.items.index(model)
    for i, r in enumerate(back.pairwise):
        if r["prompt_id"] == pid and model in (r["model_a"], r["model_b"]):
            side = 1 if r["model_a"] == model else -1
            assert comps.outcome[i] == -side  # the empty response always loses
            assert k in (comps.left[i], comps.right[i])


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit_line(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text().splitlines()
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("\n".join(lines) + "\n")


def test_bad_inputs_name_file_line_and_column(synthetic, tmp_path):
    src, _, _ = synthetic
    d = _copy(src, tmp_path / "a")
    _edit_line(d / "prompts_workflow.csv", 3, ",ideation,", ",sketching,")
    with pytest.raises(InputError, match=r"prompts_workflow\.csv:3: column 'stage'"):
        read_hcb(d)

    d = _copy(src, tmp_path / "b")
    first = (d / "pairwise_comparisons.csv").read_text().splitlines()[1].split(",")
    _edit_line(d / "pairwise_comparisons.csv", 2, f",{first[4]},", ",nobody,")
    with pytest.raises(InputError, match=r"pairwise_comparisons\.csv:2: column 'chosen'"):
        read_hcb(d)

    d = _copy(src, tmp_path / "c")
    _edit_line(d / "scalar_feedback.csv", 4, "p0000", "p9999")
    with pytest.raises(InputError, match=r"scalar_feedback\.csv:4: column 'prompt_id'"):
        read_hcb(d)

    d = _copy(src, tmp_path / "d")
    text = (d / "scalar_feedback.csv").read_text().replace("visual_appeal", "looks", 1)
    (d / "scalar_feedback.csv").write_text(text)
    with pytest.raises(InputError, match=r"scalar_feedback\.csv:1: missing column.*visual_appeal"):
        read_hcb(d)

    with pytest.raises(InputError, match="not a directory"):
        read_hcb(tmp_path / "nope")
