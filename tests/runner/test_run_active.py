"""``run(..., design=ActiveCases(k=K, prior=fit))`` and ``jevalkit run --cases active:K --prior
fit.json`` against the loopback server: the run sends exactly the plan's cases, wave by wave,
its rows say how each case was drawn, a re-run after kill -9 sends the rest of the same plan,
and its estimate is the library's on the same rows."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from active_benchmark import PROBE, active_benchmark, answerer
from killed_run import kill_after
from loopback import options

import jevalkit
from jevalkit.cli import main
from jevalkit.items import ActiveCases, estimate, fit_irt, load_fit, select
from jevalkit.results import read_results

REPO = Path(__file__).resolve().parents[2]
K = 12


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory):
    return active_benchmark(tmp_path_factory.mktemp("prior"))


def active_run(benchmark, server, out, k=K, *, seed=0, target_half_width=None, **more):
    """The new model (answerer) run on an active plan of the benchmark's saved prior."""
    _, path, gold, params = benchmark
    server.reply = answerer(gold, params)
    design = ActiveCases(k=k, prior=path, seed=seed, target_half_width=target_half_width)
    return jevalkit.run(PROBE, "new", design=design, **options(server, out, **more))


def library_estimate(fit, rows):
    """The plan and estimate the library draws from the same rows (each wave from the answers
    to the earlier ones)."""
    plan = select(fit, K, method="active", seed=0)
    while not plan.complete:
        plan = select(fit, K, method="active", seed=0, new_results=rows)
    return plan, estimate(fit, plan, rows).iloc[0]


def test_an_active_run_sends_the_plan_and_estimates_as_the_library(
    benchmark, openai_server, tmp_path
):
    fit, path, gold, params = benchmark
    openai_server.reply = answerer(gold, params)
    out = tmp_path / "r.jsonl"
    result = jevalkit.run(
        PROBE, "new", design=ActiveCases(k=K, prior=path), **options(openai_server, out)
    )
    df = result.rows
    assert len(openai_server.requests) == K == len(df) == df["case_id"].nunique()
    assert 0 < df["score"].mean() < 1  # the new model passes some cases and fails others
    summary = result.design.table().iloc[0]
    assert summary["stop_reason"] == "complete" and summary["n_answered"] == K
    assert summary["waves"] == 8 and summary["n_cases"] == 40
    rows = read_results(out)
    plan, row = library_estimate(fit, rows)
    ids = [case_id for _, _, case_id in plan.cases]  # items are (probe, version, case_id)
    assert sorted(ids) == sorted(df["case_id"])
    assert summary["value"] == pytest.approx(row["value"], abs=1e-12)
    assert summary["ci_low"] == pytest.approx(row["ci_low"], abs=1e-12)
    # each row names the plan and its case's probability when drawn
    drawn = dict(zip(ids, plan.table()["probability"], strict=True))
    name = ActiveCases(k=K, prior=fit).name
    assert name.startswith(f"active:{K} of 40 cases (prior ") and name.endswith("seed 0, 8 waves)")
    for r in rows.itertuples():
        assert r.subset == f"active plan of {K} of 40 cases" and r.design["name"] == name
        assert r.design["weighted"] is True and r.design["probability"] == drawn[r.case_id]
    # the same command again sends nothing: every drawn case is done
    again = jevalkit.run(
        PROBE, "new", design=ActiveCases(k=K, prior=path), **options(openai_server, out)
    )
    assert len(openai_server.requests) == K and sorted(again.rows["case_id"]) == sorted(ids)
    # another seed draws another plan
    other = jevalkit.run(
        PROBE,
        "new",
        design=ActiveCases(k=K, prior=fit, seed=3),
        **options(openai_server, tmp_path / "s3.jsonl"),
    )
    assert sorted(other.rows["case_id"]) != sorted(ids)


KILLED = """
import sys, jevalkit
from jevalkit.items import ActiveCases
jevalkit.run("unit-conversion@1", "new", design=ActiveCases(k=12, prior=sys.argv[3]),
             base_url=sys.argv[1], out=sys.argv[2], progress=False, cache=False, concurrency=1)
"""


def test_a_killed_active_run_resumes_the_same_plan(benchmark, openai_server, tmp_path):
    fit, path, gold, params = benchmark
    plain = answerer(gold, params)
    first, out = 5, tmp_path / "killed.jsonl"
    kill_after(openai_server, plain, first, KILLED, out, str(path))  # answers five, then SIGKILL
    assert out.read_bytes().count(b"\n") == first
    sent_before = len(openai_server.requests)
    code = main(
        [
            "run",
            PROBE,
            "--model",
            "new",
            "--cases",
            f"active:{K}",
            "--prior",
            str(path),
            "--base-url",
            openai_server.base_url,
            "--out",
            str(out),
            "--no-cache",
        ]
    )
    assert code == 0
    assert len(openai_server.requests) - sent_before == K - first  # only the rest was sent
    rows = read_results(out)
    straight = tmp_path / "straight.jsonl"
    jevalkit.run(
        PROBE, "new", design=ActiveCases(k=K, prior=path), **options(openai_server, straight)
    )
    assert sorted(rows["case_id"]) == sorted(read_results(straight)["case_id"])
    plan, _ = library_estimate(fit, rows)
    assert sorted(c for _, _, c in plan.cases) == sorted(rows["case_id"])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--cases", "active:1"], "give active:K with K a whole number of cases from 2 up"),
        (["--cases", "active:x"], "give active:K"),
        (["--cases", f"active:{K}"], "needs --prior FIT.json"),
        (["--cases", "1-5", "--prior", "PRIOR"], "--prior is for --cases active:K"),
        (["--cases", "active:40", "--prior", "PRIOR"], "K must be from 2 to 39"),
        (["--cases", f"active:{K}", "--prior", "MISSING"], "no such item model"),
        (["--cases", f"active:{K}", "--prior", "PRIOR", "--sample", "3"], "drop --sample"),
        (["--cases", f"active:{K}", "--prior", "PRIOR", "--shard", "0/2"], "drop --shard"),
        (
            ["--cases", f"active:{K}", "--prior", "PRIOR", "--target-half-width", "0"],
            "--target-half-width must be a number in (0, 0.5]",
        ),
        (
            ["--cases", f"active:{K}", "--prior", "PRIOR", "--target-half-width", "nan"],
            "--target-half-width must be a number in (0, 0.5]",
        ),
        (["--cases", f"active:{K}", "--prior", "PRIOR", "--dry-run"], "costs the same number"),
        # a negative seed reached numpy: a traceback ("expected non-negative integer"), exit 1
        (
            ["--cases", f"active:{K}", "--prior", "PRIOR", "--sample-seed", "-1"],
            "--sample-seed must be a whole number from 0 up",
        ),
    ],
)
def test_bad_active_options_are_one_line_and_exit_2(
    benchmark, openai_server, tmp_path, capsys, args, says
):
    _, path, _, _ = benchmark
    args = [
        str(path) if a == "PRIOR" else str(tmp_path / "none.json") if a == "MISSING" else a
        for a in args
    ]
    code = main(
        [
            "run",
            PROBE,
            "--model",
            "new",
            *args,
            "--base-url",
            openai_server.base_url,
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert openai_server.requests == []


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_an_active_plans_seed_is_a_whole_number_from_0(benchmark, openai_server, tmp_path, seed):
    """A float seed was truncated (1.5 ran the plan of seed 1 and named it so), a string
    read as a number, and a negative one raised numpy's ValueError."""
    with pytest.raises(jevalkit.errors.UsageError, match="--sample-seed must be a whole number"):
        active_run(benchmark, openai_server, tmp_path / "r.jsonl", seed=seed)
    assert openai_server.requests == []


def test_a_prior_of_other_cases_is_refused(benchmark, openai_server, tmp_path):
    fit, _, _, _ = benchmark
    with pytest.raises(jevalkit.errors.UsageError, match="this run plans unit-conversion@2"):
        jevalkit.run(
            "unit-conversion@2",
            "new",
            design=ActiveCases(k=K, prior=fit),
            **options(openai_server, tmp_path / "r.jsonl"),
        )
    assert openai_server.requests == []


def test_a_prior_fitted_on_another_probe_version_is_refused_even_by_case_id_alone(
    benchmark, openai_server, tmp_path
):
    # a fit whose items are named by case_id alone matched the cases of any version sharing
    # the ids: version 2 ran with version 1's item model, and nothing said so
    fit, _, _, _ = benchmark
    rows = fit.matrix  # the past results, as the fit saw them
    past = pd.DataFrame(
        {
            "system": np.repeat(rows.systems, len(rows.item_ids())),
            "probe": "unit-conversion",
            "version": 1,
            "case_id": [i[-1] for i in rows.item_ids()] * len(rows.systems),
            "score": rows.scores.ravel(),
        }
    )
    by_id = fit_irt(past, case="case_id")
    assert by_id.benchmark == (("unit-conversion", 1),)
    saved = load_fit(by_id.save(tmp_path / "fit.json", scores=False))
    assert saved.benchmark == by_id.benchmark
    for prior in (by_id, saved):
        with pytest.raises(
            jevalkit.errors.UsageError, match="unit-conversion@1, this run plans unit-conversion@2"
        ):
            jevalkit.run(
                "unit-conversion@2",
                "new",
                design=ActiveCases(k=K, prior=prior),
                **options(openai_server, tmp_path / "r.jsonl"),
            )
    assert openai_server.requests == []


def test_error_rows_stop_the_plan_and_say_so(benchmark, openai_server, tmp_path):
    _, path, gold, params = benchmark
    openai_server.reply = answerer(gold, params)
    openai_server.faults["new"] = ["500"] * 100
    out = tmp_path / "r.jsonl"
    result = jevalkit.run(
        PROBE,
        "new",
        design=ActiveCases(k=K, prior=path),
        max_retries=0,
        **options(openai_server, out),
    )
    df, summary = result.rows, result.design.table().iloc[0]
    # the first wave (2 of the 12 cases in 8 waves) answered by errors: no next wave is drawn
    assert len(openai_server.requests) == 2 == len(df) and df["error"].notna().all()
    assert summary["stop_reason"] == "errors" and np.isnan(summary["value"])
    assert summary["method"].startswith("not estimable: 0 drawn case(s) answered")


def test_a_budget_stops_the_plan_and_the_estimate_uses_the_draws_answered_in_order(
    benchmark, openai_server, tmp_path
):
    fit = benchmark[0]
    out = tmp_path / "r.jsonl"
    result = active_run(benchmark, openai_server, out, budget_requests=5, concurrency=1)
    summary = result.design.table().iloc[0]
    assert summary["stop_reason"] == "budget" and result.stopped
    assert len(openai_server.requests) == 5 == summary["n_answered"]
    plan = result.design.plan
    smaller = select(fit, K, method="active", seed=0, new_results=read_results(out))
    assert smaller.cases[:5] == plan.cases[:5]
    assert "stopped by the budget" in summary["method"]
    assert summary["ci_low"] <= summary["value"] <= summary["ci_high"]


def test_a_file_holding_another_plans_rows_is_refused(benchmark, openai_server, tmp_path):
    """Another seed (or K, or prior) on the same --out reused the first plan's rows for the
    cases both drew: the rows kept the first plan's subset and probability while the estimate
    took the second plan's, so the file no longer said how its rows were drawn."""
    _, path, gold, params = benchmark
    openai_server.reply = answerer(gold, params)
    out = tmp_path / "r.jsonl"
    jevalkit.run(PROBE, "new", design=ActiveCases(k=K, prior=path), **options(openai_server, out))
    sent = len(openai_server.requests)
    for other in ({"seed": 3}, {"k": K + 8}):
        chosen = ActiveCases(**{"k": K, "prior": path, **other})
        with pytest.raises(jevalkit.errors.UsageError, match="of these cases drawn by the design"):
            jevalkit.run(PROBE, "new", design=chosen, **options(openai_server, out))
    assert len(openai_server.requests) == sent
    # the same plan again resumes (nothing to send), another model's plan in the file is apart
    jevalkit.run(PROBE, "new", design=ActiveCases(k=K, prior=path), **options(openai_server, out))
    jevalkit.run(
        PROBE,
        "other",
        design=ActiveCases(k=K, prior=path, seed=3),
        **options(openai_server, out),
    )
    assert len(openai_server.requests) == sent + K


def test_a_target_half_width_stops_the_plan_at_the_first_wave_whose_anytime_interval_reaches_it(
    benchmark, openai_server, tmp_path
):
    """--target-half-width with active:K: after each wave the anytime-valid interval of the
    draws so far; the run stops at the first wave whose half-width is at most the target,
    reports that interval (the library's estimate with anytime=True on the same rows), and a
    re-run resumes to the same stop, sending nothing."""
    fit = benchmark[0]
    out = tmp_path / "r.jsonl"
    k, target = 32, 0.2
    result = active_run(benchmark, openai_server, out, k, target_half_width=target)
    summary = result.design.table().iloc[0]
    sent = len(openai_server.requests)
    assert summary["stop_reason"] == "target" and sent < k
    assert summary["n_answered"] == sent == len(result.rows)
    assert summary["half_width"] <= target and summary["target_half_width"] == target
    assert "stopped at the target half-width 0.2" in summary["method"]
    assert "anytime-valid 95% interval (an asymptotic confidence sequence" in summary["method"]
    rows = read_results(out)
    plan = select(fit, k, method="active", seed=0, new_results=rows)
    ends = np.cumsum([len(p) for p in np.array_split(np.arange(k), 8)])
    assert sent in ends  # whole waves only
    stopped = dataclasses.replace(plan, draws=plan.draws.iloc[:sent])
    row = estimate(fit, stopped, rows, anytime=True).iloc[0]
    assert summary["value"] == pytest.approx(row["value"], abs=1e-12)
    assert summary["ci_low"] == pytest.approx(row["ci_low"], abs=1e-12)
    # the wave before did not reach the target: it stopped at the first that did
    before = ends[list(ends).index(sent) - 1]
    earlier = estimate(
        fit, dataclasses.replace(plan, draws=plan.draws.iloc[:before]), rows, anytime=True
    ).iloc[0]
    assert (earlier["ci_high"] - earlier["ci_low"]) / 2 > target
    again = active_run(benchmark, openai_server, out, k, target_half_width=target)
    assert len(openai_server.requests) == sent
    assert again.design.table().iloc[0]["n_answered"] == sent


def test_a_target_not_reached_runs_every_draw_and_reports_the_anytime_interval(
    benchmark, openai_server, tmp_path
):
    fit = benchmark[0]
    out = tmp_path / "r.jsonl"
    result = active_run(benchmark, openai_server, out, target_half_width=0.001)
    summary = result.design.table().iloc[0]
    assert len(openai_server.requests) == K == summary["n_answered"]
    assert summary["stop_reason"] == "complete"
    assert "the target half-width 0.001 was not reached in 12 draws" in summary["method"]
    plan, fixed = library_estimate(fit, read_results(out))
    anytime = estimate(fit, plan, read_results(out), anytime=True).iloc[0]
    assert summary["ci_low"] == pytest.approx(anytime["ci_low"], abs=1e-12)
    assert summary["ci_high"] - summary["ci_low"] > fixed["ci_high"] - fixed["ci_low"]


def test_a_system_failing_or_passing_every_drawn_case_gets_an_interval_not_a_crash(
    benchmark, openai_server, tmp_path, capsys
):
    """A model wrong on every case, stopped by its budget after 4 draws, and one right on both
    draws of active:2 with a target: their estimates' intervals lay wholly below 0 (above 1),
    the clip turned them into [0, -0.018] and [1.06, 1], and the run ended in RuntimeError
    ("a zero-width interval") after its requests had been sent."""
    _, path, gold, _ = benchmark
    openai_server.reply = lambda body: "no idea"
    result = jevalkit.run(
        PROBE,
        "new",
        design=ActiveCases(k=K, prior=path, seed=3),
        budget_requests=4,
        **options(openai_server, tmp_path / "wrong.jsonl", concurrency=1),
    )
    row = result.design.table().iloc[0]
    assert row["stop_reason"] == "budget" and row["n_answered"] == 4
    assert row["value"] == 0 == row["ci_low"] < row["ci_high"]
    # (since issue 52 the model's variance for the draws keeps the interval within reach of
    # [0, 1]: cut at 0, no longer replaced by the Wilson floor)
    assert "variance at least the model's" in row["method"]
    openai_server.reply = lambda body: gold[body["messages"][-1]["content"]][1]
    code = main(
        [
            "run",
            PROBE,
            "--model",
            "right",
            "--cases",
            "active:2",
            "--prior",
            str(path),
            "--sample-seed",
            "18",
            "--target-half-width",
            "0.3",
            "--base-url",
            openai_server.base_url,
            "--out",
            str(tmp_path / "right.jsonl"),
            "--no-cache",
        ]
    )
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.err
    assert "active plan: full-benchmark score 1.000" in out.out
