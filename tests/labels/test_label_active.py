"""label_sample(strategy="active"): each case's probability in proportion to the judge's predicted
SD of the human score, a floor share uniform, recorded so corrected_mean's weights keep the
correction unbiased (seeded small version of benchmarks/calibration.py's active_labels)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jevalkit.errors import UsageError
from jevalkit.labels import corrected_mean, label_sample
from jevalkit.stats import capped_inclusion, ppi_interval


def judged(rng, n_items):
    p = rng.beta(0.3, 0.3, n_items)
    frame = pd.DataFrame(
        {
            "system": "m",
            "case_id": [f"c{i:04d}" for i in range(n_items)],
            "score": p,
            "probs": [[1 - v, v] for v in p],
        }
    )
    return frame, p


def test_probabilities_follow_the_predicted_sd_with_a_uniform_floor():
    frame, p = judged(np.random.default_rng(0), 300)
    plan = label_sample(frame, 40, strategy="active", floor=0.25, seed=1)
    sd = np.sqrt(p * (1 - p))
    want = capped_inclusion(0.75 * sd / sd.sum() + 0.25 / 300, 40)
    got = plan.set_index("case_id")["sampling_probability"]
    index = got.index.str[1:].astype(int)
    np.testing.assert_allclose(got.to_numpy(), want[index], rtol=1e-12)
    assert want.sum() == pytest.approx(40) and want.min() >= 0.25 * 40 / 300 - 1e-12
    # the uncertain cases are the likelier: the plan over-represents them
    assert sd[index].mean() > sd.mean()


def test_a_judge_sure_of_every_case_gets_uniform_probabilities():
    frame = pd.DataFrame(
        {
            "system": "m",
            "case_id": [f"c{i}" for i in range(50)],
            "score": [1.0, 0.0] * 25,
            "probs": [[0.0, 1.0], [1.0, 0.0]] * 25,
        }
    )
    plan = label_sample(frame, 10, strategy="active", seed=0)
    np.testing.assert_allclose(plan["sampling_probability"], 10 / 50)


def test_corrected_mean_on_active_plans_covers_and_has_no_bias():
    rng = np.random.default_rng(7)
    hits, errors = [], []
    for _ in range(40):
        frame, p = judged(rng, 400)
        truth = rng.random(400) < p  # the judge's probabilities are calibrated
        plan = label_sample(frame, 60, strategy="active", seed=int(rng.integers(1 << 30)))
        index = plan["case_id"].str[1:].astype(int).to_numpy()
        labels = plan.assign(level=np.where(truth[index], "pass", "fail"))
        row = corrected_mean(frame, labels, levels=["fail", "pass"]).set_index("estimator")
        ppi = row.loc["PPI"]
        hits.append(ppi["ci_low"] <= truth.mean() <= ppi["ci_high"])
        errors.append(ppi["value"] - truth.mean())
    assert np.mean(hits) >= 0.85
    assert abs(np.mean(errors)) < 3 * np.std(errors) / np.sqrt(len(errors))


def test_floor_out_of_range_is_refused():
    frame, _ = judged(np.random.default_rng(0), 20)
    with pytest.raises(UsageError, match="floor must be in"):
        label_sample(frame, 5, strategy="active", floor=0)


def test_active_labels_of_a_calibrated_sharp_judge_give_a_narrower_interval_that_covers():
    # most items near-certain: the active plan spends its labels on the uncertain ones, so its
    # error is below random labels', and its interval must follow. With the small-sample
    # floor's pseudo-item as heavy as the heaviest label (the near-certain items' weights are
    # ~5 times the mean) the active interval was ~1.6 times random labels' and ~1.9 times
    # 1.96 x its own error, covering 100%. The estimand is the population's mean, 0.5 here
    rng = np.random.default_rng(11)
    widths, errors, hits = {}, {}, {}
    for _ in range(50):
        frame, p = judged(rng, 1000)
        truth = rng.random(1000) < p  # the judge's probabilities are calibrated
        score = frame["score"].to_numpy()
        for strategy in ("random", "active"):
            plan = label_sample(frame, 100, strategy=strategy, seed=int(rng.integers(1 << 30)))
            index = plan["case_id"].str[1:].astype(int).to_numpy()
            labelled = np.zeros(score.size, dtype=bool)
            labelled[index] = True
            weights = 1 / plan["sampling_probability"].to_numpy()
            r = ppi_interval(
                truth[index] * 1.0, score[index], score[~labelled], 1.0, weights=weights
            )
            half = (r.ci_high - r.ci_low) / 2
            widths.setdefault(strategy, []).append(half)
            errors.setdefault(strategy, []).append(r.estimate - 0.5)
            hits.setdefault(strategy, []).append(r.ci_low <= 0.5 <= r.ci_high)
    active, random = np.mean(widths["active"]), np.mean(widths["random"])
    rms = {k: np.sqrt(np.mean(np.square(v))) for k, v in errors.items()}
    # (benchmarks/bench_ppi.py --only weighted: the active error is ~0.89 times random's;
    # 50 draws cannot tell that apart, the widths they can)
    assert active < 0.97 * random
    assert 0.8 < active / (1.96 * rms["active"]) < 1.4  # the width follows the error
    assert np.mean(hits["active"]) >= 0.85  # nominal 0.95; 50 draws
