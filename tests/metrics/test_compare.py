"""compare, case_changes and the release gate, pinned to statsmodels and scipy (issue 13)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from jevalkit.errors import StatsError
from jevalkit.metrics import case_changes, compare, release_gate
from jevalkit.results import ResultRow


def runs(rng, systems, n_cases, k=1, p=None):
    """A results-like frame: every system on the same cases, k repeats, its own pass rate."""
    p = p or {s: 0.5 for s in systems}
    rows = []
    difficulty = rng.normal(0, 1, n_cases)
    for s in systems:
        for c in range(n_cases):
            prob = 1 / (1 + np.exp(-(np.log(p[s] / (1 - p[s])) - difficulty[c])))
            for r in range(k):
                passed = bool(rng.random() < prob)
                rows.append(
                    {
                        "probe": "p",
                        "version": 1,
                        "case_id": f"c{c}",
                        "system": s,
                        "repeat": r,
                        "passed": passed,
                        "score": float(passed) * 0.5 + 0.5 * rng.random(),
                        "output": f"out {s} {c} {r}",
                    }
                )
    return pd.DataFrame(rows)


def test_mcnemar_exact_and_chi_square_match_statsmodels():
    rng = np.random.default_rng(1)
    for n, exact in ((30, True), (400, False)):
        df = runs(rng, ["base", "new"], n, p={"base": 0.5, "new": 0.65})
        row = compare(df, "base", metrics=["pass_rate"]).iloc[0]
        x = df[df.system == "new"].sort_values("case_id")["passed"].to_numpy()
        y = df[df.system == "base"].sort_values("case_id")["passed"].to_numpy()
        table = [[np.sum(x & y), np.sum(x & ~y)], [np.sum(~x & y), np.sum(~x & ~y)]]
        assert (np.sum(x & ~y) + np.sum(~x & y) < 25) == exact
        ref = mcnemar(table, exact=exact, correction=True)
        assert row["p_value"] == pytest.approx(ref.pvalue, abs=1e-9)
        assert row["statistic"] == pytest.approx(ref.statistic, abs=1e-9)
        assert row["test"] == ("McNemar, exact" if exact else "McNemar, chi-square")
        assert row["delta"] == pytest.approx(x.mean() - y.mean(), abs=1e-12)


def test_scores_paired_t_and_wilcoxon_match_scipy():
    rng = np.random.default_rng(2)
    df = runs(rng, ["base", "new"], 60, k=3)
    row = compare(df, "base", metrics=["mean_score"]).iloc[0]
    means = df.groupby(["system", "case_id"])["score"].mean().unstack(0)
    ref_t = sps.ttest_rel(means["new"], means["base"])
    ref_w = sps.wilcoxon(means["new"], means["base"])
    assert row["p_value"] == pytest.approx(ref_t.pvalue, abs=1e-9)
    assert row["statistic"] == pytest.approx(ref_t.statistic, abs=1e-9)
    assert row["p_wilcoxon"] == pytest.approx(ref_w.pvalue, abs=1e-9)
    d = means["new"] - means["base"]
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), abs=1e-12)
    assert row["mde"] == pytest.approx(2.8016 * d.std(ddof=1) / np.sqrt(60), rel=1e-3)


def test_paired_bootstrap_agrees_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    df = runs(rng, ["base", "new"], 200, k=2)
    row = compare(df, "base", metrics=["mean_score"], n_resamples=20000).iloc[0]
    means = df.groupby(["system", "case_id"])["score"].mean().unstack(0)
    ref = sps.bootstrap(
        (means["new"].to_numpy(), means["base"].to_numpy()),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        paired=True,
        method="BCa",
        n_resamples=20000,
        random_state=0,
    ).confidence_interval
    assert row["ci_low"] == pytest.approx(ref.low, abs=0.004)
    assert row["ci_high"] == pytest.approx(ref.high, abs=0.004)


def test_few_cases_get_the_t_interval_of_the_t_test_beside_it():
    """Issue 26.5: 4-5 cases gave a BCa interval [0, 0.167] beside p = 0.391. Below 30 cases the
    interval is the paired t test's own, so it covers 0 exactly when p >= 0.05."""
    rng = np.random.default_rng(7)
    df = runs(rng, ["base", "new"], 5, k=3, p={"base": 0.5, "new": 0.6})
    for metric in ("pass_rate", "mean_score"):
        row = compare(df, "base", metrics=[metric]).iloc[0]
        column = "passed" if metric == "pass_rate" else "score"
        means = df.groupby(["system", "case_id"])[column].mean().unstack(0)
        ref = sps.ttest_rel(means["new"], means["base"])
        ci = ref.confidence_interval(0.95)
        assert row["p_value"] == pytest.approx(ref.pvalue, abs=1e-12)
        assert row["method"].startswith("paired t interval over 5 cases")
        if "clipped" not in row["method"]:
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert (row["ci_low"] <= 0 <= row["ci_high"]) == (row["p_value"] >= 0.05)


def test_the_few_case_t_interval_keeps_its_coverage_where_bca_does_not():
    """Seeded and loose: 5 cases, normal case differences, 200 data sets (benchmarks/
    bench_compare.py runs the full-size check)."""
    from jevalkit.stats import bootstrap_ci

    rng = np.random.default_rng(11)
    hits_t = hits_bca = 0
    sims = 200
    for _ in range(sims):
        diffs = rng.normal(0.1, 0.2, 5)
        df = pd.DataFrame(
            {
                "case_id": [f"c{i}" for i in range(5)] * 2,
                "system": ["new"] * 5 + ["base"] * 5,
                "score": np.concatenate([0.5 + diffs, np.full(5, 0.5)]),
            }
        )
        # scores run past [0, 1]: a scale twice as wide halves the delta (0.1 -> 0.05)
        row = compare(
            df, "base", by=None, case="case_id", metrics=["mean_score"], scale=(-0.5, 1.5)
        ).iloc[0]
        hits_t += row["ci_low"] <= 0.05 <= row["ci_high"]
        bca = bootstrap_ci(diffs, n_resamples=499, seed=int(rng.integers(1 << 30)))
        hits_bca += bca.low <= 0.1 <= bca.high
    assert 0.9 <= hits_t / sims <= 0.99
    assert hits_bca / sims < hits_t / sims


def test_sign_test_on_win_loss_and_holm_bh_across_the_call():
    rng = np.random.default_rng(4)
    df = runs(rng, ["base", "a", "b", "c"], 80, p={"base": 0.5, "a": 0.55, "b": 0.7, "c": 0.4})
    table = compare(df, "base", metrics=["pass_rate", "mean_score", "win_rate"])
    assert len(table) == 9 and set(table["baseline"]) == {"base"}
    win = table[(table.metric == "win_rate") & (table.system == "b")].iloc[0]
    means = df.groupby(["system", "case_id"])["score"].mean().unstack(0)
    d = means["b"] - means["base"]
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    assert win["p_value"] == pytest.approx(sps.binomtest(wins, wins + losses).pvalue, abs=1e-12)
    assert win["value"] == pytest.approx((wins + 0.5 * (d == 0).sum()) / 80)
    assert np.allclose(
        table["p_holm"], multipletests(table["p_value"], method="holm")[1], atol=1e-12
    )
    assert np.allclose(
        table["p_bh"], multipletests(table["p_value"], method="fdr_bh")[1], atol=1e-12
    )


def test_only_cases_both_ran_are_paired_and_the_rest_counted():
    rng = np.random.default_rng(5)
    df = runs(rng, ["base", "new"], 40)
    df = df[~((df.system == "new") & df.case_id.isin(["c1", "c2"]))]
    df = df[~((df.system == "base") & (df.case_id == "c3"))]
    row = compare(df, "base", metrics=["pass_rate"]).iloc[0]
    assert (row["n_paired"], row["n_only_system"], row["n_only_baseline"]) == (37, 1, 2)


def test_without_a_baseline_every_pair_is_compared():
    rng = np.random.default_rng(6)
    table = compare(runs(rng, ["x", "y", "z"], 30), metrics=["mean_score"])
    assert list(zip(table["system"], table["baseline"], strict=True)) == [
        ("x", "y"),
        ("x", "z"),
        ("y", "z"),
    ]


def test_one_shared_case_compares_its_repeats_unpaired():
    rows = [
        {
            "probe": "p",
            "version": 1,
            "case_id": None,
            "system": s,
            "repeat": r,
            "passed": r < k,
            "score": float(r < k),
        }
        for s, k in (("a", 1), ("b", 8))
        for r in range(10)
    ]
    row = compare(pd.DataFrame(rows), "a", metrics=["pass_rate"]).iloc[0]
    assert row["test"] == "Fisher exact" and row["delta"] == pytest.approx(0.7)
    assert row["p_value"] == pytest.approx(sps.fisher_exact([[8, 2], [1, 9]])[1])
    assert row["method"].startswith("one case: its repeats compared unpaired (10 and 10 runs)")


def test_a_flaky_case_is_unstable_not_regressed():
    rng = np.random.default_rng(7)
    df = runs(rng, ["base", "new"], 20, k=5)
    df.loc[(df.system == "base") & (df.case_id == "c0"), "passed"] = True
    df.loc[(df.system == "new") & (df.case_id == "c0"), "passed"] = False  # a real regression
    flaky = (df.system == "new") & (df.case_id == "c1")
    df.loc[(df.system == "base") & (df.case_id == "c1"), "passed"] = True
    df.loc[flaky, "passed"] = [True, False, True, False, True]  # the judge flips
    changes = case_changes(df, "base", "new", include_unchanged=True).set_index("case_id")
    assert changes.loc["c0", "status"] == "regressed" and changes.loc["c1", "status"] == "unstable"
    assert changes.loc["c0", "output_a"].startswith("out base 0 ")
    assert changes.loc["c1", "agreement_b"] == pytest.approx(0.6)


def test_release_gate_passes_fails_and_refuses_as_documented():
    n = 2000
    base = pd.DataFrame({"case_id": range(n), "passed": [True] * 1800 + [False] * 200})
    same = base.copy()
    worse = base.assign(passed=[True] * 1600 + [False] * 400)
    assert release_gate(base, same, max_drop=0.02, case="case_id")["decision"][0] == "pass"
    row = release_gate(base, worse, max_drop=0.02, case="case_id").iloc[0]
    assert row["decision"] == "fail" and row["drop"] == pytest.approx(0.1)
    small = release_gate(
        base.head(40),
        worse.head(40).assign(passed=[True] * 38 + [False] * 2),
        max_drop=0.02,
        case="case_id",
    ).iloc[0]
    assert small["decision"] == "refused" and "paired cases are needed" in small["reason"]
    flaky = pd.DataFrame(
        {
            "case_id": np.repeat(range(50), 4),
            "repeat": np.tile(range(4), 50),
            "passed": np.tile([True, False, True, True], 50),
        }
    )
    refused = release_gate(flaky, flaky, max_drop=0.05, case="case_id").iloc[0]
    assert refused["decision"] == "refused" and "too inconsistent" in refused["reason"]
    with pytest.raises(StatsError, match="max_drop"):
        release_gate(base, same, max_drop=2, case="case_id")


def write(df: pd.DataFrame, path, system: str):
    lines = []
    for r in df.itertuples():
        row = ResultRow(
            run_id="r",
            kind="probe",
            probe="p",
            version=1,
            model=system,
            repeat=int(r.repeat),
            case_id=r.case_id,
            passed=bool(r.passed),
            score=float(r.score),
            output=r.output,
        )
        lines.append(row.to_json())
    path.write_text("\n".join(lines) + "\n")


def test_the_compare_and_gate_commands(tmp_path):
    rng = np.random.default_rng(8)
    df = runs(rng, ["base", "head"], 300, k=1, p={"base": 0.8, "head": 0.6})
    df.loc[df.system == "head", "output"] = "<script>alert(1)</script> changed"
    write(df[df.system == "base"], tmp_path / "base.jsonl", "m")
    write(df[df.system == "head"], tmp_path / "head.jsonl", "m")
    cli = [sys.executable, "-m", "jevalkit.cli"]
    out = subprocess.run(
        [
            *cli,
            "compare",
            str(tmp_path / "base.jsonl"),
            str(tmp_path / "head.jsonl"),
            "--html",
            str(tmp_path / "diff.html"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "head: m" in out.stdout and "base: m" in out.stdout and "regressed" in out.stdout
    page = (tmp_path / "diff.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page and "<ins>" in page
    gate = subprocess.run(
        [
            *cli,
            "gate",
            "--baseline",
            str(tmp_path / "base.jsonl"),
            "--candidate",
            str(tmp_path / "head.jsonl"),
            "--max-drop",
            "0.02",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        gate.returncode == 1
        and gate.stdout.startswith("FAIL")
        and "regressed case(s)" in gate.stdout
    )
    ok = subprocess.run(
        [
            *cli,
            "gate",
            "--baseline",
            str(tmp_path / "base.jsonl"),
            "--candidate",
            str(tmp_path / "base.jsonl"),
            "--max-drop",
            "0.1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0 and ok.stdout.startswith("PASS")


def test_newcombe_paired_interval_from_its_published_formula():
    from statsmodels.stats.proportion import proportion_confint

    from jevalkit.stats import paired_proportion_ci

    # Fagerland, Lydersen & Laake (2017), ch. 8: Cavo et al. (2012), complete response before and
    # after consolidation therapy: 59 both, 6 before only, 16 after only, 80 neither (n = 161)
    a, b, c, d = 59, 6, 16, 80
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, method="wilson")
    l2, u2 = proportion_confint(a + c, n, method="wilson")
    prod = (a + b) * (c + d) * (a + c) * (b + d)
    psi = (a * d - b * c - n / 2) / np.sqrt(prod)  # a*d - b*c = 4624 > n / 2
    low = (p1 - p2) - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2))
    high = (p1 - p2) + np.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1))
    assert paired_proportion_ci(a, b, c, d) == pytest.approx((p1 - p2, low, high), abs=1e-12)
    # the interval compare() reports for the same table
    x = np.r_[np.ones(a + b), np.zeros(c + d)]
    y = np.r_[np.ones(a), np.zeros(b), np.ones(c), np.zeros(d)]
    df = pd.DataFrame(
        {
            "case_id": np.tile(np.arange(n), 2),
            "system": ["after"] * n + ["before"] * n,
            "passed": np.r_[y, x],
        }
    )
    row = compare(df, "before", by=None, case="case_id", metrics=["pass_rate"]).iloc[0]
    assert (row["delta"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (p2 - p1, -high, -low), abs=1e-12
    )


def test_compare_page_of_imported_results_shows_input_and_every_repeat(tmp_path):
    """Issue 26.8: imported rows keep their input in ``source``; the compare page shows it,
    every repeat's output (escaped) and no ``nan`` case key."""
    from pathlib import Path

    from jevalkit import io

    fixture = Path(__file__).parents[1] / "io" / "fixtures" / "promptfoo-0.121.20-echo-repeat3.json"
    df = io.read(fixture)
    assert set(df["source"].map(lambda s: s["input"])) >= {"Say hello", "Please say bye now"}
    head = df["system"] != "echo · short"
    flip = head & df["case_id"].str.contains("bye")
    df.loc[flip, "passed"] = True
    df.loc[flip, "score"] = 1.0
    df.loc[flip, "output"] = [f"<b>bye</b> repeat {r}" for r in df.loc[flip, "repeat"]]
    path = io.write_results(df, tmp_path / "both.jsonl")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "jevalkit.cli",
            "compare",
            str(path),
            "--baseline",
            "echo · short",
            "--html",
            str(tmp_path / "diff.html"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "diff.html").read_text()
    assert "<b>bye</b>" not in page
    assert all(f"&lt;b&gt;bye&lt;/b&gt; repeat {r}" in page for r in range(3))
    assert "<pre>Say bye</pre>" in page and "<b>input</b>" in page and "all 3 repeats" in page
    assert " nan" not in page


def test_compare_leaves_the_garbage_collector_as_it_found_it():
    """The Holm adjustment freezes the heap for statsmodels' gc.collect: it must unfreeze it
    after, and leave a heap the caller froze frozen."""
    import gc

    df = runs(np.random.default_rng(5), ["base", "a", "b"], 20, p={"base": 0.5, "a": 0.6, "b": 0.4})
    before = gc.get_freeze_count()
    compare(df, "base", metrics=["pass_rate"])
    assert gc.get_freeze_count() == before
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        table = compare(df, "base", metrics=["pass_rate"])
        assert gc.get_freeze_count() == frozen > 0
    finally:
        gc.unfreeze()
    assert np.allclose(table["p_holm"], multipletests(table["p_value"], method="holm")[1])
