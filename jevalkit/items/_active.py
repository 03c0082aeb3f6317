"""Active evaluation: score a new system on a whole benchmark from a few cases chosen where the
item model is least sure of its answer, with an interval that stays valid.

The design (active statistical inference, Zrnic & Candes, ICML 2024, in the sequential form of
Des Raj's ordered estimator, 1956): cases are drawn one at a time, without replacement, in
waves. Before each wave the new system's ability is updated from its own answers so far (the
posterior of the fitted item model), every case not yet drawn gets a prediction of the system's
score on it, and the wave's draws take a case with probability proportional to the predicted
standard deviation of that score, mixed with a uniform ``floor`` so no probability is tiny. The
probability each drawn case had at its draw is recorded with it.

The estimate: for the t-th draw (case i_t, probability q_t, the predictions yhat_t in force),

    z_t = (sum of the scores drawn before t) + (sum of yhat_t over the cases not yet drawn)
          + (y_{i_t} - yhat_t(i_t)) / q_t

is unbiased for the benchmark's total given everything before t, whatever the predictions, so
a mean of the z_t over the draws, divided by the number of cases, estimates the full-benchmark
score; the z_t - total are martingale increments, so their sample variance gives its standard
error (Des Raj's variance estimator), with a t interval. The mean weights each z_t by one over
the square root of the variance the model predicted for it before its draw (the stabilising
weights of Hadad et al., PNAS 2021, for adaptive experiments): early draws, made before the
ability was known, are noisier and count less. A wrong item model costs width, not validity.
``method="ht"`` leaves the predictions out (z_t = drawn scores so far + y / q: the plain
Horvitz-Thompson form of the same design). The estimand is the mean over the benchmark's cases
of the score each case gets (its repeats averaged) when run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ..contract import Result, score_matrix
from ..errors import StatsError
from ._irt import NODES, IrtFit

DRAW_COLUMNS = [
    "step",
    "wave",
    "case",
    "probability",
    "prediction",
    "remaining_prediction",
    "predicted_variance",
]


@dataclass(frozen=True)
class ActivePlan(Result):
    """Which cases to run, in waves, and with what probabilities (see :func:`active_plan`).

    Attributes:
        k: draws in all; ``waves``: how many times the ability is updated; ``floor``: the
            uniform share of every draw's probability; ``seed``.
        n_items: the benchmark's cases.
        draws: the draws so far, one row per draw: ``step`` (0, 1, ...), ``wave``, ``case``
            (the item id), ``probability`` (of that case at its draw, among the cases not yet
            drawn), ``prediction`` (the system's predicted score on it then),
            ``remaining_prediction`` (the predictions summed over the cases not yet drawn,
            that case included).
        complete: every wave is drawn (later waves wait for the answers to earlier ones).
        method: how the draws were made.
    """

    k: int
    waves: int
    floor: float
    seed: int
    n_items: int
    draws: pd.DataFrame = field(repr=False)
    complete: bool
    method: str

    def table(self) -> pd.DataFrame:
        """The draws."""
        return self.draws.copy()

    @property
    def cases(self) -> list:
        """The drawn cases, in draw order."""
        return self.draws["case"].tolist()


def _wave_sizes(k: int, waves: int) -> list[int]:
    return [len(part) for part in np.array_split(np.arange(k), waves)]


def _new_scores(fit: IrtFit, observed: pd.DataFrame | None) -> dict:
    """Each item's observed mean score (repeats averaged) for one new system."""
    if observed is None or len(observed) == 0:
        return {}
    matrix = score_matrix(observed, **fit.matrix.columns)
    if len(matrix.systems) != 1:
        raise StatsError(
            f"an active plan scores one new system at a time; the results hold "
            f"{len(matrix.systems)}: {matrix.systems[:5]}"
        )
    return {
        item: (float(matrix.scores[0, j]), float(matrix.weight[0, j]))
        for j, item in enumerate(matrix.item_ids())
        if matrix.weight[0, j] > 0
    }


def _predictions(fit: IrtFit, answered: Mapping[int, tuple[float, float]]) -> np.ndarray:
    """The posterior-mean predicted score of the new system on every item, given its answers."""
    items = fit.items
    ok = items["status"].eq("ok").to_numpy()
    a = np.nan_to_num(items["discrimination"].to_numpy())
    c = np.nan_to_num(items["intercept"].to_numpy())
    past = items["mean_score"].fillna(0.5).to_numpy()
    use = [j for j in answered if ok[j]]
    if use:
        cols = np.asarray(use)
        y = np.array([answered[j][0] for j in use])[None, :]
        w = np.array([answered[j][1] for j in use])[None, :]
        post = fit.posterior(y, w, cols)[0]
    else:  # no answer yet: the model's prior over abilities
        prior = np.exp(-0.5 * NODES**2)
        post = prior / prior.sum()
    p = expit(np.outer(a, NODES) + c[:, None]) @ post
    return np.where(ok, p, past)


def active_plan(
    fit: IrtFit,
    k: int,
    *,
    observed: pd.DataFrame | None = None,
    waves: int = 4,
    floor: float = 0.2,
    seed: int = 0,
) -> ActivePlan:
    """The draws of an active plan, given the new system's answers so far (deterministic: the
    same fit, seed and answers give the same draws, so a run resumes without re-drawing).

    The first wave is drawn from the model's prior; each later wave only once every case drawn
    before it has an answer in ``observed`` (else the plan stops there, ``complete`` False).

    Args:
        fit: the item model from past systems (:func:`fit_irt`).
        k: how many cases to draw (fewer than the benchmark's).
        observed: the new system's results on the drawn cases so far (read with the fit's
            columns); ``None`` before the first wave.
        waves: how many times the ability is updated between draws.
        floor: the uniform share of each draw's probability (0 < floor <= 1; 1 is uniform).
        seed: of the draws.

    Example:
        >>> from jevalkit.items import fit_irt, simulate_2pl
        >>> df = simulate_2pl(n_systems=41, n_items=120, seed=1)
        >>> fit = fit_irt(df[df.system != "sys40"], case="case_id")
        >>> plan = active_plan(fit, 20, waves=2)
        >>> len(plan.draws), plan.complete  # the second wave waits for answers
        (10, False)
        >>> new = df[(df.system == "sys40") & df.case_id.isin(plan.cases)]
        >>> plan = active_plan(fit, 20, waves=2, observed=new)
        >>> len(plan.draws), plan.complete
        (20, True)
    """
    n = len(fit.items)
    if not isinstance(k, int | np.integer) or not 2 <= k < n:
        raise StatsError(
            f"k must be a whole number from 2 to {n - 1} (the benchmark has {n}), got {k!r}"
        )
    if not isinstance(waves, int | np.integer) or not 1 <= waves <= k:
        raise StatsError(f"waves must be a whole number from 1 to k={k}, got {waves!r}")
    if not 0 < floor <= 1:
        raise StatsError(f"floor must be in (0, 1], got {floor!r}")
    ids = fit.matrix.item_ids()
    index = {item: j for j, item in enumerate(ids)}
    scores = _new_scores(fit, observed)
    unknown = [item for item in scores if item not in index]
    if unknown:
        raise StatsError(
            f"case {unknown[0]!r} of the new results is not an item of the fitted benchmark"
        )
    answered = {index[item]: value for item, value in scores.items()}
    remaining = np.ones(n, dtype=bool)
    rows, complete = [], True
    step = 0
    for wave, size in enumerate(_wave_sizes(int(k), int(waves))):
        drawn = [r["_item"] for r in rows]
        if wave > 0 and any(j not in answered for j in drawn):
            complete = False
            break
        pred = _predictions(fit, {j: answered[j] for j in drawn if j in answered})
        sd = np.sqrt(np.clip(pred * (1 - pred), 1e-6, None))
        rng = np.random.default_rng([int(seed), wave])
        for _ in range(size):
            rem = np.flatnonzero(remaining)
            q = (1 - floor) * sd[rem] / sd[rem].sum() + floor / rem.size
            q = q / q.sum()
            pick = int(rng.choice(rem.size, p=q))
            item = int(rem[pick])
            rows.append(
                {
                    "step": step,
                    "wave": wave,
                    "case": ids[item],
                    "probability": float(q[pick]),
                    "prediction": float(pred[item]),
                    "remaining_prediction": float(pred[rem].sum()),
                    # the model's expected variance of this draw's z_t (its residuals' squares
                    # over their probabilities): fixed before the draw, so it may weight it
                    "predicted_variance": float(np.sum(sd[rem] ** 2 / q)),
                    "_item": item,
                }
            )
            remaining[item] = False
            step += 1
    draws = pd.DataFrame(rows, columns=[*DRAW_COLUMNS, "_item"]).drop(columns="_item")
    return ActivePlan(
        k=int(k),
        waves=int(waves),
        floor=float(floor),
        seed=int(seed),
        n_items=n,
        draws=draws,
        complete=complete,
        method=(
            f"sequential draws without replacement in {waves} wave(s), probability proportional "
            f"to the predicted SD of the score ({fit.model.upper()} posterior), {floor:.0%} uniform"
        ),
    )


def active_estimate(
    plan: ActivePlan,
    scores: Mapping,
    *,
    method: str = "active",
    confidence: float = 0.95,
) -> dict:
    """The full-benchmark estimate from a plan's draws and the system's score on each drawn case
    (``scores``: case -> score in [0, 1]); see the module docstring for the estimator.

    Returns a row: ``value``, ``se``, ``ci_low``, ``ci_high``, ``n_items``, ``method``.
    """
    if method not in ("active", "ht"):
        raise StatsError(f"method must be 'active' or 'ht' for an active plan, got {method!r}")
    draws = plan.draws
    missing = [c for c in draws["case"] if c not in scores]
    if missing:
        raise StatsError(
            f"{len(missing)} drawn case(s) have no score (e.g. {missing[0]!r}): run every drawn "
            "case (leaving the hard ones out biases the estimate)"
        )
    y = np.array([scores[c] for c in draws["case"]], dtype=float)
    q = draws["probability"].to_numpy()
    before = np.concatenate([[0.0], np.cumsum(y)[:-1]])
    if method == "active":
        z = before + draws["remaining_prediction"].to_numpy() + (y - draws["prediction"]) / q
        how = "model-assisted active estimate (Des Raj's ordered estimator with predictions)"
    else:
        z = before + y / q
        how = "Horvitz-Thompson active estimate (Des Raj's ordered estimator)"
    # adaptively weighted (Hadad, Hirshberg, Zhan, Wager & Athey 2021): each z_t weighted by
    # 1 / sqrt of its variance predicted before its draw, so the early draws (made before the
    # ability was known) do not swamp the later ones; the weighted mean stays centred on the
    # total and its studentised form asymptotically normal
    h = 1 / np.sqrt(np.clip(draws["predicted_variance"].to_numpy(), 1e-12, None))
    n, total = z.size, float(np.sum(h * z) / h.sum())
    value = total / plan.n_items
    se = float(np.sqrt(np.sum(h**2 * (z - total) ** 2) * n / (n - 1)) / h.sum() / plan.n_items)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * se
    low, high = value - half, value + half
    clipped = low < 0 or high > 1 or not 0 <= value <= 1
    note = ""
    if se == 0:
        low = high = np.nan
        note = "; no spread among the draws: no interval"
    elif clipped:
        value, low, high = float(np.clip(value, 0, 1)), max(low, 0.0), min(high, 1.0)
        note = ", clipped to [0, 1]"
    return {
        "value": value,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "n_items": n,
        "method": f"{how} over {n} draws of {plan.n_items} cases; t interval on {n - 1} df{note}",
    }
