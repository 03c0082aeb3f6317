"""Cases for judge cascades against the loopback server: two judge models, ``small`` and ``big``,
that answer each case with the logprobs its output names (tests/cli/test_cli_cascade.py and
test_hardening_iv.py)."""

from __future__ import annotations

import json
import math
import re

from jevalkit.cli import main
from jevalkit.labels import append_label, label_record

# Each case's output says how each judge answers it: "small=0.97/No" is p(No) = 0.97 from the
# model "small". The server reads it back from the prompt, so the answers depend on the model.
TAG = re.compile(r"(small|big)=([0-9.]+)/(Yes|No)")


def logprobs_for(body):
    text = json.dumps(body.get("messages") or body.get("prompt"))
    tags = {m: (float(p), word) for m, p, word in TAG.findall(text)}
    p, word = tags[body["model"]]
    other = "Yes" if word == "No" else "No"
    alts = [{"token": word, "logprob": math.log(p)}, {"token": other, "logprob": math.log(1 - p)}]
    return {"content": [{"token": word, "logprob": alts[0]["logprob"], "top_logprobs": alts}]}


def case(cid, small, big, truth):
    # small / big: (p, word) of each judge; truth: the person's level
    return {
        "id": cid,
        "output": f"answer {cid}: small={small[0]}/{small[1]} big={big[0]}/{big[1]}",
        "gold": truth,
    }


def calibration_cases():
    """60 cases: small is sure and right on 0-29 and unsure (0.6) on 30-59, right on half of
    them; big is sure and right on 30-49 and unsure on 50-59, right on half."""
    cases = []
    for i in range(60):
        truth = "unsafe" if i % 2 else "safe"
        right = "Yes" if truth == "unsafe" else "No"
        wrong = "No" if right == "Yes" else "Yes"
        small = (0.97, right) if i < 30 else (0.6, right if i % 4 < 2 else wrong)
        big = (0.95, right) if i < 50 else (0.55, right if i % 4 < 2 else wrong)
        cases.append(case(f"c{i:02d}", small, big, truth))
    return cases


def new_cases():
    """20 new cases: small sure on n00-n09; big sure on n10-n14, unsure on n15-n19."""
    out = []
    for i in range(20):
        small = (0.98, "No") if i < 10 else (0.6, "Yes")
        big = (0.96, "Yes") if i < 15 else (0.55, "No")
        out.append(case(f"n{i:02d}", small, big, None))
    return out


def write_cases(path, cases):
    path.write_text(
        "".join(json.dumps({k: v for k, v in c.items() if v is not None}) + "\n" for c in cases)
    )
    return path


def sent(server, model):
    ids = set()
    for request in server.requests:
        if request["body"].get("model") == model:
            ids |= set(re.findall(r"answer ([cn]\d\d)", json.dumps(request["body"])))
    return sorted(ids)


def calibrated_runs(openai_server, tmp_path):
    """Both judges run on the 60 calibration cases (``small.jsonl``, ``big.jsonl``) and a
    person's labels of them: ``(tmp_path, labels)``."""
    openai_server.logprobs = logprobs_for
    cases = write_cases(tmp_path / "calibration.jsonl", calibration_cases())
    for model in ("small", "big"):
        argv = ["judge", "security", "--data", str(cases), "--model", model]
        argv += ["--base-url", openai_server.base_url, "--out", str(tmp_path / f"{model}.jsonl")]
        assert main(argv) == 0
    labels = tmp_path / "labels.jsonl"
    for c in calibration_cases():
        append_label(labels, label_record("all", c["id"], c["gold"], "ann", 1.0))
    return tmp_path, labels


def calibrate(folder, labels, out):
    """``jevalkit cascade calibrate`` of the two judges into ``out`` (10 cases left for people)."""
    argv = ["cascade", "calibrate", str(folder / "small.jsonl"), str(folder / "big.jsonl")]
    argv += ["--labels", str(labels), "--target", "0.8", "--confidence", "0.8"]
    argv += ["--min-items", "10", "--out", str(out)]
    assert main(argv) == 0
    return out
