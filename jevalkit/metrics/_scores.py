"""mean_score, pass_rate and mean_absolute_error: vectorised over groups, cases as the unit."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from ..contract import CASE_COLUMNS, CaseSpec, Prepared, estimator, finish, prepare, require
from ..errors import StatsError
from ..stats import bimodality_groups, bootstrap_ci
from ._facet_interval import FACET_COLUMNS, other_facets, with_facets
from ._proportion import CLUSTERED, NO_SPREAD, ONE_CASE, clustered_wilson, share_method

HISTOGRAM_BINS = np.linspace(0.0, 1.0, 11)
MEAN_COLUMNS = [
    "n",
    "unit",
    "n_cases",
    "n_samples",
    "n_missing",
    "value",
    "se",
    "ci_low",
    "ci_high",
    "method",
    "histogram",
    "bimodal",
    "bimodality_p",
    "bimodality_method",
]
PASS_COLUMNS = [
    "n",
    "n_cases",
    "passed",
    "n_missing",
    "value",
    "ci_low",
    "ci_high",
    "design_effect",
    "method",
]
MAE_COLUMNS = ["n", "n_missing", "value", "ci_low", "ci_high", "method"]
FEW_CASES, BOUND_MARGIN = 20, 0.15  # where the t interval under-covers (calibration.py)
Data: TypeAlias = pd.DataFrame | Sequence[Any] | np.ndarray | pd.Series


def _units(p: Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The values each group's interval is computed over: case means when the group has two
    or more cases, else the repeats of its one case. Returns (unit values, their group,
    per-group n_cases, per-group flag 'units are repeats of one case')."""
    n_groups = len(p.groups)
    size = np.bincount(p.case, minlength=p.case.max() + 1 if p.case.size else 0)
    sums = np.bincount(p.case, p.values, minlength=size.size)
    present = size > 0
    case_group = np.zeros(size.size, dtype=np.int64)
    case_group[p.case] = p.group
    case_means, case_group = sums[present] / size[present], case_group[present]
    n_cases = np.bincount(case_group, minlength=n_groups)
    one_case = n_cases == 1
    use_rows = one_case[p.group]
    values = np.concatenate([case_means[~one_case[case_group]], p.values[use_rows]])
    groups = np.concatenate([case_group[~one_case[case_group]], p.group[use_rows]])
    order = np.lexsort((values, groups))
    return values[order], groups[order], n_cases, one_case


@estimator(
    unit="case",
    estimand="mean of case means (repeats averaged within a case)",
    interval="t over cases; Wilson floor without spread",
    checks=(
        "order",
        "rename",
        "method",
        "scale",
        "one_case",
        "no_spread",
        "duplicates",
        "settings",
    ),
    call={"by": "system", "case": "case_id"},
    calibration="mean_score",
)
def mean_score(
    data: Data,
    *,
    by: CaseSpec = None,
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    scale: tuple[float, float] | None = None,
    confidence: float = 0.95,
    bimodality: bool = True,
    generalize: Sequence[str] | None = None,
    nested: Mapping[str, str] | None = None,
    pool: bool = False,
) -> pd.DataFrame:
    """Mean of normalised 0-1 scores, one row per group, with n and an interval.

    The case is the unit: repeats are averaged within a case first and the interval is over
    cases (never pooled over samples as if independent). A group with a single case is
    summarised over that case's repeats, and ``method`` says so.

    Args:
        data: results (or any DataFrame), or an array of scores (one case per value).
        by: column(s) to group by.
        score: the score column.
        case: the column(s) naming a case (default: probe, version, case id); ``None`` makes
            every row its own case.
        system: the column naming each row's system (two systems' rows of a case are not
            copies, and a system's versions and settings are kept apart); ``None``: the rows
            are one system.
        scale: ``(low, high)`` of raw grades, normalised as (g - low) / (high - low); without it,
            scores outside [0, 1] are an error naming the range found.
        confidence: of the interval.
        bimodality: run the bimodality check per group (a bootstrap for graded data; set False
            when only the mean and its interval are wanted).
        generalize: the facets the claim generalises over, as column names (``"case"`` or a
            case column for the case; e.g. ``["case", "variant", "judge_sample"]``): adds the
            interval that counts each as a random facet (see below).
        nested: generalised facet -> its parent, e.g. ``{"variant": "case"}`` when each case
            has its own paraphrases (unequal numbers per case: their harmonic mean).
        pool: pool a probe's versions and generation settings (``params_hash``) on purpose;
            by default those that differ within a ``by`` group of one system join the
            grouping as columns after the ``by`` columns (the settings rule of
            :func:`jevalkit.contract.prepare`): two settings' rows of a case are not its
            repeats.

    Returns:
        Columns: the ``by`` columns, ``n`` (units), ``unit``, ``n_cases``, ``n_samples`` (scored
        rows), ``n_missing`` (rows with an error or no score), ``value``, ``se``, ``ci_low``,
        ``ci_high``, ``method``, ``histogram`` (unit counts in ten bins over [0, 1]),
        ``bimodal``, ``bimodality_p``, ``bimodality_method`` (see
        :func:`jevalkit.stats.bimodality`; a mean hides a split, look at the histogram). With
        ``scale`` and integer grades, cases' grades are averaged on the raw grid and tested on
        the lattice of possible case means (19 values for two 1-10 grades per case); when that
        lattice exceeds 50 values, ``method`` says "not tested" and why.
        With ``generalize``: ``se_facets``, ``ci_low_facets``, ``ci_high_facets``,
        ``method_facets`` beside the case-only interval.

    Notes:
        Interval on 0/1 scores (verdicts): :func:`pass_rate`'s case-clustered Wilson interval,
        for the mean of case means (with equal repeats the same number and the same interval
        as ``pass_rate``; ``method`` ends "0/1 scores"). Other scores: Student's t over the
        units, clipped to [0, 1]. When the units have zero sample
        variance (five passes of five) the t interval would collapse to a point; then the Wilson
        interval for k = n x mean successes of n is used (the widest a [0, 1] score with that
        mean can need), and ``method`` says so. Fewer than 2 units: no interval (NaN).
        Calibration (``benchmarks/calibration.py``, 300 draws): 94.7% at 30 cases with a mean
        of 0.6, but 91.3% at 10 cases with a mean of 0.9: with fewer than 20 units and a mean
        within 0.15 of a bound, ``method`` says the interval may cover less than nominal and a
        ``UserWarning`` is issued.

        Facet-aware interval: the variance components of [case, the generalised facets]
        (:func:`variance_components`; what varies within a cell, such as repeats, is the
        residual) give the error variance of the mean of case means (each case weighted
        equally, whatever its repeats) from every component that involves a generalised
        facet, plus the residual; a generalized (fiducial) interval drawing each mean square
        from its chi-square (Weerahandi 1993), which keeps its coverage with 2-3 levels of a
        facet where the Satterthwaite t under-covers (93-99% at nominal 95% in
        ``benchmarks/bench_facets.py``; slightly conservative); unbalanced (REML) designs
        draw on the balanced analogue of the design, said "approximate" in
        ``method_facets``. A facet with one level in a group is "not estimable", never
        ignored.

    Example:
        >>> mean_score([0.2, 0.4, 0.9, 0.5])[["n", "value"]].to_dict("records")
        [{'n': 4, 'value': 0.5}]
        >>> row = mean_score([1.0] * 5).iloc[0]
        >>> round(float(row["ci_low"]), 3), row["method"]
        (0.566, 'Wilson interval over values: 0/1 scores')
    """
    p = prepare(
        data,
        score,
        by=by,
        case=case,
        within=other_facets(generalize, case, data) if isinstance(data, pd.DataFrame) else (),
        kind="score",
        scale=scale,
        keyword="score",
        repeat="repeat",  # a copied row is not a repeat (rows without the column: repeats)
        system=system,
        pool=pool,
        systems_apart=True,
    )
    raw = p.raw
    units, unit_group, n_cases, one_case = _units(p)
    g = len(p.groups)
    n = np.bincount(unit_group, minlength=g)
    sums = np.bincount(unit_group, units, minlength=g)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / n
        dev = units - mean[unit_group]
        var = np.bincount(unit_group, dev**2, minlength=g) / (n - 1)
        se = np.sqrt(var / n)
        crit = sps.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1))
    raw_low, raw_high = mean - crit * se, mean + crit * se
    low, high = np.clip(raw_low, 0, 1), np.clip(raw_high, 0, 1)
    clipped = (raw_low < 0) | (raw_high > 1)
    flat = (n >= 2) & (var <= 1e-24)
    if flat.any():
        wl, wh = proportion_confint(
            mean[flat] * n[flat], n[flat], alpha=1 - confidence, method="wilson"
        )
        low[flat], high[flat] = wl, wh
    low, high = np.fmin(low, mean), np.fmax(high, mean)  # rounding must not exclude the estimate
    small = n < 2
    low[small], high[small], se[small] = np.nan, np.nan, np.nan
    # 0/1 scores are verdicts: pass_rate's interval (case-clustered Wilson) for the mean of
    # case means, so the same verdicts get the same interval from either statistic
    off_grid = np.bincount(p.group, (p.values != 0) & (p.values != 1), minlength=g)
    binary = (off_grid == 0) & ~small
    if binary.any():
        share = clustered_wilson(p.values, p.group, p.case, g, confidence=confidence, per_case=True)
        low[binary], high[binary], se[binary] = (
            share.low[binary],
            share.high[binary],
            share.se[binary],
        )
    bins = np.minimum((units * 10).astype(np.int64), 9)
    hist = np.bincount(unit_group * 10 + bins, minlength=g * 10).reshape(g, 10)
    methods, n_near = [], 0
    for i in range(g):
        name = p.unit_name(bool(one_case[i]))
        if binary[i]:
            kind = int(share.kind[i])
            methods.append(
                f"Wilson interval over {name}: 0/1 scores"
                if kind not in (CLUSTERED, NO_SPREAD, ONE_CASE)
                else share_method(kind, n_cases[i], p.case_label, unit_case=p.unit == "case")
                + ": 0/1 scores"
            )
        elif small[i]:
            methods.append("n < 2: no interval")
        elif flat[i]:
            methods.append(f"Wilson interval over {name}: zero sample variance")
        else:
            near = n[i] < FEW_CASES and not BOUND_MARGIN < mean[i] < 1 - BOUND_MARGIN
            methods.append(
                f"t interval over {name}"
                + (", clipped to [0, 1]" if clipped[i] else "")
                + ("; few units near a bound: may cover less than nominal" if near else "")
            )
            n_near += near
    if n_near:
        warnings.warn(
            f"mean_score: {n_near} group(s) have fewer than {FEW_CASES} units and a mean within "
            f"{BOUND_MARGIN} of a bound, where the t interval covers less than nominal (91% at 10 "
            "cases, mean 0.9, in benchmarks/calibration.py); their method says so",
            UserWarning,
            stacklevel=3,  # the caller of the statistic (@estimator's wrapper is in between)
        )
    checks = _bimodality(units, unit_group, raw, p, scale, one_case) if bimodality else None
    return finish(
        {
            "n": n,
            "unit": [p.unit_name(bool(o)) for o in one_case],
            "n_cases": n_cases,
            "n_samples": np.bincount(p.group, minlength=g),
            "n_missing": p.n_missing,
            "value": np.where(n > 0, mean, np.nan),
            "se": se,
            "ci_low": low,
            "ci_high": high,
            "method": methods,
            "histogram": [row.tolist() for row in hist],
            "bimodal": checks["bimodal"] if checks is not None else pd.NA,
            "bimodality_p": checks["p_value"] if checks is not None else np.nan,
            "bimodality_method": checks["method"] if checks is not None else "not checked",
            **with_facets(p, generalize, case, mean, confidence, mean_of_cases=True, nested=nested),
        },
        groups=p.groups,
        order=MEAN_COLUMNS + (FACET_COLUMNS if generalize is not None else []),
    )


MAX_LATTICE_LEVELS = 50  # case means of k grades on L levels: k (L - 1) + 1 possible values


def _bimodality(
    units: np.ndarray,
    unit_group: np.ndarray,
    raw: np.ndarray,
    p: Prepared,
    scale: tuple[float, float] | None,
    one_case: np.ndarray,
) -> pd.DataFrame:
    """The bimodality check per group, on what the grades can be: raw integer grades on a scale
    are averaged per case on the raw grid (integer sums, so equal means are equal), and tested
    on the lattice of possible case means; other data as they come."""
    n_groups = len(one_case)
    # the units come sorted by group (_units): each group's are one stretch
    ends = np.cumsum(np.bincount(unit_group, minlength=n_groups))
    samples: list[np.ndarray] = np.split(units, ends[:-1])
    grids: list[np.ndarray | None] = [None] * n_groups
    untested: dict[int, str] = {}
    subset: dict[int, str] = {}
    if scale is not None and raw.size and np.all(np.equal(np.mod(raw, 1), 0)):
        low, high = (int(v) for v in scale)
        width = high - low
        k = np.bincount(p.case)
        sums = np.bincount(p.case, raw - low).round().astype(np.int64)  # grade steps per case
        present = k > 0
        case_group = np.zeros(k.size, dtype=np.int64)
        case_group[p.case] = p.group
        for i in range(n_groups):
            if one_case[i]:  # the units are the grades themselves
                steps, per = (raw[p.group == i] - low).astype(np.int64), 1
            else:
                mine = present & (case_group == i)
                held = np.bincount(k[mine]) if mine.any() else np.zeros(1, dtype=np.int64)
                if np.count_nonzero(held) > 1:
                    # case means of unequal numbers of grades lie on different grids: pooled
                    # on the finest, most cases leave every other value empty, a comb that no
                    # unimodal fit matches (p = 0.0005 for 29 one-grade cases and 2 with two);
                    # so the cases holding the commonest number are tested, and it is said
                    modal = int(held.argmax())
                    subset[i] = (
                        f"; on the {int(held[modal])} of {int(mine.sum())} cases holding "
                        f"{modal} grade(s) (cases hold {np.flatnonzero(held).tolist()}: "
                        "their means lie on different grids)"
                    )
                    mine = mine & (k == modal)
                per = int(np.lcm.reduce(k[mine])) if mine.any() else 1
                steps = sums[mine] * (per // k[mine])
            if per * width + 1 > MAX_LATTICE_LEVELS:
                untested[i] = (
                    f"not tested: cases hold {sorted(set(k[present & (case_group == i)].tolist()))} "
                    f"grades, so their means lie on {per * width + 1} possible values (at most "
                    f"{MAX_LATTICE_LEVELS} are tested)"
                )
                continue
            samples[i] = steps / (per * width)
            grids[i] = np.arange(per * width + 1) / (per * width)
    checks = bimodality_groups(samples, levels=grids)
    for i, which in subset.items():
        checks.loc[i, "method"] = str(checks.loc[i, "method"]) + which
    for i, why in untested.items():
        checks.loc[i, ["statistic", "p_value", "bimodal", "method"]] = [np.nan, np.nan, False, why]
    return checks


@estimator(
    unit="case",
    estimand="share of passing runs",
    interval="Wilson, case-clustered by design effect",
    checks=("order", "rename", "method", "scale", "no_spread", "duplicates", "settings"),
    call={"by": "system", "case": "case_id"},
    calibration="pass_rate",
    note="one case: the Wilson interval over its repeats, said in method",
)
def pass_rate(
    data: Data,
    *,
    by: CaseSpec = None,
    passed: str = "passed",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    confidence: float = 0.95,
    generalize: Sequence[str] | None = None,
    nested: Mapping[str, str] | None = None,
    pool: bool = False,
) -> pd.DataFrame:
    """passed / total with a Wilson interval, case-clustered when cases have repeats.

    ``generalize`` (facet columns, e.g. ``["case", "variant"]``) adds the interval that counts
    each as a random facet (``se_facets``, ``ci_low_facets``, ``ci_high_facets``,
    ``method_facets``; as in :func:`mean_score`, of the mean of the rows); ``nested`` maps a
    generalised facet to its parent (``{"variant": "case"}``). ``system`` names each row's
    system (``None``: the rows are one system); a probe's versions and generation settings
    (``params_hash``) that differ within a ``by`` group of one system are kept apart as extra
    grouping columns, as in :func:`mean_score`; ``pool=True`` pools them on purpose.

    Clustered: the Wilson interval is computed at the effective sample size N / deff, where the
    design effect deff = (clustered SE / iid SE)^2, the clustered variance the cluster-robust
    one with its G / (G - 1) correction (CR1, as statsmodels' cluster covariance), truncated
    at 1 (repeats of a case are never negatively correlated, so a smaller estimate is noise)
    and carried to G - 1 degrees of freedom as Korn and Graubard (1998) do (``n_effective``).
    When the repeats do not vary (every run passed, or none did) their correlation cannot be
    estimated: the effective n is the number of cases. :func:`mean_score` of the same 0/1
    verdicts uses this interval for the mean of case means, so with equal repeats the two
    give the same interval. A
    group with a single case treats its repeats as independent draws of that case, and
    ``method`` says so.

    Returns:
        Columns: the ``by`` columns, ``n`` (samples scored), ``n_cases``, ``passed``,
        ``n_missing``, ``value``, ``ci_low``, ``ci_high``, ``design_effect``, ``method``,
        ``n_effective`` (the n the Wilson interval is computed at).

    Example:
        >>> pass_rate([True, True, False, True])[["n", "passed", "value"]].to_dict("records")
        [{'n': 4, 'passed': 3, 'value': 0.75}]
    """
    p = prepare(
        data,
        passed,
        by=by,
        case=case,
        within=other_facets(generalize, case, data) if isinstance(data, pd.DataFrame) else (),
        kind="verdict",
        keyword="passed",
        repeat="repeat",  # a copied row is not a repeat (rows without the column: repeats)
        system=system,
        pool=pool,
        systems_apart=True,
    )
    g = len(p.groups)
    share = clustered_wilson(p.values, p.group, p.case, g, confidence=confidence)
    n, n_cases = share.n_rows, share.n_cases
    k = np.bincount(p.group, p.values, minlength=g)
    methods = [
        share_method(share.kind[i], n_cases[i], p.case_label, unit_case=p.unit == "case")
        for i in range(g)
    ]
    return finish(
        {
            "n": n,
            "n_cases": n_cases,
            "passed": k.astype(np.int64),
            "n_missing": p.n_missing,
            "value": share.value,
            "ci_low": share.low,
            "ci_high": share.high,
            "design_effect": share.design_effect,
            "n_effective": share.n_effective,
            "method": methods,
            **with_facets(p, generalize, case, share.value, confidence, nested=nested),
        },
        groups=p.groups,
        order=PASS_COLUMNS + (FACET_COLUMNS if generalize is not None else []),
    )


@estimator(
    unit="case",
    estimand="mean |prediction - gold| over cases",
    interval="BCa bootstrap over cases; none without spread",
    checks=("order", "rename", "method", "one_case", "no_spread", "settings"),
    call={"by": "system", "case": "case_id"},
    calibration="mean_absolute_error",
)
def mean_absolute_error(
    data: pd.DataFrame | Sequence[float] | np.ndarray,
    reference: Sequence[float] | np.ndarray | None = None,
    *,
    by: CaseSpec = None,
    level: str = "expected_level",
    gold: str = "gold",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    confidence: float = 0.95,
    seed: int | None = 0,
    pool: bool = False,
) -> pd.DataFrame:
    """Mean ``|predicted - gold|`` with a BCa bootstrap interval over cases.

    Give two arrays (predictions, then their gold values), or a DataFrame with the ``level``
    (the predicted value, default the judge's expected level) and ``gold`` columns (rows without
    gold or prediction are not scored, and counted). Repeats of a case are averaged first.
    ``system`` names each row's system (``None``: one system); a probe's versions and
    generation settings that differ within a ``by`` group of one system are kept apart as
    extra grouping columns (``pool=True`` pools them).

    Returns:
        Columns: the ``by`` columns, ``n``, ``n_missing``, ``value``, ``ci_low``, ``ci_high``,
        ``method``.

    Example:
        >>> mean_absolute_error([3.2, 1.0, 4.0], [3, 2, 4])[["n", "value"]].round(3).values.tolist()
        [[3.0, 0.4]]
    """
    if not isinstance(data, pd.DataFrame):
        if reference is None:
            raise StatsError("give gold values, or a DataFrame with a gold column")
        x, y = np.asarray(data, float), np.asarray(reference, float)
        if x.shape != y.shape:
            raise StatsError(f"{x.size} predictions for {y.size} gold values; give one each")
        frame = pd.DataFrame({"_ae": np.abs(x - y), "_case": np.arange(x.size)})
        by, case, system = None, "_case", None
    else:
        frame = data.copy()
        require(frame, level, "level", "the predicted values")
        require(frame, gold, "gold", "the gold values")
        gold_values = pd.to_numeric(frame[gold], errors="coerce")
        if (frame[gold].notna() & gold_values.isna()).any():
            raise StatsError(f"column {gold!r} holds labels that are not numbers")
        frame["_ae"] = (pd.to_numeric(frame[level], errors="coerce") - gold_values).abs()
    p = prepare(frame, "_ae", by=by, case=case, system=system, keyword="level", pool=pool)
    units, unit_group, _, one_case = _units(p)

    def compute(i: int) -> dict:
        values = units[unit_group == i]
        if values.size == 0:
            return {
                "n": 0,
                "value": np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "method": "no gold",
            }
        if values.size < 2 or np.ptp(values) == 0:  # errors are unbounded: no floor to use
            return {
                "n": values.size,
                "value": float(values.mean()),
                "ci_low": np.nan,
                "ci_high": np.nan,
                "method": f"no interval: {values.size} unit(s) without spread "
                f"({p.unit_name(bool(one_case[i]))})",
            }
        ci = bootstrap_ci(values, confidence=confidence, seed=seed)
        return {
            "n": values.size,
            "value": ci.estimate,
            "ci_low": ci.low,
            "ci_high": ci.high,
            "method": f"BCa bootstrap over {p.unit_name(bool(one_case[i]))}",
        }

    rows = pd.DataFrame([compute(i) for i in range(len(p.groups))])
    rows["n_missing"] = p.n_missing
    return finish(rows, groups=p.groups, order=MAE_COLUMNS)
