"""A cascade run lazily as a design (labels.CascadeDesign through runner.judge) against the
loopback server: two judge models with different logprobs; which cases each is sent, error
rows, budgets, names of judges."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from killed_run import kill_after

from jevalkit.errors import JudgeError, UsageError
from jevalkit.judges import JudgeConfig, load_judge_prompt
from jevalkit.labels import (
    CascadeDecisions,
    CascadeDesign,
    CascadeStage,
    item_verdicts,
    judge_names,
)
from jevalkit.runner import judge

TAG = re.compile(r"(small|big)=([0-9.]+)/(Yes|No|Hmm)")


def logprobs_for(body):
    text = json.dumps(body.get("messages"))
    p, word = {m: (float(p), w) for m, p, w in TAG.findall(text)}[body["model"]]
    other = {"Yes": "No", "No": "Yes", "Hmm": "Well"}[word]  # Hmm/Well: no level token
    alts = [{"token": word, "logprob": math.log(p)}, {"token": other, "logprob": math.log(1 - p)}]
    return {"content": [{"token": word, "logprob": alts[0]["logprob"], "top_logprobs": alts}]}


def cases():
    # c0-c3: small sure; c4-c5: small unsure, big sure; c6: small answers no level, big sure;
    # c7: both unsure
    spec = [("0.98/No", "0.9/No")] * 4 + [("0.6/No", "0.97/Yes")] * 2
    spec += [("0.9/Hmm", "0.97/No"), ("0.6/Yes", "0.6/Yes")]
    return [
        {"id": f"c{i}", "output": f"answer c{i}: small={s} big={b}"}
        for i, (s, b) in enumerate(spec)
    ]


def stages(base_url):
    config = JudgeConfig()
    return [
        CascadeStage(name="small", model="small", threshold=0.95, config=config, base_url=base_url),
        CascadeStage(name="big", model="big", threshold=0.95, config=config, base_url=base_url),
    ]


def judge_cascade(evaluator, data, stages, **options):
    """The cascade of ``stages`` run lazily on ``data``: the run's result and its decisions."""
    prompt = load_judge_prompt(evaluator)
    design = CascadeDesign(stages=stages, levels=prompt.labels, evaluator=prompt.name)
    result = judge(evaluator, data, design=design, **options)
    assert isinstance(result.design, CascadeDecisions)
    return result, result.design


def sent(server, model):
    found = re.findall(r"answer (c\d)", json.dumps([r["body"] for r in server.requests
                                                    if r["body"]["model"] == model]))  # fmt: skip
    return sorted(set(found))


def test_each_judge_is_sent_what_the_judges_before_it_were_not_sure_of(openai_server, tmp_path):
    openai_server.logprobs = logprobs_for
    result, run = judge_cascade(
        "security", cases(), stages(openai_server.base_url), out=tmp_path / "r.jsonl",
        progress=False,
    )  # fmt: skip
    assert sent(openai_server, "small") == [f"c{i}" for i in range(8)]
    assert sent(openai_server, "big") == ["c4", "c5", "c6", "c7"]  # c6: small's error row
    decided = run.decisions.set_index("case_id")["decided_by"].to_dict()
    assert decided == {**{f"c{i}": "small" for i in range(4)}, "c4": "big", "c5": "big",
                       "c6": "big", "c7": "person"}  # fmt: skip
    assert run.decisions.set_index("case_id").loc["c4", "verdict"] == "unsafe"
    assert run.n_people == 1 and result.stopped is None
    assert run.table()["n_sent"].tolist() == [8, 4] and run.table()["n_errors"].tolist() == [1, 0]
    big = result.rows[result.rows["model"] == "big"]
    assert sorted(big["case_id"]) == ["c4", "c5", "c6", "c7"]
    assert (tmp_path / "r__small.jsonl").is_file() and (tmp_path / "r__big.jsonl").is_file()
    # every row says which design drew it, and at which stage
    assert {d["name"] for d in result.rows["design"]} == {result.rows["design"][0]["name"]}
    assert sorted({d["stage"] for d in big["design"]}) == [1]
    # run again: nothing is sent, the same decisions
    sent_before = len(openai_server.requests)
    _, again = judge_cascade(
        "security", cases(), stages(openai_server.base_url), out=tmp_path / "r.jsonl",
        progress=False,
    )  # fmt: skip
    assert len(openai_server.requests) == sent_before
    pd.testing.assert_frame_equal(again.decisions, run.decisions)


def test_a_judge_certified_for_nothing_is_not_asked(openai_server, tmp_path):
    """A threshold of inf (the calibration certified nothing): the judge would decide nothing,
    so it is sent nothing and its items go straight on."""
    openai_server.logprobs = logprobs_for
    small, big = stages(openai_server.base_url)
    lazy = [CascadeStage(name="small", model="small", threshold=math.inf, config=small.config,
                         base_url=small.base_url), big]  # fmt: skip
    _, run = judge_cascade("security", cases(), lazy, out=tmp_path / "r.jsonl", progress=False)
    assert sent(openai_server, "small") == []
    assert sent(openai_server, "big") == [f"c{i}" for i in range(8)]
    decided = run.decisions["decided_by"]
    assert not decided.str.startswith("pending").any() and set(decided) == {"big", "person"}


def test_a_budget_is_spent_across_the_judges(openai_server, tmp_path):
    openai_server.logprobs = logprobs_for
    result, run = judge_cascade(
        "security", cases(), stages(openai_server.base_url), out=tmp_path / "r.jsonl",
        progress=False, budget_requests=8, concurrency=1,
    )  # fmt: skip
    assert sent(openai_server, "big") == []  # the small judge spent all 8 requests
    assert result.stopped and run.decisions["decided_by"].str.startswith("pending: big").sum() == 4


def test_what_a_cascade_cannot_run_is_refused(openai_server, tmp_path):
    good = stages(openai_server.base_url)
    with pytest.raises(UsageError, match="do not give repeats"):
        judge_cascade("security", cases(), good, repeats=3, out=tmp_path / "r.jsonl")
    with pytest.raises(UsageError, match="pairwise judge"):
        judge_cascade("pairwise", cases(), good, out=tmp_path / "r.jsonl")
    with pytest.raises(UsageError, match="names each judge once"):
        judge_cascade("security", cases(), [good[0], good[0]], out=tmp_path / "r.jsonl")
    blind = CascadeStage(name="x", model="x", threshold=0.9)
    with pytest.raises(UsageError, match="cannot be run"):
        judge_cascade("security", cases(), [blind], out=tmp_path / "r.jsonl")
    assert openai_server.requests == []


def test_one_model_asked_two_ways_is_two_judges():
    rows = pd.DataFrame(
        {
            "model": ["local"] * 2 + ["gpt"],
            "params_hash": ["a", "b", "c"],
            "parameters": [{"prompt_style": "chat", "method": "logprobs"},
                           {"prompt_style": "completion", "method": "logprobs"}, {}],
        }
    )  # fmt: skip
    assert judge_names(rows).tolist() == [
        "local[prompt_style=chat]",
        "local[prompt_style=completion]",
        "gpt",
    ]
    assert judge_names(rows.iloc[[1, 2]]).tolist() == ["local", "gpt"]


def test_item_verdicts_refuses_a_repeat_twice_and_is_order_invariant():
    rows = pd.DataFrame(
        {
            "model": "j",
            "label": ["a", "a", "b", "b"],
            "case_id": ["1", "1", "1", "2"],
            "repeat": [0, 1, 0, 0],
            "probs": [[0.9, 0.1], [0.5, 0.5], [0.2, 0.8], [0.5, 0.5]],
        }
    )
    table = item_verdicts(rows, ["no", "yes"])
    assert table[["system", "case_id", "verdict", "confidence"]].values.tolist() == [
        ["a", "1", "no", 0.7],
        ["b", "1", "yes", 0.8],
        ["b", "2", "no", 0.5],  # a tie goes to the lower level
    ]
    pd.testing.assert_frame_equal(item_verdicts(rows.iloc[::-1], ["no", "yes"]), table)
    with pytest.raises(JudgeError, match="repeat 0 more than once"):
        item_verdicts(pd.concat([rows, rows.iloc[[0]]]), ["no", "yes"])


def test_rows_without_cost_are_priced_from_their_tokens_by_the_price_table():
    """Imported judge rows have tokens but no cost_usd: the price table prices them (gpt-4o-mini
    at $0.15 / $0.60 per million tokens in data/prices.yaml); an unlisted model stays NaN."""
    from jevalkit.costs import price_for

    rows = pd.DataFrame(
        {
            "model": ["gpt-4o-mini", "gpt-4o-mini", "unlisted/judge"],
            "label": "s",
            "case_id": ["1", "2", "1"],
            "repeat": 0,
            "probs": [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]],
            "prompt_tokens": [1000, 2000, 1000],
            "completion_tokens": [1, 1, 1],
            "cost_usd": [np.nan, 0.5, np.nan],
        }
    )
    price = price_for("gpt-4o-mini")
    mini = item_verdicts(rows.iloc[:2], ["no", "yes"])
    assert mini["cost_usd"].tolist() == pytest.approx([price.cost(1000, 1), 0.5])
    assert np.isnan(item_verdicts(rows.iloc[[2]], ["no", "yes"])["cost_usd"].iloc[0])


KILLED = """
import json, sys
from jevalkit.judges import JudgeConfig
from jevalkit.labels import CascadeDesign, CascadeStage
from jevalkit.runner import judge
stages = [CascadeStage(name=n, model=n, threshold=0.95, config=JudgeConfig()) for n in ("small", "big")]
design = CascadeDesign(stages=stages, levels=("safe", "unsafe"), evaluator="security@1")
judge("security", json.loads(sys.argv[3]), design=design, base_url=sys.argv[1],
      out=sys.argv[2].replace("__small", ""), progress=False, cache=False, concurrency=1)
"""


def test_a_killed_cascade_resumes_where_it_stopped(openai_server, tmp_path):
    """kill -9 while the first judge is half done: the same run again sends the first judge only
    the cases it had not answered, then the second judge its open cases, once each."""
    openai_server.logprobs = logprobs_for
    small = tmp_path / "r__small.jsonl"
    kill_after(openai_server, lambda body: "No", 5, KILLED, small, json.dumps(cases()))
    assert small.read_bytes().count(b"\n") == 5
    before = len(openai_server.requests)
    result, run = judge_cascade(
        "security", cases(), stages(None), out=tmp_path / "r.jsonl", progress=False,
        base_url=openai_server.base_url, cache=False,
    )  # fmt: skip
    asked = [r["body"]["model"] for r in openai_server.requests[before:]]
    assert asked.count("small") == 3 and asked.count("big") == 4  # the rest, then the open cases
    assert run.n_people == 1 and result.stopped is None
