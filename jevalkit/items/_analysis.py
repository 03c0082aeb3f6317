"""Classical item analysis: which items separate systems, which are dead, mis-keyed or flaky.

Per item (systems are the respondents): ``difficulty`` is the mean score over systems (higher
is easier, as in classical test theory); ``discrimination`` the corrected item-total
correlation (Pearson, item score against the mean of the system's other items, so the item
does not correlate with itself); Cronbach's alpha over the benchmark and alpha if the item were
deleted. Alpha uses the systems scored on every item (listwise deletion, as pingouin's
``cronbach_alpha`` does) and its interval is Feldt's F interval; the tests pin both to pingouin
and the correlations and p-values to ``scipy.stats.pearsonr``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from ..contract import (
    CASE_COLUMNS,
    CaseSpec,
    Result,
    estimator,
    finish,
    require_connected,
    require_systems,
    score_matrix,
)
from ..errors import StatsError
from ..results import table_html

_COLUMNS = [
    "n_systems",
    "difficulty",
    "discrimination",
    "discrimination_p",
    "discrimination_q",
    "share_differ",
    "flip_share",
    "alpha_if_deleted",
    "dead",
    "negative",
    "flaky",
    "status",
    "method",
]


@dataclass(frozen=True)
class CronbachAlpha(Result):
    """Cronbach's alpha with Feldt's interval: unpacks as ``(estimate, ci_low, ci_high)``; also
    ``n_systems``, ``n_items`` and ``method``.

    Example:
        >>> r = cronbach_alpha(np.array([[1, 1, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0.0]]))
        >>> r.table()[["n", "n_items"]].to_dict("records")
        [{'n': 4, 'n_items': 3}]
    """

    estimate: float
    ci_low: float
    ci_high: float
    n_systems: int
    n_items: int
    method: str
    _unpack = ("estimate", "ci_low", "ci_high")

    def table(self) -> pd.DataFrame:
        """One row: ``n`` (systems), ``n_items``, ``value``, ``ci_low``, ``ci_high``,
        ``method``."""
        return finish(
            {
                "n": [self.n_systems],
                "n_items": [self.n_items],
                "value": [self.estimate],
                "ci_low": [self.ci_low],
                "ci_high": [self.ci_high],
                "method": [self.method],
            }
        )


def _complete_matrix(frame: pd.DataFrame) -> np.ndarray:
    """The contract test's adapter input: the systems x cases matrix, systems scored on all."""
    matrix = score_matrix(frame, case="case_id")
    return matrix.scores[matrix.observed.all(axis=1)]


def _cronbach_alpha_adapter(frame: pd.DataFrame) -> CronbachAlpha:
    return cronbach_alpha(_complete_matrix(frame))


@estimator(
    unit="item",
    estimand="Cronbach's alpha of a systems x items matrix",
    interval="Feldt F interval",
    checks=("order", "rename", "one_case", "no_spread", "method"),
    adapter=_cronbach_alpha_adapter,
    note="pinned to pingouin in tests/items",
)
def cronbach_alpha(scores: np.ndarray, confidence: float = 0.95) -> CronbachAlpha:
    """Cronbach's alpha of a complete systems x items matrix, with Feldt's interval.

    A matrix with missing cells, or whose systems' totals do not vary, has no alpha (NaN,
    ``method`` says why; :func:`analysis` uses the systems scored on every item); one
    whose items move together exactly (alpha 1) has no Feldt interval (it degenerates to the
    point 1), so none is given.

    Example:
        >>> x = np.array([[1, 1, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0.0]])
        >>> [round(v, 3) for v in cronbach_alpha(x)]
        [0.75, -0.65, 0.983]
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2:
        raise StatsError("alpha needs a systems x items matrix")
    n, k = scores.shape
    if n < 2 or k < 2:
        raise StatsError(f"alpha needs 2+ systems and 2+ items, got {n} x {k}")
    over = f"Cronbach's alpha over {n} systems x {k} items"
    nan = float("nan")
    if not np.isfinite(scores).all():
        missing = int((~np.isfinite(scores)).sum())
        return CronbachAlpha(
            nan,
            nan,
            nan,
            n,
            k,
            f"{over}: not estimable ({missing} cells missing; alpha needs "
            "the systems scored on every item)",
        )
    total_var = scores.sum(axis=1).var(ddof=1)
    if total_var == 0:
        return CronbachAlpha(nan, nan, nan, n, k, f"{over}: not estimable (totals do not vary)")
    alpha = k / (k - 1) * (1 - scores.var(axis=0, ddof=1).sum() / total_var)
    if alpha >= 1 - 1e-12:  # Feldt's interval degenerates to the point 1
        return CronbachAlpha(1.0, nan, nan, n, k, f"{over}: items move together; no interval")
    how = f"{over}, Feldt {confidence:.0%} F interval"
    df1, df2 = n - 1, (n - 1) * (k - 1)
    low = 1 - (1 - alpha) * sps.f.isf((1 - confidence) / 2, df1, df2)
    high = 1 - (1 - alpha) * sps.f.isf((1 + confidence) / 2, df1, df2)
    return CronbachAlpha(float(alpha), float(low), float(high), n, k, how)


def _pairwise_alpha(x: np.ndarray, confidence: float) -> tuple[tuple[float, float, float], str]:
    """Cronbach's alpha from the pairwise-complete covariance matrix of the items (each
    variance and covariance over the systems scored on both), k / (k - 1) (1 - tr C / sum C),
    when systems miss items; Feldt's interval on the harmonic mean of the systems per item
    pair (approximate, said). Listwise deletion over all items gave NaN when every system
    missed one (issue 36 item 11)."""
    frame = pd.DataFrame(x)
    k = x.shape[1]
    cov = frame.cov(min_periods=2).to_numpy()
    pairs = (np.isfinite(x).astype(float).T @ np.isfinite(x).astype(float))[np.triu_indices(k)]
    nan = float("nan")
    if not np.isfinite(cov).all() or cov.sum() <= 0:
        return (nan, nan, nan), "pairwise deletion: some item pair shares fewer than 2 systems"
    alpha = k / (k - 1) * (1 - np.trace(cov) / cov.sum())
    n = float(sps.hmean(pairs)) if (pairs > 0).all() else nan
    how = f"pairwise deletion (harmonic mean {n:.1f} systems per item pair; interval approximate)"
    if not n >= 2 or alpha >= 1 - 1e-12:
        return (float(alpha), nan, nan), how
    df1, df2 = n - 1, (n - 1) * (k - 1)
    low = 1 - (1 - alpha) * sps.f.isf((1 - confidence) / 2, df1, df2)
    high = 1 - (1 - alpha) * sps.f.isf((1 + confidence) / 2, df1, df2)
    return (float(alpha), float(low), float(high)), how


def _alpha_if_deleted(scores: np.ndarray) -> np.ndarray:
    n, k = scores.shape
    if n < 2 or k < 3:
        return np.full(k, np.nan)
    var = scores.var(axis=0, ddof=1)
    total = scores.sum(axis=1, keepdims=True)
    rest_var = (total - scores).var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (k - 1) / (k - 2) * (1 - (var.sum() - var) / rest_var)
    return np.where(rest_var > 0, out, np.nan)


_TOL = 1e-9  # scores are in [0, 1]: differences below this are rounding, not information


def _constant(values: np.ndarray) -> bool:
    """Every value alike up to rounding (the rest score of a system is a sum minus the item's
    own score, so a constant rest differs in its last bits with that score)."""
    return bool(np.ptp(values) <= _TOL * max(1.0, float(np.abs(values).max())))


@dataclass(frozen=True)
class ItemAnalysis(Result):
    """A benchmark's item analysis: ``.table()`` is the per-item table (its columns under
    :func:`analysis`), the fields the benchmark's alpha and counts.

    Attributes:
        items: the per-item table.
        alpha, alpha_ci_low, alpha_ci_high: Cronbach's alpha and Feldt's interval (when a
            system missed an item: from the pairwise-complete item covariances, the interval
            approximate and ``method`` saying so; NaN when the totals do not vary).
        n_complete: systems scored on every item (alpha's systems).
        n_systems, n_items: of the matrix.
        n_dead, n_negative, n_flaky: items flagged so.
        method: what was computed.

    Example:
        >>> from jevalkit.items import simulate_2pl
        >>> r = analysis(simulate_2pl(n_systems=30, n_items=40, seed=0), case="case_id")
        >>> round(r.alpha, 3), r.n_dead, len(r.table())
        (0.791, 0, 40)
    """

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

    items: pd.DataFrame
    alpha: float
    alpha_ci_low: float
    alpha_ci_high: float
    n_complete: int
    n_systems: int
    n_items: int
    n_dead: int
    n_negative: int
    n_flaky: int
    method: str

    def table(self) -> pd.DataFrame:
        """The per-item table."""
        return self.items

    def flagged(self) -> pd.DataFrame:
        """The items whose ``status`` is not ``ok``."""
        return self.items[self.items["status"] != "ok"].reset_index(drop=True)

    def _repr_html_(self) -> str:
        head = (
            f"{self.n_items} items, {self.n_systems} systems; Cronbach's alpha {self.alpha:.3f} "
            f"({self.alpha_ci_low:.3f} to {self.alpha_ci_high:.3f}); {self.n_dead} dead, "
            f"{self.n_negative} negative, {self.n_flaky} flaky"
        )
        flagged = table_html(self.flagged(), max_rows=50)
        return (
            f"<div><strong>ItemAnalysis</strong><p>{html.escape(head)}</p>{flagged}"
            f"<p><small>{html.escape(self.method)}</small></p></div>"
        )


@estimator(
    unit="item",
    estimand="per item: mean score, corrected item-total r; Cronbach's alpha",
    interval="Feldt F interval for alpha (a field); t-test p for r",
    checks=(
        "order",
        "rename",
        "method",
        "scale",
        "keys",
        "duplicates",
        "one_case",
        "no_spread",
        "settings",
    ),
    call={"case": "case_id"},
    note="pinned to pingouin.cronbach_alpha and scipy.stats.pearsonr in tests/items",
)
def analysis(
    df: pd.DataFrame,
    *,
    system: str = "system",
    case: CaseSpec = CASE_COLUMNS,
    score: str = "score",
    scale: tuple[float, float] | None = None,
    flaky_at: float = 0.2,
    confidence: float = 0.95,
    pool: bool = False,
) -> ItemAnalysis:
    """Item analysis of a benchmark from many systems' results.

    Args:
        df: results, one row per system x case x repeat.
        system, case, score: the columns naming the system, the item (one column or several)
            and its score (scores in [0, 1], or rescaled by ``scale=(low, high)``).
        flaky_at: an item is flaky when at least this share of the systems that ran it more
            than once gave it different scores across repeats.
        confidence: of alpha's interval.
        pool: pool a system's probe versions or generation settings on purpose; by default
            they are refused, naming the column (the matrix's input step).

    Returns:
        An :class:`ItemAnalysis`. Its ``.table()`` has one row per item, sorted by its case
        columns, then: ``n_systems`` (systems scored on
        it), ``difficulty`` (mean score over systems), ``discrimination`` (corrected item-total
        r; NaN for a dead item), ``discrimination_p`` (two-sided p of r = 0), ``discrimination_q``
        (Benjamini-Hochberg adjusted over the items), ``share_differ``
        (share of systems whose score differs from the item's most common score),
        ``flip_share`` (share of systems whose repeats disagree), ``alpha_if_deleted``,
        ``dead`` (two or more systems ran it, all scored it alike up to rounding), ``negative`` (r < 0 with p < 0.05: likely
        mis-keyed or ambiguous; a screen, unadjusted: on many items some clean ones are flagged
        by chance, so sort by ``discrimination_q``), ``flaky`` (flip_share >= flaky_at), ``status`` (``ok`` or the
        flags joined by ``+``; ``untested``: it varies but its discrimination cannot be
        estimated, e.g. fewer than 3 systems scored on it), ``method``.

    Refuses (StatsError) with fewer than 3 systems or 2 items, when systems share no items, and
    when no item varies across systems.

    Example:
        >>> from jevalkit.items import simulate_2pl
        >>> result = analysis(simulate_2pl(n_systems=30, n_items=40, seed=0), case="case_id")
        >>> round(result.alpha, 3), int(result.table()["dead"].sum())
        (0.791, 0)
    """
    if not 0 < flaky_at <= 1:
        raise StatsError(f"flaky_at must be in (0, 1], got {flaky_at!r}")
    m = score_matrix(df, system=system, case=case, score=score, scale=scale, pool=pool)
    require_systems(m, 3, "item analysis (a correlation across systems)")
    require_connected(m)
    if m.scores.shape[1] < 2:
        raise StatsError(
            "item analysis needs at least 2 items: an item's discrimination is its correlation "
            "with the systems' scores on the other items, and alpha a ratio over items"
        )
    x, seen = m.scores, m.observed
    n_sys = seen.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        difficulty = np.nanmean(np.where(seen, x, np.nan), axis=0)
    low = np.where(seen, x, np.inf).min(axis=0)
    high = np.where(seen, x, -np.inf).max(axis=0)
    # alike up to rounding: a mean of the same repeats in another order differs in the last bit
    # (an item one system ran is not known to be dead: it is untested)
    dead = ~(high - low > _TOL * np.maximum(1.0, np.abs(high))) & (n_sys >= 2)
    if not (~dead & (n_sys >= 2)).any():
        raise StatsError(
            "no item varies across systems (each item was scored alike by every system): "
            "nothing here separates the systems"
        )
    # rest score: the mean of the system's other scored items
    filled = np.where(seen, x, 0.0)
    tot, cnt = filled.sum(axis=1, keepdims=True), seen.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = (tot - filled) / (cnt - seen)
    r = np.full(x.shape[1], np.nan)
    p = np.full(x.shape[1], np.nan)
    for j in np.flatnonzero(~dead):
        ok = seen[:, j] & np.isfinite(rest[:, j])
        xi, ri = x[ok, j], rest[ok, j]
        if ok.sum() < 3 or _constant(xi) or _constant(ri):
            continue  # a constant rest score (e.g. every other item dead) correlates with nothing
        r[j] = np.corrcoef(xi, ri)[0, 1]
        t = r[j] * np.sqrt((ok.sum() - 2) / max(1 - r[j] ** 2, 1e-300))
        p[j] = 2 * sps.t.sf(abs(t), ok.sum() - 2)
    share_differ = np.zeros(x.shape[1])
    for col in range(x.shape[1]):
        values = x[seen[:, col], col]
        if values.size:
            _, counts = np.unique(np.round(values, 9), return_counts=True)
            share_differ[col] = 1 - counts.max() / values.size
    multi = m.weight >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        flip_share = np.where(
            multi.any(axis=0), (m.flips & multi).sum(axis=0) / multi.sum(axis=0), np.nan
        )
    complete = seen.all(axis=1)
    n_complete = int(complete.sum())
    pairwise = ""
    if n_complete == complete.size and n_complete >= 2 and x.shape[1] >= 2:
        alpha = tuple(cronbach_alpha(x[complete], confidence))
        alpha_del = _alpha_if_deleted(x[complete])
    elif x.shape[1] >= 2:  # some system missed an item: pairwise, not listwise, deletion
        alpha, pairwise = _pairwise_alpha(np.where(seen, x, np.nan), confidence)
        alpha_del = np.full(x.shape[1], np.nan)
        if n_complete >= 2:
            alpha_del = _alpha_if_deleted(x[complete])
    else:
        alpha, alpha_del = (np.nan, np.nan, np.nan), np.full(x.shape[1], np.nan)
    negative = (r < 0) & (p < 0.05)
    tested = np.isfinite(p)
    q = np.full(p.size, np.nan)
    if tested.any():
        q[tested] = multipletests(p[tested], method="fdr_bh")[1]
    flaky = np.nan_to_num(flip_share) >= flaky_at
    # not dead, yet no discrimination: too few systems on it, or nothing else varies for them
    untested = ~dead & ~np.isfinite(r)
    status = []
    for flags in zip(dead, negative, flaky, untested, strict=True):
        names = [
            n for n, f in zip(("dead", "negative", "flaky", "untested"), flags, strict=True) if f
        ]
        status.append("+".join(names) or "ok")
    columns = {
        "n_systems": n_sys.astype(int),
        "difficulty": difficulty,
        "discrimination": r,
        "discrimination_p": p,
        "discrimination_q": q,
        "share_differ": share_differ,
        "flip_share": flip_share,
        "alpha_if_deleted": alpha_del,
        "dead": dead,
        "negative": negative,
        "flaky": flaky,
        "status": status,
    }
    method = (
        f"classical item analysis over {len(m.systems)} systems ({m.case_label} as items); "
        f"corrected item-total Pearson r with its t-test p; Cronbach's alpha on the "
        + (
            f"{len(m.systems)} systems, {pairwise}, Feldt {confidence:.0%}"
            if pairwise
            else f"{n_complete} systems scored on every item, Feldt {confidence:.0%} interval"
        )
    )
    table = finish({**columns, "method": method}, groups=m.items, order=_COLUMNS)
    return ItemAnalysis(
        items=table,
        alpha=float(alpha[0]),
        alpha_ci_low=float(alpha[1]),
        alpha_ci_high=float(alpha[2]),
        n_complete=n_complete,
        n_systems=len(m.systems),
        n_items=int(x.shape[1]),
        n_dead=int(dead.sum()),
        n_negative=int(negative.sum()),
        n_flaky=int(flaky.sum()),
        method=method,
    )
