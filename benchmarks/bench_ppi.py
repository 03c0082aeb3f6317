"""Judge correction by human labels: do the corrected intervals cover, and does the naive one?

Two sections (``--only binary weighted``; both by default).

``binary``: 2,000 simulated data sets: 2,000 judged items whose true pass rate is 0.55, a biased
judge (passes 20% of the failures, misses 5% of the passes: it overstates the pass rate by about
0.06) and 100 human labels on a random slice. For each estimator of ``labels.corrected_mean``:
coverage of the true pass rate by its 95% interval (target: at least 0.95 for the corrected
ones), mean half-width, and labels-equivalent (how many labels alone give the same width). The
same with labels drawn by ``label_sample(strategy="uncertain")`` and weighted back; and
ppi-python's plain normal intervals on the same data (why jevalkit adds a small-sample floor).
Also the time of one ``corrected_mean`` call against one direct ``ppi_py.ppi_mean_ci`` call (the
baseline).

``weighted``: the weighted (Hajek) interval of ``stats.ppi_interval`` under the label plans of
``label_sample``, 100 labels of 1,000 judged items, for a judge that says how sure it is
(``calibration.judge_with_probabilities``: calibrated, overconfident, or inverted, that is wrong
where it is surest), and the tiny-stratum stratified design (16 labels of 300 items, 5% judged
pass; 10 labels, 2% judged pass). Per plan: coverage of the superpopulation mean (the documented
estimand: 0.5 for these judges) with its Monte Carlo Wilson interval, coverage of the mean of the
drawn items' human labels (the finite population, for which the interval is conservative), mean
half-width, the actual error's root mean square against each estimand, and both ratios to the
random plan on the same judge in the same run (the named baseline: half-width, and error). The
arrays are the ones ``corrected_mean`` passes (labels, the judge's scores, 1 / probability).
Measured (``--reps 1000``, PPI; before: the small-sample floor's pseudo-item as heavy as the
heaviest label, no Fieller shift): calibrated judge, active plan 97.2% [96.0, 98.1] covered at
half-width 0.0629, 0.92 x random's, error 0.89 x random's (before: 100%, 0.1087, 1.59 x);
uncertain plan 97.5%, 0.96 x (before 100%, 1.78 x); overconfident judge, active 96.3%, 1.17 x
for error 1.18 x (before 99.4%, 1.53 x); inverted judge, uncertain 94.7%, active 95.1%
(before 94.3%, 95.5%, at half-widths 6-7% wider); tiny stratum of 16 labels 94.0% [92.4, 95.3] (before
94.5%), of 10 labels 98.0% (99.2%); random labels 95-97% throughout (unchanged).

Run: ``.venv/bin/python benchmarks/bench_ppi.py [--only weighted] [--reps 300]`` (``--smoke``: 5 data
sets, 3 draws per weighted row).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import ppi_py
from calibration import judge_with_probabilities
from sizes import parser, size

from jevalkit.labels import corrected_mean, label_sample
from jevalkit.stats import ppi_interval, wilson_ci

DATASETS, ITEMS, LABELS, TRUE_RATE = size(2000, 5), 2000, 100, 0.55
TIMED = size(50, 3)  # calls timed of each


def dataset(rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    truth = rng.random(ITEMS) < TRUE_RATE
    judged = np.where(truth, rng.random(ITEMS) > 0.05, rng.random(ITEMS) < 0.2)
    # a judge that is less sure near its mistakes: its score's distance from 0.5 shrinks there
    confidence = np.where(judged == truth, 0.45, 0.15) * rng.random(ITEMS) + 0.05
    score = np.where(judged, 0.5 + confidence, 0.5 - confidence)
    df = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(ITEMS)], "score": score})
    return df, truth


def labels_for(df: pd.DataFrame, truth: np.ndarray, strategy: str, seed: int) -> pd.DataFrame:
    plan = label_sample(df, LABELS, strategy=strategy, seed=seed)
    index = plan["case_id"].str[1:].astype(int).to_numpy()
    return plan.assign(level=np.where(truth[index], "pass", "fail"))[
        ["system", "case_id", "level", "sampling_probability"]
    ]


def binary_section() -> None:
    rng = np.random.default_rng(0)
    results: dict[str, list] = {}
    start = time.perf_counter()
    for k in range(DATASETS):
        df, truth = dataset(rng)
        for strategy in ("random", "uncertain"):
            labels = labels_for(df, truth, strategy, seed=k)
            table = corrected_mean(
                df.assign(score=(df["score"] >= 0.5).astype(float)) if strategy == "random" else df,
                labels,
                levels=["fail", "pass"],
            )
            if strategy == "random":  # ppi-python's own intervals, without the small-sample floor
                y = (labels["level"] == "pass").to_numpy(float)
                verdicts = (df.set_index("case_id")["score"] >= 0.5).astype(float)
                yhat = verdicts.loc[labels["case_id"]].to_numpy()
                yhat_u = verdicts.drop(index=labels["case_id"]).to_numpy()
                for name, lam in (("PPI", 1.0), ("PPI++", None)):
                    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam)
                    low, high = float(low[0]), float(high[0])
                    results.setdefault(f"random    ppi-python {name} (plain)", []).append(
                        (low <= TRUE_RATE <= high, (high - low) / 2, None)
                    )
            for row in table.itertuples():
                if strategy == "uncertain" and row.estimator == "judge only":
                    continue  # its scores are probabilities here, not verdicts
                key = f"{strategy:9s} {row.estimator}"
                results.setdefault(key, []).append(
                    (row.ci_low <= TRUE_RATE <= row.ci_high, row.half_width, row.effective_labels)
                )
    took = time.perf_counter() - start
    print(
        f"judge correction: {DATASETS} data sets of {ITEMS} judged items, {LABELS} labels, true "
        f"pass rate {TRUE_RATE} ({took:.0f} s)"
    )
    print(f"  {'labels     estimator':34s} coverage  half-width  labels-equivalent")
    for key, values in results.items():
        covered = np.mean([v[0] for v in values])
        width = np.mean([v[1] for v in values])
        effective = np.nanmean([np.nan if v[2] is None else v[2] for v in values])
        corrected = any(name in key for name in ("PPI", "Rogan-Gladen")) and "plain" not in key
        verdict = (
            ("met" if covered >= 0.95 else "MISSED")
            if corrected
            else "(the naive interval)"
            if "judge only" in key
            else "(reference)"
            if "plain" not in key
            else "(without jevalkit's small-sample floor)"
        )
        print(f"  {key:34s} {covered:8.4f}  {width:10.4f}  {effective:17.1f}  {verdict}")
    df, truth = dataset(np.random.default_rng(1))
    labels = labels_for(df, truth, "random", 0)
    y = (labels["level"] == "pass").to_numpy(float)
    judged = df.set_index("case_id")["score"]
    yhat = judged.loc[labels["case_id"]].to_numpy()
    yhat_u = judged.drop(index=labels["case_id"]).to_numpy()
    t0 = time.perf_counter()
    for _ in range(TIMED):
        ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
    base = (time.perf_counter() - t0) / TIMED
    t0 = time.perf_counter()
    for _ in range(TIMED):
        corrected_mean(df, labels, levels=["fail", "pass"])
    ours = (time.perf_counter() - t0) / TIMED
    print(
        f"  one corrected_mean call (all estimators, from a results frame): {ours * 1e3:.1f} ms, "
        f"{ours / base:.1f}x one ppi_py.ppi_mean_ci call on ready arrays ({base * 1e3:.2f} ms)"
    )


def tiny_stratum(rng: np.random.Generator, items: int, share: float) -> tuple:
    """The judge passes ``share`` of the items; the true pass rate is 70% where it passes, 30%
    where it fails (calibration.py's tiny-stratum row)."""
    judge = rng.random(items) < share
    truth = np.where(judge, rng.random(items) < 0.7, rng.random(items) < 0.3)
    frame = pd.DataFrame(
        {"system": "m", "case_id": [f"c{i}" for i in range(items)], "score": judge * 1.0}
    )
    return frame, truth, share * 0.7 + (1 - share) * 0.3


def _plan_rows(make, n: int, plans: tuple[str, ...], reps: int, seed: int) -> dict:
    """Per (plan, estimator): (estimate, ci_low, ci_high, finite truth, superpopulation truth)
    per draw (the weighted interval need not be symmetric); every plan sees the same
    populations."""
    rng = np.random.default_rng(seed)
    out: dict = {}
    for _ in range(reps):
        df, truth, superpopulation = make(rng)
        score = df["score"].to_numpy(float)
        for plan_name in plans:
            plan = label_sample(df, n, strategy=plan_name, seed=int(rng.integers(1 << 30)))
            index = plan["case_id"].str[1:].astype(int).to_numpy()
            labelled = np.zeros(score.size, dtype=bool)
            labelled[index] = True
            weights = 1.0 / plan["sampling_probability"].to_numpy(float)
            for name, lam in (("PPI", 1.0), ("PPI++", None)):
                r = ppi_interval(
                    truth[index].astype(float), score[index], score[~labelled], lam, weights=weights
                )
                out.setdefault((plan_name, name), []).append(
                    (r.estimate, r.ci_low, r.ci_high, truth.mean(), superpopulation)
                )
    return out


def weighted_section(reps: int, seed: int = 2026) -> None:
    print(
        f"weighted (Hajek) PPI intervals: {reps} draws per row; coverage of the superpopulation "
        "mean [Monte Carlo Wilson 95%], of the drawn items' mean (finite), mean half-width, "
        "root mean square error (superpopulation / finite), each plan's half-width and error "
        "over the random plan's on the same judge"
    )
    print(
        f"  {'design':50s} {'est':5s} {'coverage [MC 95%]':>21s} {'finite':>7s} "
        f"{'half-width':>10s} {'error':>15s} {'hw/random':>9s} {'err/random':>10s}"
    )
    designs = [
        (
            f"{kind} judge, 100 of 1,000",
            lambda rng, kind=kind: (*judge_with_probabilities(rng, 1000, kind), 0.5),
            100,
            ("random", "stratified", "uncertain", "active"),
        )
        for kind in ("calibrated", "overconfident", "inverted")
    ] + [
        (
            f"tiny stratum, {n} of 300, {share:.0%} judged pass",
            lambda rng, share=share: tiny_stratum(rng, 300, share),
            n,
            ("random", "stratified"),
        )
        for n, share in ((16, 0.05), (10, 0.02))
    ]
    for label, make, n, plans in designs:
        started = time.perf_counter()
        rows = _plan_rows(make, n, plans, reps, seed)
        for name in ("PPI", "PPI++"):
            base = np.array(rows[("random", name)])
            base_hw = np.mean(base[:, 2] - base[:, 1]) / 2
            base_err = math.sqrt(np.mean((base[:, 0] - base[:, 4]) ** 2))
            for plan_name in plans:
                a = np.array(rows[(plan_name, name)])
                est, low_end, high_end, finite, superpopulation = a.T
                half = (high_end - low_end) / 2
                hits = int(np.sum((low_end <= superpopulation) & (superpopulation <= high_end)))
                low, high = wilson_ci(hits, len(a))
                err = math.sqrt(np.mean((est - superpopulation) ** 2))
                err_finite = math.sqrt(np.mean((est - finite) ** 2))
                cover = f"{hits / len(a):.3f} [{low:.3f}, {high:.3f}]"
                ratios = (
                    f"{half.mean() / base_hw:9.2f} {err / base_err:10.2f}"
                    if plan_name != "random"
                    else f"{'(baseline)':>20s}"
                )
                print(
                    f"  {label + ': ' + plan_name:50s} {name:5s} {cover:>21s} "
                    f"{np.mean((low_end <= finite) & (finite <= high_end)):7.3f} {half.mean():10.4f} "
                    f"{err:7.4f}/{err_finite:.4f} {ratios}"
                )
        print(f"  ({label}: {time.perf_counter() - started:.0f} s)")


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--only", nargs="*", choices=("binary", "weighted"), default=None)
    options.add_argument("--reps", type=int, default=size(300, 3), help="draws per weighted row")
    args = options.parse_args()
    if not args.only or "binary" in args.only:
        binary_section()
    if not args.only or "weighted" in args.only:
        weighted_section(args.reps)


if __name__ == "__main__":
    main()
