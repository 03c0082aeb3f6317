"""A new system's full-benchmark score from its results on a few anchor items.

The estimand is the system's score on the whole benchmark (the mean over every item of the
fit, repeats averaged), as if it had been run on all of it.

Both methods are design-based: the anchors are drawn at random within strata (:func:`select`),
so the estimate and its interval hold whatever the item response model gets wrong.

``sample``: the stratified sample mean, sum_h W_h mean_h (W_h the stratum's share of the items),
with variance sum_h W_h^2 (1 - n_h / N_h) s_h^2 / n_h (finite-population corrected) and a t
interval on n - H degrees of freedom.

``irt`` (model-assisted, the difference estimator of survey sampling): the model predicts every
item's score for the new system, p_j = sigmoid(a_j theta + c_j), with theta the system's
ability (EAP) from its anchor scores (an item the model could not calibrate is predicted by its
past mean). The estimate is the mean prediction over all items plus the stratified mean of the
anchors' residuals y_j - p_j, each residual cross-fitted (p_j at the ability the other anchors
give); its variance is the formula above on the residuals. A good model
makes the residuals small and the interval narrow; a bad one cannot bias it. Where the model
extrapolates it is not used: anchors whose answers put the system beyond the fitted systems'
range (:meth:`IrtFit.beyond_range`), or a model-assisted estimate outside [0, 1] (with 29 of
30 anchors solved it gave 1.0 [0.886, 1.0], clipped from above 1), give the stratified mean of
the anchors (``sample``'s estimate and interval), said in ``method`` and, beyond the range, in
``outside_range``. Anchors that all scored 0 (or 1) give an interval reaching 0 (or 1), as a
benchmark scoring 0 everywhere gives only such anchors (the AlpacaEval reference system, which
wins none of its instructions, was missed by the Wilson interval about the model's positive
estimate).

Why not a purely model-based interval (the ability posterior pushed through the model): with
tens of past systems the item parameters are noisy, and in leave-systems-out on simulated 2PL
data such intervals covered 33-83%, not 95%.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.special import expit

from ..contract import columns_of, estimator, finish, score_matrix
from ..errors import StatsError
from ..stats import no_spread_ci
from ._active import ActivePlan, active_estimate
from ._bounded import effective_wilson, reach_agreed
from ._irt import NODES, IrtFit, fit_irt, respondents
from ._select import select

_COLUMNS = ["system", "value", "ci_low", "ci_high", "n_items", "outside_range", "method"]


def _anchor_columns(fit: IrtFit, anchors: pd.DataFrame) -> np.ndarray:
    index = {item: j for j, item in enumerate(fit.matrix.item_ids())}
    if "case" not in anchors.columns:
        raise StatsError("anchors must be select()'s table (a 'case' column of item ids)")
    unknown = [c for c in anchors["case"] if c not in index]
    if unknown:
        raise StatsError(
            f"anchor {unknown[0]!r} is not an item of the fitted benchmark: pass the anchors "
            "select() chose from this fit"
        )
    return np.asarray([index[c] for c in anchors["case"]])


def _require_anchor_rows(fit: IrtFit, anchors: pd.DataFrame, new_results: object) -> None:
    """Refuse, saying so, new results with no scored row on any anchor item (an empty frame,
    one on other items only, or one whose anchor rows all failed), before the generic "no
    scored rows". The case id is one column's value or a tuple of the case columns
    (``probe``, ``version``, ``case_id`` by default), as :func:`score_matrix` builds it."""
    case_cols = columns_of(fit.matrix.columns.get("case"))
    score = fit.matrix.columns.get("score")
    if not isinstance(new_results, pd.DataFrame) or not case_cols:
        return
    if any(column not in new_results.columns for column in case_cols):
        return  # score_matrix names the missing column
    if len(case_cols) == 1:
        ids = new_results[case_cols[0]].tolist()
    else:
        ids = list(new_results[case_cols].itertuples(index=False, name=None))
    wanted = {_key(c) for c in anchors["case"]}
    on = np.asarray([_key(i) in wanted for i in ids], dtype=bool)
    if isinstance(score, str) and score in new_results.columns:
        on &= pd.to_numeric(new_results[score], errors="coerce").notna().to_numpy()
    if not on.any():
        seen = f"their case ids look like {ids[0]!r}" if ids else "no rows"
        raise StatsError(
            f"the new results score none of the anchors ({len(anchors)} anchor items; "
            f"{len(new_results)} rows given, {seen}; the anchors' look like "
            f"{anchors['case'].iloc[0]!r}): run the new system on the anchor cases, with the "
            "same case ids"
        )


def _key(case: object) -> object:
    """An id compared as text (a version read as 1 or "1" is one case)."""
    return tuple(str(v) for v in case) if isinstance(case, tuple) else str(case)


def _held_out(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter: the last respondent (:func:`respondents`) held out, a 1PL
    fitted on the others, 4 stratified anchors, the held-out score estimated from them."""
    people = respondents(frame)
    last = sorted(people["system"].unique())[-1]
    fit = fit_irt(people[people["system"] != last], model="1pl", case="case_id")
    new = people[people["system"] == last]
    plan = select(fit, 4, method="active", waves=2)
    plan = select(
        fit, 4, method="active", waves=2, new_results=new[new["case_id"].isin(plan.cases)]
    )
    return pd.concat(
        [
            estimate(fit, select(fit, 4, method="stratified"), new),
            estimate(fit, plan, new),
            estimate(fit, plan, new, method="ht"),
            estimate(fit, plan, new, anytime=True),
        ],
        ignore_index=True,
    )


@estimator(
    unit="item",
    estimand="a new system's full-benchmark score from anchor items or an active plan",
    interval="design-based t: stratified (model-assisted or plain), or the active plan's "
    "martingale (Des Raj; skewness-corrected by Hall's transformation) / Poisson-wave form; "
    "anytime=True: its asymptotic confidence sequence (normal mixture)",
    checks=("order", "rename", "scale", "keys", "one_case", "no_spread", "method"),
    adapter=_held_out,
    note="leave-systems-out coverage in benchmarks/bench_items.py (anchors 93-100%; active "
    "plans 93.5-98.5% over 200 intervals a cell, --active-coverage; on AlpacaEval 2.0 "
    "98.7-100% over 156, --alpaca; a system far above the past ones 95.5-98.5% over 200, "
    "--far-outside; anytime: 98.0-99.5% of 200 plans held at every checked draw at once at "
    "k = 100, 95.5-100% at k = 12, --anytime)",
)
def estimate(
    fit: IrtFit,
    anchors: pd.DataFrame | ActivePlan,
    new_results: pd.DataFrame,
    *,
    method: str | None = None,
    confidence: float = 0.95,
    anytime: bool = False,
) -> pd.DataFrame:
    """Estimate each new system's full-benchmark score from its results on the anchors.

    Args:
        fit: the item response model fitted on past systems (:func:`fit_irt`); new results
            are read with the columns it was fitted with (``fit.matrix.columns``).
        anchors: :func:`select`'s table, or its active plan (:class:`ActivePlan`).
        new_results: results of one or more new systems on (some of) the anchors (of the
            one system an active plan was drawn for); rows on other items are ignored.
        method: for anchors ``irt`` (model-assisted, the default) or ``sample`` (the
            stratified sample mean); for an active plan ``active`` (the mean prediction plus
            the inverse-probability-weighted residuals, the default) or ``ht`` (the plain
            Horvitz-Thompson form, no predictions). An active plan's estimate is valid for
            its draws so far (a plan stopped after some waves is a smaller plan).
        anytime: for an active plan (fixed design): the anytime-valid interval instead of
            the t interval, an asymptotic confidence sequence over the draws that holds at
            every draw at once (:func:`jevalkit.stats.normal_mixture_radius`, tuned at the
            plan's k): use it when the plan was, or may be, stopped at a width it reached
            (the runner's ``target_half_width``). About 1.6 times as wide at k as the t
            interval (which holds at a number of draws fixed in advance); at small k its
            variance is at least the model's for the draws and its radius stretched by the t
            quantile (``benchmarks/bench_items.py --anytime`` measures it at k = 12 and 100).

    Returns:
        One row per new system: ``system``, ``value``, ``ci_low``, ``ci_high``, ``n_items``
        (anchors or draws it was scored on), ``outside_range`` (its answers put its ability
        beyond the fitted systems' range, :meth:`IrtFit.beyond_range`: the item model
        extrapolates there, so the estimate did not rest on it; a warning in ``method``
        says which side and what was done), ``method``. Anchors whose scores show no spread
        within any stratum give no zero-width interval: the bounded-data floor (Wilson at the
        same estimate over the anchors, :func:`jevalkit.stats.no_spread_ci`) is used instead;
        cases that all scored 0 (or 1) give an interval reaching 0 (or 1).

    Example:
        >>> from jevalkit.items import fit_irt, select, simulate_2pl
        >>> df = simulate_2pl(n_systems=41, n_items=200, seed=0).rows
        >>> past, new = df[df.system != "sys40"], df[df.system == "sys40"]
        >>> fit = fit_irt(past, case="case_id")
        >>> est = estimate(fit, select(fit, 30), new)
        >>> row = est.iloc[0]
        >>> bool(row.ci_low <= new.score.mean() <= row.ci_high), int(row.n_items)
        (True, 30)
    """
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(anchors, ActivePlan):
        row = active_estimate(
            fit,
            anchors,
            new_results,
            method=method or "active",
            confidence=confidence,
            anytime=bool(anytime),
        )
        system = str(score_matrix(new_results, **fit.matrix.columns, weighted=True).systems[0])
        return finish(pd.DataFrame([{"system": system, **row}], columns=_COLUMNS), order=_COLUMNS)
    if anytime:
        raise StatsError(
            "anytime=True is for an active plan (select(fit, k, method='active')); anchors "
            "are drawn at once and their interval holds at the k drawn"
        )
    method = method or "irt"
    if method not in ("irt", "sample"):
        raise StatsError(f"method must be 'irt' or 'sample' for anchors, got {method!r}")
    if not isinstance(anchors, pd.DataFrame):
        raise StatsError("anchors must be select()'s table or active plan")
    for column in ("stratum", "stratum_size"):
        if column not in anchors.columns:
            raise StatsError(f"anchors lack a {column!r} column: pass the table select() returns")
    cols = _anchor_columns(fit, anchors)
    _require_anchor_rows(fit, anchors, new_results)
    new = score_matrix(new_results, **fit.matrix.columns)
    new_index = {item: j for j, item in enumerate(new.item_ids())}
    where = np.asarray([new_index.get(c, -1) for c in anchors["case"]])
    if (where < 0).all():
        sample = next(iter(new_index), None)
        raise StatsError(
            "the new results score none of the anchors (their case ids look like "
            f"{sample!r}, the anchors' like {anchors['case'].iloc[0]!r}): run the new system "
            "on the anchor cases, with the same case ids"
        )
    y = np.full((len(new.systems), len(cols)), np.nan)
    w = np.zeros_like(y)
    y[:, where >= 0] = new.scores[:, where[where >= 0]]
    w[:, where >= 0] = new.weight[:, where[where >= 0]]
    rows = []
    for s, name in enumerate(new.systems):
        seen = w[s] > 0
        if not seen.any():
            raise StatsError(f"system {name!r} has no score on any anchor")
        side = ""
        if method == "irt":
            value, low, high, how, side = _irt_estimate(
                fit, anchors, cols, y[s], w[s], seen, confidence
            )
        else:
            value, low, high, how = _plain_estimate(fit, anchors, y[s], seen, confidence)
        if not high > low:  # no spread within the strata is not a certainty
            low, high = no_spread_ci(
                min(max(value, 0.0), 1.0), int(seen.sum()), confidence=confidence
            )
            how += "; no spread within the strata: Wilson interval at the same estimate"
        low, high, note = reach_agreed(low, high, y[s][seen])
        how += note
        rows.append(
            {
                "system": name,
                "value": value,
                "ci_low": low,
                "ci_high": high,
                "n_items": int(seen.sum()),
                "outside_range": bool(side),
                "method": how,
            }
        )
    return finish(pd.DataFrame(rows, columns=_COLUMNS), order=_COLUMNS)


def _irt_estimate(fit, anchors, cols, y, w, seen, confidence):
    items = fit.items
    ok = items["status"].eq("ok").to_numpy()
    use = seen & ok[cols]
    side = ""
    if use.any():
        post = fit.posterior(y[use][None, :], w[use][None, :], cols[use])[0]
        theta = float(post @ NODES)
        side = fit.beyond_range(fit.ability_loglik(y[use][None, :], w[use][None, :], cols[use])[0])
    else:
        theta = 0.0
    if side:  # the model extrapolates there: the stratified mean, which does not use it
        value, low, high, how = _plain_estimate(fit, anchors, y, seen, confidence)
        how += (
            f"; WARNING: the anchors put the system's ability {side} the fitted systems' range "
            f"(the {fit.model.upper()} extrapolates there; IrtFit.beyond_range): the stratified "
            "mean of the anchors, not the model-assisted estimate"
        )
        return value, low, high, how, side
    a = np.nan_to_num(items["discrimination"].to_numpy())
    c = np.nan_to_num(items["intercept"].to_numpy())
    past = items["mean_score"].fillna(0.5).to_numpy()
    pred = np.where(ok, expit(a * theta + c), past)
    # sum_h W_h mean(pred over stratum h) is the mean prediction over all items, as the
    # strata partition the items and W_h = N_h / N
    base = float(pred.mean())
    # each anchor's residual is taken at the ability its *other* anchors give (cross-fitting):
    # at the ability fitted to it, residuals shrink and the interval comes out too narrow
    at_anchor = pred[cols].copy()
    idx = np.flatnonzero(use)
    if idx.size >= 2:
        weight = np.tile(w[use], (idx.size, 1)) * (1 - np.eye(idx.size))
        scores = np.tile(y[use], (idx.size, 1))
        theta_loo = fit.posterior(scores, weight, cols[use]) @ NODES
        at_anchor[idx] = expit(a[cols[idx]] * theta_loo + c[cols[idx]])
    value, var, dof, n, how = _sample_estimate(fit, anchors, y - at_anchor, seen)
    estimate = base + value
    if not 0.0 <= estimate <= 1.0:
        # the predictions and residuals add up past the score's range: the model is wrong for
        # this system (29 of 30 anchors solved gave 1.0 [0.886, 1.0], clipped from above 1)
        value, low, high, how = _plain_estimate(fit, anchors, y, seen, confidence)
        how += (
            f"; the model-assisted estimate left [0, 1] ({estimate:.3f}): the stratified mean "
            "of the anchors instead"
        )
        return value, low, high, how, side
    low, high, interval = _interval(estimate, var, dof, n, len(fit.items), y[seen], confidence)
    how = how.format(interval=interval)
    how = (
        f"model-assisted: {fit.model.upper()} predictions at the EAP ability plus the "
        f"{how.replace('stratified sample mean of', 'stratified mean residual of')}"
    )
    return estimate, max(low, 0.0), min(high, 1.0), how, side


def _plain_estimate(fit, anchors, y, seen, confidence):
    """The stratified sample mean with its interval: for pass/fail anchors the Wilson interval
    at the design's effective sample size (the Korn-Graubard form for a proportion from a
    complex sample: Korn and Graubard 1998, Dean and Pagano 2015), otherwise the t interval.

    Why not the t interval on 0/1 scores: its variance moves with the estimate. Two anchors of
    a stratum that agree give that stratum no variance, so a system far from 0.5 whose sample
    happens to agree gets an interval too short (of zero width when every stratum agrees), and
    leave-systems-out coverage fell to 78% at k = 25. The design effect here is the stratified
    variance over the Bernoulli variance of a simple random sample of as many anchors (finite-
    population corrected), truncated below at ``DEFF_FLOOR`` = 0.5: the stratification by past
    scores can at most halve the variance it credits (leave-systems-out in
    ``benchmarks/bench_items.py`` measured design effects of 0.56-0.73 for stratified anchors;
    the NCHS standards for proportions truncate at 1, which covered 97-100% there, wider than
    asked). The Wilson interval at n / ((1 - n / N) deff) trials,
    its z the t quantile on the design's degrees of freedom, ties the variance to the candidate
    proportion, so it never collapses to a point.
    """
    value, var, dof, n, how = _sample_estimate(fit, anchors, y, seen)
    low, high, interval = _interval(value, var, dof, n, len(fit.items), y[seen], confidence)
    return value, max(low, 0.0), min(high, 1.0), how.format(interval=interval)


def _interval(estimate, var, dof, n, n_total, scores, confidence):
    """The interval of a stratified estimate of variance ``var`` from ``n`` of ``n_total``
    items whose ``scores`` were seen: for pass/fail scores the Wilson interval at the effective
    n (:func:`effective_wilson`, about the estimate clipped to [0, 1]), otherwise the t
    interval; and how it was formed."""
    if np.isin(scores, (0.0, 1.0)).all():
        clipped = min(max(estimate, 0.0), 1.0)
        return effective_wilson(clipped, var, n, n_total, dof, confidence, unit="anchors")
    half = sps.t.ppf((1 + confidence) / 2, dof) * np.sqrt(var)
    return estimate - half, estimate + half, f"t interval on {dof} df"


def _sample_estimate(fit, anchors, y, seen):
    n_total = len(fit.items)
    strata = anchors["stratum"].to_numpy()
    sizes = anchors["stratum_size"].to_numpy()
    value, var, n_used, n_strata = 0.0, 0.0, 0, 0
    groups, merged = _collapse(strata, sizes, seen)
    if not groups:
        raise StatsError(
            f"{int(seen.sum())} scored anchor(s): a stratified variance needs 2; score the new "
            "system on every anchor"
        )
    for members in groups:
        mask = np.isin(strata, members) & seen
        n_h = int(mask.sum())
        size_h = int(sum(sizes[strata == h][0] for h in members))
        weight = size_h / n_total
        value += weight * y[mask].mean()
        var += weight**2 * (1 - n_h / size_h) * y[mask].var(ddof=1) / n_h
        n_used += n_h
        n_strata += 1
    dof = max(n_used - n_strata, 1)
    how = (
        f"stratified sample mean of {n_used} anchors in {n_strata} strata, finite-population "
        "corrected; {interval}"
    )
    if merged:
        how += "; " + "; ".join(merged)
    return float(value), float(var), dof, n_used, how


def _collapse(strata: np.ndarray, sizes: np.ndarray, seen: np.ndarray):
    """The strata, in order, with each one holding fewer than 2 scored anchors merged into its
    neighbour (the next; the last into the previous): the collapsed-strata estimator of survey
    sampling, whose variance is conservative. Returns the groups of stratum labels and what
    was merged, said in ``method``."""
    order = list(np.unique(strata))
    counts = {h: int(((strata == h) & seen).sum()) for h in order}
    groups = [[h] for h in order]
    merged = []
    i = 0
    while i < len(groups) and len(groups) > 1:
        n = sum(counts[h] for h in groups[i])
        if n >= 2:
            i += 1
            continue
        j = i + 1 if i + 1 < len(groups) else i - 1
        label = "+".join(str(h) for h in groups[i])
        merged.append(f"stratum {label} ({n} scored anchor(s)) merged with its neighbour")
        groups[min(i, j)] = groups[min(i, j)] + groups[max(i, j)]
        del groups[max(i, j)]
        i = min(i, j)
    if sum(counts[h] for h in groups[0]) < 2 and len(groups) == 1:
        return [], merged
    return groups, merged
