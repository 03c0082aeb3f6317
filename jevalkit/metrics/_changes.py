"""Which cases changed between two systems, and whether the change is real or a flaky evaluator."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..contract import CASE_COLUMNS, CaseSpec, columns_of, estimator, finish, prepare
from ..errors import StatsError

COLUMNS = [
    "status",
    "verdict_a",
    "verdict_b",
    "agreement_a",
    "agreement_b",
    "runs_a",
    "runs_b",
    "score_a",
    "score_b",
    "output_a",
    "output_b",
    "probs_a",
    "probs_b",
    "outputs_a",
    "outputs_b",
    "input",
    "target",
]


def _side(frame: pd.DataFrame, codes: np.ndarray, verdict: str, score: str) -> pd.DataFrame:
    """Per case code: the modal verdict, its share, the runs, the mean score, and an output and
    distribution of a run with the modal verdict."""
    work = pd.DataFrame(
        {"_c": codes, "_v": frame[verdict].astype(str).to_numpy(), "_i": np.arange(len(frame))}
    )
    counts = work.groupby(["_c", "_v"], sort=True).size().reset_index(name="_n")
    runs = work.groupby("_c").size()
    best = (
        counts.sort_values(["_c", "_n", "_v"], ascending=[True, False, True])
        .groupby("_c")
        .head(1)
        .set_index("_c")
    )
    chosen = work.merge(best[["_v"]].reset_index(), on=["_c", "_v"]).groupby("_c")["_i"].min()
    values = (
        pd.to_numeric(frame[score], errors="coerce").to_numpy(float)
        if score in frame
        else np.full(len(frame), np.nan)
    )
    out = pd.DataFrame(
        {
            "verdict": best["_v"],
            "seen": work.groupby("_c")["_v"].agg(frozenset),
            "agreement": (best["_n"] / runs).where(runs > 1),  # one run cannot disagree
            "runs": runs,
            "score": pd.Series(values).groupby(codes).mean(),
        }
    )
    rows = chosen.reindex(out.index).to_numpy()
    for column in ("output", "probs"):
        out[column] = frame[column].to_numpy(dtype=object)[rows] if column in frame else None
    outputs = frame["output"] if "output" in frame else pd.Series([None] * len(frame))
    order = frame["repeat"].to_numpy() if "repeat" in frame else np.arange(len(frame))
    every = pd.DataFrame({"_c": codes, "_r": order, "_o": outputs.to_numpy(dtype=object)})
    out["outputs"] = every.sort_values(["_c", "_r"], kind="stable").groupby("_c")["_o"].agg(list)
    source = frame["source"] if "source" in frame else pd.Series([None] * len(frame))
    for field in ("input", "target"):
        own = (
            frame[field]
            if field in frame
            else source.map(lambda s, f=field: s.get(f) if isinstance(s, dict) else None)
        )
        if field == "target" and "gold" in frame:
            own = own.where(own.notna(), frame["gold"].to_numpy(dtype=object))
        out[field] = own.to_numpy(dtype=object)[rows]
    return out


@estimator(
    unit="case",
    estimand="cases whose modal verdict changed",
    interval="none (a list of cases)",
    checks=("order", "rename", "keys", "duplicates", "settings"),
    call={"a": "A", "b": "B", "case": "case_id"},
)
def case_changes(
    data: pd.DataFrame,
    a: str,
    b: str,
    *,
    case: CaseSpec = CASE_COLUMNS,
    system: str = "system",
    passed: str = "passed",
    score: str = "score",
    repeat: str | None = "repeat",
    min_agreement: float = 0.8,
    include_unchanged: bool = False,
    pool: bool = False,
) -> pd.DataFrame:
    """The cases whose verdict differs between system ``a`` (the baseline) and ``b``.

    Each side's verdict on a case is its modal verdict over the case's repeats, with
    ``agreement``, the modal verdict's share. A change is ``regressed`` (a passed or ranked
    higher, b did not) or ``improved``, when both sides agree with themselves in at least
    ``min_agreement`` of their runs; otherwise it is ``unstable``: an evaluator that flips
    between repeats, not a change of the system. With one run per case, agreement is NaN and
    a change is taken at face value (``method`` of the run says so: re-run with repeats to tell).

    Args:
        data: results of both systems.
        a, b: the baseline and the other system.
        case, system, passed, score, repeat: the columns used (the data contract): ``passed``
            holds the verdicts compared (True/False, or a judge's levels); a duplicated row
            (the same case, system and ``repeat``) is refused.
        min_agreement: the share of a case's runs its modal verdict needs on both sides for a
            change to count (else ``unstable``).
        include_unchanged: every case, not only those that changed.
        pool: pool a system's probe versions or generation settings (``params_hash``) on
            purpose; by default rows of two versions or settings of one system are refused,
            naming the column (their runs of a case are not its repeats).

    Returns:
        One row per changed case (or every case with ``include_unchanged``): the case columns,
        ``status`` (``regressed``, ``improved``, ``unstable``, ``unchanged``), ``verdict_a``,
        ``verdict_b``, ``agreement_a``, ``agreement_b``, ``runs_a``, ``runs_b``, ``score_a``,
        ``score_b`` (means over repeats), ``output_a``, ``output_b`` (an output with the modal
        verdict), ``probs_a``, ``probs_b`` (the judge's distribution, when there is one),
        ``outputs_a``, ``outputs_b`` (every repeat's output, in repeat order), ``input``,
        ``target`` (the case's, from ``input``/``target``/``gold`` columns or an imported row's
        ``source``; None when the results do not have them).

    Example:
        >>> df = pd.DataFrame({"case_id": ["x"] * 4 + ["y"] * 4, "system": ["A", "A", "B", "B"] * 2,
        ...                    "passed": [True, True, False, False, True, False, False, False],
        ...                    "score": [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]})
        >>> case_changes(df, "A", "B", case="case_id")[["case_id", "status"]].values.tolist()
        [['x', 'regressed'], ['y', 'unstable']]
    """
    cols = columns_of(case)
    p = prepare(
        data,
        passed,
        case=case,
        system=system,
        repeat=repeat,
        kind="any",
        keyword="passed",
        pool=pool,
        apart=False,
    )
    present = sorted(data[system].dropna().astype(str).unique())
    for name in (a, b):
        if name not in present:
            raise StatsError(f"system {name!r} not found; systems: {present}")
    usable, names, codes = p.frame, p.system, p.case
    assert names is not None  # system= named the column
    keys = p.cases if p.cases is not None else pd.DataFrame(index=range(len(usable)))
    sides = [_side(usable[names == s], codes[names == s], passed, score) for s in (a, b)]
    joined = sides[0].add_suffix("_a").join(sides[1].add_suffix("_b"), how="inner")
    for field in ("input", "target"):  # the case's, from whichever side has it
        joined[field] = joined[f"{field}_a"].where(
            joined[f"{field}_a"].notna(), joined[f"{field}_b"]
        )
    joined = pd.concat(
        [keys.loc[joined.index].reset_index(drop=True), joined.reset_index(drop=True)], axis=1
    )
    if joined.empty:
        raise StatsError(_why_nothing_pairs(usable, names, a, b, cols))
    changed = (joined["verdict_a"] != joined["verdict_b"]) | (joined["seen_a"] != joined["seen_b"])
    shaky = (joined["agreement_a"] < min_agreement) | (joined["agreement_b"] < min_agreement)
    shaky &= (joined["runs_a"] > 1) | (joined["runs_b"] > 1)
    rank_a, rank_b = _rank(joined["verdict_a"]), _rank(joined["verdict_b"])
    ranked = rank_a.notna() & rank_b.notna()
    higher = np.where(ranked, rank_a > rank_b, joined["score_a"] > joined["score_b"])
    status = np.where(
        ~changed,
        "unchanged",
        np.where(shaky, "unstable", np.where(higher, "regressed", "improved")),
    )
    joined["status"] = status
    out = joined
    if not include_unchanged:
        out = out[out["status"] != "unchanged"]
    return finish(out[[*cols, *COLUMNS]], order=[*cols, *COLUMNS])


def _why_nothing_pairs(
    usable: pd.DataFrame, names: np.ndarray, a: str, b: str, cols: list[str]
) -> str:
    """One line: why no case of ``a`` pairs with a case of ``b``."""
    head = f"no case pairs between {a!r} and {b!r}"
    if not cols:
        return f"{head}: case=None makes every row its own case; name the case column(s)"
    for column in cols:
        left = set(usable.loc[names == a, column].astype(str))
        right = set(usable.loc[names == b, column].astype(str))
        if left and right and not left & right:
            shown = lambda v: sorted(v)[:3]  # noqa: E731
            hint = (
                " (two tables read with io.from_table each take their file's name unless "
                "probe= is given)"
                if column == "probe"
                else ""
            )
            return (
                f"{head}: column {column!r} holds {shown(left)} for {a!r} and {shown(right)} for "
                f"{b!r}{hint}; pair on the columns they share (case=...)"
            )
    if usable.empty or not (names == a).any() or not (names == b).any():
        return f"{head}: one of them has no usable {cols} rows (every verdict missing or an error)"
    return f"{head}: no combination of {cols} occurs in both"


def _rank(verdicts: pd.Series) -> pd.Series:
    """Order verdicts: True above False, larger numbers above smaller, text as text."""

    def key(v: str) -> float:
        if v == "True":
            return 1.0
        if v == "False":
            return 0.0
        try:
            return float(v)
        except ValueError:
            return float("nan")

    return verdicts.map(key)
