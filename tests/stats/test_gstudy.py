"""The G-study (stats.variance_components) and its D-study (GStudy.error_variance, and
metrics.reliability / run_noise_floor on it) pinned to Brennan (2001) and to statsmodels MixedLM
on the same data."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from jevalkit.errors import StatsError
from jevalkit.metrics import reliability, run_noise_floor
from jevalkit.stats import GStudy, repeats_needed, variance_components


def g_study(data, facets, value, **options):
    """A G-study of a plain table: its facets are columns ("case" among them), no system. Raw
    values are refused without a scale: they are read on the range they span, so the
    components are in that range's units (``units`` gives them back in the values' own)."""
    case = "case" if "case" in facets else None
    span = (float(data[value].min()), float(data[value].max()))
    options = {"scale": span, **options}
    return variance_components(
        data, facets=facets, score=value, case=case, system=None, repeat=None, **options
    )


def units(data, value) -> float:
    """What a component of :func:`g_study` is multiplied by to be in the values' own units."""
    return (float(data[value].max()) - float(data[value].min())) ** 2


# Brennan (2001), Generalizability Theory, synthetic data set No. 3 (p x i x o):
# occasion -> item -> the ten persons' scores
SYNTHETIC_3 = {
    (1, 1): [2, 4, 5, 5, 4, 4, 2, 3, 0, 6],
    (1, 2): [6, 5, 5, 9, 3, 4, 6, 4, 5, 8],
    (1, 3): [7, 6, 4, 8, 5, 4, 6, 4, 4, 7],
    (1, 4): [5, 7, 6, 6, 6, 7, 5, 5, 5, 6],
    (2, 1): [2, 6, 5, 5, 4, 6, 2, 6, 5, 6],
    (2, 2): [5, 7, 4, 7, 5, 4, 7, 6, 5, 8],
    (2, 3): [5, 5, 5, 7, 6, 7, 7, 6, 5, 8],
    (2, 4): [5, 7, 5, 6, 4, 8, 5, 4, 3, 6],
}
BRENNAN_3 = {
    "p": 0.5528,
    "i": 0.4417,
    "o": 0.0074,
    "p x i": 0.5750,
    "p x o": 0.1009,
    "i x o": 0.1565,
    "p x i x o": 0.9352,
}
# synthetic data set No. 4 (p x (r:t)): task -> its raters' scores of ten persons
SYNTHETIC_4 = {
    (1, 1): [5, 9, 3, 7, 9, 3, 7, 5, 9, 4],
    (1, 2): [6, 3, 4, 5, 2, 4, 3, 8, 9, 4],
    (1, 3): [5, 7, 3, 5, 9, 3, 7, 5, 8, 4],
    (1, 4): [5, 7, 3, 3, 7, 5, 7, 7, 8, 3],
    (2, 5): [5, 7, 5, 3, 7, 3, 7, 7, 6, 3],
    (2, 6): [3, 5, 3, 1, 7, 3, 5, 5, 6, 5],
    (2, 7): [4, 5, 3, 4, 3, 6, 5, 5, 6, 6],
    (2, 8): [5, 5, 5, 3, 7, 3, 7, 4, 5, 5],
    (3, 9): [6, 7, 6, 5, 2, 4, 5, 3, 5, 5],
    (3, 10): [7, 7, 5, 3, 7, 5, 5, 2, 8, 7],
    (3, 11): [3, 5, 1, 3, 5, 1, 5, 1, 1, 1],
    (3, 12): [3, 2, 6, 5, 3, 2, 4, 1, 1, 1],
}
BRENNAN_4 = {"p": 0.4731, "t": 0.3252, "p x t": 0.5596, "r:t": 0.6475, "p x r:t": 2.3802}


def _long(wide: dict, names: tuple[str, str]) -> pd.DataFrame:
    rows = [(p + 1, a, b, v[p]) for (a, b), v in wide.items() for p in range(10)]
    return pd.DataFrame(rows, columns=["p", *names, "y"])


def _components(study, frame) -> dict:
    table = study.table()
    return dict(
        zip(table["component"], (table["variance"] * units(frame, "y")).round(4), strict=True)
    )


def test_raw_scores_are_refused_without_a_scale():
    frame = _long(SYNTHETIC_3, ("o", "i"))
    with pytest.raises(StatsError, match=r"outside \[0, 1\]: pass scale="):
        variance_components(frame, facets=["p", "i", "o"], score="y", case=None, system=None)


def test_anova_matches_brennan_synthetic_3():
    frame = _long(SYNTHETIC_3, ("o", "i"))
    study = g_study(frame, ["p", "i", "o"], "y")
    assert study.balanced
    assert _components(study, frame) == BRENNAN_3
    assert "confounded with the residual" in study.table()["method"].iloc[-1]


def test_nested_anova_matches_brennan_synthetic_4():
    frame = _long(SYNTHETIC_4, ("t", "r"))
    study = g_study(frame, ["p", "t", "r"], "y", nested={"r": "t"})
    assert _components(study, frame) == BRENNAN_4


@pytest.mark.parametrize("data", ["3", "4"])
def test_reml_equals_anova_on_balanced_data(data):
    if data == "3":
        frame, facets, nested = _long(SYNTHETIC_3, ("o", "i")), ["p", "i", "o"], None
    else:
        frame, facets, nested = _long(SYNTHETIC_4, ("t", "r")), ["p", "t", "r"], {"r": "t"}
    anova = g_study(frame, facets, "y", nested=nested).table()["variance"] * units(frame, "y")
    reml = g_study(frame, facets, "y", nested=nested, method="reml").table()["variance"]
    np.testing.assert_allclose(reml * units(frame, "y"), anova, atol=2e-4)


def test_brennan_g_and_phi_coefficients():
    study = g_study(_long(SYNTHETIC_3, ("o", "i")), ["p", "i", "o"], "y")
    c = reliability(study, object="p", generalize=["i", "o"]).iloc[0]
    assert (round(c["g"], 2), round(c["phi"], 2)) == (0.64, 0.55)
    study4 = g_study(_long(SYNTHETIC_4, ("t", "r")), ["p", "t", "r"], "y", nested={"r": "t"})
    c4 = reliability(study4, object="p", generalize=["t", "r"]).iloc[0]
    assert (round(c4["g"], 2), round(c4["phi"], 2)) == (0.55, 0.46)  # as Brennan reports
    published = GStudy.of(study.table(), levels={"p": 10, "i": 4, "o": 2})
    again = reliability(published, object="p", generalize=["i", "o"]).iloc[0]
    assert (again["g"], again["phi"]) == pytest.approx((c["g"], c["phi"]))


def _unbalanced(seed=0):
    rng = np.random.default_rng(seed)
    rows = [(c, v, r) for c in range(25) for v in range(3) for r in range(rng.integers(1, 5))]
    d = pd.DataFrame(rows, columns=["case", "variant", "repeat"])
    d["y"] = (
        rng.normal(0, 1.0, 25)[d["case"]]
        + rng.normal(0, 0.5, 3)[d["variant"]]
        + rng.normal(0, 0.7, (25, 3))[d["case"], d["variant"]]
        + rng.normal(0, 0.5, len(d))
    )
    return d


def test_unbalanced_reml_matches_a_direct_statsmodels_fit():
    d = _unbalanced()
    study = g_study(d, ["case", "variant"], "y")
    assert not study.balanced
    d = d.assign(cv=d["case"].astype(str) + "-" + d["variant"].astype(str))
    model = sm.MixedLM.from_formula(
        "y ~ 1",
        groups=np.ones(len(d)),
        re_formula="0",
        vc_formula={"a": "0 + C(case)", "b": "0 + C(variant)", "c": "0 + C(cv)"},
        data=d,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = model.fit(reml=True)
    expected = [*np.asarray(fit.vcomp), fit.scale]
    got = study.table()["variance"] * units(d, "y")
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    assert study.table()["method"].str.startswith("REML").all()


def test_negative_estimate_is_set_to_zero_and_said():
    rng = np.random.default_rng(4)
    d = pd.DataFrame(
        [(c, v, r) for c in range(20) for v in range(4) for r in range(3)],
        columns=["case", "variant", "repeat"],
    )
    d["y"] = rng.normal(size=20)[d["case"]] + rng.normal(size=len(d))  # no variant effect
    table = g_study(d, ["case", "variant"], "y").table().set_index("component")
    negative = table[table["estimate"] < 0]
    assert len(negative) >= 1
    assert (negative["variance"] == 0).all()
    assert negative["method"].str.contains("set to 0").all()
    assert negative["ci_low"].isna().all()


def test_one_level_facet_and_unbalanced_anova_are_refused():
    d = _unbalanced()
    with pytest.raises(StatsError, match="unbalanced"):
        g_study(d, ["case", "variant"], "y", method="anova")
    with pytest.raises(StatsError, match="one level"):
        g_study(d.assign(one=1), ["case", "one"], "y")


def test_design_error_equals_the_pilots_error_variance():
    frame = _long(SYNTHETIC_3, ("o", "i"))
    study = g_study(frame, ["p", "i", "o"], "y")
    for generalize in (["p"], ["p", "i"], ["p", "i", "o"]):
        var, df = study.error_variance(generalize)
        planned_var, planned_df = study.error_variance(generalize, {"p": 10, "i": 4, "o": 2})
        assert planned_var == pytest.approx(var)
        assert planned_df == pytest.approx(df)


def test_the_repeats_curve_comes_from_the_one_facet_g_study():
    rng = np.random.default_rng(2)
    case = np.repeat(np.arange(15), 4)
    x = rng.normal(size=15)[case] + rng.normal(size=case.size)
    span = (float(x.min()), float(x.max()))
    with pytest.raises(StatsError, match="outside"):
        repeats_needed(x, case)  # raw scores: refused without a scale
    curve = repeats_needed(x, case, scale=span)
    study = g_study(pd.DataFrame({"case": case, "y": x}), ["case"], "y")
    assert curve.between == pytest.approx(study.variance("case"))
    assert curve.within == pytest.approx(study.variance("residual"))


def test_noise_floor_counts_only_what_a_new_run_redraws():
    t = pd.DataFrame(
        {
            "component": ["case", "judge", "case x judge", "residual"],
            "facets": [("case",), ("judge",), ("case", "judge"), ()],
            "variance": [0.5, 0.01, 0.02, 0.04],
        }
    )
    study = GStudy.of(t, levels={"case": 100, "judge": 2}, repeats=2)
    alone = run_noise_floor(study)
    with_judge = run_noise_floor(study, redrawn=["judge"])
    assert alone.sd_difference == pytest.approx(np.sqrt(2 * 0.04 / 400))
    assert with_judge.noise_floor > alone.noise_floor


def test_a_missing_facet_value_is_a_level_and_single_cells_fold_the_residual():
    d = _unbalanced()
    blank = g_study(d.assign(variant=d["variant"].where(d.index > 0)), ["case", "variant"], "y")
    assert blank.levels["variant"] == 4  # the row without a variant is a level of its own
    once = d.drop_duplicates(["case", "variant"]).iloc[3:]  # at most one per cell, unbalanced
    table = g_study(once, ["case", "variant"], "y").table()
    assert table["component"].tolist() == ["case", "variant", "case x variant"]
    assert "confounded with the residual" in table["method"].iloc[-1]


def _reml_profile(y: np.ndarray, designs: list[np.ndarray], ratios) -> float:
    """The REML log-likelihood of y = mu + sum of random effects + error, the error variance
    profiled out, at variance ratios (component / residual), written out densely (V = s2 H)."""
    n = y.size
    h = np.eye(n)
    for z, g in zip(designs, ratios, strict=True):
        h += g * (z @ z.T)
    chol = np.linalg.cholesky(h)
    ones = np.linalg.solve(chol, np.ones(n))
    white = np.linalg.solve(chol, y)
    xhx = ones @ ones
    mu = (ones @ white) / xhx
    resid = white - mu * ones
    s2 = resid @ resid / (n - 1)
    logdet = 2 * np.log(np.diag(chol)).sum()
    return float(-0.5 * ((n - 1) * (np.log(2 * np.pi * s2) + 1) + logdet + np.log(xhx))), s2


def _direct_reml(y, designs):
    """Maximise the dense REML likelihood: a log grid of ratios, then Nelder-Mead (scipy) from
    the best grid point: a different optimiser on an independently written likelihood."""
    from scipy import optimize

    grid = [0.0, *np.geomspace(1e-3, 10, 9 if len(designs) > 1 else 25)]
    starts = itertools.product(grid, repeat=len(designs))
    best = max(starts, key=lambda g: _reml_profile(y, designs, g)[0])

    def loss(t):
        return -_reml_profile(y, designs, t**2)[0]

    res = optimize.minimize(
        loss, np.sqrt(best), method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-9}
    )
    ratios = res.x**2
    llf, s2 = _reml_profile(y, designs, ratios)
    return llf, [*(ratios * s2), s2]


def _dummies(codes: np.ndarray) -> np.ndarray:
    return np.eye(codes.max() + 1)[codes]


def _one_or_eight(seed: int) -> pd.DataFrame:
    """Issue 36 item 8: 40 cases on [0, 1], half with one repeat and half with eight."""
    rng = np.random.default_rng(seed)
    case = np.repeat(np.arange(40), [1, 8] * 20)
    p = rng.beta(4, 4, 40)
    return pd.DataFrame({"case": case, "y": (rng.random(case.size) < p[case]).astype(float)})


@pytest.mark.parametrize("seed", [0, 1])
def test_unbalanced_reml_reaches_the_maximum_of_the_likelihood(seed):
    d = _one_or_eight(seed)
    study = g_study(d, ["case"], "y")
    llf, expected = _direct_reml(d["y"].to_numpy(), [_dummies(d["case"].to_numpy())])
    got = study.table()["variance"].to_numpy()
    z = [_dummies(d["case"].to_numpy())]
    got_llf = _reml_profile(d["y"].to_numpy(), z, [got[0] / got[1]])[0]
    assert got_llf >= llf - 1e-4
    np.testing.assert_allclose(got, expected, rtol=2e-2, atol=2e-4)
    assert got[0] < 0.1  # 0/1 data: a case variance above 0.25 is impossible


def test_unbalanced_crossed_reml_reaches_the_maximum_of_the_likelihood():
    rng = np.random.default_rng(7)
    rows = [(c, v) for c in range(16) for v in range(3) for _ in range(1 + 2 * (c % 2))]
    d = pd.DataFrame(rows, columns=["case", "variant"]).sample(frac=0.85, random_state=1)
    d["y"] = (
        rng.normal(0, 0.2, 16)[d["case"]]
        + rng.normal(0, 0.1, 3)[d["variant"]]
        + rng.normal(0, 0.3, len(d))
    )
    study = g_study(d, ["case", "variant"], "y", method="reml")
    cv = pd.factorize(d["case"].astype(str) + "-" + d["variant"].astype(str))[0]
    z = [_dummies(d["case"].to_numpy()), _dummies(d["variant"].to_numpy()), _dummies(cv)]
    llf, expected = _direct_reml(d["y"].to_numpy(), z)
    got = study.table()["variance"].to_numpy() * units(d, "y")
    got_llf = _reml_profile(d["y"].to_numpy(), z, got[:3] / got[3])[0]
    assert got_llf >= llf - 1e-4
    np.testing.assert_allclose(got, expected, rtol=5e-2, atol=1e-3)


def test_scale_puts_the_components_on_the_unit_scale():
    # issue 36 item 10: 1-10 grades planned on the raw scale while mean_score reports on [0, 1]
    rng = np.random.default_rng(8)
    d = pd.DataFrame([(c, r) for c in range(30) for r in range(3)], columns=["case", "repeat"])
    d["y"] = np.clip(
        np.round(5 + rng.normal(0, 2, 30)[d["case"]] + rng.normal(0, 1, len(d))), 1, 10
    )
    raw = g_study(d, ["case"], "y").table()["variance"].to_numpy() * units(d, "y")
    unit = variance_components(
        d, facets=["case"], score="y", case="case", system=None, repeat=None, scale=(1, 10)
    )
    np.testing.assert_allclose(unit.table()["variance"].to_numpy(), raw / 81)
    with pytest.raises(StatsError, match="outside scale"):
        variance_components(d, facets=["case"], score="y", case="case", system=None, scale=(1, 5))
