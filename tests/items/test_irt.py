"""2PL / 1PL by marginal maximum likelihood: parameters recovered from simulated data, and the
same fit as girth's twopl_mml / rasch_mml (the reference implementation)."""

from __future__ import annotations

import girth
import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit, log_expit

from jevalkit.errors import StatsError
from jevalkit.items import fit_irt, simulate_2pl


@pytest.fixture(scope="module")
def big():
    sim = simulate_2pl(n_systems=2000, n_items=20, seed=3)
    return sim, fit_irt(sim, case="case_id")


def test_parameters_are_recovered_within_monte_carlo_error(big):
    sim, fit = big
    a, b = sim.items["discrimination"], sim.items["difficulty"]
    # with 2,000 systems the SE of a is about 0.06-0.1, of b about 0.05-0.1
    assert np.sqrt(np.mean((fit.items["discrimination"] - a) ** 2)) < 0.12
    assert np.sqrt(np.mean((fit.items["difficulty"] - b) ** 2)) < 0.08
    assert np.corrcoef(fit.systems["ability"], sim.systems["ability"])[0, 1] > 0.85
    assert fit.converged


def test_two_pl_matches_girth(big):
    sim, fit = big
    matrix = (
        sim.rows.pivot(index="case_id", columns="system", values="score").to_numpy().astype(int)
    )
    ref = girth.twopl_mml(matrix)
    assert np.abs(fit.items["discrimination"] - ref["Discrimination"]).max() < 0.05
    assert np.abs(fit.items["difficulty"] - ref["Difficulty"]).max() < 0.02


def test_one_pl_matches_girth(big):
    sim, _ = big
    fit = fit_irt(sim, model="1pl", case="case_id")
    matrix = (
        sim.rows.pivot(index="case_id", columns="system", values="score").to_numpy().astype(int)
    )
    ref = girth.onepl_mml(matrix)
    assert fit.items["discrimination"].nunique() == 1
    assert fit.items["discrimination"][0] == pytest.approx(ref["Discrimination"], abs=0.02)
    assert np.abs(fit.items["difficulty"] - ref["Difficulty"]).max() < 0.02


def test_ability_standard_errors_are_posterior_sds_that_cover():
    sim = simulate_2pl(n_systems=300, n_items=40, seed=8)
    fit = fit_irt(sim, case="case_id")
    z = (fit.systems["ability"] - sim.systems["ability"]) / fit.systems["ability_se"]
    assert 0.88 < np.mean(np.abs(z) < 1.96) < 0.99


def test_dead_items_are_not_estimable_and_say_why():
    df = simulate_2pl(n_systems=30, n_items=10, seed=1).rows
    df.loc[df["case_id"] == "q0003", "score"] = 1.0
    fit = fit_irt(df, case="case_id")
    row = fit.items.set_index("case_id").loc["q0003"]
    assert np.isnan(row["difficulty"]) and row["status"] == "not estimable: every system scored 1"
    assert fit.items["status"].eq("ok").sum() == 9


def test_a_perfect_system_gets_a_finite_ability_with_a_wide_interval():
    df = simulate_2pl(n_systems=30, n_items=20, seed=2).rows
    df.loc[df["system"] == "sys00", "score"] = 1.0
    fit = fit_irt(df, case="case_id")
    top = fit.systems.set_index("system").loc["sys00"]
    assert np.isfinite(top["ability"]) and top["ability_se"] > fit.systems["ability_se"].median()


def test_proportion_scores_fit_like_the_binary_repeats_they_average():
    df = simulate_2pl(n_systems=200, n_items=15, repeats=3, seed=4).rows
    averaged = df.groupby(["system", "case_id"], as_index=False)["score"].mean()
    fit_rows = fit_irt(df, case="case_id")
    fit_mean = fit_irt(averaged, case="case_id")
    # the averaged table weighs each cell once, the rows by their 3 repeats: same direction
    assert np.corrcoef(fit_rows.items["difficulty"], fit_mean.items["difficulty"])[0, 1] > 0.99


def test_refusals():
    df = simulate_2pl(n_systems=8, n_items=10, seed=0).rows
    with pytest.raises(StatsError, match="at least 10 systems"):
        fit_irt(df, case="case_id")
    flat = df.assign(score=1.0)
    with pytest.raises(StatsError, match="no item varies"):
        fit_irt(flat, model="1pl", case="case_id")
    with pytest.raises(StatsError, match="model must be"):
        fit_irt(df, model="3pl", case="case_id")
    apart = pd.concat([df, df.assign(system="z" + df["system"], case_id="other" + df["case_id"])])
    with pytest.raises(StatsError, match="share no items"):
        fit_irt(apart, case="case_id")


def _direct_1pl_mml(y: np.ndarray) -> tuple[float, float]:
    """The 1PL's marginal maximum likelihood computed directly, not by EM: abilities N(0, 1)
    integrated on 1,601 nodes over [-8, 8] (spacing 0.01, far below any posterior SD here),
    the log-likelihood maximised over the common slope and every intercept by scipy's L-BFGS
    with its analytic gradient. Returns (slope, log-likelihood)."""
    nodes = np.linspace(-8, 8, 1601)
    weights = np.exp(-0.5 * nodes**2)
    weights /= weights.sum()

    def minus_loglik(params):
        a, c = params[0], params[1:]
        eta = a * nodes[None, :] + c[:, None]
        ll = y @ log_expit(eta) + (1 - y) @ log_expit(-eta)
        top = ll.max(axis=1, keepdims=True)
        lik = np.exp(ll - top) * weights
        total = lik.sum(axis=1, keepdims=True)
        post = lik / total
        resid = y.T @ post - expit(eta) * post.sum(axis=0)[None, :]
        grad = np.r_[(resid @ nodes).sum(), resid.sum(axis=1)]
        return -(top[:, 0] + np.log(total[:, 0])).sum(), -grad

    mean = y.mean(axis=0).clip(0.02, 0.98)
    start = np.r_[1.0, np.log(mean / (1 - mean))]
    out = optimize.minimize(
        minus_loglik,
        start,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "ftol": 1e-14, "gtol": 1e-8},
    )
    return float(out.x[0]), float(-out.fun)


def test_the_one_pl_slope_is_the_marginal_maximum_likelihood_one_on_many_items():
    # issue 36 item 10: on AlpacaEval the 1PL's slope was 2.26 against the MML's 3.12. With
    # many items a system's posterior is narrower than the 41 nodes' spacing (0.25), and the
    # common slope came out 15-28% low (2.50 on 60 x 200 items of slope 3); the intercepts' prior
    # N(0, 5^2) pulled it down too (2.77 here against the direct 2.93).
    rng = np.random.default_rng(11)
    theta, b = rng.normal(size=40), rng.normal(size=80)
    y = (rng.random((40, 80)) < expit(3.0 * (theta[:, None] - b))).astype(float)
    y = y[:, y.std(axis=0) > 0]
    s, j = np.indices(y.shape).reshape(2, -1)
    df = pd.DataFrame({"system": s, "case_id": j, "score": y.ravel()})
    fit = fit_irt(df, model="1pl", case="case_id", tol=1e-6)
    slope, loglik = _direct_1pl_mml(y)
    assert fit.items["discrimination"][0] == pytest.approx(slope, rel=0.015)
    assert fit.loglik == pytest.approx(loglik, abs=0.05)  # the weak priors cost little
    assert 2.4 < slope < 3.6  # and the MML is near the true 3 (40 systems: SE about 0.3)
    assert "quadrature points" in fit.method


def test_beyond_range_needs_the_answers_likelier_beyond_the_fitted_systems_than_within():
    """IrtFit.beyond_range: "above" ("below") when the answers' likelihood is highest beyond the
    highest (lowest) fitted ability and at least 3 times its highest within; a likelihood
    rising past the range by less (a few failures of hard items, which every system at the
    bottom of the range fails too) says nothing."""
    nodes = np.linspace(-5, 5, 41)  # the fit's quadrature nodes
    ratio = 3.0
    fit = fit_irt(simulate_2pl(n_systems=30, n_items=40, seed=1), case="case_id")
    low, high = fit.ability_range
    ability = np.sort(fit.systems["ability"])  # the second-lowest to the second-highest
    assert (low, high) == (ability[1], ability[-2])
    inside_top = nodes[high >= nodes].max()

    def rising(step: float) -> np.ndarray:  # flat inside, rising by `step` past the top
        return np.where(high < nodes, step, 0.0)

    assert fit.beyond_range(rising(np.log(ratio) * 1.01)) == "above"
    assert fit.beyond_range(rising(np.log(ratio) * 0.99)) == ""
    assert fit.beyond_range(-((nodes - inside_top) ** 2)) == ""  # peaked at the edge, inside
    assert fit.beyond_range(-((nodes + 4.9) ** 2)) == "below"
    # from real answers: every one of 40 items passed, or failed
    every = np.arange(40)
    ll = fit.ability_loglik(np.ones((1, 40)), np.ones((1, 40)), every)[0]
    assert fit.beyond_range(ll) == "above"
    ll = fit.ability_loglik(np.zeros((1, 40)), np.ones((1, 40)), every)[0]
    assert fit.beyond_range(ll) == "below"
    # two failed items: likelier at the bottom, but hardly more than at the lowest system
    hard = fit.items["difficulty"].to_numpy().argsort()[-2:]
    ll = fit.ability_loglik(np.zeros((1, 2)), np.ones((1, 2)), hard)[0]
    assert ll[0] > ll[low <= nodes].max() and fit.beyond_range(ll) == ""
    with pytest.raises(StatsError, match="one finite log-likelihood per ability node"):
        fit.beyond_range(np.zeros(5))
