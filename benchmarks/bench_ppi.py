"""Judge correction by human labels: do the corrected intervals cover, and does the naive one?

2,000 simulated data sets: 2,000 judged items whose true pass rate is 0.55, a biased judge
(passes 20% of the failures, misses 5% of the passes: it overstates the pass rate by about 0.06)
and 100 human labels on a random slice. For each estimator of ``labels.corrected_mean``:
coverage of the true pass rate by its 95% interval (target: at least 0.95 for the corrected
ones), mean half-width, and labels-equivalent (how many labels alone give the same width). The
same with labels drawn by ``label_sample(strategy="uncertain")`` and weighted back; and
ppi-python's plain normal intervals on the same data (why jevalkit adds a small-sample floor).
Also the time
of one ``corrected_mean`` call against one direct ``ppi_py.ppi_mean_ci`` call (the baseline).

Run: ``.venv/bin/python benchmarks/bench_ppi.py``
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import ppi_py

from jevalkit.labels import corrected_mean, label_sample

DATASETS, ITEMS, LABELS, TRUE_RATE = 2000, 2000, 100, 0.55


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


def main() -> None:
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
    for _ in range(50):
        ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
    base = (time.perf_counter() - t0) / 50
    t0 = time.perf_counter()
    for _ in range(50):
        corrected_mean(df, labels, levels=["fail", "pass"])
    ours = (time.perf_counter() - t0) / 50
    print(
        f"  one corrected_mean call (all estimators, from a results frame): {ours * 1e3:.1f} ms, "
        f"{ours / base:.1f}x one ppi_py.ppi_mean_ci call on ready arrays ({base * 1e3:.2f} ms)"
    )


if __name__ == "__main__":
    main()
