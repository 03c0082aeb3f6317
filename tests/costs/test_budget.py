"""Budgets hold per HTTP attempt (issue 24.1): a counting loopback server sees exactly what the
budget allowed, retries included, and an endpoint that bills beyond ``max_tokens`` stops the run
at once with a non-zero exit."""

from __future__ import annotations

import asyncio

import pytest

import jevalkit
from jevalkit.cli import main
from jevalkit.costs import Budget, BudgetMeter, price_for, prompt_token_bound
from jevalkit.errors import BudgetReached
from jevalkit.results import read_results

PRICE = {"price_in": 100.0, "price_out": 200.0}


def run(server, out, **options):
    settings = dict(
        base_url=server.base_url,
        out=out,
        temperature=1.0,
        seed=1,
        max_tokens=400,
        progress=False,
        cache=False,
        concurrency=1,
    )
    return jevalkit.run("schema-ten-records", "m", **{**settings, **options})


def held_per_attempt(server) -> float:
    body = {k: v for k, v in server.requests[0]["body"].items() if k != "model"}
    price = price_for("m", **PRICE)
    return price.cost(prompt_token_bound(body), body["max_tokens"])


def test_retries_count_as_requests_against_the_request_budget(openai_server, tmp_path):
    openai_server.retry_after = "0"
    openai_server.faults["m"] = ["429"] * 30
    result = run(openai_server, tmp_path / "r.jsonl", repeats=10, max_retries=3, budget_requests=10)
    assert len(openai_server.requests) == 10  # was 30: each job's 4 attempts counted as 1
    assert "10 requests sent" in result.stopped
    assert result.budget_overrun is False


def test_every_attempt_reserves_dollars_and_unanswered_ones_keep_their_reservation(
    openai_server, tmp_path
):
    openai_server.faults["m"] = ["overbill"]  # learn one request's reservation, off budget
    run(openai_server, tmp_path / "probe.jsonl", **PRICE)
    held = held_per_attempt(openai_server)
    openai_server.requests.clear()
    openai_server.retry_after = "0"
    openai_server.faults["m"] = ["429"] * 30  # an error status reports no usage: booked whole
    result = run(
        openai_server,
        tmp_path / "r.jsonl",
        repeats=5,
        max_retries=3,
        budget_usd=2.5 * held,
        **PRICE,
    )
    assert len(openai_server.requests) == 2
    assert result.stopped.startswith("stopped at the budget")
    assert len(result.rows) == 0  # no job finished: no row, re-running resumes


def test_an_answer_billed_beyond_max_tokens_stops_the_run_at_once(openai_server, tmp_path):
    openai_server.faults["m"] = ["overbill"]
    result = run(openai_server, tmp_path / "r.jsonl", repeats=20, budget_usd=1.0, **PRICE)
    assert len(openai_server.requests) == 1
    assert result.budget_overrun is True
    assert result.stopped.startswith("budget overrun: an answer cost $200.")
    assert "1000000 completion tokens reported" in result.stopped
    assert len(read_results(tmp_path / "r.jsonl")) == 1  # the answer paid for is kept


def test_the_cli_exits_1_and_says_so_when_a_budget_was_overrun(openai_server, tmp_path, capsys):
    openai_server.faults["m"] = ["overbill"]
    argv = ["run", "schema-ten-records", "--model", "m", "--base-url", openai_server.base_url]
    argv += ["--out", str(tmp_path / "r.jsonl"), "--repeats", "5", "--max-tokens", "400"]
    argv += ["--budget-usd", "1", "--price-in", "100", "--price-out", "200", "--no-cache"]
    argv += ["--concurrency", "1"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "budget overrun" in out and "$200.0" in out


def test_the_ledger_refuses_once_reached_and_books_unknown_costs_whole():
    budget = Budget(usd=1.0, requests=3)

    async def go():
        await budget.reserve(0.4)
        await budget.settle(0.4, float("nan"))
        await budget.reserve(0.4)
        await budget.settle(0.4, 0.1)
        with pytest.raises(BudgetReached, match=r"2 requests sent, \$0.5000 spent"):
            await budget.reserve(0.6)
        with pytest.raises(BudgetReached):
            await budget.reserve(0.0)  # once reached, nothing more starts

    asyncio.run(go())
    assert budget.sent == 2 and budget.overrun is None


def test_the_meter_needs_max_tokens_to_bound_a_dollar_budget():
    meter = BudgetMeter(Budget(usd=1.0), price_for("m", **PRICE))
    with pytest.raises(jevalkit.errors.UsageError, match="needs a price and max_tokens"):
        asyncio.run(meter.reserve({"messages": []}))


@pytest.mark.parametrize("evaluator", ["faithfulness", "pairwise"])
def test_a_judge_run_stopped_before_its_first_row_says_so(
    openai_server, tmp_path, capsys, evaluator
):
    argv = ["judge", evaluator, "--data", evaluator, "--model", "m"]
    argv += ["--base-url", openai_server.base_url, "--out", str(tmp_path / "j.jsonl")]
    assert main([*argv, "--budget-requests", "0", "--no-cache"]) == 0  # was a KeyError
    assert "no judgment made: stopped at the budget: 0 requests" in capsys.readouterr().out
    assert openai_server.requests == []
