"""A judge's test-retest agreement: the same judgments requested again, from the case x occasion
G-study (intraclass correlations)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, estimator, finish, group_codes, prepare, require
from ..errors import StatsError
from ..stats import variance_components

CASE_FACET = "case"
COLUMNS = [
    "coefficient",
    "judgments",
    "value",
    "judge_noise_share",
    "n_cases",
    "n_occasions",
    "method",
]


@estimator(
    unit="case",
    estimand="ICC of a judge's repeated judgments (absolute agreement, consistency)",
    interval="none (point coefficients)",
    checks=("order", "rename", "method", "keys", "duplicates", "one_case", "settings"),
    call={"case": "case_id"},
    note="pinned to pingouin.intraclass_corr in tests/metrics/test_facets.py",
)
def judge_retest(
    data: pd.DataFrame,
    *,
    score: str = "score",
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    occasion: str = "repeat",
    scale: tuple[float, float] | None = None,
    pool: bool = False,
) -> pd.DataFrame:
    """Test-retest agreement of a judge: the same judgments requested again (another day, seed
    or sample; ``occasion`` numbers them) on the same cases (cases missing an occasion are
    left out). From the two-way G-study case x occasion: the intraclass correlations of
    absolute agreement, sigma2(case) / (sigma2(case) + (sigma2(occasion) + sigma2(residual)) /
    k), and of consistency (without the occasion term), for one judgment (k = 1) and for the
    mean of the occasions judged; the same numbers as McGraw & Wong's ICC(A,1), ICC(C,1),
    ICC(A,k), ICC(C,k) (checked against pingouin in the tests).

    Args:
        data: judged results.
        score, case: the columns used (the data contract).
        system: the column telling systems apart (their rows of a case and occasion are not
            copies); ``None``: the rows are one system.
        occasion: the column numbering the requests of one judgment.
        scale: ``(low, high)`` of raw grades (normalised to [0, 1]; the coefficients do not
            depend on it); without it, scores outside [0, 1] are refused.
        pool: pool a probe's versions or generation settings on purpose; by default rows of
            two versions or settings of one system are refused, naming the column.

    Returns:
        One row per coefficient: ``coefficient``, ``judgments`` (k), ``value``,
        ``judge_noise_share`` (share of the variance that is not the case's), ``n_cases``,
        ``n_occasions``, ``method``.

    Example:
        >>> d = pd.DataFrame({"case_id": list("abcdef") * 2, "repeat": [0] * 6 + [1] * 6,
        ...                   "score": [.1, .5, .9, .3, .7, .2, .2, .5, .8, .3, .6, .2]})
        >>> r = judge_retest(d, case="case_id", system=None)
        >>> r[["coefficient", "judgments"]].values.tolist()[0], round(float(r["value"][0]), 4)
        (['absolute agreement', 1], 0.9673)
        >>> round(float(r["value"][1]), 4)  # consistency: the occasions' shift left out
        0.9631
    """
    require(data, occasion, "occasion", "which request of the same judgment a row is")
    p = prepare(
        data,
        score,
        case=case,
        system=system,
        repeat=occasion,
        kind="score",
        scale=scale,
        keyword="score",
        pool=pool,
        apart=False,
    )
    if p.unit != "case":
        raise StatsError("test-retest needs cases: pass case='<column>'")
    frame = pd.DataFrame({CASE_FACET: p.case, occasion: group_codes(p.frame, [occasion])[0]})
    frame["_value"] = p.values
    k = frame[occasion].nunique()
    if k < 2:
        raise StatsError(f"test-retest needs two or more occasions in {occasion!r}, got {k}")
    complete = frame.groupby(CASE_FACET)[occasion].nunique() == k
    frame = frame[frame[CASE_FACET].isin(complete[complete].index)]
    cell = frame.groupby([CASE_FACET, occasion], as_index=False)["_value"].mean()
    n_cases = cell[CASE_FACET].nunique()
    if n_cases < 2:
        raise StatsError("test-retest needs two or more cases judged on every occasion")
    study = variance_components(
        cell,
        facets=[CASE_FACET, occasion],
        score="_value",
        case=CASE_FACET,
        system=None,
        repeat=None,
    )
    # the unbiased estimates (a negative one kept), as McGraw & Wong's formulas use them
    v = dict(zip(study.components["component"], study.components["estimate"], strict=True))
    case_var, occ_var = v[CASE_FACET], v[occasion]
    resid = v[f"{CASE_FACET} x {occasion}"]
    total = case_var + occ_var + resid
    rows = []
    for judgments in (1, k):
        for name, error in (
            ("absolute agreement", (occ_var + resid) / judgments),
            ("consistency", resid / judgments),
        ):
            rows.append(
                {
                    "coefficient": name,
                    "judgments": judgments,
                    "value": case_var / (case_var + error) if case_var + error > 0 else np.nan,
                    "judge_noise_share": (occ_var + resid) / total if total > 0 else np.nan,
                    "n_cases": n_cases,
                    "n_occasions": k,
                    "method": "ICC from the case x occasion G-study (ANOVA estimates, "
                    "negative ones kept as McGraw & Wong 1996)",
                }
            )
    return finish(pd.DataFrame(rows), order=COLUMNS)
