"""The release gate: a decision from an interval, never from a point estimate."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..contract import (
    CASE_COLUMNS,
    CaseSpec,
    columns_of,
    estimator,
    finish,
    not_a_statistic,
    prepare,
    require,
)
from ..errors import StatsError
from ..results import DEFAULT_MAX_ERROR_RATE, error_share, has_repeats
from ..stats import sample_size
from ._agreement import consistency
from ._compare import compare
from ._scores import mean_score, pass_rate

GATE_METRICS = ("mean_score", "pass_rate")
_METRIC_OF: dict[str, Callable[..., pd.DataFrame]] = {
    "pass_rate": pass_rate,
    "mean_score": mean_score,
}
_VALUE = {"pass_rate": "passed", "mean_score": "score"}
COLUMNS = [
    "metric",
    "decision",
    "n",
    "n_errors",
    "value",
    "ci_low",
    "ci_high",
    "threshold",
    "reason",
]


@not_a_statistic("the decision rule applied to an interval estimated elsewhere")
def gate_decision(ci_low: float, ci_high: float, minimum: float) -> str:
    """The one rule that turns an interval and a bar into a decision: ``pass`` when the whole
    interval is at or above ``minimum``, ``fail`` when it is wholly below, ``undecided`` when it
    straddles the bar (the data cannot tell yet: more cases or repeats would). Used by
    :func:`gate` and by the adaptive gate (``jevalkit gate --repeats auto``).

    Example:
        >>> gate_decision(0.82, 0.9, 0.8), gate_decision(0.6, 0.7, 0.8), gate_decision(0.7, 0.9, 0.8)
        ('pass', 'fail', 'undecided')
    """
    if ci_low >= minimum:
        return "pass"
    if ci_high < minimum:
        return "fail"
    return "undecided"


def check_error_share(results: pd.DataFrame, max_error_rate: float, where: str) -> str | None:
    """Why ``results`` hold too many error rows to decide on (their share above
    ``max_error_rate``), or None: a verdict resting on the rows that happened to succeed is
    not a verdict on the system."""
    share = error_share(results)
    errors, total = share
    if share.over(max_error_rate):
        return (
            f"{where}: {errors} of {total} rows are errors ({errors / total:.0%}, limit "
            f"{max_error_rate:.0%}); the verdict would rest on the rows that happened to "
            "succeed: re-run them (--retry-errors) or raise --max-error-rate"
        )
    return None


def _check_rate(value: object, name: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise StatsError(f"{name} must be a number from 0 to 1, got {value!r}")


@estimator(
    unit="case",
    estimand="is the lower interval end at or above the minimum",
    interval="that of pass_rate / mean_score",
    checks=("order", "rename", "one_case", "gate", "settings"),
    call={"minimum": 0.5, "by": "system", "case": "case_id"},
)
def gate(
    results: pd.DataFrame,
    *,
    minimum: float,
    metric: str = "pass_rate",
    by: CaseSpec = None,
    case: CaseSpec = CASE_COLUMNS,
    system: str | None = "system",
    max_flip_rate: float = 0.1,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    pool: bool = False,
) -> pd.DataFrame:
    """Decide whether each system (and each ``by`` group) clears ``minimum`` on ``metric``, by
    :func:`gate_decision`: ``pass`` only when the 95% interval lies at or above it, ``fail`` when
    it lies wholly below, ``undecided`` when it straddles the bar; ``refused`` when the data
    cannot decide (no scored rows; more than ``max_error_rate`` of the group's rows are errors,
    so the verdict would rest on the rows that happened to succeed; or verdicts that flip between
    repeats in more than ``max_flip_rate`` of cases: a flaky evaluator makes a flaky gate).
    Pairwise games (rows with ``system_a``) are refused: gate on ``win_rate`` or ``compare``
    instead.

    Systems are never pooled, nor a probe's versions or generation settings (``params_hash``;
    the settings rule of :func:`jevalkit.contract.prepare`; ``pool=True`` pools them on
    purpose): each gets its own decision. A file with three
    systems gets three decisions (pooled, their
    different pass rates on one case look like verdicts that flip, and the gate called the
    evaluator flaky). ``system=None`` says the rows are one system.

    Returns:
        One row per system and group: ``system`` (unless ``system=None``), the ``by`` columns,
        ``metric``, ``decision`` (``pass``, ``fail``, ``undecided``, ``refused``), ``n`` (scored
        rows), ``n_errors`` (error rows left out), ``value``, ``ci_low``, ``ci_high``,
        ``threshold``, ``reason`` (one sentence).

    Example:
        >>> df = pd.DataFrame({"case_id": list("abcdefghij"), "passed": [True] * 9 + [False]})
        >>> gate(df, minimum=0.5, case="case_id", system=None)[["decision", "n"]].values.tolist()
        [['pass', 10]]
        >>> two = pd.concat([df.assign(system="a"), df.assign(system="b", passed=False)])
        >>> gate(two, minimum=0.5, case="case_id")[["system", "decision"]].values.tolist()
        [['a', 'pass'], ['b', 'fail']]
    """
    if metric not in GATE_METRICS:
        raise StatsError(f"metric must be one of {sorted(GATE_METRICS)}, got {metric!r}")
    if not isinstance(minimum, int | float) or not math.isfinite(minimum) or not 0 <= minimum <= 1:
        raise StatsError(f"the minimum must be a number from 0 to 1, got {minimum!r}")
    _check_rate(max_flip_rate, "max_flip_rate")
    _check_rate(max_error_rate, "max_error_rate")
    if "system_a" in results.columns and results["system_a"].notna().any():
        raise StatsError(
            "these are pairwise games (system_a vs system_b): a gate on one score would pool "
            "both sides' preferences; use metrics.win_rate or compare"
        )
    if system is not None:
        require(results, system, "system", "each system gets its own decision")
    given = ([system] if system is not None else []) + [c for c in columns_of(by) if c != system]
    table = _METRIC_OF[metric](results, by=given or None, case=case, system=system, pool=pool)
    # the groups the statistic kept: the system and by columns, then the settings kept apart
    cols = list(table.columns[: list(table.columns).index("n")])
    flips = None
    if "passed" in results.columns and has_repeats(results, case=case, system=system):
        # rows that repeat a case and repeat index are duplicates (with system=None: rows of
        # several systems declared one), and so are rows of a case no repeat column tells
        # apart: refused here (the input step's rule), not swallowed with the errors below
        prepare(
            results,
            "passed",
            by=cols or None,
            case=case,
            system=system,
            repeat="repeat",
            kind="any",
            need_repeat=True,
            pool=True,  # the groups above keep the settings apart already
        )
        try:
            flips = consistency(
                results, by=cols or None, case=case, system=system, level=None, pool=pool
            )
        except StatsError:
            flips = None
    rows = []
    for _, row in table.iterrows():
        key = {c: row[c] for c in cols}
        where = ", ".join(f"{c}={row[c]}" for c in cols) or "all results"
        flip = None
        if flips is not None:
            match = flips
            for c in cols:
                match = match[match[c] == row[c]]
            flip = float(match["flip_rate"].iloc[0]) if len(match) else None
        group = results
        for c in cols:
            group = group[group[c] == row[c]]
        n_errors, _ = error_share(group)
        too_many = check_error_share(group, max_error_rate, where)
        if too_many:
            decision, reason = "refused", too_many
        elif row["n"] == 0:
            decision, reason = "refused", f"{where}: no scored rows to decide on"
        elif row["n"] < 2:
            decision, reason = "refused", f"{where}: one scored run cannot decide"
        elif flip is not None and flip > max_flip_rate:
            decision = "refused"
            reason = (
                f"{where}: verdicts flip between repeats in {flip:.0%} of cases (limit "
                f"{max_flip_rate:.0%}); a flaky evaluator makes a flaky gate"
            )
        elif math.isnan(row["ci_low"]) or not row["ci_high"] > row["ci_low"]:
            decision, reason = "refused", f"{where}: n = {row['n']} gives no interval"
        else:
            decision = gate_decision(row["ci_low"], row["ci_high"], minimum)
            reason = {
                "pass": f"{where}: the interval's lower bound {row['ci_low']:.3f} clears {minimum:g}",
                "fail": f"{where}: the interval's upper bound {row['ci_high']:.3f} is below "
                f"{minimum:g}",
                "undecided": f"{where}: the interval's lower bound {row['ci_low']:.3f} is below "
                f"{minimum:g} and its upper bound {row['ci_high']:.3f} above it: more cases or "
                "repeats would tell",
            }[decision]
        rows.append(
            {
                **key,
                "metric": metric,
                "decision": decision,
                "n": int(row["n"]),
                "n_errors": n_errors,
                "value": row["value"],
                "ci_low": row["ci_low"],
                "ci_high": row["ci_high"],
                "threshold": minimum,
                "reason": reason
                + (f" ({n_errors} error rows left out)" if n_errors and not too_many else ""),
            }
        )
    if not rows:  # no system at all: nothing to decide on, said once
        rows.append(
            {
                **dict.fromkeys(cols),
                "metric": metric,
                "decision": "refused",
                "n": 0,
                "n_errors": error_share(results).errors,
                "value": np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "threshold": minimum,
                "reason": "all results: no scored rows to decide on",
            }
        )
    return finish(pd.DataFrame(rows), order=[*cols, *COLUMNS])


RELEASE_COLUMNS = [
    "metric",
    "decision",
    "n_paired",
    "value_baseline",
    "value_candidate",
    "drop",
    "drop_ci_low",
    "drop_ci_high",
    "max_drop",
    "agreement",
    "n_needed",
    "reason",
]


@estimator(
    unit="case",
    estimand="non-inferiority of the candidate (drop < max_drop)",
    interval="that of compare",
    data="two_runs",
    checks=("order", "rename", "scale", "keys", "duplicates", "one_case", "gate", "settings"),
    call={"max_drop": 0.1, "case": "case_id"},
)
def release_gate(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    max_drop: float,
    metric: str = "pass_rate",
    case: CaseSpec = CASE_COLUMNS,
    min_consistency: float = 0.9,
    confidence: float = 0.95,
    power: float = 0.8,
    n_resamples: int = 2000,
    seed: int | None = 0,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    pool: bool = False,
) -> pd.DataFrame:
    """Non-inferiority of a candidate against a baseline, paired by case: ``pass`` only when the
    upper end of the interval for the drop (baseline - candidate) is below ``max_drop``.

    ``fail`` when the interval does not clear the margin and the data could tell (the drop is
    clearly above the margin, or n was large enough to show non-inferiority); ``refused`` when
    the evaluator is too inconsistent to decide (verdict agreement across repeats below
    ``min_consistency`` on either side), when more than ``max_error_rate`` of either side's
    rows are errors, or when the interval straddles the margin with fewer cases than needed to
    tell a drop of ``max_drop`` from none (``n_needed`` says how many).

    A probe without cases (one prompt, run several times on each side) is gated over its
    repeats: the estimand is that prompt's pass probability (or score), the two sides' repeats
    compared unpaired as :func:`compare` does, and ``reason`` says so; a probe with cases that
    pairs only one of them is refused. A drop from always passing to always failing exits as
    ``fail``; verdicts that flip between repeats are still refused (``min_consistency``). A side
    holding two versions of a probe, or two generation settings (``params_hash``), is refused
    naming the column (one decision cannot be two runs'); ``pool=True`` pools them on purpose.

    Returns:
        One row: ``metric``, ``decision``, ``n_paired``, ``value_baseline``,
        ``value_candidate``, ``drop``, ``drop_ci_low``, ``drop_ci_high``, ``max_drop``,
        ``agreement`` (the lower of the two sides', NaN without repeats), ``n_needed``,
        ``reason``.

    Example:
        >>> base = pd.DataFrame({"case_id": range(400), "passed": [True] * 360 + [False] * 40})
        >>> head = base.assign(passed=[True] * 358 + [False] * 42)
        >>> release_gate(base, head, max_drop=0.05, case="case_id")["decision"][0]
        'pass'
    """
    if metric not in ("pass_rate", "mean_score"):
        raise StatsError(f"metric must be pass_rate or mean_score, got {metric!r}")
    if not isinstance(max_drop, int | float) or not 0 < max_drop < 1:
        raise StatsError(f"max_drop must be a number between 0 and 1, got {max_drop!r}")
    _check_rate(min_consistency, "min_consistency")
    _check_rate(max_error_rate, "max_error_rate")
    for side, frame in (("baseline", baseline), ("candidate", candidate)):
        too_many = check_error_share(frame, max_error_rate, f"the {side}")
        if too_many:
            empty = dict.fromkeys(RELEASE_COLUMNS, np.nan)
            refused = {**empty, "metric": metric, "decision": "refused", "reason": too_many}
            return finish(
                pd.DataFrame([{**refused, "n_paired": 0, "max_drop": max_drop}]),
                order=RELEASE_COLUMNS,
            )
    frames = [baseline.assign(_side="baseline"), candidate.assign(_side="candidate")]
    both = pd.concat(frames, ignore_index=True)
    # one decision: a side's two versions or settings are refused, not kept apart
    prepare(both, _VALUE[metric], case=case, system="_side", kind="any", pool=pool, apart=False)
    row = compare(
        both,
        "baseline",
        by=None,
        case=case,
        system="_side",
        metrics=[metric],
        confidence=confidence,
        power=power,
        n_resamples=n_resamples,
        seed=seed,
        pool=pool,
    ).iloc[0]
    drop, low, high = -row["delta"], -row["ci_high"], -row["ci_low"]
    agreement = np.nan
    if "passed" in both.columns and "repeat" in both.columns:
        sides = []
        for frame in frames:
            if has_repeats(frame, case=case, system=None):
                agree = consistency(frame, case=case, system=None, level=None, pool=pool)
                sides.append(float(agree["value"].iloc[0]))
        agreement = min(sides) if sides else np.nan
    sd = row["sd_diff"]
    n_needed = sample_size(max_drop, sd**2, power=power) if sd == sd and sd > 0 else None
    n = int(row["n_paired"])
    # a probe without cases (one prompt, run k times on each side) is its one prompt: the drop
    # is in that prompt's pass probability, estimated from the repeats compared unpaired
    one_prompt = n == 1 and row["n_only_system"] == 0 and row["n_only_baseline"] == 0
    estimand = "this prompt's pass probability" if metric == "pass_rate" else "this prompt's score"
    size = f"n = {n}"
    if one_prompt:
        runs = [
            prepare(f, _VALUE[metric], kind="any", pool=True).values.size
            for f in (baseline, candidate)
        ]
        size = f"{runs[0]} and {runs[1]} repeats"
    base = {
        "metric": metric,
        "n_paired": n,
        "value_baseline": row["value_baseline"],
        "value_candidate": row["value"],
        "drop": drop,
        "drop_ci_low": low,
        "drop_ci_high": high,
        "max_drop": max_drop,
        "agreement": agreement,
        "n_needed": n_needed,
    }
    if n == 0:
        decision, reason = "refused", "no case was run by both the baseline and the candidate"
    elif n < 2 and not one_prompt:
        decision = "refused"
        reason = (
            "one case was run by both the baseline and the candidate, and others by one side "
            "only: a release decision needs two or more paired cases"
        )
    elif not (low == low and high == high) or not high > low:
        decision = "refused"
        reason = f"no interval for the drop ({row['method']}): nothing to decide on"
    elif agreement == agreement and agreement < min_consistency:
        decision = "refused"
        reason = (
            f"verdicts agree across repeats in only {agreement:.0%} of runs (minimum "
            f"{min_consistency:.0%}): the evaluator is too inconsistent to gate on"
        )
    elif high < max_drop:
        decision = "pass"
        reason = f"the drop is below {max_drop:g} (95% CI {low:+.3f} to {high:+.3f}, {size})"
    elif low >= max_drop:
        decision = "fail"
        reason = f"the drop is at least {max_drop:g} (95% CI {low:+.3f} to {high:+.3f}, {size})"
    elif one_prompt:
        decision = "refused"
        reason = (
            f"undecided: the interval {low:+.3f} to {high:+.3f} straddles {max_drop:g} "
            f"({size}): more repeats of the prompt would tell"
        )
    elif n_needed is not None and n < n_needed:
        decision = "refused"
        reason = (
            f"undecided: the interval {low:+.3f} to {high:+.3f} straddles {max_drop:g}, and "
            f"n = {n} is too small for this margin: about {n_needed} paired cases are needed"
        )
    else:
        decision = "fail"
        reason = (
            f"non-inferiority not shown: the drop may reach {high:+.3f} (95% CI), above "
            f"{max_drop:g} (n = {n})"
        )
    if one_prompt:
        reason = (
            f"one prompt (a probe without cases): the estimand is {estimand}, its repeats "
            f"compared unpaired ({row['method']}); {reason}"
        )
    return finish(
        pd.DataFrame([{**base, "decision": decision, "reason": reason}]), order=RELEASE_COLUMNS
    )
