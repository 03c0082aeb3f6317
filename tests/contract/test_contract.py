"""The estimator contract: every public statistic of metrics, stats, items and labels carries
its declaration (``@estimator`` in ``jevalkit.contract``), and each declared check runs here on
adversarial data. Array-level estimators reach the same frames through their ``adapter``."""

from __future__ import annotations

import importlib
import inspect
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from jevalkit.contract import (
    BASIC_CHECKS,
    CHECKS,
    COLUMN_DEFAULTS,
    COMMON_DEFAULTS,
    REGISTRY,
    Result,
    as_table,
    interval_pairs,
)
from jevalkit.errors import JevalkitError, StatsError
from jevalkit.metrics import mean_score
from jevalkit.results import Design
from jevalkit.runner import RunResult

PACKAGES = ("jevalkit.metrics", "jevalkit.labels", "jevalkit.stats", "jevalkit.items")
SYSTEMS = ("A", "B", "C")
MAX_UNCHECKED = 6  # estimators with no check at all (each with a note saying why)
MAX_NOT_STATISTICS = 13  # 10, and the judge-row readers cascades rest on (from judges, issue 50)
for _package in PACKAGES:  # the registry fills as the statistics packages are imported
    importlib.import_module(_package)


def public_objects():
    for package in PACKAGES:
        module = importlib.import_module(package)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{package}.{attr}", obj


def test_every_public_statistic_carries_its_contract():
    missing, marked = [], []
    for name, obj in public_objects():
        if inspect.isclass(obj) and issubclass(obj, Result | Design):  # answers, designs
            continue  # a results object: its statistic carries the contract
        if getattr(obj, "not_a_statistic", None):
            marked.append(name)
        elif getattr(obj, "contract", None) is None:
            missing.append(name)
    assert missing == [], (
        f"public functions without a contract: {missing}; declare it with "
        "@jevalkit.contract.estimator(...) on the function, make it private, or mark it "
        "@not_a_statistic(why) if it estimates nothing"
    )
    assert len(marked) <= MAX_NOT_STATISTICS, marked


def test_the_registry_is_the_decorated_functions():
    public = {name for name, obj in public_objects() if getattr(obj, "contract", None)}
    assert set(REGISTRY) == public
    for name, obj in public_objects():
        if getattr(obj, "contract", None) is not None:
            assert obj.contract.name == name


def test_every_check_is_exercised_and_few_estimators_go_unchecked(capsys):
    used = Counter(check for entry in REGISTRY.values() for check in entry.checks)
    assert set(used) == set(CHECKS)
    unchecked = [e.name for e in REGISTRY.values() if not e.checks]
    for entry in REGISTRY.values():
        assert entry.unit and entry.estimand and entry.interval, entry.name
        if not entry.checks:
            assert entry.note, f"{entry.name}: no check, no note"
    assert len(unchecked) <= MAX_UNCHECKED, unchecked
    # a declared order / rename check an adapter cannot pass on is not applicable: not counted
    vacuous = Counter(
        check
        for entry in REGISTRY.values()
        for check in ("order", "rename")
        if check in entry.checks and not applies(entry, check)
    )
    runs = sum(len(e.checks) for e in REGISTRY.values()) - sum(vacuous.values())
    counts = ", ".join(
        f"{c} {used[c] - vacuous[c]}" + (f" (+{vacuous[c]} not applicable)" if vacuous[c] else "")
        for c in CHECKS
    )
    with capsys.disabled():
        print(
            f"\nestimator contract: {len(REGISTRY)} estimators, {runs} checks ({counts}); "
            f"not applicable: {sum(vacuous.values())}; without a check: {unchecked}"
        )


def test_every_estimator_declares_a_check_beyond_the_basic_ones_or_says_why_none_applies():
    # order, rename and method hold for any function; a contract says what else is tested on
    # adversarial data, or why nothing else applies (issue 50: ten said neither)
    bare = [e.name for e in REGISTRY.values() if not set(e.checks) - set(BASIC_CHECKS)]
    assert all(REGISTRY[name].unchecked for name in bare), bare
    assert len(bare) <= 2, bare


def test_every_statistic_spells_the_shared_keywords_with_one_default():
    standard = {**COLUMN_DEFAULTS, **COMMON_DEFAULTS}
    odd = []
    for entry in REGISTRY.values():
        fn = resolve(entry.name)
        target = fn.__init__ if inspect.isclass(fn) else fn
        for name, parameter in inspect.signature(target).parameters.items():
            if name not in standard or parameter.default is inspect.Parameter.empty:
                continue
            if parameter.default != standard[name]:
                odd.append(f"{entry.name}({name}={parameter.default!r})")
    assert odd == [], f"keywords with a default other than the shared one {standard}: {odd}"


def test_every_calibration_named_in_a_contract_exists():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    try:
        calibration = importlib.import_module("calibration")
    finally:
        sys.path.pop(0)
    names = {e.calibration for e in REGISTRY.values() if e.calibration}
    assert names <= set(calibration.SIMULATIONS), names - set(calibration.SIMULATIONS)


def resolve(name: str):
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


# ---- the frames ----------------------------------------------------------------------------


def results_frame(seed: int = 0, n_cases: int = 12, repeats: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s, shift in zip(SYSTEMS, (0.0, 0.1, -0.1), strict=True):
        for c in range(n_cases):
            for r in range(repeats):
                score = float(np.clip(np.round((0.5 + shift + rng.normal(0, 0.3)) * 4) / 4, 0, 1))
                rows.append(
                    {
                        "probe": "p",
                        "version": 1,
                        "case_id": f"q{c:02d}",
                        "system": s,
                        "repeat": r,
                        "score": score,
                        "passed": score >= 0.5,
                        "expected_level": score,
                        "gold": float(rng.random() < 0.5),
                    }
                )
    return pd.DataFrame(rows)


def games_frame(seed: int = 0, n_cases: int = 20, systems=("A", "B", "C", "D")) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = dict(zip(systems, np.linspace(0.4, -0.4, len(systems)), strict=True))
    rows = []
    for c in range(n_cases):
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                for position in ("a_first", "b_first"):
                    p = 1 / (1 + math.exp(-(strength[a] - strength[b])))
                    u = rng.random()
                    verdict = "a>b" if u < p * 0.9 else ("a=b" if u < p * 0.9 + 0.1 else "b>a")
                    score = {"a>b": 1.0, "a=b": 0.5, "b>a": 0.0}[verdict]
                    rows.append(
                        {
                            "kind": "pairwise",
                            "probe": "pw",
                            "model": "judge",
                            "case_id": f"g{c:02d}",
                            "system_a": a,
                            "system_b": b,
                            "position": position,
                            "repeat": 0,
                            "verdict": verdict,
                            "score": score,
                            "source": {
                                "a": {"length": int(rng.integers(50, 500))},
                                "b": {"length": int(rng.integers(50, 500))},
                            },
                        }
                    )
    return pd.DataFrame(rows)


def labels_frames(seed: int = 0, n_items: int = 200, n_labels: int = 40):
    rng = np.random.default_rng(seed)
    judged, labels = [], []
    for s, rate in (("A", 0.5), ("B", 0.65)):
        truth = rng.random(n_items) < rate
        call = np.where(truth, rng.random(n_items) > 0.1, rng.random(n_items) < 0.25)
        for i in range(n_items):
            judged.append({"system": s, "case_id": f"c{i:03d}", "score": float(call[i])})
        for i in range(n_labels):
            labels.append(
                {"system": s, "case_id": f"c{i:03d}", "level": "pass" if truth[i] else "fail"}
            )
    return pd.DataFrame(judged), pd.DataFrame(labels)


def frames_for(kind: str, seed: int = 0):
    if kind in ("results", "two_runs"):
        return (results_frame(seed),)
    if kind == "games":
        return (games_frame(seed),)
    return labels_frames(seed)


def run(entry, frames, call=None):
    fn = resolve(entry.name)
    call = dict(entry.call if call is None else call)
    if entry.adapter is not None:
        return as_table(entry.adapter(*frames))
    if entry.data == "two_runs":
        (frame,) = frames
        systems = frame["system"].astype(str)
        names = sorted(systems.unique())
        return as_table(fn(frame[systems == names[0]], frame[systems == names[1]], **call))
    return as_table(fn(*frames, **call))


def numeric(table: pd.DataFrame) -> pd.DataFrame:
    return table.select_dtypes(include=["number", "bool"]).reset_index(drop=True).astype(float)


def entries(check: str):
    return [
        pytest.param(e, id=e.name.rsplit(".", 1)[1]) for e in REGISTRY.values() if check in e.checks
    ]


# ---- invariance -----------------------------------------------------------------------------


def as_run_results(entry, frames):
    """The frames as a run returns them (a RunResult), split as ``run`` splits two runs."""
    if entry.data == "two_runs":
        (frame,) = frames
        systems = frame["system"].astype(str)
        names = sorted(systems.unique())
        frames = (frame[systems == names[0]], frame[systems == names[1]])
    return tuple(RunResult(f, stopped="stopped at the budget") for f in frames)


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(e, id=e.name.rsplit(".", 1)[1])
        for e in REGISTRY.values()
        if e.adapter is None and e.data != "arrays"
    ],
)
def test_a_run_result_is_read_as_its_rows(entry):
    # run() returns a RunResult: every statistic takes it where it takes the results frame
    frames = frames_for(entry.data)
    fn = resolve(entry.name)
    got = as_table(fn(*as_run_results(entry, frames), **entry.call))
    pd.testing.assert_frame_equal(numeric(got), numeric(run(entry, frames)))


# An adapter that reduces the frame before the estimator sees it (to counts, means, sorted
# arrays) hands it the same input however the rows are ordered or named: an order or rename
# check of it would pass without testing the estimator. Such a check is not applicable, and is
# reported so (skipped, and counted apart in the summary), never counted as passed.
NOT_APPLICABLE = "not applicable: the adapter hands the estimator the same input either way"


class _Recorded(Exception):
    pass


def estimator_input(entry, frames, call=None):
    """What the adapter of ``entry`` passes the estimator for ``frames`` (the estimator is not
    run), or None when the adapter does not call it by its module's name."""
    if entry.adapter is None:
        return None
    fn = resolve(entry.name)
    module, name = entry.adapter.__globals__, fn.__name__
    if module.get(name) is not fn:
        return None
    seen = []

    def record(*args, **kwargs):
        seen.append((args, kwargs))
        raise _Recorded

    module[name] = record
    try:
        entry.adapter(*frames)
    except _Recorded:
        pass
    except Exception:  # the adapter failed before the estimator: the check decides
        return None
    finally:
        module[name] = fn
    return seen[0] if seen else None


def same_input(a, b) -> bool:
    if isinstance(a, pd.DataFrame | pd.Series) and isinstance(b, type(a)):
        return a.reset_index(drop=True).equals(b.reset_index(drop=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_input(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_input(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except (TypeError, ValueError):
        return False


def applies(entry, check: str) -> bool:
    """Whether the ``order`` or ``rename`` check of ``entry`` can reach its estimator."""
    frames = frames_for(entry.data)
    moved = shuffled(frames) if check == "order" else renamed(entry.data, frames)[0]
    before, after = estimator_input(entry, frames), estimator_input(entry, moved)
    return before is None or after is None or not same_input(before, after)


def test_a_check_that_cannot_reach_the_estimator_is_not_applicable():
    # wilson_ci's adapter counts passes: no order of rows reaches it; bootstrap_ci's hands it
    # the scores in row order, and the case labels, so both checks test it
    wilson, boot = REGISTRY["jevalkit.stats.wilson_ci"], REGISTRY["jevalkit.stats.bootstrap_ci"]
    assert "order" in wilson.checks and not applies(wilson, "order")
    assert applies(boot, "order") and applies(boot, "rename")
    assert applies(REGISTRY["jevalkit.metrics.mean_score"], "order")  # no adapter: it applies


def shuffled(frames):
    return tuple(f.sample(frac=1.0, random_state=7).reset_index(drop=True) for f in frames)


@pytest.mark.parametrize("entry", entries("order"))
def test_row_order_changes_no_number(entry):
    frames = frames_for(entry.data)
    if not applies(entry, "order"):
        pytest.skip(NOT_APPLICABLE)
    pd.testing.assert_frame_equal(
        numeric(run(entry, frames)), numeric(run(entry, shuffled(frames)))
    )


def renamed(kind: str, frames):
    system = {s: f"sys-{s}" for s in ("A", "B", "C", "D")}  # order kept
    out = []
    for f in frames:
        f = f.copy()
        for column in ("system", "system_a", "system_b"):
            if column in f:
                f[column] = f[column].map(system)
        if "case_id" in f:
            f["case_id"] = "case-" + f["case_id"].astype(str)
        out.append(f)
    return tuple(out), system


@pytest.mark.parametrize("entry", entries("rename"))
def test_renaming_systems_and_cases_changes_no_number(entry):
    frames = frames_for(entry.data)
    if not applies(entry, "rename"):
        pytest.skip(NOT_APPLICABLE)
    moved, system = renamed(entry.data, frames)
    call = {k: (system.get(v, v) if isinstance(v, str) else v) for k, v in entry.call.items()}
    again = run(entry, moved, call)
    pd.testing.assert_frame_equal(numeric(run(entry, frames)), numeric(again))


# ---- unit, pairing and scale ---------------------------------------------------------------


@pytest.mark.parametrize("entry", entries("scale"))
def test_values_outside_the_scale_are_refused(entry):
    frames = frames_for(entry.data)
    first = frames[0].copy()
    first["score"] = first["score"] * 10
    if "passed" in first:
        first["passed"] = (first["score"]).round()
    with pytest.raises(
        JevalkitError, match=r"outside|True/False|verdicts|not a probability distribution"
    ):
        run(entry, (first, *frames[1:]))


@pytest.mark.parametrize("entry", entries("keys"))
def test_case_keys_of_different_types_are_refused(entry):
    (frame,) = frames_for(entry.data)
    frame = frame.copy()
    numbers = frame["case_id"].str[1:].astype(int)
    frame["case_id"] = np.where(frame["system"] == "A", numbers, frame["case_id"]).astype(object)
    frame["case_id"] = [
        int(v) if s == "A" else v for v, s in zip(frame["case_id"], frame["system"], strict=True)
    ]
    with pytest.raises(JevalkitError, match="never pair"):
        run(entry, (frame,))


@pytest.mark.parametrize("entry", entries("duplicates"))
def test_duplicated_rows_are_refused(entry):
    (frame,) = frames_for(entry.data)
    doubled = pd.concat([frame, frame.iloc[:3]], ignore_index=True)
    with pytest.raises(JevalkitError, match=r"duplicated rows are not repeats|duplicate"):
        run(entry, (doubled,))


# ---- identification ------------------------------------------------------------------------


def one_case(kind: str, frames):
    if kind in ("results", "two_runs"):
        (f,) = frames
        return (f[(f["case_id"] == "q00") & (f["repeat"] == 0)],)
    if kind == "games":
        (f,) = frames
        return (f[f["case_id"] == "g00"],)
    judged, labels = frames
    return judged, labels[labels["case_id"] == "c000"]


def no_spread(kind: str, frames):
    if kind in ("results", "two_runs"):
        (f,) = frames
        return (f.assign(score=1.0, passed=True, expected_level=1.0, gold=1.0),)
    if kind == "games":
        (f,) = frames
        # the baseline A loses every game; the others play each other evenly
        loses = (f["system_a"] == "A") | (f["system_b"] == "A")
        verdict = np.where(f["system_a"] == "A", "b>a", "a>b")
        f = f.assign(
            verdict=np.where(loses, verdict, f["verdict"]),
            score=np.where(loses, np.where(f["system_a"] == "A", 0.0, 1.0), f["score"]),
        )
        return (f,)
    return frames


def no_interval_or_refused(entry, frames) -> pd.DataFrame | None:
    try:
        return run(entry, frames)
    except JevalkitError as exc:
        assert "\n" not in str(exc)  # one line
        return None


@pytest.mark.parametrize("entry", entries("one_case"))
def test_one_case_gives_no_interval(entry):
    table = no_interval_or_refused(entry, one_case(entry.data, frames_for(entry.data)))
    if table is None:
        return
    if "decision" in table:  # a gate reports the metric's interval and refuses to decide
        assert (table["decision"] == "refused").all(), table["reason"].tolist()
        return
    for low, high in interval_pairs(table):
        assert table[low].isna().all() and table[high].isna().all(), (low, table["method"].tolist())
    if "se" in table:  # one case has no standard error either (never 0)
        assert table["se"].isna().all(), table["se"].tolist()
    if "rank_low" in table:  # one case separates no system: every rank interval is every rank
        assert (table["rank_low"] == 1).all() and (table["rank_high"] == len(table)).all()


@pytest.mark.parametrize("entry", entries("no_spread"))
def test_no_variation_never_gives_a_zero_width_interval(entry):
    table = no_interval_or_refused(entry, no_spread(entry.data, frames_for(entry.data)))
    if table is None:
        return
    for low, high in interval_pairs(table):
        both = table[low].notna() & table[high].notna()
        assert (table.loc[both, high] > table.loc[both, low]).all(), table.loc[
            both, "method"
        ].tolist()
    plain = entry.data == "results" and entry.adapter is None and entry.unit == "case"
    if plain and "value" in table and ("ci_low", "ci_high") in interval_pairs(table):
        # repeats that never vary are not independent draws: their correlation cannot be
        # estimated, so an interval of a share of 1 is no narrower than Wilson's over the cases
        cases = results_frame()["case_id"].nunique()
        floor = proportion_confint(cases, cases, method="wilson")[0]
        ones = table[(table["value"] == 1.0) & table["ci_low"].notna()]
        assert (ones["ci_low"] <= floor + 1e-9).all(), (floor, ones["method"].tolist())


@pytest.mark.parametrize("entry", entries("gate"))
def test_a_gate_never_passes_on_a_missing_or_zero_width_interval(entry):
    base = frames_for(entry.data)
    for frames in (base, one_case(entry.data, base), no_spread(entry.data, base)):
        table = no_interval_or_refused(entry, frames)
        if table is None:
            continue
        passed = table[table["decision"] == "pass"]
        for low, high in interval_pairs(passed):
            assert (passed[high] > passed[low]).all() and passed[low].notna().all()


@pytest.mark.parametrize("entry", entries("gate"))
def test_a_gate_decides_a_probe_without_cases_over_its_repeats(entry):
    # one prompt run 30 times per system: A always passes, B never does. Such a probe has no
    # cases to pair; its estimand is the prompt's pass probability, and the data decide it
    frame = results_frame(n_cases=1, repeats=30)
    frame = frame[frame["system"].isin(["A", "B"])].copy()
    frame["passed"] = frame["system"] == "A"
    frame["score"] = frame["passed"].astype(float)
    table = run(entry, (frame,))
    assert not (table["decision"] == "refused").any(), table["reason"].tolist()
    assert set(table["decision"]) == ({"fail"} if entry.data == "two_runs" else {"pass", "fail"})


@pytest.mark.parametrize("entry", entries("graph"))
def test_a_disconnected_graph_is_refused_and_separation_is_unbounded(entry):
    apart = pd.concat(
        [games_frame(1, systems=("A", "B")), games_frame(2, systems=("C", "D"))], ignore_index=True
    )
    with pytest.raises(JevalkitError, match=r"\{A, B\} and \{C, D\}"):
        run(entry, (apart,))
    (games,) = frames_for("games")
    sweep = games_frame(3, systems=("W", "A")).assign(verdict="a>b", score=1.0)
    table = run(entry, (pd.concat([games, sweep], ignore_index=True),)).set_index("system")
    assert table.loc["W", "rating"] == np.inf and "not identified" in table.loc["W", "method"]


@pytest.mark.parametrize("entry", entries("one_order"))
def test_games_shown_in_one_order_are_refused(entry):
    (games,) = frames_for("games")
    numbered = games.assign(repeat=(games["position"] == "b_first").astype(int))
    for variant in (numbered.assign(position="a_first"), numbered.assign(position=None)):
        with pytest.raises(JevalkitError, match=r"one order|shown first"):
            run(entry, (variant,))


# ---- named ----------------------------------------------------------------------------------

INTERVAL_WORDS = (
    "interval",
    "bootstrap",
    "Wilson",
    "Newcombe",
    "delta",
    " t ",
    "t with",
    "no interval",
    "not estimable",
    "not identified",
)


@pytest.mark.parametrize("entry", entries("method"))
def test_method_names_the_estimand_and_the_interval(entry):
    table = run(entry, frames_for(entry.data))
    assert "method" in table and table["method"].map(lambda m: isinstance(m, str) and m != "").all()
    if interval_pairs(table):
        for method in table["method"]:
            assert any(word in method for word in INTERVAL_WORDS), method


def test_a_statistics_warning_points_at_the_line_that_called_it():
    # @estimator wraps the statistic (to read a RunResult as its rows): a warning's stacklevel
    # counts the wrapper, so the user sees their own line, not jevalkit's
    frame = pd.DataFrame({"case_id": range(5), "score": [1.0, 1.0, 1.0, 0.9, 1.0]})
    with pytest.warns(UserWarning, match="fewer than 20 units") as caught:
        mean_score(frame, case="case_id", system=None)
    assert [w.filename for w in caught] == [__file__]


# ---- settings (issue 36 item 3; one rule in the input step, issue 50) ---------------------

# adjusted over every row of a call (Holm, Benjamini-Hochberg): not one row's own number
ACROSS_ROWS = {"p_holm", "p_bh"}


def two_settings(frames, column: str):
    """Each system's repeat 0 and repeat 1 (games and judged rows without repeats: every other
    row) as two probe versions, or two generation settings (``params_hash``: T = 0 and T = 1):
    different runs a statistic must not pool."""
    frame, *rest = frames
    if "repeat" in frame and frame["repeat"].nunique() > 1:
        half = frame["repeat"].to_numpy() % 2
    else:
        half = np.arange(len(frame)) % 2
    if column == "version":
        return (frame.assign(version=half + 1), *rest)
    return (frame.assign(params_hash=np.where(half == 0, "t0", "t1")), *rest)


def rows_as_multiset(table: pd.DataFrame, columns: list[str]) -> list[tuple]:
    return sorted(
        tuple("nan" if v != v else round(float(v), 9) for v in row)
        for row in numeric(table[columns]).itertuples(index=False)
    )


@pytest.mark.parametrize("column", ["version", "params_hash"])
@pytest.mark.parametrize("entry", entries("settings"))
def test_two_versions_or_settings_of_a_system_are_never_pooled_silently(entry, column):
    # `metrics --by system` gave one row, n = 60, for trivia@1 (T = 0) and trivia@2 (T = 1):
    # kept apart, a row for each, or refused naming the column
    frames = frames_for(entry.data)
    pooled = run(entry, frames)
    moved = two_settings(frames, column)
    try:
        apart = run(entry, moved)
    except StatsError as error:
        assert column in str(error), str(error)
        return
    if "metric" in apart.columns:  # consistency needs repeats, which a half has no more
        common = set(apart["metric"]) & set(pooled["metric"])
        pooled, apart = pooled[pooled["metric"].isin(common)], apart[apart["metric"].isin(common)]
    assert len(apart) == 2 * len(pooled), (len(apart), len(pooled))
    if "system" in apart.columns:
        assert set(apart["system"]) == set(pooled["system"])
    # the rows kept apart are each setting's rows alone, the statistic of its runs only
    (frame, *rest) = moved
    alone = pd.concat(
        [run(entry, (frame[frame[column] == value], *rest)) for value in frame[column].unique()],
        ignore_index=True,
    )
    shared = [
        c
        for c in numeric(apart).columns
        if c in numeric(alone).columns and c not in ACROSS_ROWS and c != column
    ]
    assert rows_as_multiset(apart, shared) == rows_as_multiset(alone, shared)


def test_every_statistic_that_reads_a_frame_holds_the_settings_rule():
    # the rule is the input step's (prepare's pool= and its settings rule): every statistic
    # that reads a results, games or labels frame itself takes pool= and declares the check
    missing = []
    for entry in REGISTRY.values():
        if entry.adapter is not None or entry.data == "arrays":
            continue
        fn = resolve(entry.name)
        target = fn.__init__ if inspect.isclass(fn) else fn
        params = inspect.signature(target).parameters
        takes_pool = "pool" in params or any(
            p.kind is p.VAR_KEYWORD and "pool" in _unpacked(target, p) for p in params.values()
        )
        if not (takes_pool and "settings" in entry.checks):
            missing.append(entry.name)
    assert missing == [], (
        f"statistics that read a frame without pool= or the settings check: {missing}"
    )


def _unpacked(fn, parameter) -> set[str]:
    """The keywords of a ``**columns: Unpack[SomeColumns]`` parameter."""
    hint = inspect.get_annotations(inspect.unwrap(fn), eval_str=True).get(parameter.name)
    args = getattr(hint, "__args__", ())
    return set(getattr(args[0], "__annotations__", {})) if args else set()
