"""Human labels for judged outputs: which items to label, the labels file, and agreement.

An *item* is one judged output: a system's answer to a case (``system``, ``case_id``). People
label items at the judge's levels; the labels correct the judge's mean
(:func:`jevalkit.labels.corrected_mean`).

Which items to label decides whether the correction is unbiased. ``label_sample`` draws them at
random with known probabilities and records each item's ``sampling_probability``:

- ``random``: a simple random sample of cases, every item equally likely: unbiased as it is.
- ``stratified``: the same number of cases from each judge verdict, so rare verdicts are seen;
  unbiased once each label is weighted by 1 / its probability (``corrected_mean`` does this).
- ``uncertain``: cases where the judge is least sure are more likely (probability proportional
  to its uncertainty, never below a floor); unbiased with the weights, and more informative.
- ``active``: the allocation of active statistical inference (Zrnic & Candes, ICML 2024):
  probability proportional to the judge's predicted standard deviation of the human score (the
  SD of its level distribution, levels spaced evenly on [0, 1], or sqrt(s (1 - s)) of its score
  s over repeats), mixed with a uniform ``floor`` share. When the judge's probabilities are
  calibrated this minimises the corrected mean's variance for the number of labels (the
  variance of PPI's rectifier is sum (sd_i^2 / pi_i)); when they are not, the floor bounds the
  loss and the weights keep it unbiased. ``corrected_mean``'s interval follows the error
  (``benchmarks/bench_ppi.py --only weighted``, 100 labels of 1,000 items, against random
  labels on the same items): with a calibrated judge sure of most items, 0.89 times random
  labels' error and 0.92 times their half-width, covering 97%; with a judge wrong where it is
  surest, 1.37 times their error and half-width, covering 95%.

Choosing items by hand, or labelling only the hard ones without their probabilities, biases the
correction in a way no formula can undo. Cases are sampled, and every system's output for a
sampled case is labelled, so two systems can be compared on the same cases (paired).

The labels file is append-only JSONL, one record per action, written and fsynced at once:
``{"system", "case_id", "level", "labeller", "time", "sampling_probability"}`` (``level`` null and
``skipped`` true for a skip), and the label plan's ``strategy`` when the Labeler had one (how the
item was chosen: calibrations refuse items not drawn at random). The latest record of a labeller
for an item counts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack

import numpy as np
import pandas as pd

from ..contract import Prepared, estimator, not_a_statistic, prepare, require
from ..errors import StatsError, UsageError
from ..files import open_regular
from ..jsontext import json_line
from ..results import repair_torn_tail
from ..stats import capped_inclusion, krippendorff_alpha

LABEL_COLUMNS = [
    "system",
    "case_id",
    "level",
    "labeller",
    "time",
    "sampling_probability",
    "skipped",
    "strategy",
]
_SAMPLE_COLUMNS = [
    "system",
    "case_id",
    "judge_score",
    "sampling_probability",
    "strategy",
    "order",
]
ITEM_COLUMNS = ("input", "output", "expected", "reference", "gold", "probs")
STRATEGIES = ("random", "stratified", "uncertain", "active")
_AGREEMENT_COLUMNS = ["n_items", "n_labellers", "alpha", "method"]


class JudgedColumns(TypedDict, total=False):
    """The columns of judged results every labels statistic reads, defined once (each takes
    them as keywords): ``system`` (whose output an item is; default ``system``), ``case_id``
    (the case, as the labels file records it; default ``case_id``), ``score`` (the judge's
    score; default ``score``), ``repeat`` (default ``repeat``), ``scale`` ((low, high) of raw
    grades; default None: scores in [0, 1]), ``pool`` (a judge's prompt versions or generation
    settings pooled on purpose; default False: refused). Labels frames keep the labels file's
    columns (:func:`read_labels`: ``system``, ``case_id``, ``level``, ...), so an item is the
    same (``system``, ``case_id``) on both sides."""

    system: str
    case_id: str
    score: str
    repeat: str | None
    scale: tuple[float, float] | None
    pool: bool


_JUDGED_DEFAULTS: JudgedColumns = {
    "system": "system",
    "case_id": "case_id",
    "score": "score",
    "repeat": "repeat",
    "scale": None,
    "pool": False,
}


def _judged_rows(df: pd.DataFrame, columns: JudgedColumns) -> Prepared:
    """The one input step for judged results (:func:`jevalkit.contract.prepare`): an item is a
    ``system`` and a ``case_id`` (the columns named by ``columns``, :class:`JudgedColumns`);
    rows with an error or no score are not scored; duplicated rows, case ids of two types and a
    judge's two versions or settings (unless pooled) are refused; scores lie in [0, 1] or are
    normalised by ``scale``. The rows come back with the labels file's names: ``system``,
    ``case_id``, ``score`` (and ``repeat``)."""
    unknown = sorted(set(columns) - set(_JUDGED_DEFAULTS))
    if unknown:
        raise StatsError(
            f"unknown keyword(s) {', '.join(unknown)}: judged results' columns are named by "
            f"{', '.join(_JUDGED_DEFAULTS)}"
        )
    spec: dict[str, Any] = {**_JUDGED_DEFAULTS, **columns}
    for keyword in ("score", "system", "case_id"):  # named by the labels' keywords
        require(df, spec[keyword], keyword, "a column of judged results")
    rows = prepare(
        df,
        spec["score"],
        case=spec["case_id"],
        system=spec["system"],
        repeat=spec["repeat"],
        kind="score",
        scale=spec["scale"],
        keyword="score",
        pool=spec["pool"],
        apart=False,
    )
    if not rows.values.size:
        raise StatsError("no judged rows with a score")
    named = {spec["system"]: "system", spec["case_id"]: "case_id", spec["score"]: "score"}
    if spec["repeat"] is not None:
        named[spec["repeat"]] = "repeat"
    frame = rows.frame
    clash = [c for c in named.values() if c in frame.columns and c not in named]
    frame = frame.drop(columns=clash).rename(columns=named)
    return dataclasses.replace(rows, frame=frame)


@estimator(
    unit="item",
    estimand="each judged item's mean judge score over its repeats, and the judge's uncertainty",
    interval="none (a per-item table)",
    checks=("order", "rename", "scale", "keys", "duplicates", "settings"),
    note="the items corrected_mean and label_sample read",
)
def judged_items(df: pd.DataFrame, **columns: Unpack[JudgedColumns]) -> pd.DataFrame:
    """One row per judged item (``system``, ``case_id``): the judge's score averaged over
    repeats (``judge_score``), its verdict share (``judge_passed``), how uncertain it was
    (``uncertainty``: the mean entropy of its level distribution, else 4 p (1 - p) of the score),
    ``n_repeats``, and ``predicted_sd``: the judge's predicted SD of the human score (of its level
    distribution with the levels spaced evenly on [0, 1], root mean square over repeats, when
    every row has ``probs``; else sqrt(s (1 - s)) of its mean score s over the repeats).

    The judged rows' columns are keywords (``system=``, ``case_id=``, ``score=``, ``repeat=``;
    :class:`JudgedColumns`), defaulting to a judge run's; the items keep the labels file's
    names (``system``, ``case_id``). Rows with an ``error`` or no score are not judged; scores
    must lie in [0, 1], or give ``scale=(low, high)`` of raw grades (e.g. ``(1, 10)``);
    duplicated rows (the same repeat twice), case ids of two types (``1`` and ``"1"``) and a
    judge's two prompt versions or generation settings (unless ``pool=True``) are refused.

    Example:
        >>> df = pd.DataFrame({"system": "m", "case_id": ["a", "a", "b"], "score": [1.0, 0.5, 0.0],
        ...                    "passed": [True, True, False]})
        >>> judged_items(df)[["case_id", "judge_score", "n_repeats"]].values.tolist()
        [['a', 0.75, 2], ['b', 0.0, 1]]
    """
    return _items_of(_judged_rows(df, columns))


def _items_of(rows: Prepared) -> pd.DataFrame:
    """:func:`judged_items` of rows the input step kept."""
    frame = rows.frame
    score = pd.Series(rows.values, index=frame.index)
    entropy = frame["probs"].map(_entropy) if "probs" in frame.columns else None
    uncertainty = (
        entropy if entropy is not None and entropy.notna().all() else 4 * score * (1 - score)
    )
    passed = (
        frame["passed"].astype(float)
        if "passed" in frame.columns and frame["passed"].notna().all()
        else (score >= 0.5).astype(float)
    )
    spread = frame["probs"].map(_level_sd) if "probs" in frame.columns else None
    work = pd.DataFrame(
        {
            "system": frame["system"].astype(str).to_numpy(),
            "case_id": frame["case_id"].astype(str).to_numpy(),
            "judge_score": score.to_numpy(),
            "judge_passed": passed.to_numpy(),
            "uncertainty": np.asarray(uncertainty, dtype=float),
            "_variance": np.asarray(spread, dtype=float) ** 2 if spread is not None else np.nan,
        }
    )
    items = work.groupby(["system", "case_id"], sort=True).agg(
        judge_score=("judge_score", "mean"),
        judge_passed=("judge_passed", "mean"),
        uncertainty=("uncertainty", "mean"),
        n_repeats=("judge_score", "size"),
        _variance=("_variance", "mean"),
    )
    # the judge's predicted SD of the human score: of its level distribution when every row
    # has one, else of its score over the repeats (a verdict share s: sqrt(s (1 - s)))
    by_probs = spread is not None and work["_variance"].notna().all()
    bernoulli = items["judge_score"] * (1 - items["judge_score"])
    items["predicted_sd"] = np.sqrt(np.clip(items["_variance"] if by_probs else bernoulli, 0, None))
    return items.drop(columns="_variance").reset_index()


def _level_sd(probs: Any) -> float:
    """The SD of a level distribution with the levels spaced evenly on [0, 1]."""
    if not isinstance(probs, list | tuple | np.ndarray) or len(probs) < 2:
        return math.nan
    p = np.asarray(probs, dtype=float)
    if not np.isfinite(p).all() or p.sum() <= 0:
        return math.nan
    p = p / p.sum()
    at = np.linspace(0.0, 1.0, p.size)
    return float(np.sqrt(max(p @ at**2 - (p @ at) ** 2, 0.0)))


def _entropy(probs: Any) -> float:
    if not isinstance(probs, list | tuple | np.ndarray) or len(probs) < 2:
        return math.nan
    p = np.asarray(probs, dtype=float)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum() / math.log(len(probs)))


@estimator(
    unit="case",
    estimand="a probability sample of judged items to label, with each case's probability",
    interval="none (a sampling design: the corrected means' intervals rest on it)",
    checks=("order", "rename", "scale", "keys", "duplicates", "settings"),
    call={"n": 5},
    note="unbiasedness of the corrected means under each strategy in tests/labels",
)
def label_sample(
    df: pd.DataFrame,
    n: int,
    *,
    strategy: str = "random",
    seed: int = 0,
    floor: float = 0.2,
    **columns: Unpack[JudgedColumns],
) -> pd.DataFrame:
    """Which items to label: ``n`` cases drawn with known probabilities (every system's output
    for a drawn case is an item), in a random presentation order.

    Args:
        df: judged results (``system``, ``case_id``, ``score``; ``probs``, ``passed`` when
            there; read as :func:`judged_items` reads them, with the same column keywords,
            ``scale`` and ``pool`` too).
        n: cases to draw (``uncertain`` draws n on average: each case independently).
        strategy: ``random``, ``stratified`` (equal numbers per judge verdict), ``uncertain``
            (probability proportional to the judge's uncertainty, at least ``floor`` times the
            average) or ``active`` (proportional to the judge's predicted SD of the human
            score, a ``floor`` share uniform); see the module docstring for which keep the
            correction unbiased. ``uncertain`` and ``active`` draw each case independently
            (n on average), every case's probability at least ``floor`` x n / cases.
        seed: of the draw.

    Returns:
        One row per item: ``system``, ``case_id``, ``judge_score``, ``sampling_probability``
        (of its case being drawn), ``strategy``, ``order``; then what the labeller is shown, taken
        from the item's first judged repeat, for those of ``input``, ``output``, ``expected``,
        ``reference``, ``gold``, ``probs`` the results have (``input`` also from
        ``source["input"]`` of imported results): the sample goes straight into the Labeler.

    Example:
        >>> df = pd.DataFrame({"system": "m", "case_id": [f"c{i}" for i in range(10)],
        ...                    "score": [0.1] * 5 + [0.9] * 5})
        >>> sample = label_sample(df, 4, strategy="stratified")
        >>> len(sample), sorted(sample["sampling_probability"].unique().tolist())
        (4, [0.4])
    """
    if strategy not in STRATEGIES:
        raise UsageError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    rows = _judged_rows(df, columns)
    items = _items_of(rows)
    cases = (
        items.assign(_v=items["predicted_sd"] ** 2)
        .groupby("case_id", sort=True)
        .agg(
            judge_score=("judge_score", "mean"),
            judge_passed=("judge_passed", "mean"),
            uncertainty=("uncertainty", "mean"),
            variance=("_v", "mean"),  # every system's output of a case is labelled: their mean
        )
    )
    n_cases = len(cases)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= n_cases:
        raise UsageError(
            f"n must be a whole number from 1 to the {n_cases} judged cases, got {n!r}"
        )
    rng = np.random.default_rng(seed)
    if strategy == "random":
        chosen = rng.choice(n_cases, n, replace=False)
        prob = np.full(n_cases, n / n_cases)
    elif strategy == "stratified":
        stratum = (cases["judge_passed"].to_numpy() >= 0.5).astype(int)
        sizes = np.bincount(stratum, minlength=2)
        share = _equal_allocation(sizes, n)
        prob = share[stratum] / sizes[stratum]
        chosen = np.concatenate(
            [rng.choice(np.flatnonzero(stratum == h), share[h], replace=False) for h in (0, 1)]
        )
    else:
        if not 0 < floor <= 1:
            raise UsageError(f"floor must be in (0, 1] (1 draws uniformly), got {floor!r}")
        if strategy == "uncertain":
            u = cases["uncertainty"].to_numpy(float)
            u = np.maximum(u, floor * (u.mean() if u.mean() > 0 else 1.0))
        else:  # the SD over the case's outputs (root mean square), a floor share uniform
            sd = np.sqrt(cases["variance"].to_numpy(float))
            share = sd / sd.sum() if sd.sum() > 0 else np.full(n_cases, 1 / n_cases)
            u = (1 - floor) * share + floor / n_cases
        prob = capped_inclusion(u, n)
        chosen = np.flatnonzero(rng.random(n_cases) < prob)
        if chosen.size == 0:
            raise StatsError("the draw picked no case; raise n or use another seed")
    picked = cases.index.to_numpy()[chosen]
    probability = dict(zip(cases.index, prob, strict=True))
    sample = items[items["case_id"].isin(picked)].copy()
    sample["sampling_probability"] = sample["case_id"].map(probability).astype(float)
    sample["strategy"] = strategy
    order = {case: i for i, case in enumerate(rng.permutation(picked))}
    sample["order"] = sample["case_id"].map(order)
    sample = sample.sort_values(["order", "system"], kind="stable").reset_index(drop=True)
    return _with_item_content(sample[_SAMPLE_COLUMNS], rows.frame)


def _with_item_content(sample: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The sample joined to what each item shows (its first judged repeat's input, output, ...),
    from the judged rows the one input step kept."""
    if "input" not in frame.columns and "source" in frame.columns:
        inputs = frame["source"].map(lambda s: s.get("input") if isinstance(s, dict) else None)
        if inputs.notna().any():
            frame = frame.assign(input=inputs)
    shown = [c for c in ITEM_COLUMNS if c in frame.columns]
    if not shown:
        return sample
    if "repeat" in frame.columns:
        frame = frame.sort_values("repeat", kind="stable")
    frame = frame.assign(
        system=frame["system"].astype(str), case_id=frame["case_id"].astype(str)
    ).drop_duplicates(["system", "case_id"])
    return sample.merge(frame[["system", "case_id", *shown]], on=["system", "case_id"], how="left")


def _equal_allocation(sizes: np.ndarray, n: int) -> np.ndarray:
    share = np.zeros_like(sizes)
    remaining = n
    open_ = sizes > 0
    while remaining > 0 and open_.any():
        each = max(1, remaining // int(open_.sum()))
        for h in np.flatnonzero(open_):
            take = min(each, sizes[h] - share[h], remaining)
            share[h] += take
            remaining -= take
        open_ = share < sizes
    return share


@not_a_statistic("file I/O: appends one record to the labels file")
def append_label(path: str | Path, record: dict[str, Any]) -> None:
    """Append one label record to ``path`` and fsync it (a kernel that dies loses nothing).

    A torn last line (a crash mid-write) is cut first, as the results writer does, so the new
    label is never glued onto a fragment; a warning names the file (that label is lost: the
    item is unlabelled again).

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "labels.jsonl"
        >>> _ = p.write_text('{"case_id": "c0", "labeller": "ann", "level": "1"}\\n{"case_id": "c1", "lab')
        >>> append_label(p, label_record("m", "c2", "3", "ann"))
        >>> read_labels(p)["case_id"].tolist()
        ['c0', 'c2']
    """
    line = json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
    torn = repair_torn_tail(Path(path))
    if torn:
        warnings.warn(
            f"{path}: its last line was torn ({torn} bytes of a write a crash interrupted): "
            "that label was dropped; label that item again",
            stacklevel=2,
        )
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


@not_a_statistic("file I/O: one record of the labels file")
def label_record(
    system: str,
    case_id: str,
    level: str | None,
    labeller: str,
    sampling_probability: float | None = None,
    strategy: str | None = None,
) -> dict[str, Any]:
    """One label record, stamped with the time (``level`` None: skipped). A
    ``sampling_probability`` must be in (0, 1], as :func:`read_labels` requires; ``strategy``
    is how the item was chosen (the label plan's: ``random``, ``stratified``, ``uncertain``,
    ``active``, or ``cascade`` for a cascade's person queue), recorded when known, so that a
    calibration can refuse labels of items not drawn at random.

    Example:
        >>> r = label_record("m", "c1", "3", "ann")
        >>> r["level"], r["skipped"], r["time"][:2]
        ('3', False, '20')
        >>> label_record("m", "c1", "3", "ann", sampling_probability=0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: sampling_probability must be in (0, 1], got 0
    """
    _check_sampling_probability(sampling_probability, "")
    record = {
        "system": str(system),
        "case_id": str(case_id),
        "level": None if level is None else str(level),
        "labeller": str(labeller),
        "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "sampling_probability": sampling_probability,
        "skipped": level is None,
    }
    if strategy is not None:
        record["strategy"] = str(strategy)
    return record


@not_a_statistic("file I/O: reads the labels file")
def read_labels(path: str | Path, *, include_skipped: bool = False) -> pd.DataFrame:
    """The labels in ``path``: the latest record per labeller and item (skips left out unless
    asked): ``system``, ``case_id``, ``level``, ``labeller``, ``time``,
    ``sampling_probability``, ``skipped``, ``strategy`` (how the item was chosen, when the
    record says; else None).

    Raises:
        UsageError: one line naming the file, the line and the field that is wrong.

    Example:
        >>> import tempfile
        >>> p = tempfile.mkdtemp() + "/labels.jsonl"
        >>> append_label(p, label_record("m", "c1", "2", "ann"))
        >>> append_label(p, label_record("m", "c1", "3", "ann"))
        >>> read_labels(p)[["case_id", "level"]].values.tolist()
        [['c1', '3']]
    """
    p = Path(path)
    if not os.path.lexists(p):
        raise UsageError(f"{p}: no labels file there")
    records = []
    with open_regular(p, UsageError, what="labels file") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):
                break  # a torn last line (the kernel died mid-write): ignored
            record = json_line(raw, f"{p}: line {number}", UsageError, not_utf8="not UTF-8")
            if not isinstance(record, dict):
                raise UsageError(f"{p}: line {number}: a label must be a JSON object")
            for field in ("case_id", "labeller"):
                if not isinstance(record.get(field), str | int) or record.get(field) == "":
                    raise UsageError(f"{p}: line {number}: {field!r} is missing")
            skipped = bool(record.get("skipped")) or record.get("level") is None
            prob = record.get("sampling_probability")
            _check_sampling_probability(prob, f"{p}: line {number}: ")
            records.append(
                {
                    "system": str(record.get("system") or "all"),
                    "case_id": str(record["case_id"]),
                    "level": None if skipped else str(record["level"]),
                    "labeller": str(record["labeller"]),
                    "time": record.get("time"),
                    "sampling_probability": prob,
                    "skipped": skipped,
                    "strategy": _strategy_of(record.get("strategy"), f"{p}: line {number}: "),
                }
            )
    frame = pd.DataFrame(records, columns=LABEL_COLUMNS)
    frame = frame.drop_duplicates(["system", "case_id", "labeller"], keep="last")
    if not include_skipped:
        frame = frame[~frame["skipped"]]
    return frame.reset_index(drop=True)


def _strategy_of(value: Any, where: str) -> str | None:
    """A record's ``strategy``: None when not recorded, else a short text."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        raise UsageError(
            f"{where}strategy must name how the item was chosen (random, stratified, "
            f"uncertain, active, cascade), got {value!r:.40}"
        )
    return value


def _check_sampling_probability(prob: Any, where: str = "") -> None:
    """Refuse a sampling probability outside (0, 1] (None: not sampled, allowed).

    Example:
        >>> _check_sampling_probability(float("inf"), "labels.jsonl: line 3: ")
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: labels.jsonl: line 3: sampling_probability must be in (0, 1], got inf
    """
    if prob is not None and (
        isinstance(prob, bool)
        or not isinstance(prob, int | float)
        or not math.isfinite(prob)
        or not 0 < prob <= 1
    ):
        raise UsageError(f"{where}sampling_probability must be in (0, 1], got {prob!r:.40}")


def _two_labellers(labels: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter input: the labels as labeller ``x``'s, and as ``y``'s with
    every fifth label (in case order) turned to the other level."""
    ordered = labels.sort_values(["system", "case_id"], kind="stable")
    flip = np.arange(len(ordered)) % 5 == 0
    other = np.where(ordered["level"] == "pass", "fail", "pass")
    y = ordered.assign(labeller="y", level=np.where(flip, other, ordered["level"]))
    return pd.concat([ordered.assign(labeller="x"), y], ignore_index=True)


def _label_agreement_adapter(judged: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    return label_agreement(_two_labellers(labels), ["fail", "pass"])


@estimator(
    unit="item",
    estimand="agreement between labellers (Krippendorff's alpha, ordinal)",
    interval="none (a point statistic)",
    data="labels",
    checks=("order", "rename", "one_case", "method"),
    adapter=_label_agreement_adapter,
    note="pinned to the krippendorff package in tests/labels",
)
def label_agreement(labels: pd.DataFrame, levels: list[str]) -> pd.DataFrame:
    """Agreement between labellers on the items several of them labelled: Krippendorff's alpha
    at the ordinal level (levels in order, lowest first).

    Returns:
        One row: ``n_items`` (labelled by two or more), ``n_labellers``, ``alpha``, ``method``.

    Example:
        >>> labels = pd.DataFrame({"system": "m", "case_id": ["a", "a", "b", "b", "c", "c"],
        ...                        "labeller": ["x", "y"] * 3, "level": ["1", "1", "2", "2", "0", "1"]})
        >>> row = label_agreement(labels, ["0", "1", "2"]).iloc[0]
        >>> int(row["n_items"]), int(row["n_labellers"]), bool(0 < row["alpha"] < 1)
        (3, 2, True)
    """
    rank = {level: i for i, level in enumerate(levels)}
    unknown = set(labels["level"].dropna()) - set(rank)
    if unknown:
        raise StatsError(f"label level(s) {sorted(unknown)} are not among the levels {levels}")
    wide = labels.assign(_value=labels["level"].map(rank).astype(float)).pivot_table(
        index="labeller", columns=["system", "case_id"], values="_value", aggfunc="last"
    )
    shared = wide.columns[wide.notna().sum(axis=0) >= 2]
    if len(shared) == 0:
        raise StatsError("no item was labelled by two or more labellers: agreement needs overlap")
    alpha = krippendorff_alpha(wide[shared].to_numpy(), "ordinal", layout="raters x units")
    return pd.DataFrame(
        [
            {
                "n_items": len(shared),
                "n_labellers": int(wide[shared].notna().any(axis=1).sum()),
                "alpha": float(alpha),
                "method": "Krippendorff's alpha, ordinal, over items labelled by two or more",
            }
        ],
        columns=_AGREEMENT_COLUMNS,
    )
