"""compare's test choice: McNemar on paired verdicts, the paired t-test with the Wilcoxon
signed-rank beside it on scores, the sign test on win/loss."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar

EXACT_MCNEMAR_BELOW = 25  # discordant pairs: the exact binomial form below, chi-square at or above


def paired_test(metric: str, x: np.ndarray, y: np.ndarray) -> dict:
    """The paired test of one metric: McNemar (binary verdicts), the paired t-test with the
    Wilcoxon signed-rank beside it (scores), the sign test (win/loss)."""
    d = x - y
    out: dict[str, float | str] = {"p_wilcoxon": np.nan}
    if metric == "pass_rate" and np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all():
        b = int(np.sum((x == 1) & (y == 0)))
        c = int(np.sum((x == 0) & (y == 1)))
        exact = b + c < EXACT_MCNEMAR_BELOW
        table = [[int(np.sum((x == 1) & (y == 1))), b], [c, int(np.sum((x == 0) & (y == 0)))]]
        result = mcnemar(table, exact=exact, correction=True)
        ratio = (b + 0.5) / (c + 0.5)
        out.update(
            test="McNemar, exact" if exact else "McNemar, chi-square",
            statistic=float(result.statistic),
            p_value=float(result.pvalue),
            effect_size=ratio,
            effect_size_name="discordant odds ratio (+0.5)",
        )
        return out
    if metric == "win_rate":
        wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
        p = sps.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
        share = (wins - losses) / (wins + losses) if wins + losses else 0.0
        out.update(
            test="sign test",
            statistic=float(wins),
            p_value=float(p),
            effect_size=share,
            effect_size_name="(wins - losses) / decisive cases",
        )
        return out
    sd = float(np.std(d, ddof=1)) if d.size > 1 else np.nan
    if d.size > 1 and sd > 0:
        t = sps.ttest_rel(x, y)
        stat, p = float(t.statistic), float(t.pvalue)
        out["p_wilcoxon"] = float(sps.wilcoxon(x, y).pvalue) if np.any(d != 0) else 1.0
    else:
        stat, p = np.nan, (1.0 if d.size > 1 and np.all(d == 0) else np.nan)
    test = "paired t" if metric == "mean_score" else "paired t on case pass shares"
    out.update(
        test=test,
        statistic=stat,
        p_value=p,
        effect_size=float(np.mean(d) / sd) if sd else np.nan,
        effect_size_name="Cohen's d_z",
    )
    return out
