"""Racing systems until their ranking is certified (``metrics.Race``): how many requests does it
spend against evaluating every case on every system, and how often does what it certifies
contradict the truth?

Every race is replayed with :func:`jevalkit.results.replay` (the design's own protocol, answered
from a table instead of an endpoint), at 95% confidence, for the targets ``best`` and ``top:3``,
with the empirical-Bernstein sequences (the default) and, on a fifth as many replays, the
Hoeffding race's bound (the baseline); and ``ranks`` (every pair certified that the data allow:
the strictest test of the family-wise error):

(a) simulated leaderboards: 10 to 20 systems with known means on 500 cases, one leaderboard
    per replay: the means drawn uniformly in [0.2, 0.8] (neighbours a few points apart, some
    nearly tied), and each system wins exactly round(500 mean) cases, the easiest for it (a
    case's difficulty plus the system's own noise, so systems agree on easy and hard cases as
    real ones do). The known means are the systems' means over these 500 cases, the ranking the
    race certifies (a race certifies the ranking on the benchmark's cases, not on other cases).
(b) a real systems x cases table: AlpacaEval 2.0, 58 systems x 805 instructions, win =
    weighted_alpaca_eval_gpt4_turbo preference > 1.5 (against gpt4_1106_preview, which is one of
    the 58 and wins none), read from ``data/examples/alpaca_eval_wins.csv.gz`` (long: system,
    case_id, win) or ``--table``; each replay draws the cases in another seeded order. The
    truth is the full-data ranking (the mean over all 805). ``--build-table CLONE OUT`` writes
    such a table from a clone of github.com/tatsu-lab/alpaca_eval (its
    ``results/<system>/weighted_alpaca_eval_gpt4_turbo/annotations.json``: the systems whose
    annotations are in the clone; 58 at commit cd543a1, whose larger files are Git LFS).

Printed, per setting: the requests used as a share of uniform evaluation (mean, with the
Monte Carlo 95% interval of the mean), how often the race certified its question, and how often
anything it certified is contradicted by the truth (a family-wise error: any certified pair in
the wrong order, a tie counted as wrong either way; Wilson 95% interval over the replays), and
how often its certified answer is not the truth's. Targets (issue 52): contradictions in at most
5% of replays; on the real table, at most half of uniform evaluation's requests for ``best`` and
``top:3``.

Run: ``.venv/bin/python benchmarks/bench_race.py [--reps N] [--real-reps N] [--smoke]``
(default 100 simulated and 100 real replays per target: about 15 minutes on 2 cores).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps
from sizes import parser as sizes_parser
from sizes import size
from statsmodels.stats.proportion import proportion_confint

from jevalkit.metrics import Race, RaceOutcome
from jevalkit.results import replay

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "data" / "examples" / "alpaca_eval_wins.csv.gz"
TARGETS = ("best", "top:3")
METHODS = ("empirical_bernstein", "hoeffding")
N_CASES = 500


def as_rows(scores: np.ndarray, systems: list[str]) -> pd.DataFrame:
    """A systems x cases matrix as the rows a race replays (one candidate per system and
    case)."""
    n_systems, n_cases = scores.shape
    return pd.DataFrame(
        {
            "source": np.repeat(systems, n_cases),
            "probe": "bench",
            "version": 1,
            "case_id": np.tile(np.arange(n_cases), n_systems),
            "repeat": 0,
            "score": scores.ravel(),
        }
    )


def simulated(seed: int) -> np.ndarray:
    """A leaderboard of 10-20 systems on N_CASES cases whose means are known exactly: system j
    wins its round(N m_j) easiest cases (difficulty shared by all, plus its own noise)."""
    rng = np.random.default_rng([seed, 52])
    n_systems = int(rng.integers(10, 21))
    wins = np.round(N_CASES * rng.uniform(0.2, 0.8, n_systems)).astype(int)
    hardness = rng.normal(0, 1, N_CASES) + rng.normal(0, 1, (n_systems, N_CASES))
    rank = hardness.argsort(axis=1).argsort(axis=1)
    return (rank < wins[:, None]).astype(float)


def contradicted(outcome: RaceOutcome, truth: dict[str, float]) -> bool:
    """Whether any certified pair is in the wrong order (or separates a tie)."""
    for pair in outcome.pairs.itertuples():
        a, b = truth[pair.system_a], truth[pair.system_b]
        if (pair.verdict == "a better" and not a > b) or (pair.verdict == "b better" and not b > a):
            return True
    return False


def right_answer(target: str, truth: dict[str, float]) -> set[str] | None:
    """The truth's answer to ``target`` (None when a tie at the boundary leaves it open; for
    ``ranks``, the pairs check it)."""
    if target == "ranks":
        return None
    values = sorted(truth.values(), reverse=True)
    k = 1 if target == "best" else int(target.split(":")[1])
    if len(values) > k and values[k - 1] == values[k]:
        return None
    return {s for s, v in truth.items() if v >= values[k - 1]}


def race(scores: np.ndarray, systems: list[str], target: str, method: str, seed: int):
    done = replay(
        Race(models=systems, target=target, method=method, seed=seed), as_rows(scores, systems)
    )
    return done.outcome


def summarize(label: str, records: list[dict]) -> dict:
    frame = pd.DataFrame(records)
    n = len(frame)
    share = frame["share"].to_numpy()
    half = sps.t.ppf(0.975, n - 1) * share.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
    bad = int(frame["contradicted"].sum())
    low, high = proportion_confint(bad, n, method="wilson")
    wrong = int(frame["wrong_answer"].sum())
    print(
        f"{label:<32} {share.mean():6.3f} [{share.mean() - half:.3f}, {share.mean() + half:.3f}]"
        f"  certified {frame['certified'].mean():5.1%}  contradicted {bad}/{n} = "
        f"{bad / n:5.1%} [{low:.1%}, {high:.1%}]  wrong answer {wrong}/{n}  "
        f"pairs certified {frame['pairs'].mean():.0f}"
    )
    return {"label": label, "share": share.mean(), "contradicted": bad / n}


def record(outcome: RaceOutcome, truth: dict[str, float], target: str) -> dict:
    want = right_answer(target, truth)
    return {
        "share": outcome.n_requests / outcome.n_uniform,
        "certified": outcome.certified,
        "contradicted": contradicted(outcome, truth),
        "wrong_answer": outcome.certified and want is not None and set(outcome.answer) != want,
        "pairs": int((outcome.pairs["verdict"] != "open").sum()),
    }


def load_table(path: Path) -> tuple[np.ndarray, list[str], int]:
    """A long table (system, case_id, win) as a systems x cases matrix; a missing cell (an
    instruction a system has no annotation for) counts as a loss. Also: how many were
    missing."""
    long = pd.read_csv(path)
    missing = {"system", "case_id", "win"} - set(long.columns)
    if missing:
        raise SystemExit(f"{path}: lacks the column(s) {sorted(missing)} (system, case_id, win)")
    wide = long.pivot_table(index="system", columns="case_id", values="win", aggfunc="first")
    n_missing = int(wide.isna().sum().sum())
    return wide.fillna(0.0).to_numpy(float), [str(s) for s in wide.index], n_missing


def rows(reps: int) -> list[tuple[str, str, int]]:
    """(target, method, replays) of each printed row: the default method on every replay, the
    Hoeffding baseline and ``ranks`` on a fifth of them."""
    fewer = max(2, reps // 5)
    out = [(t, m, reps if m == METHODS[0] else fewer) for t in TARGETS for m in METHODS]
    return [*out, ("ranks", METHODS[0], fewer)]


def build_table(clone: Path, out: Path) -> None:
    """The AlpacaEval wins table from a clone of tatsu-lab/alpaca_eval: one row per system and
    instruction it was annotated on (``case_id``: the instruction's place in the 805), with
    ``preference`` and ``win`` (preference > 1.5)."""
    frames = []
    for path in sorted(clone.glob("results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json")):
        try:
            annotations = pd.read_json(path)
        except ValueError:  # a Git LFS pointer, not the annotations
            continue
        frames.append(annotations.assign(system=path.parts[-3]))
    if not frames:
        raise SystemExit(f"{clone}: no results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json")
    every = pd.concat(frames, ignore_index=True).drop_duplicates(["system", "instruction"])
    order = {text: i for i, text in enumerate(dict.fromkeys(frames[0]["instruction"]))}
    every["case_id"] = every["instruction"].map(order)
    every["win"] = (every["preference"] > 1.5).astype(int)
    table = every[["system", "case_id", "preference", "win"]].sort_values(["system", "case_id"])
    table.to_csv(out, index=False)
    print(f"{out}: {table['system'].nunique()} systems, {len(table)} rows")


def main() -> None:
    parser = sizes_parser(__doc__)
    parser.add_argument("--reps", type=int, default=100, help="simulated leaderboards")
    parser.add_argument("--real-reps", type=int, default=100, help="replays of the real table")
    parser.add_argument("--table", type=Path, default=TABLE, help="the real systems x cases table")
    parser.add_argument(
        "--build-table",
        nargs=2,
        type=Path,
        metavar=("CLONE", "OUT"),
        help="write the real table from a clone of tatsu-lab/alpaca_eval, then stop",
    )
    args = parser.parse_args()
    if args.build_table:
        build_table(*args.build_table)
        return
    reps, real_reps = size((args.reps, args.real_reps), (4, 2))
    start = time.perf_counter()
    print(f"(a) simulated leaderboards: 10-20 systems x {N_CASES} cases, {reps} per row")
    print(f"{'':<32} requests / uniform [MC 95%]")
    for target, method, n in rows(reps):
        records = []
        for seed in range(n):
            scores = simulated(seed)
            systems = [f"s{j:02d}" for j in range(len(scores))]
            outcome = race(scores, systems, target, method, seed)
            truth = dict(zip(systems, scores.mean(axis=1), strict=True))
            records.append(record(outcome, truth, target))
        summarize(f"{target}, {method}", records)
    if not args.table.exists():
        print(f"\n(b) real table: {args.table} not found (give --table PATH); skipped")
    else:
        scores, systems, n_missing = load_table(args.table)
        truth = dict(zip(systems, scores.mean(axis=1), strict=True))
        print(
            f"\n(b) real table: {len(systems)} systems x {scores.shape[1]} cases "
            f"({args.table.name}; {n_missing} cells without an annotation, counted as losses), "
            f"{real_reps} seeded orders per row"
        )
        for target, method, n in rows(real_reps):
            records = [
                record(race(scores, systems, target, method, seed), truth, target)
                for seed in range(n)
            ]
            summarize(f"{target}, {method}", records)
        print("targets: contradicted at most 5%; real table: requests / uniform at most 0.50")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
