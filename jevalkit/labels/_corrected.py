"""A judge's mean corrected by a few human labels, with intervals that stay valid.

A model judge scores every item cheaply but with bias; people label a random slice well. The
judge's mean over all items, corrected by its average error on the labelled slice, estimates the
mean of the *human* score without the judge's bias (prediction-powered inference, Angelopoulos,
Bates, Fannjiang, Jordan & Zrnic 2023, Science 382; power-tuned "PPI++", Angelopoulos, Duchi &
Zrnic 2023, arXiv:2311.01453). Computed with the authors' ``ppi-python`` package; the estimators on arrays are
:func:`jevalkit.stats.ppi_interval` (``lam=None``: PPI++'s tuned lambda) and
:func:`jevalkit.stats.rogan_gladen_interval`.

For pass/fail verdicts the Rogan-Gladen estimator (Rogan & Gladen 1978, Am. J. Epidemiol. 107)
corrects the judge's pass rate with its sensitivity and specificity measured on the labels,
pi = (p + Sp - 1) / (Se + Sp - 1), with a delta-method interval (the variances of p, Se and Sp
propagated; Greiner & Gardner 2000, Prev. Vet. Med. 45).

The estimand is the mean human score over the population the judged items were drawn from (the
superpopulation, as PPI's): the intervals carry the judged items' own sampling variance, so for
the mean over just the judged items they are conservative (``benchmarks/bench_ppi.py --only
weighted`` measures coverage of both). Labelled items must be a probability sample of the
judged ones: ``jevalkit.labels.label_sample`` draws them and records each item's probability,
used here as an inverse-probability weight.
"""

from __future__ import annotations

import math
from typing import Any, Unpack

import numpy as np
import pandas as pd
from scipy import stats

from ..contract import estimator, finish
from ..errors import StatsError
from ..judges import EVALUATORS, Judgment, load_judge_prompt
from ..stats import no_spread_ci, ppi_interval, rogan_gladen_interval
from ._labels import JudgedColumns, _check_sampling_probability, judged_items

_COLUMNS = [
    "estimator",
    "n_labelled",
    "n_judged",
    "value",
    "ci_low",
    "ci_high",
    "half_width",
    "effective_labels",
    "lam",
    "method",
]


def _label_scores(
    df: pd.DataFrame, levels: list[str] | None, scores: dict | None
) -> dict[str, float]:
    """The score of each label level: given, else from the judge's prompt file (the same scoring
    as the judge's own: a one-level distribution's score)."""
    if scores is not None:
        given = {str(k): float(v) for k, v in scores.items()}
        outside = {k: v for k, v in given.items() if not 0 <= v <= 1}
        if outside:
            raise StatsError(
                f"label_scores {outside} are outside [0, 1], the judge's score scale: give each "
                "level its score on [0, 1] (e.g. (grade - low) / (high - low))"
            )
        return given
    if levels is None:
        names = sorted(set(df["probe"].dropna().astype(str))) if "probe" in df else []
        if len(names) != 1 or names[0] not in EVALUATORS:
            raise StatsError(
                "cannot tell the label levels: pass levels=[...] (lowest first) or "
                "label_scores={level: score}"
            )
        prompt = load_judge_prompt(names[0])
        levels, choice = prompt.labels, prompt.choice_scores
    else:
        choice = None
    out = {}
    for i, level in enumerate(levels):
        onehot = [1.0 if j == i else 0.0 for j in range(len(levels))]
        out[str(level)] = Judgment.from_probs(
            levels, onehot, coverage=1.0, method="label", choice_scores=choice
        ).score
    return out


def _normalised(labels: pd.DataFrame) -> pd.DataFrame:
    """Labels with text ``system`` (``all`` when absent) and ``case_id``, and a
    ``sampling_probability`` column (None when absent)."""
    for column in ("case_id", "level"):
        if column not in labels.columns:
            raise StatsError(f"labels need a {column!r} column (see jevalkit.labels.read_labels)")
    # read_labels checks a file's probabilities; a frame given directly is checked here (0
    # made a weight infinite, a negative one a negative weight)
    for prob in labels.get("sampling_probability", pd.Series(dtype=object)):
        if not (pd.api.types.is_scalar(prob) and pd.isna(prob)):  # None, NaN, NA: not recorded
            _check_sampling_probability(prob.item() if isinstance(prob, np.generic) else prob)
    return labels.assign(
        system=labels["system"].astype(str) if "system" in labels else "all",
        case_id=labels["case_id"].astype(str),
        sampling_probability=labels.get("sampling_probability", None),
    )


def _paired_arrays(
    items: pd.DataFrame, labels: pd.DataFrame, scores: dict[str, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labelled Y, their judge scores, the unlabelled judge scores, and the labels' weights."""
    unknown = set(labels["level"]) - set(scores)
    if unknown:
        raise StatsError(f"label level(s) {sorted(unknown)} are not among {sorted(scores)}")
    per_item = labels.assign(_y=labels["level"].map(scores).astype(float))
    agg = per_item.groupby("case_id").agg(y=("_y", "mean"), prob=("sampling_probability", "first"))
    judged = items.set_index("case_id")
    missing = sorted(set(agg.index) - set(judged.index))
    if missing:
        raise StatsError(f"labelled case(s) {missing[:5]} were not judged for this system")
    labelled = judged.loc[agg.index]
    unlabelled = judged.drop(index=agg.index)
    prob = agg["prob"].astype(float)
    if prob.notna().any() and prob.isna().any():
        raise StatsError("some labels record a sampling_probability and some do not")
    weights = (1.0 / prob).to_numpy() if prob.notna().all() else np.ones(len(agg))
    return (
        agg["y"].to_numpy(float),
        labelled["judge_score"].to_numpy(float),
        unlabelled["judge_score"].to_numpy(float),
        weights,
    )


def _rows(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    w: np.ndarray,
    binary: bool,
    confidence: float,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> list[dict[str, Any]]:
    n, big_n = y.size, yhat_unlabelled.size
    if n < 2:
        raise StatsError(f"{n} labelled item(s): the correction needs at least 2")
    if big_n < 1:
        raise StatsError("every judged item is labelled: there is nothing to correct with")
    weighted = not np.allclose(w, w[0])
    weights = w if weighted else None
    how = (
        "; Hajek form: the judge's mean over all judged items + the rectifier's mean weighted "
        "by 1 / sampling probability"
        if weighted
        else ""
    )
    all_judged = np.concatenate([yhat, yhat_unlabelled])
    mean = float(all_judged.mean())
    half = (
        stats.t.ppf(0.5 + confidence / 2, all_judged.size - 1)
        * all_judged.std(ddof=1)
        / math.sqrt(all_judged.size)
    )
    judge_low, judge_high = mean - half, mean + half
    judge_how = "the judge's mean over all judged items, t interval; ignores the judge's bias"
    if not half > 0:  # the judge gave every item one score: no spread is not a certainty
        judge_low, judge_high = no_spread_ci(
            mean, all_judged.size, bounds=bounds, confidence=confidence
        )
        judge_how = judge_how.replace("t interval", "Wilson interval at the same mean (no spread)")
    rows = [
        _row(
            "judge only",
            n,
            all_judged.size,
            mean,
            judge_low,
            judge_high,
            None,
            None,
            judge_how,
        )
    ]
    classical = ppi_interval(y, yhat, yhat_unlabelled, 0.0, weights=weights, confidence=confidence)
    classical_var = classical.rectifier_variance
    rows.append(
        _row(
            "labels only",
            n,
            big_n + n,
            classical.estimate,
            classical.ci_low,
            classical.ci_high,
            n,
            None,
            "the labelled items alone (PPI with lambda = 0), t interval" + how,
        )
    )
    for name, tuning in (("PPI", 1.0), ("PPI++", None)):
        ppi = ppi_interval(y, yhat, yhat_unlabelled, tuning, weights=weights, confidence=confidence)
        lam = ppi.lam
        total = ppi.judged_variance + ppi.rectifier_variance
        effective = n * classical_var / total if total > 0 else math.inf
        rows.append(
            _row(
                name,
                n,
                big_n + n,
                ppi.estimate,
                ppi.ci_low,
                ppi.ci_high,
                effective,
                lam,
                f"prediction-powered mean (ppi-python, lambda = {lam:.3f}); t interval with a "
                "small-sample variance floor" + how,
            )
        )
    if binary:
        try:
            rows.append(_rogan_gladen(y, yhat, all_judged, w, confidence, math.sqrt(classical_var)))
        except StatsError as exc:  # undefined for this system: say so, keep the other rows
            rows.append(
                _row(
                    "Rogan-Gladen",
                    n,
                    all_judged.size,
                    np.nan,
                    np.nan,
                    np.nan,
                    None,
                    None,
                    f"not estimable: {exc}",
                )
            )
    return rows


def _row(estimator, n, big_n, value, low, high, effective, lam, method) -> dict[str, Any]:
    return {
        "estimator": estimator,
        "n_labelled": n,
        "n_judged": big_n,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "half_width": (high - low) / 2,
        "effective_labels": effective,
        "lam": lam,
        "method": method,
    }


def _rogan_gladen(y, yhat, all_judged, w, confidence, classical_se) -> dict[str, Any]:
    rg = rogan_gladen_interval(y, yhat, all_judged, w, confidence=confidence)
    var = rg.variance
    if not var > 0:  # a flawless judge that called every item alike: nothing to propagate
        raise StatsError(
            "no spread: the judge called every item alike and the labels agree with it; "
            "Rogan-Gladen has no variance to give an interval with"
        )
    effective = y.size * (classical_se / math.sqrt(var)) ** 2 if var > 0 else math.inf
    clipped = not (0 <= rg.estimate <= 1 and rg.ci_low >= 0 and rg.ci_high <= 1)
    return _row(
        "Rogan-Gladen",
        y.size,
        all_judged.size,
        float(np.clip(rg.estimate, 0, 1)),
        float(np.clip(rg.ci_low, 0, 1)),
        float(np.clip(rg.ci_high, 0, 1)),
        effective,
        None,
        f"(p + Sp - 1) / (Se + Sp - 1) with sensitivity {rg.sensitivity:.3f} and specificity "
        f"{rg.specificity:.3f} from the labels; delta-method normal interval"
        + (f"; clipped to [0, 1] (unclipped estimate {rg.estimate:.3f})" if clipped else ""),
    )


@estimator(
    unit="item",
    estimand="mean human score (PPI, PPI++, Rogan-Gladen; Hajek form when weighted)",
    interval="t with a small-sample floor; delta method",
    data="labels",
    checks=("order", "rename", "method", "scale", "one_case", "settings"),
    call={"levels": ["fail", "pass"]},
    calibration="corrected_mean",
)
def corrected_mean(
    df: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    levels: list[str] | None = None,
    label_scores: dict[str, float] | None = None,
    confidence: float = 0.95,
    **columns: Unpack[JudgedColumns],
) -> pd.DataFrame:
    """The mean human score of each system's outputs, from the judge's scores on every item and
    human labels on a random slice, with the naive and labels-only estimates beside it.

    Args:
        df: judged results (``system``, ``case_id``, ``score``; the judge's ``probe`` names its
            levels).
        labels: from :func:`jevalkit.labels.read_labels` (``system``, ``case_id``, ``level``,
            ``sampling_probability``); several labellers of one item are averaged.
        levels: the label levels, lowest first, when ``df`` does not come from a jevalkit judge.
        label_scores: or the score of each level directly.
        confidence: of the intervals.
        columns: the judged rows' columns and reading (``system=``, ``case_id=``, ``score=``,
            ``repeat=``, ``scale=``, ``pool=``; :class:`JudgedColumns`), as
            :func:`jevalkit.labels.judged_items` reads them: ``scale=(low, high)`` of raw judge
            grades (e.g. ``(1, 10)``) normalises them to [0, 1] (label scores are on [0, 1]).

    Returns:
        Per system and estimator (``judge only``, ``labels only``, ``PPI``, ``PPI++``, and for
        pass/fail judges ``Rogan-Gladen``): ``system``, ``estimator``, ``n_labelled``,
        ``n_judged``, ``value``, ``ci_low``, ``ci_high``, ``half_width``,
        ``effective_labels`` (how many labels alone would give the same interval width),
        ``lam`` (the power-tuning weight), ``method``.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> truth = rng.random(400) < 0.6
        >>> judge = np.where(rng.random(400) < 0.85, truth, ~truth) | (rng.random(400) < 0.1)
        >>> df = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(400)],
        ...                    "score": judge.astype(float)})
        >>> labels = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(60)],
        ...     "level": np.where(truth[:60], "pass", "fail"), "sampling_probability": None})
        >>> t = corrected_mean(df, labels, levels=["fail", "pass"]).set_index("estimator")
        >>> bool(t.loc["PPI", "ci_low"] < truth.mean() < t.loc["PPI", "ci_high"])
        True
    """
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence!r}")
    scores = _label_scores(df, levels, label_scores)
    items = judged_items(df, **columns)
    labels = _normalised(labels)
    binary = sorted(set(scores.values())) == [0.0, 1.0]
    out = []
    for system, group in items.groupby("system", sort=True):
        mine = labels[labels["system"] == system]
        if mine.empty:
            raise StatsError(f"no labels for system {system!r}; label some of its outputs")
        y, yhat, yhat_u, w = _paired_arrays(group, mine, scores)
        for row in _rows(y, yhat, yhat_u, w, binary, confidence):
            out.append({"system": system, **row})
    return finish(pd.DataFrame(out, columns=["system", *_COLUMNS]), order=["system", *_COLUMNS])


@estimator(
    unit="item",
    estimand="paired difference in mean human score",
    interval="t with a small-sample floor",
    data="labels",
    checks=("order", "rename", "method", "scale", "settings"),
    call={"baseline": "A", "candidate": "B", "levels": ["fail", "pass"]},
    calibration="corrected_mean",
)
def corrected_difference(
    df: pd.DataFrame,
    labels: pd.DataFrame,
    baseline: str,
    candidate: str,
    *,
    levels: list[str] | None = None,
    label_scores: dict[str, float] | None = None,
    confidence: float = 0.95,
    **columns: Unpack[JudgedColumns],
) -> pd.DataFrame:
    """``candidate`` minus ``baseline`` in mean human score, paired by case: the prediction-
    powered estimate of the difference (and the naive and labels-only ones), from the cases
    both systems were judged on and the cases whose outputs from both were labelled. The
    judged rows are read as :func:`corrected_mean` reads them (``columns``).

    Returns:
        The columns of :func:`corrected_mean` without Rogan-Gladen, with ``system`` set to
        ``"<candidate> - <baseline>"``.

    Example:
        >>> rng = np.random.default_rng(1)
        >>> truth = {s: rng.random(300) < p for s, p in (("a", 0.5), ("b", 0.7))}
        >>> rows = [{"system": s, "case_id": f"c{i}", "score": float(t[i] ^ (rng.random() < 0.1))}
        ...         for s, t in truth.items() for i in range(300)]
        >>> labels = pd.DataFrame([{"system": s, "case_id": f"c{i}", "level": str(int(t[i]))}
        ...                        for s, t in truth.items() for i in range(80)])
        >>> d = corrected_difference(pd.DataFrame(rows), labels, "a", "b", levels=["0", "1"])
        >>> d.set_index("estimator").loc["PPI", "system"]
        'b - a'
    """
    scores = _label_scores(df, levels, label_scores)
    items = judged_items(df, **columns)
    wide = items.pivot(index="case_id", columns="system", values="judge_score")
    for system in (baseline, candidate):
        if system not in wide.columns:
            raise StatsError(f"system {system!r} was not judged; systems: {sorted(wide.columns)}")
    wide = wide[[baseline, candidate]].dropna()
    labels = _normalised(labels)
    per = (
        labels.assign(_y=labels["level"].map(scores))
        .groupby(["case_id", "system"])["_y"]
        .mean()
        .unstack()
    )
    if baseline not in per.columns or candidate not in per.columns:
        raise StatsError("label both systems' outputs for the same cases (label_sample does)")
    both = per[[baseline, candidate]].dropna().index.intersection(wide.index)
    if len(both) < 2:
        raise StatsError(
            f"{len(both)} case(s) have labels for both systems: a paired correction needs at least "
            "2 (label_sample labels every system's output for each drawn case)"
        )
    prob = (
        labels.groupby("case_id")["sampling_probability"].first()
        if "sampling_probability" in labels
        else None
    )
    known = prob.loc[both].astype(float).notna() if prob is not None else None
    if known is not None and known.any() and not known.all():
        raise StatsError("some labels record a sampling_probability and some do not")
    w = (
        (1.0 / prob.loc[both].astype(float)).to_numpy()
        if prob is not None and known is not None and known.all()
        else np.ones(len(both))
    )
    y = (per.loc[both, candidate] - per.loc[both, baseline]).to_numpy(float)
    judged_diff = wide[candidate] - wide[baseline]
    yhat = judged_diff.loc[both].to_numpy(float)
    yhat_u = judged_diff.drop(index=both).to_numpy(float)
    rows = _rows(y, yhat, yhat_u, w, False, confidence, bounds=(-1.0, 1.0))
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    frame.insert(0, "system", f"{candidate} - {baseline}")
    return finish(frame, order=["system", *_COLUMNS])


_BUDGET_COLUMNS = [
    "system",
    "n_labelled",
    "n_judged",
    "half_width_now",
    "target_half_width",
    "labels_needed",
    "labels_needed_without_judge",
    "lam",
    "method",
]


@estimator(
    unit="item",
    estimand="labels needed for a target half-width",
    interval="none (a planning number)",
    data="labels",
    checks=("order", "rename", "method", "scale", "settings"),
    call={"target_half_width": 0.1, "levels": ["fail", "pass"]},
)
def label_budget(
    df: pd.DataFrame,
    pilot_labels: pd.DataFrame,
    target_half_width: float,
    *,
    levels: list[str] | None = None,
    label_scores: dict[str, float] | None = None,
    confidence: float = 0.95,
    **columns: Unpack[JudgedColumns],
) -> pd.DataFrame:
    """How many labels each system needs for a corrected (PPI++) interval of ``+/-
    target_half_width``, from a pilot set of labels.

    The PPI++ variance of a mean is Var(Y - lambda Yhat) / n + lambda^2 Var(Yhat) / N (Angelopoulos,
    Duchi & Zrnic 2023); with the pilot's variances and lambda (as :func:`jevalkit.stats.ppi_interval` estimates
    them) and the N items judged, the labels needed solve t^2 Var(n) = target^2. When the judged items' own term already exceeds the
    target no number of labels reaches it (``labels_needed`` NaN; judge more items). The labels a
    labels-only estimate would need are beside it. Plan with a pilot of 30 or more labels: the
    answer is only as good as the pilot's variance estimates. The judged rows are read as
    :func:`corrected_mean` reads them (``columns``).

    Returns:
        One row per system: ``system``, ``n_labelled`` (the pilot), ``n_judged``,
        ``half_width_now``, ``target_half_width``, ``labels_needed`` (total, pilot included),
        ``labels_needed_without_judge``, ``lam``, ``method``.

    Example:
        >>> rng = np.random.default_rng(2)
        >>> truth = rng.random(2000) < 0.3
        >>> judge = np.where(rng.random(2000) < 0.9, truth, ~truth)
        >>> df = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(2000)],
        ...                    "score": judge.astype(float)})
        >>> pilot = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(40)],
        ...                       "level": truth[:40].astype(int).astype(str)})
        >>> row = label_budget(df, pilot, 0.04, levels=["0", "1"]).iloc[0]
        >>> bool(40 < row["labels_needed"] < row["labels_needed_without_judge"])
        True
    """
    if not isinstance(target_half_width, int | float) or not 0 < target_half_width < 1:
        raise StatsError(f"target_half_width must be in (0, 1), got {target_half_width!r}")
    scores = _label_scores(df, levels, label_scores)
    items = judged_items(df, **columns)
    labels = _normalised(pilot_labels)
    rows = []
    for system, group in items.groupby("system", sort=True):
        y, yhat, yhat_u, w = _paired_arrays(group, labels[labels["system"] == system], scores)
        if y.size < 2:
            raise StatsError(f"system {system!r}: a pilot needs at least 2 labels")
        weights = None if np.allclose(w, w[0]) else w
        tuned = ppi_interval(y, yhat, yhat_u, None, weights=weights, confidence=confidence)
        lam = tuned.lam
        now = (tuned.ci_high - tuned.ci_low) / 2
        per_label = tuned.rectifier_variance * y.size  # the rectifier's variance per label
        q = stats.t.ppf(0.5 + confidence / 2, y.size - 1)
        room = (target_half_width / q) ** 2 - tuned.judged_variance
        needed = math.ceil(per_label / room) if room > 0 else math.nan
        labels_var = ppi_interval(
            y, yhat, yhat_u, 0.0, weights=weights, confidence=confidence
        ).rectifier_variance
        classical = math.ceil(labels_var * y.size * (q / target_half_width) ** 2)
        rows.append(
            {
                "system": system,
                "n_labelled": y.size,
                "n_judged": y.size + yhat_u.size,
                "half_width_now": now,
                "target_half_width": target_half_width,
                "labels_needed": needed,
                "labels_needed_without_judge": classical,
                "lam": lam,
                "method": (
                    "PPI++ variance with the pilot's variances and lambda"
                    if room > 0
                    else "the judged items alone are too few for this width: judge more items"
                ),
            }
        )
    return finish(pd.DataFrame(rows, columns=_BUDGET_COLUMNS), order=_BUDGET_COLUMNS)
