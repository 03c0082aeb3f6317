"""A cascade on real judge data with human labels: the judgements the anchor paper's authors
released (Jung, Brahman & Choi, "Trust or Escalate", ICLR 2025; github.com/jaehunjung1/
cascaded-selective-evaluation, commit 1b969f2, ``result/*.calibration.jsonl``): 500 Chatbot
Arena comparisons, each with one human preference (answer 1 or 2 better) and the preference
probabilities of three judges of rising strength (Mistral-7B-Instruct, GPT-3.5-turbo,
GPT-4-turbo), each the mean over the authors' simulated annotators (few-shot prompts).

The repository carries no licence, so its data are not redistributed here: pass the folder
holding the three files (``--anchor DIR``, e.g. ``result/`` of a clone). Each of ``--splits``
random splits calibrates on ``--labels`` items and is judged on the rest (held out):

- this cascade (:func:`jevalkit.labels.calibrate_cascade`, the three judges cheapest first, each
  stage at 1 - (1 - level) / 3, the first test on a fifth of the items reaching it);
- the anchor's reference procedure on the same confidences: each stage at the full level, its
  first test on the 30 most confident items, then every item down (the authors' code; where
  its first test fails, their code keeps the top threshold anyway; here it decides nothing).

Printed per target: the mean share of held-out items decided, the mean agreement of the
decided verdicts with the held-out people, the share of splits where that agreement is at
least the target (a held-out sample of a few hundred: itself noisy), and the ratio of this
cascade's share decided to the reference's (target: at least 1). A third row runs this
cascade's start and tests at the reference's level per stage (each stage at the full level,
no union bound: not a guarantee at the level), to show what the start rule does alone.

Run: ``.venv/bin/python benchmarks/bench_cascade_anchor_data.py --anchor DIR [--splits 200]``
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps
from sizes import parser as sizes_parser
from sizes import size

from jevalkit.labels import calibrate_cascade

JUDGES = ("mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo")  # cheapest first


def read_anchor(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The three judges' rows (levels ``1``/``2``: which answer is better) and the human
    labels, matched by instruction and answers, as the authors' ``merge_data`` matches them."""
    frames, people = [], {}
    for judge in JUDGES:
        records = [
            json.loads(line)
            for line in (folder / f"{judge}.calibration.jsonl").read_text().splitlines()
        ]
        keys = [json.dumps([r["instruction"], r["outputs"]]) for r in records]
        for key, r in zip(keys, records, strict=True):
            votes = list(r["preferences"].values())
            people[key] = str(max(set(votes), key=votes.count))
        frames.append(
            pd.DataFrame({"model": judge, "key": keys, "probs": [r["probs"] for r in records]})
        )
    judged = pd.concat(frames, ignore_index=True)
    ids = {key: f"a{i:03d}" for i, key in enumerate(sorted(people))}
    judged = judged.assign(system="arena", case_id=judged["key"].map(ids)).drop(columns="key")
    labels = pd.DataFrame(
        {"system": "arena", "case_id": [ids[k] for k in people], "level": list(people.values())}
    )
    return judged, labels


def anchor_reference(conf: np.ndarray, agree: np.ndarray, target: float, level: float) -> float:
    """One stage of the authors' procedure: from the 30 most confident items down, item by
    item, certified while the exact binomial (Clopper-Pearson) test passes at ``level``; the
    last certified threshold (inf: none)."""
    if conf.size < 30:
        return math.inf
    order = np.argsort(-conf, kind="stable")
    c, k = conf[order], np.cumsum(agree[order])
    last = np.flatnonzero(np.r_[c[1:] != c[:-1], True])  # the last item of each value
    last = last[last >= 29]
    p = sps.binom.cdf(last + 1 - k[last], last + 1, 1 - target)
    failed = np.flatnonzero(p > 1 - level)
    good = last[: failed[0]] if failed.size else last
    return float(c[good[-1]]) if good.size else math.inf


def route(tables: list[pd.DataFrame], thresholds: list[float]) -> pd.Series:
    """Which judge decides each item (its index), -1 for people."""
    by = pd.Series(-1, index=tables[0].index)
    for j, (table, t) in enumerate(zip(tables, thresholds, strict=True)):
        by[(by == -1) & (table["conf"] >= t)] = j
    return by


def main() -> None:
    parser = sizes_parser(__doc__)
    parser.add_argument("--anchor", type=Path, help="folder of the 3 files")
    parser.add_argument("--splits", type=int, default=size(200, 5))
    parser.add_argument("--labels", type=int, default=250, help="calibration items per split")
    parser.add_argument("--level", type=float, default=0.9)
    args = parser.parse_args()
    if args.anchor is None:
        # the authors' judgements are public but carry no licence, so they are not bundled
        print(
            "skipped: the anchor paper's judge data is not bundled (its repository has no "
            "licence); pass --anchor DIR, the result/ folder of a clone of "
            "jaehunjung1/cascaded-selective-evaluation (commit 1b969f2)"
        )
        return
    judged, labels = read_anchor(args.anchor)
    person = labels.set_index("case_id")["level"]
    tables = []
    for judge in JUDGES:
        mine = judged[judged["model"] == judge].set_index("case_id")
        probs = np.array(mine["probs"].tolist())
        tables.append(
            pd.DataFrame(
                {
                    "conf": probs.max(axis=1),
                    "verdict": np.where(probs[:, 0] >= probs[:, 1], "1", "2"),
                },
                index=mine.index,
            ).loc[person.index]
        )
    agrees = [(t["verdict"] == person).to_numpy() for t in tables]
    print(
        f"{len(person)} items; each judge's agreement with people: "
        + ", ".join(f"{j} {a.mean():.3f}" for j, a in zip(JUDGES, agrees, strict=True))
    )
    started = time.perf_counter()
    rng = np.random.default_rng(2026)
    for target in (0.75, 0.8, 0.85):
        ours, ref, same = [], [], []
        for _ in range(args.splits):
            cal = rng.permutation(len(person))[: args.labels]
            held = np.setdiff1d(np.arange(len(person)), cal)
            cascade = calibrate_cascade(
                judged,
                labels.iloc[cal],
                judges=list(JUDGES),
                levels=["1", "2"],
                target_agreement=target,
                confidence_level=args.level,
            )
            # this cascade's start and tests at the reference's level per stage: the start
            # rule alone (no union bound, so not a guarantee at the level)
            alike = calibrate_cascade(
                judged,
                labels.iloc[cal],
                judges=list(JUDGES),
                levels=["1", "2"],
                target_agreement=target,
                confidence_level=1 - len(JUDGES) * (1 - args.level),
            )
            thresholds = []
            open_ = np.zeros(len(person), bool)
            open_[cal] = True
            for table, agree in zip(tables, agrees, strict=True):
                conf = table["conf"].to_numpy()
                t = anchor_reference(conf[open_], agree[open_], target, args.level)
                thresholds.append(t)
                open_ &= conf < t
            runs = ((ours, cascade.thresholds), (ref, thresholds), (same, alike.thresholds))
            for out, ts in runs:
                by = route([t.iloc[held] for t in tables], list(ts)).to_numpy()
                decided = by >= 0
                right = np.array(
                    [agrees[j][i] for j, i in zip(by[decided], held[decided], strict=True)]
                )
                out.append((decided.mean(), right.mean() if right.size else np.nan))
        for name, res in (
            ("this cascade", ours),
            ("anchor reference", ref),
            ("same level/stage", same),
        ):
            res = np.array(res)
            kept = np.mean([np.isnan(a) or a >= target for a in res[:, 1]])
            print(
                f"target {target}, level {args.level}, {args.labels} labels, {args.splits} splits: "
                f"{name:<17} decides {res[:, 0].mean():.1%} of held-out items (median "
                f"{np.median(res[:, 0]):.1%}), agreement {np.nanmean(res[:, 1]):.3f}, at least the "
                f"target in {kept:.1%} of splits"
            )
        ratio = np.mean([o[0] for o in ours]) / max(np.mean([r[0] for r in ref]), 1e-12)
        print(f"  share decided, this cascade / anchor reference: {ratio:.2f}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
