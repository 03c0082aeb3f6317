"""pass@k and pass^k (issue 36 item 14): pinned per case to inspect_ai's own pass_at / pass_k
reducers (which give no interval), averaged over cases, with an interval over cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from inspect_ai.scorer import Score, pass_at, pass_k
from scipy.special import comb

from jevalkit.errors import StatsError
from jevalkit.metrics import pass_at_k, pass_hat_k
from jevalkit.stats import bootstrap_ci, wilson_ci


def repeats(seed=0, n_cases=30, n_repeats=8, systems=("a",)):
    rng = np.random.default_rng(seed)
    rows = []
    for s in systems:
        p = rng.beta(2, 2, n_cases)
        for c in range(n_cases):
            for r in range(n_repeats):
                rows.append(
                    {"system": s, "case_id": f"c{c}", "repeat": r, "passed": rng.random() < p[c]}
                )
    return pd.DataFrame(rows)


def inspect_per_case(df, k, reducer):
    reduce = reducer(k)
    return [
        reduce([Score(value=float(v)) for v in g["passed"]]).value
        for _, g in df.groupby("case_id", sort=True)
    ]


@pytest.mark.parametrize(("fn", "reducer"), [(pass_at_k, pass_at), (pass_hat_k, pass_k)])
@pytest.mark.parametrize("k", [1, 3, 8])
def test_the_mean_of_inspects_per_case_estimates(fn, reducer, k):
    df = repeats()
    row = fn(df, k, case="case_id").iloc[0]
    per_case = np.array(inspect_per_case(df, k, reducer))
    assert row["value"] == pytest.approx(per_case.mean(), abs=1e-12)
    assert row["n"] == 30 and row["k"] == k and row["n_repeats_min"] == 8
    assert row["se"] == pytest.approx(per_case.std(ddof=1) / np.sqrt(30))
    if "BCa" in row["method"]:
        # the same resamples; BCa's share of resamples below the estimate may differ at exact
        # ties, where inspect's product formula and the binomial one round differently
        ci = bootstrap_ci(per_case, n_resamples=2000, seed=0)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), abs=5e-3)
    else:
        low, high = wilson_ci(per_case.mean() * 30, 30)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))


def test_the_curve_over_k_and_per_system():
    df = repeats(systems=("a", "b"))
    curve = pass_at_k(df, by="system", case="case_id")
    assert curve["k"].tolist() == [*range(1, 9), *range(1, 9)]
    for _, g in curve.groupby("system"):
        assert g["value"].is_monotonic_increasing  # more attempts, more chance of one pass
    reliability = pass_hat_k(df, by="system", case="case_id")
    for _, g in reliability.groupby("system"):
        assert g["value"].is_monotonic_decreasing
    at1 = curve[curve["k"] == 1]["value"].to_numpy()
    assert at1 == pytest.approx(reliability[reliability["k"] == 1]["value"].to_numpy())


def test_refusals_in_one_line():
    df = repeats(n_repeats=3)
    with pytest.raises(StatsError, match=r"fewer than k = 5 scored repeats .* run more repeats"):
        pass_at_k(df, 5, case="case_id")
    # two systems are kept apart (one estimate each); pooled on purpose, their repeats of a
    # case are not one system's attempts: refused
    assert pass_at_k(repeats(systems=("a", "b")), 2, case="case_id")["system"].tolist() == [
        "a",
        "b",
    ]
    with pytest.raises(StatsError, match="by='system'"):
        pass_at_k(repeats(systems=("a", "b")), 2, case="case_id", pool=True)
    doubled = pd.concat([df, df.iloc[:1]], ignore_index=True)
    with pytest.raises(StatsError, match="duplicated rows are not repeats"):
        pass_hat_k(doubled, 2, case="case_id")
    with pytest.raises(StatsError, match="True/False"):
        pass_at_k(df.assign(passed=0.5), 1, case="case_id")
    with pytest.raises(StatsError, match="whole numbers"):
        pass_at_k(df, 1.5, case="case_id")


def test_errors_are_not_failures_and_one_case_has_no_interval():
    df = repeats(n_cases=1, n_repeats=6)
    row = pass_at_k(df, 2, case="case_id").iloc[0]
    assert np.isnan(row["ci_low"]) and "n < 2" in row["method"]
    errored = repeats(n_repeats=6).assign(error=None)
    errored.loc[0, "error"] = "timeout"
    row = pass_at_k(errored, 5, case="case_id").iloc[0]
    assert row["n_missing"] == 1 and row["n_repeats_min"] == 5


def test_pinned_to_the_closed_forms_with_unequal_and_many_repeats():
    """1 - C(n-c, k)/C(n, k) and C(c, k)/C(n, k) from scipy's exact binomial coefficients, per
    case with 3-8 repeats and with 2,000 repeats (where the float coefficients overflow: the
    estimate once came out NaN)."""
    rng = np.random.default_rng(3)
    sizes = {f"c{i}": int(rng.integers(3, 9)) for i in range(25)} | {"big": 2000, "big2": 2000}
    rows = [
        {
            "case_id": case,
            "repeat": r,
            "passed": bool(rng.random() < (0.002 if "big" in case else 0.5)),
        }
        for case, n in sizes.items()
        for r in range(n)
    ]
    df = pd.DataFrame(rows)
    counts = df.groupby("case_id")["passed"].agg(["size", "sum"]).to_numpy()
    for k in (1, 2, 3):
        at = np.mean([1 - comb(n - c, k, exact=True) / comb(n, k, exact=True) for n, c in counts])
        hat = np.mean([comb(c, k, exact=True) / comb(n, k, exact=True) for n, c in counts])
        assert pass_at_k(df, k, case="case_id", system=None)["value"].iloc[0] == pytest.approx(
            at, rel=1e-12
        )
        assert pass_hat_k(df, k, case="case_id", system=None)["value"].iloc[0] == pytest.approx(
            hat, rel=1e-12
        )
    big = df[df["case_id"].str.startswith("big")]
    counts = big.groupby("case_id")["passed"].agg(["size", "sum"]).to_numpy()
    at = np.mean([1 - comb(n - c, 500, exact=True) / comb(n, 500, exact=True) for n, c in counts])
    got = pass_at_k(big, 500, case="case_id", system=None).iloc[0]
    assert got["value"] == pytest.approx(at, rel=1e-12)
    assert got["ci_low"] <= got["value"] <= got["ci_high"]


def test_the_registered_interval_is_the_one_reported():
    """The contract once said "t over cases" while the rows said BCa bootstrap or Wilson."""
    rng = np.random.default_rng(5)
    many = pd.DataFrame(
        {
            "case_id": np.repeat(np.arange(40), 4),
            "repeat": np.tile(np.arange(4), 40),
            "passed": rng.random(160) < np.repeat(rng.beta(2, 2, 40), 4),
        }
    )
    few = many[many["case_id"] < 5]
    for fn in (pass_at_k, pass_hat_k):
        said = fn.contract.interval
        for frame, kind in ((many, "BCa bootstrap"), (few, "Wilson")):
            assert kind in fn(frame, 1, case="case_id", system=None)["method"].iloc[0]
            assert kind in said, said
        assert not said.startswith("t ")
