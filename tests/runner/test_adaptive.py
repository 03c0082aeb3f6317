"""Adaptive repeats, budgets, prices and the dry run, against the loopback test server whose
answers pass with a different probability for each case."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random

import numpy as np
import pandas as pd
import pytest

import jevalkit
from jevalkit.costs import price_for
from jevalkit.errors import UsageError
from jevalkit.metrics import cost
from jevalkit.results import read_results
from jevalkit.runner import plan
from jevalkit.stats import AdaptiveRepeats, confidence_sequence

GOOD = [{"id": i, "name": f"User {i}", "active": i % 2 == 0} for i in range(1, 11)]
BAD = [*GOOD[:9], {"id": "10", "name": "User 10", "active": True}]
PASS_PROBABILITY = [0.0, 0.0, 1.0, 1.0, 0.5, 0.7]


def cases() -> list[jevalkit.Probe]:
    """One case per pass probability: the probe under another id, told apart by top_p."""
    base = jevalkit.load_probe("schema-ten-records")
    return [
        dataclasses.replace(
            base, id=f"case-{i}", parameters={**base.parameters, "top_p": 0.5 + i / 100}
        )
        for i in range(len(PASS_PROBABILITY))
    ]


def reply(body: dict) -> str:
    case = round((body.get("top_p", 0.54) - 0.5) * 100)  # the plain probe: case 4 (p = 0.5)
    digest = hashlib.sha256(json.dumps([body.get("seed"), case]).encode()).digest()
    passes = random.Random(digest).random() < PASS_PROBABILITY[case]
    return json.dumps(GOOD if passes else BAD)


@pytest.fixture
def server(openai_server):
    openai_server.reply = reply
    return openai_server


def adaptive(server, out, **options):
    return jevalkit.run(
        cases(),
        "m",
        base_url=server.base_url,
        out=out,
        temperature=1.0,
        seed=1,
        max_tokens=400,
        progress=False,
        cache=False,
        **options,
    )


def test_adaptive_run_stops_at_the_target_and_spends_repeats_where_answers_vary(server, tmp_path):
    plan_ = AdaptiveRepeats(target_half_width=0.1, max_repeats=200)
    result = adaptive(server, tmp_path / "r.jsonl", design=plan_)
    df, summary = result.rows, result.design.table().iloc[0]
    assert summary["stop_reason"] == "target met"
    assert summary["half_width"] <= 0.1
    assert summary["ci_low"] <= np.mean(PASS_PROBABILITY) <= summary["ci_high"]
    per_case = df.groupby("probe").size()
    steady = per_case[["case-0", "case-1", "case-2", "case-3"]]
    varying = per_case[["case-4", "case-5"]]
    assert steady.max() < varying.min(), per_case.to_dict()  # settled cases were skipped
    for _, rows in df.groupby("probe"):  # repeat indices run 0..k-1 with no gap
        assert sorted(rows["repeat"]) == list(range(len(rows)))
    assert df["round"].max() == summary["rounds"] - 1 and (df["round"] == 0).sum() == 12
    assert len(server.requests) == len(df)
    # resuming replays the same draws: nothing new is sent and the answer is the same
    again = adaptive(server, tmp_path / "r.jsonl", design=plan_)
    assert len(server.requests) == len(df)
    pd.testing.assert_frame_equal(again.design.table(), result.design.table())


def test_the_interval_matches_the_confidence_sequence_of_the_rows_when_nothing_is_skipped(
    server, tmp_path
):
    plan_ = AdaptiveRepeats(target_half_width=0.2, max_repeats=60, settled_probability=1.0)
    result = adaptive(server, tmp_path / "r.jsonl", design=plan_)
    wide = result.rows.pivot(index="repeat", columns="probe", values="passed").astype(float)
    expected = confidence_sequence(wide.to_numpy())
    got = result.design.table().iloc[0]
    # the run tunes its bets to the target; the plain sequence uses the anytime schedule, so
    # the estimate agrees exactly and both intervals hold the same estimate
    assert got["value"] == pytest.approx(float(expected["estimate"].iloc[0]))
    assert got["ci_low"] <= got["value"] <= got["ci_high"]


def test_a_target_no_run_could_meet_is_refused_naming_the_repeats_it_needs(server, tmp_path):
    with pytest.raises(
        UsageError, match=r"cannot be met within max_repeats=20 over 6 case\(s\).*at least \d+"
    ):
        adaptive(server, tmp_path / "r.jsonl", design=AdaptiveRepeats(target_half_width=0.01))
    assert server.requests == []
    with pytest.raises(UsageError, match="min_repeats"):
        AdaptiveRepeats(min_repeats=5, max_repeats=3)
    with pytest.raises(UsageError, match="target_half_width"):
        AdaptiveRepeats(target_half_width=-0.1)


def test_a_request_budget_stops_cleanly_and_the_run_resumes(server, tmp_path):
    out = tmp_path / "r.jsonl"
    plan_ = AdaptiveRepeats(target_half_width=0.1, max_repeats=200)
    stopped = adaptive(server, out, design=plan_, budget_requests=15)
    assert stopped.design.table().iloc[0]["stop_reason"] == "budget"
    assert "15 requests" in stopped.stopped
    assert len(server.requests) == 15 and len(read_results(out)) == 15
    finished = adaptive(server, out, design=plan_)
    whole = adaptive(server, tmp_path / "fresh.jsonl", design=plan_)
    pd.testing.assert_frame_equal(finished.design.table(), whole.design.table())
    rows = read_results(out)
    assert not rows.duplicated(["probe", "repeat"]).any()


def test_a_dollar_budget_is_never_exceeded(server, tmp_path):
    out = tmp_path / "r.jsonl"
    result = jevalkit.run(
        "schema-ten-records",
        "m",
        base_url=server.base_url,
        out=out,
        repeats=40,
        temperature=1.0,
        seed=1,
        max_tokens=400,
        progress=False,
        cache=False,
        concurrency=4,
        price_in=100.0,
        price_out=200.0,
        budget_usd=0.2,
    )
    spent, df = read_results(out)["cost_usd"].sum(), result.rows
    assert 0 < len(df) < 40 and spent <= 0.2
    assert result.stopped.startswith("stopped at the budget: $0.2")
    # each request costs (42 x 100 + completion x 200) / 1e6 dollars, as the server reports
    row = df.iloc[0]
    assert row["cost_usd"] == pytest.approx((42 * 100 + row["completion_tokens"] * 200) / 1e6)


def test_costs_come_from_the_price_table_and_unknown_prices_stay_nan(server, tmp_path):
    known = jevalkit.run(
        "schema-ten-records",
        "openai/gpt-4o-mini",
        base_url=server.base_url,
        out=tmp_path / "a.jsonl",
        repeats=3,
        temperature=1.0,
        seed=1,
        progress=False,
        cache=False,
    ).rows
    price = price_for("openai/gpt-4o-mini")
    expected = (
        known["prompt_tokens"] * price.input + known["completion_tokens"] * price.output
    ) / 1e6
    assert known["cost_usd"].astype(float).tolist() == pytest.approx(
        expected.astype(float).tolist()
    )
    unknown = jevalkit.run(
        "schema-ten-records",
        "some/unlisted-model",
        base_url=server.base_url,
        out=tmp_path / "b.jsonl",
        repeats=2,
        progress=False,
    ).rows
    assert unknown["cost_usd"].isna().all()
    with pytest.raises(UsageError, match="--budget-usd needs a price for 'some/unlisted-model'"):
        jevalkit.run(
            "schema-ten-records",
            "some/unlisted-model",
            base_url=server.base_url,
            out=tmp_path / "c.jsonl",
            budget_usd=1.0,
            progress=False,
        )
    with pytest.raises(UsageError, match="--budget-requests must be a whole number"):
        jevalkit.run("schema-ten-records", "m", base_url=server.base_url, budget_requests=-1)


def test_cost_metric_sums_priced_rows_and_sets_cost_against_the_metric(server, tmp_path):
    for model in ("openai/gpt-4o-mini", "openai/gpt-4o"):
        jevalkit.run(
            "schema-ten-records",
            model,
            base_url=server.base_url,
            out=tmp_path / "r.jsonl",
            repeats=4,
            temperature=1.0,
            seed=1,
            progress=False,
        )
    rows = read_results(tmp_path / "r.jsonl")
    table = cost(rows, by="system").set_index("system")
    for model, group in rows.groupby("system"):
        spent = group["cost_usd"].astype(float).sum()
        rate = group["passed"].astype(float).mean()
        assert table.loc[model, "cost_usd"] == pytest.approx(spent)
        assert table.loc[model, "n_priced"] == 4
        assert table.loc[model, "value"] == pytest.approx(rate)
        assert table.loc[model, "cost_per_point"] == pytest.approx(spent / (100 * rate))
        assert table.loc[model, "completion_tokens"] == group["completion_tokens"].sum()


def test_the_dry_run_counts_requests_tokens_and_cost_and_sends_nothing(server, tmp_path):
    out = tmp_path / "r.jsonl"
    planned = {"base_url": server.base_url, "repeats": 6, "max_tokens": 300, "out": out}
    before = plan("schema-ten-records", "openai/gpt-4o-mini", **planned)
    first = before.iloc[0]
    assert (first["requests"], first["already_done"], first["completion_tokens_high"]) == (
        6,
        0,
        1800,
    )
    assert first["prompt_tokens_method"].startswith("estimate")
    price = price_for("openai/gpt-4o-mini")
    assert first["cost_high"] == pytest.approx(price.cost(first["prompt_tokens"], 1800))
    assert np.isnan(first["cost_expected"])  # no earlier rows: no expectation, only bounds
    # a free model (the embedded one, or prices of 0) costs 0 whatever the tokens (was NaN)
    free = plan("schema-ten-records", "openai/gpt-4o-mini", **planned, price_in=0, price_out=0)
    assert (free[["cost_low", "cost_expected", "cost_high"]] == 0).all().all()
    assert np.isnan(free["completion_tokens_expected"].iloc[0])
    assert server.requests == []
    jevalkit.run(
        "schema-ten-records",
        "openai/gpt-4o-mini",
        base_url=server.base_url,
        repeats=2,
        temperature=1.0,
        seed=1,
        max_tokens=300,
        out=out,
        progress=False,
    )
    seen = read_results(out)["completion_tokens"].astype(float)
    after = plan(
        "schema-ten-records",
        "openai/gpt-4o-mini",
        base_url=server.base_url,
        repeats=6,
        temperature=1.0,
        seed=1,
        max_tokens=300,
        out=out,
    ).iloc[0]
    assert (after["requests"], after["already_done"]) == (4, 2)
    assert after["completion_tokens_expected"] == pytest.approx(4 * seen.mean())
    assert after["completion_tokens_method"].startswith("observed: mean")
