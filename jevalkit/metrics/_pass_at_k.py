"""pass@k and pass^k with intervals: from n >= k repeats of each case, the unbiased per-case
estimates of "at least one of k attempts passes" (pass@k, Chen et al. 2021, the HumanEval
estimator) and "all k attempts pass" (pass^k, the reliability metric of tau-bench, Yao et al.
2024), averaged over cases, with an interval over cases.

Per case with n scored repeats of which c passed:

- pass@k = 1 - C(n - c, k) / C(n, k)
- pass^k = C(c, k) / C(n, k)

Each is unbiased for the case's probability (of one pass in k, of k passes in k) when the repeats
are independent draws; the mean over cases estimates the benchmark's. Its interval is over
cases, so it holds both the case-to-case and the repeat-to-repeat noise: a BCa bootstrap over
the per-case estimates, except with fewer than 20 cases or a mean within 0.15 of 0 or 1, where
pass@k piles up near 1 and a rare hard case pulls the truth below what the sample shows (the
t interval covered 60-78% at pass@3-5 near 0.97-0.99 in simulation, BCa 71-82%): there the
Wilson interval at the number of cases, valid for any mean of [0, 1] values since their variance
is at most m (1 - m) (Bhatia & Davis 2000); and when every case's estimate is 0 or 1 (k = n:
did all, or any, of its repeats pass), where the mean is a binomial share of the cases (the
bootstrap of those 0/1 values covered 88% at 30 cases x 4 repeats, pass^4, Beta(8, 1)).
``benchmarks/calibration.py`` (``pass_at_k``): 92-100% over designs from Beta(1, 3) to Beta(8, 1) case difficulties, 20-60 cases, k = 1-5.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, columns_of, estimator, finish, prepare
from ..errors import StatsError
from ..stats import bootstrap_ci, wilson_ci

KINDS = ("pass@k", "pass^k")


def _ratio(top: int, n: int, k: int) -> float:
    """C(top, k) / C(n, k) as the product of (top - i) / (n - i), i < k: the binomial
    coefficients themselves overflow a float beyond n ~ 1,030 (C(2000, 500) is inf, and the
    ratio came out NaN)."""
    if top < k:
        return 0.0
    i = np.arange(k)
    return float(np.prod((top - i) / (n - i)))


def _per_case(n: np.ndarray, c: np.ndarray, k: int, kind: str) -> np.ndarray:
    if kind == "pass@k":
        return np.array([1.0 - _ratio(int(a - b), int(a), k) for a, b in zip(n, c, strict=True)])
    return np.array([_ratio(int(b), int(a), k) for a, b in zip(n, c, strict=True)])


def _estimate(
    data: pd.DataFrame,
    k: int | Sequence[int] | None,
    kind: str,
    *,
    by: CaseSpec,
    passed: str,
    case: CaseSpec,
    system: str | None,
    repeat: str | None,
    confidence: float,
    n_resamples: int,
    seed: int | None,
    pool: bool = False,
) -> pd.DataFrame:
    if kind not in KINDS:
        raise StatsError(f"kind must be one of {KINDS}, got {kind!r}")
    case_cols = columns_of(case)
    if not case_cols:
        raise StatsError(f"{kind} needs cases with repeats: pass case='<column>'")
    p = prepare(
        data,
        passed,
        by=by,
        case=case,
        system=system,
        repeat=repeat,
        kind="verdict",
        keyword="passed",
        need_repeat=True,
        pool=pool,
        systems_apart=True,
    )
    by_cols = p.by
    if system is not None and system not in by_cols and p.frame[system].nunique() > 1:
        raise StatsError(
            f"{kind} counts the repeats of a case, and these rows hold "
            f"{p.frame[system].nunique()} systems: pass by={system!r} (one estimate each)"
        )
    frame = p.frame[[*dict.fromkeys([*by_cols, *case_cols])]].copy()
    frame["_pass"] = p.values
    cells = frame.groupby([*dict.fromkeys([*by_cols, *case_cols])], sort=True, dropna=False)
    counts = cells["_pass"].agg(["size", "sum"]).reset_index()
    n, c = counts["size"].to_numpy(), counts["sum"].to_numpy()
    if counts.empty:
        raise StatsError(f"no scored rows for {kind}: every row has an error or no verdict")
    ks = sorted(set(range(1, int(n.min()) + 1))) if k is None else sorted(set(np.atleast_1d(k)))
    if any(int(v) != v or v < 1 for v in ks):
        raise StatsError(f"k must be whole numbers of attempts, at least 1, got {ks}")
    short = n < max(ks)
    if short.any():
        first = counts.loc[short, case_cols].iloc[0].to_dict()
        apart = (
            f" within each {'/'.join(p.apart)} kept apart (two versions or settings are not "
            "repeats of a case; pool=True pools them)"
            if p.apart
            else ""
        )
        raise StatsError(
            f"{int(short.sum())} case(s) have fewer than k = {max(ks)} scored repeats{apart} "
            f"(e.g. {first}: {int(n[short][0])}); {kind} from n repeats needs n >= k: run more "
            "repeats or lower k"
        )
    keys = counts[by_cols] if by_cols else pd.DataFrame(index=range(len(counts)))
    group = (
        keys.groupby(by_cols, sort=True, dropna=False).ngroup().to_numpy()
        if by_cols
        else np.zeros(len(counts), dtype=np.int64)
    )
    groups = keys.drop_duplicates().reset_index(drop=True) if by_cols else None
    missing = (
        {
            tuple(key): int(m)
            for key, m in zip(p.groups[by_cols].itertuples(index=False), p.n_missing, strict=True)
        }
        if by_cols
        else {(): int(p.n_missing.sum())}
    )
    rows = []
    estimates = {int(value): _per_case(n, c, int(value), kind) for value in ks}
    for g in range(int(group.max()) + 1):
        key = () if groups is None else tuple(groups.iloc[g][by_cols])
        for value in ks:
            rows.append(
                {
                    **dict(zip(by_cols, key, strict=True)),
                    "k": int(value),
                    **_interval(
                        estimates[int(value)][group == g], kind, confidence, n_resamples, seed
                    ),
                    "n_missing": missing.get(key, 0),
                    "n_repeats_min": int(n[group == g].min()),
                }
            )
    return finish(pd.DataFrame(rows), order=[*by_cols, *COLUMNS])


COLUMNS = ["k", "n", "n_missing", "value", "se", "ci_low", "ci_high", "method", "n_repeats_min"]
FEW_CASES, BOUND_MARGIN = 20, 0.15


def _interval(
    values: np.ndarray, kind: str, confidence: float, n_resamples: int, seed: int | None
) -> dict:
    n = values.size
    mean = float(values.mean())
    what = f"unbiased per-case {kind} from n >= k repeats (Chen et al. 2021), mean over {n} cases"
    if n < 2:
        return {
            "n": n,
            "value": mean,
            "se": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "method": f"{what}; n < 2: no interval",
        }
    se = float(values.std(ddof=1) / np.sqrt(n))
    near = n < FEW_CASES or not BOUND_MARGIN < mean < 1 - BOUND_MARGIN or np.ptp(values) == 0
    # k = n: each case's estimate is 0 or 1, so the mean is a binomial share of independent
    # cases, where Wilson is the interval (a bootstrap of 0/1 values covered 88% at 30 cases)
    share = bool(np.all((values == 0) | (values == 1)))
    if near or share:
        low, high = wilson_ci(mean * n, n, confidence)
        how = (
            "Wilson interval over cases (each case's estimate is 0 or 1: a share of cases)"
            if share and not near
            else "Wilson interval over cases (few cases, a mean near a bound, or no spread)"
        )
    else:
        ci = bootstrap_ci(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
        low, high, how = ci.low, ci.high, "BCa bootstrap interval over cases"
    return {
        "n": n,
        "value": mean,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "method": f"{what}; {how}",
    }


@estimator(
    unit="case",
    estimand="the chance that at least one of k attempts at a case passes, averaged over cases",
    interval="BCa bootstrap over cases of the unbiased per-case estimates; Wilson at the number "
    "of cases with fewer than 20 cases, a mean within 0.15 of 0 or 1, no spread, or 0/1 "
    "per-case estimates (k = n)",
    checks=(
        "order",
        "rename",
        "scale",
        "duplicates",
        "one_case",
        "no_spread",
        "method",
        "settings",
    ),
    call={"k": 2, "case": "case_id", "by": "system"},
    calibration="pass_at_k",
)
def pass_at_k(
    data: pd.DataFrame,
    k: int | Sequence[int] | None = None,
    *,
    by: CaseSpec = None,
    passed: str = "passed",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    repeat: str | None = "repeat",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    pool: bool = False,
) -> pd.DataFrame:
    """pass@k: the chance that at least one of k attempts passes, averaged over cases, with an
    interval over cases; ``k=None`` gives the curve over k = 1..n (n the fewest repeats of a
    case).

    Returns:
        One row per group and k: the ``by`` columns, ``k``, ``n`` (cases), ``n_missing``
        (rows with an error or no verdict), ``value``, ``se``, ``ci_low``, ``ci_high``,
        ``method``, ``n_repeats_min`` (the fewest scored repeats of a case). ``system`` names
        each row's system (rows of several systems need ``by`` naming it; ``None``: one
        system). A probe's versions and generation settings (``params_hash``) that differ
        within a group of one system are kept apart as extra grouping columns (two settings'
        rows are not repeats of one case); ``pool=True`` pools them on purpose.

    Raises:
        StatsError: a case with fewer than k scored repeats; verdicts that are not 0/1.

    Example:
        >>> df = pd.DataFrame({"case_id": list("aaabbb"), "repeat": [0, 1, 2] * 2,
        ...                    "passed": [True, False, False, False, False, False]})
        >>> pass_at_k(df, [1, 2], case="case_id", system=None)[["k", "value"]].round(4).values.tolist()
        [[1.0, 0.1667], [2.0, 0.3333]]
    """
    return _estimate(
        data,
        k,
        "pass@k",
        by=by,
        passed=passed,
        case=case,
        system=system,
        repeat=repeat,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        pool=pool,
    )


@estimator(
    unit="case",
    estimand="the chance that all k attempts at a case pass (pass^k), averaged over cases",
    interval="BCa bootstrap over cases of the unbiased per-case estimates; Wilson at the number "
    "of cases with fewer than 20 cases, a mean within 0.15 of 0 or 1, no spread, or 0/1 "
    "per-case estimates (k = n)",
    checks=(
        "order",
        "rename",
        "scale",
        "duplicates",
        "one_case",
        "no_spread",
        "method",
        "settings",
    ),
    call={"k": 2, "case": "case_id", "by": "system"},
    calibration="pass_at_k",
)
def pass_hat_k(
    data: pd.DataFrame,
    k: int | Sequence[int] | None = None,
    *,
    by: CaseSpec = None,
    passed: str = "passed",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    repeat: str | None = "repeat",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    pool: bool = False,
) -> pd.DataFrame:
    """pass^k: the chance that all k attempts pass (an agent's reliability, as tau-bench
    reports it), averaged over cases, with an interval over cases; ``k=None`` gives the curve
    over k = 1..n. The columns are :func:`pass_at_k`'s.

    Example:
        >>> df = pd.DataFrame({"case_id": list("aaabbb"), "repeat": [0, 1, 2] * 2,
        ...                    "passed": [True, True, False, True, True, True]})
        >>> pass_hat_k(df, case="case_id", system=None)[["k", "value"]].round(4).values.tolist()
        [[1.0, 0.8333], [2.0, 0.6667], [3.0, 0.5]]
    """
    return _estimate(
        data,
        k,
        "pass^k",
        by=by,
        passed=passed,
        case=case,
        system=system,
        repeat=repeat,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        pool=pool,
    )
