"""Completion-style probes (a ``prompt`` a base model continues, sent to ``/completions``): the
format, the request, a run against the loopback server, and the committed runs of the bundled
ones on the embedded model."""

from __future__ import annotations

import re

import pytest
from probe_folders import write_probe

import jevalkit
from jevalkit import metrics
from jevalkit._paths import data_dir
from jevalkit.errors import ProbeError
from jevalkit.probes import probe_card
from jevalkit.results import read_results
from jevalkit.runner import jobs_of

PROMPT = "Q: What is twice 5?\nA: 10\n\nQ: What is twice {{x}}?\nA:"


def completion_probe(root, **changes):
    changes.setdefault("prompt", PROMPT)
    changes.setdefault("parameters", {"max_tokens": 8, "temperature": 0, "stop": ["\n"]})
    return write_probe(root, messages=None, **changes)


def test_a_completion_probe_is_sent_as_a_prompt_to_completions(tmp_path):
    completion_probe(tmp_path)
    probe = jevalkit.load_probe("double", root=tmp_path)
    assert probe.prompt_style == "completion"
    (job, *_) = jobs_of([probe], 1, {})
    assert job.request.path == "/completions"
    assert job.request.body == {
        "prompt": "Q: What is twice 5?\nA: 10\n\nQ: What is twice 1?\nA:",
        "max_tokens": 8,
        "temperature": 0,
        "stop": ["\n"],
    }
    with pytest.raises(ProbeError, match="completion-style: it has a `prompt`"):
        probe.chat_messages(probe.cases[0])
    assert "## Prompt (completion-style" in probe_card(probe)


def test_a_run_scores_the_continuation(openai_server, tmp_path):
    completion_probe(tmp_path / "probes")
    probe = jevalkit.load_probe("double", root=tmp_path / "probes")

    def continuation(body):  # a base model's answer starts with a space; odd cases are wrong
        (n,) = re.findall(r"twice (\d+)\?\nA:$", body["prompt"])
        return f" {2 * int(n) + int(n) % 2}"

    openai_server.reply = continuation
    df = jevalkit.run(
        probe,
        "m",
        base_url=openai_server.base_url,
        cases="1-4",
        out=tmp_path / "r.jsonl",
        progress=False,
    ).rows
    assert {r["path"] for r in openai_server.requests} == {"/v1/completions"}
    assert all("messages" not in r["body"] for r in openai_server.requests)
    assert df.sort_values("case_id")["passed"].tolist() == [False, True, False, True]


CHAT_VARIANT = [{"id": "chatty", "messages": [{"role": "user", "content": "{{x}}"}]}]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"prompt": PROMPT}, "has both of `messages` and `prompt`"),
        ({"messages": None}, "has neither of `messages` and `prompt`"),
        (
            {"prompt": PROMPT, "messages": None, "variants": CHAT_VARIANT},
            r"variants\[chatty\]: the probe gives `prompt`, so each variant gives `prompt`",
        ),
    ],
)
def test_messages_or_prompt_refused_in_one_line(tmp_path, changes, message):
    write_probe(tmp_path, publish=False, **changes)
    with pytest.raises(ProbeError, match=message) as err:
        jevalkit.load_probe("double", root=tmp_path)
    assert "\n" not in str(err.value) and "v1.yaml" in str(err.value)


def test_a_completion_variant_is_filled_and_its_placeholders_checked(tmp_path):
    completion_probe(tmp_path, variants=[{"id": "terse", "prompt": "twice {{x}} ="}])
    probe = jevalkit.load_probe("double", root=tmp_path)
    assert probe.request_input(probe.cases[2], "terse") == {"prompt": "twice 3 ="}
    bad = tmp_path / "bad"
    completion_probe(bad, variants=[{"id": "terse", "prompt": "{{x.y}}"}], publish=False)
    with pytest.raises(ProbeError, match=r"variants\[terse\]\.prompt: '\{\{x\.y\}\}'"):
        jevalkit.load_probe("double", root=bad)


@pytest.mark.parametrize(
    "probe_id", ["unit-conversion", "contact-extraction", "follow-constraints"]
)
def test_the_bundled_case_probes_have_a_completion_version_for_base_models(probe_id):
    latest = jevalkit.load_probe(probe_id)
    assert latest.version == 2 and latest.prompt_style == "completion"
    assert jevalkit.load_probe(f"{probe_id}@1").prompt_style == "chat"  # published: unchanged
    assert all(r.ok for r in latest.check_examples())
    # the few-shot answers in the prompt are not the cases it is scored on
    prompt = latest.prompt or ""
    shown = prompt.rsplit("\n\n", 1)[0]
    for case in latest.cases:
        text = case.fields.get("text") or case.fields.get("task")
        if text:
            assert text not in shown


def test_the_committed_runs_pass_cases_and_move_with_temperature():
    # the example runs of the embedded model (data/runs/README.md says how they were made)
    rates = {}
    for probe_id in ("unit-conversion", "contact-extraction", "follow-constraints"):
        df = read_results(data_dir() / "runs" / f"{probe_id}__v2__local.jsonl")
        assert set(df["probe"]) == {probe_id} and set(df["version"]) == {2}
        assert df["error"].isna().all() and set(df["model"]) == {"local"}
        table = metrics.pass_rate(df, by=["label"]).set_index("label")
        rates[probe_id] = table["value"].to_dict()
        assert set(rates[probe_id]) == {"T=0", "T=1"}
    assert all(r["T=0"] > 0 for r in rates.values()), rates  # every chat version passed 0
    # temperature moves it for two of them (follow-constraints held 0.375 at both)
    assert rates["unit-conversion"]["T=1"] < rates["unit-conversion"]["T=0"], rates
    assert rates["contact-extraction"]["T=1"] < rates["contact-extraction"]["T=0"], rates
