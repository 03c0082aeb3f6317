"""Item response models (1PL, 2PL) fitted by marginal maximum likelihood (Bock-Aitkin EM).

Why our own fit: no maintained, lightweight implementation exists. ``girth`` (MIT, numpy and
scipy only) had its last release in 2021 and ``py-irt`` needs torch and pyro; the tests use
``girth``'s ``twopl_mml`` as the reference fit (item parameters agree to within 0.05 on 2,000
simulated systems) and recover the true parameters of simulated 2PL data.

The model: system s answers item j with probability sigmoid(a_j theta_s + c_j), the difficulty
is b_j = -c_j / a_j and the discrimination a_j (one a shared by every item in the 1PL).
Identification: abilities follow a standard normal over the systems (fixing location and scale);
the sign is fixed so that the mean discrimination is positive. The abilities are integrated out
on 41 equally spaced quadrature points over [-5, 5]; for the 1PL more when the systems'
posteriors are narrower than their spacing (many items, steep slopes: up to 801, the spacing
no wider than 1.5 narrowest posterior SDs; 41 points moved the common slope by 15-28%, 2.50
against the MML's 2.94 on 60 systems x 200 items of slope 3); each EM step updates every item by Newton's method on its
expected counts. Weak normal priors, a ~ N(1, 2.5^2) and c ~ N(0, 5^2) (in the 1PL a ~ N(1, 10^2)
and c ~ N(0, (5 a)^2), b ~ N(0, 5^2) in effect, so a steep common slope is not pulled down: it
agrees with a direct MML within 1%), keep the items that all
but one system solve finite (penalised MML; on 60 systems the penalty is what separates a large
slope from an infinite one). Proportion scores (averaged repeats, partial credit in [0, 1])
enter as fractional binomial outcomes weighted by their number of repeats.

Each system's ability is its posterior mean (EAP) with the posterior SD as standard error, so a
system that solved everything still has a finite ability with a wide interval. Items every
system scored alike (or seen by fewer than two systems) cannot be calibrated: they stay in the
table with NaN parameters and a ``status`` saying why.
"""

from __future__ import annotations

import functools
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit

from ..contract import (
    CASE_COLUMNS,
    CaseSpec,
    Result,
    RowsResult,
    ScoreColumns,
    ScoreMatrix,
    estimator,
    not_a_statistic,
    require_connected,
    require_systems,
    score_matrix,
)
from ..datafiles import schema_validator, validate_data
from ..errors import StatsError
from ..files import read_file, write_file
from ..jsontext import content_hash, json_line
from ..results import table_html

NODES = np.linspace(-5.0, 5.0, 41)
PRIOR = np.exp(-0.5 * NODES**2) / np.exp(-0.5 * NODES**2).sum()
SLOPE_PRIOR = (1.0, 2.5)
# one slope shared by every item is informed by every system: its prior only guards a perfect
# (Guttman) pattern; N(1, 2.5^2) moved a slope of 2.9 by 1.3% on 40 systems
COMMON_SLOPE_PRIOR = (1.0, 10.0)
INTERCEPT_SD = 5.0
MAX_NODES = 801
IrtModel = Literal["1pl", "2pl"]
MIN_SYSTEMS: dict[IrtModel, int] = {"1pl": 5, "2pl": 10}
FIT_FORMAT = "jevalkit-irt-fit"
MAX_FIT_BYTES = 256 * 1024**2  # a fit of 1,000 systems x 10,000 items with their scores fits
# |discrimination| and |intercept| of a saved fit: its priors (a ~ N(1, 2.5^2), c ~ N(0, 5^2);
# the 1PL's slope N(1, 10^2)) keep fitted values within tens; 1,000 leaves every probability
# finite on the ability grid (a x 5 + c far from overflow)
MAX_PARAMETER = 1e3
# how much likelier a new system's answers must be beyond the fitted systems' abilities than
# within them for IrtFit.beyond_range to say so
BEYOND_RATIO = 3.0
_ITEM_NUMBERS = ("difficulty", "discrimination", "intercept", "mean_score", "infit", "outfit")
_SYSTEM_NUMBERS = ("ability", "ability_se", "mean_score")


@dataclass(frozen=True)
class IrtFit(Result):
    """A fitted item response model: ``.table()`` is the items (with ``method``), ``systems``
    the abilities; in Jupyter it shows both.

    Attributes:
        model: ``1pl`` or ``2pl``.
        items: one row per item: the case columns, ``difficulty`` (b), ``discrimination`` (a),
            ``intercept`` (c = -a b), ``n_systems``, ``mean_score``, ``infit`` and ``outfit``
            (mean-square residuals at the systems' abilities; near 1 when the item fits, above
            1.3 noisy, below 0.7 too predictable), ``status`` (``ok``, or why not estimable).
        systems: one row per system: ``system``, ``ability`` (EAP, standard-normal scale),
            ``ability_se`` (posterior SD), ``n_items`` scored, ``mean_score``.
        loglik, aic, bic: the marginal log-likelihood and information criteria.
        converged, n_iter: of the EM.
        matrix: the system x item scores the model was fitted to.
        method: what was fitted, and how.
        n_calibrated: items with estimated parameters (status ``ok``).
        benchmark: the ``(probe, version)`` pairs of the results it was fitted on, when they
            have those columns (an active plan with this prior runs only on them; empty: not
            known, as for a table without them).

    Example:
        >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=10, seed=0), case="case_id")
        >>> fit.table().columns[-2:].tolist(), fit.scalars()["n_calibrated"]
        (['status', 'method'], 10)
        >>> "<table" in fit._repr_html_()
        True
    """

    _unpack = None  # a table's answer: no length, no unpacking (the rows are .table())

    model: str
    items: pd.DataFrame
    systems: pd.DataFrame
    loglik: float
    aic: float
    bic: float
    converged: bool
    n_iter: int
    matrix: ScoreMatrix = field(repr=False)
    method: str = ""
    n_calibrated: int = 0
    benchmark: tuple[tuple[str, int], ...] = ()

    def table(self) -> pd.DataFrame:
        """One row per item: its case columns, ``difficulty``, ``discrimination``,
        ``intercept``, ``n_systems``, ``mean_score``, ``infit``, ``outfit``, ``status``,
        ``method``."""
        return self.items.assign(method=self.method)

    def _repr_html_(self) -> str:
        head = (
            f"{self.model.upper()}: {self.n_calibrated} of {len(self.items)} items calibrated "
            f"on {len(self.systems)} systems; log-likelihood {self.loglik:.1f}, AIC "
            f"{self.aic:.1f}, BIC {self.bic:.1f}, converged {self.converged}"
        )
        systems = table_html(self.systems, max_rows=30)
        items = table_html(self.items, max_rows=30)
        return (
            f"<div><strong>IrtFit</strong><p>{html.escape(head)}</p>{systems}{items}"
            f"<p><small>{html.escape(self.method)}</small></p></div>"
        )

    def posterior(self, scores: np.ndarray, weight: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Posterior weights over the quadrature nodes of abilities, one row per system, given
        scores on the item ``columns`` (indices into ``items``).

        Example:
            >>> fit = fit_irt(simulate_2pl(n_systems=50, n_items=10, seed=0), case="case_id")
            >>> post = fit.posterior(np.ones((1, 3)), np.ones((1, 3)), np.array([0, 1, 2]))
            >>> post.shape, bool(post[0] @ NODES > 0)
            ((1, 41), True)
        """
        a = self.items["discrimination"].to_numpy()[columns]
        c = self.items["intercept"].to_numpy()[columns]
        return _posterior(np.nan_to_num(scores), weight, a, c)

    def ability_loglik(
        self, scores: np.ndarray, weight: np.ndarray, columns: np.ndarray
    ) -> np.ndarray:
        """The log-likelihood of each system's scores on the item ``columns`` at every
        quadrature node of abilities (:data:`NODES`), one row per system: the posterior
        without its prior (:meth:`beyond_range` reads it).

        Example:
            >>> fit = fit_irt(simulate_2pl(n_systems=50, n_items=10, seed=0), case="case_id")
            >>> ll = fit.ability_loglik(np.ones((1, 3)), np.ones((1, 3)), np.array([0, 1, 2]))
            >>> ll.shape, bool(ll[0, -1] > ll[0, 0])
            ((1, 41), True)
        """
        a = self.items["discrimination"].to_numpy()[columns]
        c = self.items["intercept"].to_numpy()[columns]
        return _loglik_nodes(np.nan_to_num(scores), weight, a, c, NODES)

    def beyond_range(self, loglik: np.ndarray) -> str:
        """Where a new system's answers put its ability against the fitted systems' range
        (:attr:`ability_range`): ``"above"`` or ``"below"`` when their likelihood (``loglik``,
        one value per node of :data:`NODES`) is highest beyond it and there at least
        ``BEYOND_RATIO`` (1.5) times its highest within, else ``""``. There the item model has
        seen no system like it: its predictions are extrapolations.

        Why a likelihood ratio: the posterior's standard-normal prior pulls a system known from
        a few answers towards the middle (a system far above every past one kept its posterior
        mean inside the range after 25 answers), a flat prior over the grid read two failures
        as "below the range" (the grid reaches further than the fitted systems), and the
        likelihood's peak alone falls just outside for a system at the edge (10% of systems
        held out of a simulated 2PL at k = 10 and 25). At 1.5, on the answers of a whole plan,
        it flagged 1 of 105 plans (k = 10, 25, 50) of 35 systems held out inside the range
        of three simulated benchmarks, the highest held out of an AlpacaEval-like one in all
        3, and a system far above every past one (ability 3.5 against past N(0, 1) on sharp
        items) in 79 / 88 / 100% of 24 plans at k = 10 / 25 / 50.

        Example:
            >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=20, seed=0), case="case_id")
            >>> fit.beyond_range(5.0 * NODES), fit.beyond_range(np.zeros(NODES.size))
            ('above', '')
        """
        low, high = self.ability_range
        loglik = np.asarray(loglik, dtype=float)
        if loglik.shape != NODES.shape or not np.isfinite(loglik).any():
            raise StatsError(
                f"loglik must hold one finite log-likelihood per ability node ({NODES.size}, "
                f"as ability_loglik gives one row of), got shape {loglik.shape}"
            )
        inside = loglik[(low <= NODES) & (high >= NODES)].max()
        for side, nodes in (("above", high < NODES), ("below", low > NODES)):
            if nodes.any() and loglik[nodes].max() >= inside + np.log(BEYOND_RATIO):
                return side
        return ""

    @property
    def ability_range(self) -> tuple[float, float]:
        """The range of abilities the item model calibrates: from the second-lowest to the
        second-highest ability (EAP) of the fitted systems (one system alone at an end does
        not calibrate the items only it separates; all of them when fewer than 4).

        Example:
            >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=20, seed=0), case="case_id")
            >>> low, high = fit.ability_range
            >>> ability = fit.systems["ability"]
            >>> bool(ability.min() < low < 0 < high < ability.max())
            True
        """
        ability = np.sort(self.systems["ability"].dropna().to_numpy(float))
        end = 1 if ability.size >= 4 else 0
        return float(ability[end]), float(ability[-1 - end])

    def save(self, path: str | Path, *, scores: bool = True) -> Path:
        """Write the fit to a JSON file that :func:`load_fit` reads back (the same numbers, so
        a benchmark's maintainers can publish the item model new systems are scored with).

        ``scores=False`` leaves out the past systems' score matrix (their names and abilities
        stay): enough to choose and score anchors, not to refit. The file is written whole
        or not at all (a temporary file renamed over the target).

        Example:
            >>> import tempfile
            >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=10, seed=0), case="case_id")
            >>> path = fit.save(Path(tempfile.mkdtemp()) / "fit.json")
            >>> load_fit(path).items.equals(fit.items)
            True
        """
        text = json.dumps(self._record(scores=scores), allow_nan=False, separators=(",", ":"))
        return Path(write_file(path, text + "\n", StatsError, what="item model"))

    @functools.cached_property
    def content_hash(self) -> str:
        """sha256 of the fit's content: the canonical JSON (sorted keys, no spaces) of what
        :meth:`save` writes (the score matrix included when the fit holds one), so a fit and
        the file it was saved to, read back, have one hash, and a changed number changes it.
        An active plan names its prior by it (a file replaced under the same name is another
        prior).

        Example:
            >>> import tempfile
            >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=10, seed=0), case="case_id")
            >>> path = fit.save(Path(tempfile.mkdtemp()) / "fit.json")
            >>> load_fit(path).content_hash == fit.content_hash, len(fit.content_hash)
            (True, 64)
            >>> content_hash(json.loads(path.read_text())) == fit.content_hash
            True
        """
        return content_hash(self._record(scores=len(self.matrix.systems) > 0))

    def _record(self, *, scores: bool) -> dict[str, Any]:
        """The JSON-ready record :meth:`save` writes (NaN as null)."""
        m = self.matrix
        record = {
            "format": FIT_FORMAT,
            "version": 1,
            "model": self.model,
            "case_columns": [str(c) for c in m.items.columns],
            "columns": _plain(m.columns),
            "case_label": m.case_label,
            "items": {c: _plain(self.items[c].tolist()) for c in self.items.columns},
            "systems": {c: _plain(self.systems[c].tolist()) for c in self.systems.columns},
            "loglik": self.loglik,
            "aic": self.aic,
            "bic": self.bic,
            "converged": bool(self.converged),
            "n_iter": int(self.n_iter),
            "method": self.method,
            "n_calibrated": int(self.n_calibrated),
            **({"benchmark": [list(pair) for pair in self.benchmark]} if self.benchmark else {}),
            "matrix": None
            if not scores
            else {
                "systems": list(m.systems),
                "scores": _plain(m.scores.tolist()),
                "weight": m.weight.astype(int).tolist(),
                "flips": m.flips.astype(bool).tolist(),
                "n_missing": np.asarray(m.n_missing).astype(int).tolist(),
            },
        }
        return _plain(record)


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars as Python's, NaN as null, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_FIT_SCHEMA = {
    "type": "object",
    "required": [
        "format",
        "version",
        "model",
        "case_columns",
        "columns",
        "items",
        "systems",
        "loglik",
        "aic",
        "bic",
        "converged",
        "n_iter",
        "method",
        "n_calibrated",
        "matrix",
    ],
    "properties": {
        "format": {"const": FIT_FORMAT},
        "version": {"const": 1},
        "model": {"enum": list(MIN_SYSTEMS)},
        "case_columns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "columns": {"type": "object", "required": ["system", "case", "score"]},
        "items": {
            "type": "object",
            "required": [*_ITEM_NUMBERS, "n_systems", "status"],
            "additionalProperties": {"type": "array"},
        },
        "systems": {
            "type": "object",
            "required": ["system", *_SYSTEM_NUMBERS, "n_items"],
            "additionalProperties": {"type": "array"},
        },
        "method": {"type": "string"},
        "converged": {"type": "boolean"},
        "n_iter": {"type": "integer"},
        "n_calibrated": {"type": "integer"},
        "benchmark": {
            "type": "array",
            "items": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 1}],
                "minItems": 2,
                "maxItems": 2,
            },
        },
        "matrix": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["systems", "scores", "weight", "flips", "n_missing"],
                    "properties": {
                        "systems": {"type": "array", "items": {"type": "string"}},
                        "scores": {"type": "array", "items": {"type": "array"}},
                        "weight": {"type": "array", "items": {"type": "array"}},
                        "flips": {"type": "array", "items": {"type": "array"}},
                        "n_missing": {"type": "array", "items": {"type": "integer"}},
                    },
                },
            ]
        },
    },
}


@not_a_statistic("file I/O: reads an item model written by IrtFit.save")
def load_fit(path: str | Path) -> IrtFit:
    """Read an item model written by :meth:`IrtFit.save` (the same numbers as the saved fit).

    A file that is not such a model is refused in one line naming it and the problem.

    Example:
        >>> import tempfile
        >>> fit = fit_irt(simulate_2pl(n_systems=30, n_items=10, seed=0), case="case_id")
        >>> again = load_fit(fit.save(Path(tempfile.mkdtemp()) / "fit.json"))
        >>> again.model, again.n_calibrated, again.matrix.item_ids() == fit.matrix.item_ids()
        ('2pl', 10, True)
    """
    path = Path(path)
    # a regular file of bounded size only: a FIFO would wait for a writer, /dev/zero never end
    raw = read_file(path, StatsError, max_bytes=MAX_FIT_BYTES, what="item model")
    fix = "; write it with IrtFit.save (jevalkit items RESULTS --irt 2pl --save-fit PATH)"
    data = json_line(raw, str(path), StatsError, what="an item model (JSON)", fix=fix)
    if not isinstance(data, dict) or data.get("format") != FIT_FORMAT:
        raise StatsError(f'{path}: not a jevalkit item model (no "format": "{FIT_FORMAT}"){fix}')
    validate_data(data, _FIT_VALIDATOR, path, StatsError, fix)
    try:
        return _fit_from(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise StatsError(f"{path}: not a consistent item model ({exc}){fix}") from None


def _fit_from(data: dict) -> IrtFit:
    items = pd.DataFrame(data["items"])
    systems = pd.DataFrame(data["systems"])
    case_columns = data["case_columns"]
    n = len(items)
    missing = [c for c in case_columns if c not in items.columns]
    if missing or n == 0:
        raise ValueError(
            f"the item table lacks its case column(s) {missing}" if missing else "no items"
        )
    for column in _ITEM_NUMBERS:
        items[column] = pd.to_numeric(items[column]).astype(float)
    items["n_systems"] = items["n_systems"].astype(int)
    items.columns = pd.Index(items.columns, dtype=object)  # as fit_irt builds it
    for column in _SYSTEM_NUMBERS:
        systems[column] = systems[column].astype(float)
    systems["system"] = systems["system"].astype(str)
    systems["n_items"] = systems["n_items"].astype(int)
    ok = items["status"].eq("ok").to_numpy()
    if ok.sum() != data["n_calibrated"]:
        raise ValueError(f"n_calibrated is {data['n_calibrated']}, the item table has {ok.sum()}")
    parameters = items.loc[ok, ["discrimination", "intercept"]].to_numpy()
    if not np.isfinite(parameters).all():
        raise ValueError("a calibrated item has no discrimination or intercept")
    if (np.abs(parameters) > MAX_PARAMETER).any():
        # a finite 1e308 overflows a * ability to inf, and inf - inf is NaN: the probabilities
        # of an active plan's draws would be NaN after its first wave
        worst = float(np.abs(parameters).max())
        raise ValueError(
            f"a calibrated item's discrimination or intercept is {worst:g}, beyond the "
            f"+/-{MAX_PARAMETER:g} any fit reaches (its priors keep them within tens)"
        )
    abilities = systems[["ability", "ability_se"]].to_numpy(dtype=float)
    if (np.abs(np.nan_to_num(abilities)) > MAX_PARAMETER).any():
        raise ValueError(f"an ability or its SE is beyond +/-{MAX_PARAMETER:g}")
    means = items["mean_score"].dropna()
    if not means.between(0, 1).all():
        raise ValueError(f"a mean_score is {means[~means.between(0, 1)].iloc[0]!r}, not in [0, 1]")
    columns = _columns_of(data["columns"], case_columns)
    m = data["matrix"]
    if m is None:
        scores = np.zeros((0, n))
        weight, flips, n_missing, names = (
            scores.astype(int),
            scores.astype(bool),
            np.zeros(0, int),
            [],
        )
    else:
        names = list(m["systems"])
        scores = np.array(m["scores"], dtype=float).reshape(len(names), n)
        weight = np.array(m["weight"], dtype=int).reshape(len(names), n)
        flips = np.array(m["flips"], dtype=bool).reshape(len(names), n)
        n_missing = np.array(m["n_missing"], dtype=int).reshape(len(names))
    matrix = ScoreMatrix(
        names,
        items[case_columns].copy(),
        scores,
        weight,
        flips,
        n_missing,
        data.get("case_label") or "+".join(case_columns),
        columns,
    )
    return IrtFit(
        model=data["model"],
        items=items,
        systems=systems,
        loglik=float(data["loglik"]),
        aic=float(data["aic"]),
        bic=float(data["bic"]),
        converged=bool(data["converged"]),
        n_iter=int(data["n_iter"]),
        matrix=matrix,
        method=data["method"],
        n_calibrated=int(data["n_calibrated"]),
        benchmark=tuple((str(p), int(v)) for p, v in data.get("benchmark", [])),
    )


def _columns_of(saved: dict, case_columns: list[str]) -> dict:
    """The saved fit's column names, checked: they name the item table's case columns, and a
    scale is two numbers, low below high (else the results of a new system are read with
    them only after a run has sent its first requests)."""
    columns = dict(saved)
    unknown = sorted(set(columns) - set(ScoreColumns.__annotations__))
    if unknown:
        raise ValueError(f"columns name {unknown}, not columns a score matrix reads")
    case = columns["case"]
    if (list(case) if isinstance(case, list) else [case]) != list(case_columns):
        raise ValueError(f"columns.case is {case!r}, the item table's case columns {case_columns}")
    for name in ("system", "score"):
        if not isinstance(columns[name], str):
            raise ValueError(f"columns.{name} is {columns[name]!r}, not a column name")
    columns["case"] = tuple(case) if isinstance(case, list) else case
    if not isinstance(columns.get("repeat", ""), str | None):
        raise ValueError(f"columns.repeat is {columns['repeat']!r}, not a column name or null")
    if not isinstance(columns.get("pool", False), bool):
        raise ValueError(f"columns.pool is {columns['pool']!r}, not true or false")
    scale = columns.get("scale")
    if scale is not None:
        ok = isinstance(scale, list) and len(scale) == 2
        ok = ok and all(isinstance(x, int | float) and not isinstance(x, bool) for x in scale)
        if not (ok and math.isfinite(scale[0]) and math.isfinite(scale[1]) and scale[0] < scale[1]):
            raise ValueError(f"columns.scale is {scale!r}, not [low, high] with low below high")
        columns["scale"] = tuple(scale)
    return columns


def _grid(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """``n_nodes`` equally spaced ability nodes over [-5, 5] and their N(0, 1) weights."""
    nodes = np.linspace(-5.0, 5.0, n_nodes)
    prior = np.exp(-0.5 * nodes**2)
    return nodes, prior / prior.sum()


def _nodes_needed(y, w, a, c, nodes, prior) -> int:
    """The nodes the rectangle rule needs for these systems: spacing no wider than 1.5 times
    the narrowest posterior SD of an ability (from the test information at its EAP). The rule's
    error on a posterior of SD sigma falls as exp(-2 pi^2 sigma^2 / h^2), 1.5e-4 at h =
    1.5 sigma, but a spacing wider than the posterior integrates a spike by where it falls between
    nodes, and the marginal likelihood of a common slope turns bumpy: on 60 systems x 200 items
    of slope 3, 41 nodes gave a slope of 2.50 against 2.94 with 101 nodes or more."""
    theta = _posterior(y, w, a, c, nodes, prior) @ nodes
    p = expit(np.outer(theta, a) + c)
    info = (w * p * (1 - p)) @ (a**2) + 1.0  # + 1: the N(0, 1) prior's
    spacing = 1.5 * float(np.min(1 / np.sqrt(info)))  # error exp(-2 pi^2 / 1.5^2) ~ 1.5e-4
    if spacing >= nodes[1] - nodes[0]:
        return nodes.size
    return int(min(np.ceil(10.0 / spacing) + 1, MAX_NODES))


def _posterior(
    y: np.ndarray,
    w: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    nodes: np.ndarray = NODES,
    prior: np.ndarray = PRIOR,
) -> np.ndarray:
    loglik = _loglik_nodes(y, w, a, c, nodes) + np.log(prior)
    loglik -= loglik.max(axis=1, keepdims=True)
    post = np.exp(loglik)
    return post / post.sum(axis=1, keepdims=True)


def _loglik_nodes(y, w, a, c, nodes) -> np.ndarray:
    """Each system's log-likelihood (rows of y, w) at every node of abilities."""
    eta = np.outer(a, nodes) + c[:, None]  # items x nodes
    # log sigmoid(-eta) = log sigmoid(eta) - eta: one log_expit, not two
    return w @ log_expit(eta) - (w * (1 - y)) @ eta


_FIT_VALIDATOR = schema_validator(_FIT_SCHEMA)


def _marginal_loglik(y, w, a, c, nodes=NODES, prior=PRIOR) -> float:
    loglik = _loglik_nodes(y, w, a, c, nodes) + np.log(prior)
    top = loglik.max(axis=1, keepdims=True)
    return float((top[:, 0] + np.log(np.exp(loglik - top).sum(axis=1))).sum())


def _m_step_2pl(r: np.ndarray, n: np.ndarray, a: np.ndarray, c: np.ndarray, nodes: np.ndarray):
    mu_a, sd_a = SLOPE_PRIOR
    for _ in range(3):
        p = expit(np.outer(a, nodes) + c[:, None])
        resid = r - n * p
        info = n * p * (1 - p)
        g_a = resid @ nodes - (a - mu_a) / sd_a**2
        g_c = resid.sum(axis=1) - c / INTERCEPT_SD**2
        h_aa = info @ nodes**2 + 1 / sd_a**2
        h_ac = info @ nodes
        h_cc = info.sum(axis=1) + 1 / INTERCEPT_SD**2
        det = h_aa * h_cc - h_ac**2
        step_a = (h_cc * g_a - h_ac * g_c) / det
        step_c = (h_aa * g_c - h_ac * g_a) / det
        a, c = a + np.clip(step_a, -1, 1), c + np.clip(step_c, -2, 2)
    return a, c


def _m_step_1pl(r: np.ndarray, n: np.ndarray, a: np.ndarray, c: np.ndarray, nodes: np.ndarray):
    mu_a, sd_a = COMMON_SLOPE_PRIOR
    for _ in range(3):
        # the intercepts' prior on the difficulty scale, c = -a b with b ~ N(0, 5^2): an SD of 5
        # on c itself is tight under a steep common slope and pulled it down (2.78 against the
        # MML's 2.93 on 40 systems x 80 items of slope 3)
        sd_c = INTERCEPT_SD * max(abs(float(a[0])), 1.0)
        p = expit(np.outer(a, nodes) + c[:, None])
        resid, info = r - n * p, n * p * (1 - p)
        c = c + np.clip(
            (resid.sum(axis=1) - c / sd_c**2) / (info.sum(axis=1) + 1 / sd_c**2),
            -2,
            2,
        )
        p = expit(np.outer(a, nodes) + c[:, None])
        resid, info = r - n * p, n * p * (1 - p)
        g = (resid @ nodes).sum() - (a[0] - mu_a) / sd_a**2
        h = (info @ nodes**2).sum() + 1 / sd_a**2
        a = a + np.clip(g / h, -1, 1)
    return a, c


def respondents(frame: pd.DataFrame) -> pd.DataFrame:
    """The contract test's adapter input for the item models: each system's repeats as
    respondents of their own (the standard frame's 3 systems x 2 repeats give 6; the 1PL
    needs 5), the repeat column dropped.

    Example:
        >>> f = pd.DataFrame({"system": ["a", "a"], "repeat": [0, 1], "case_id": "q", "score": 1.0})
        >>> respondents(f)["system"].tolist()
        ['a/0', 'a/1']
    """
    people = frame["system"].astype(str) + "/" + frame["repeat"].astype(str)
    return frame.assign(system=people).drop(columns="repeat")


def _fit_irt_adapter(frame: pd.DataFrame) -> IrtFit:
    return fit_irt(respondents(frame), model="1pl", case="case_id")


@estimator(
    unit="item",
    estimand="1PL/2PL item parameters; EAP abilities",
    interval="posterior SD of each ability",
    checks=("order", "rename", "scale", "keys", "duplicates", "one_case", "no_spread", "method"),
    adapter=_fit_irt_adapter,
    note="parameter recovery and girth's fit in tests/items/test_irt.py",
)
def fit_irt(
    df: pd.DataFrame,
    *,
    system: str = "system",
    case: CaseSpec = CASE_COLUMNS,
    score: str = "score",
    scale: tuple[float, float] | None = None,
    model: IrtModel = "2pl",
    max_iter: int = 500,
    tol: float = 1e-4,
    pool: bool = False,
) -> IrtFit:
    """Fit a 1PL or 2PL item response model to systems' scores (binary or proportions in [0, 1]).

    Args:
        df: results, one row per system x case x repeat (repeats are averaged per cell).
        system, case, score: the columns naming the system, the item (one column or several)
            and its score (in [0, 1], or rescaled by ``scale=(low, high)``).
        model: ``2pl`` (a difficulty and a discrimination per item) or ``1pl`` (one shared
            discrimination).
        max_iter, tol: EM stops when no parameter moves more than ``tol``.
        pool: pool a system's probe versions or generation settings on purpose; by default
            they are refused, naming the column (the matrix's input step).

    Returns:
        An :class:`IrtFit`. Refuses (StatsError, one line) with fewer than 5 systems (1PL) or
        10 (2PL), when systems share no items, or when no item varies across systems.

    Example:
        >>> from jevalkit.items import simulate_2pl
        >>> fit = fit_irt(simulate_2pl(n_systems=200, n_items=20, seed=1), case="case_id")
        >>> bool(fit.items["status"].eq("ok").all()), abs(round(float(fit.systems["ability"].mean()), 1))
        (True, 0.0)
    """
    if model not in MIN_SYSTEMS:
        raise StatsError(f"model must be '1pl' or '2pl', got {model!r}")
    matrix = score_matrix(df, system=system, case=case, score=score, scale=scale, pool=pool)
    require_systems(matrix, MIN_SYSTEMS[model], f"a {model.upper()} fit (to calibrate items)")
    require_connected(matrix)
    y_all, w_all = np.nan_to_num(matrix.scores), matrix.weight.astype(float)
    seen = matrix.observed
    n_sys = seen.sum(axis=0)
    with np.errstate(invalid="ignore"):
        low = np.where(seen, matrix.scores, np.inf).min(axis=0)
        high = np.where(seen, matrix.scores, -np.inf).max(axis=0)
    status = np.where(
        n_sys < 2,
        "not estimable: scored by fewer than 2 systems",
        np.where(
            high <= low,
            np.char.add("not estimable: every system scored ", np.char.mod("%g", low)),
            "ok",
        ),
    ).astype(object)
    use = status == "ok"
    if not use.any():
        raise StatsError(
            "no item varies across systems (every system scored each item alike): nothing "
            "separates the systems, so no item can be calibrated"
        )
    y, w = y_all[:, use], w_all[:, use]
    mean = (w * y).sum(axis=0) / w.sum(axis=0)
    c = np.log(np.clip(mean, 0.02, 0.98) / (1 - np.clip(mean, 0.02, 0.98)))
    a = np.ones(use.sum())
    step = _m_step_2pl if model == "2pl" else _m_step_1pl
    converged, it = False, 0
    nodes, prior = NODES, PRIOR
    while True:
        converged = False
        while it < max_iter:
            it += 1
            post = _posterior(y, w, a, c, nodes, prior)
            n, r = w.T @ post, (w * y).T @ post
            a_new, c_new = step(r, n, a, c, nodes)
            moved = max(np.abs(a_new - a).max(), np.abs(c_new - c).max())
            a, c = a_new, c_new
            if moved < tol:
                converged = True
                break
        # posteriors narrower than the node spacing (many items, steep slopes): refit on a
        # grid fine enough for them, from where this fit stopped
        # (the 1PL's; a 2PL's per-item slopes on tens of systems are too noisy for it to pay
        # its cost, 5-10 times the time on 60 x 1,000)
        needed = _nodes_needed(y, w, a, c, nodes, prior) if model == "1pl" else 0
        if needed <= nodes.size or it >= max_iter:
            break
        nodes, prior = _grid(needed)
    if a.mean() < 0:  # the reflection theta -> -theta gives the same likelihood
        a = -a
    post = _posterior(y, w, a, c, nodes, prior)
    ability = post @ nodes
    ability_se = np.sqrt(np.maximum(post @ nodes**2 - ability**2, 0))
    p = expit(np.outer(ability, a) + c)
    var = np.where(w > 0, p * (1 - p), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        z2 = np.where(w > 0, w * (y - p) ** 2 / var, np.nan)
        outfit = np.nanmean(z2, axis=0)
        infit = np.nansum(w * (y - p) ** 2, axis=0) / np.nansum(w * var, axis=0)
    loglik = _marginal_loglik(y, w, a, c, nodes, prior)
    k = (2 * a.size) if model == "2pl" else (a.size + 1)
    n_obs = int((w > 0).sum())
    full = lambda v: _spread(v, use)  # noqa: E731
    items = matrix.items.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        items["difficulty"] = full(-c / a)
        items["discrimination"] = full(a)
    items["intercept"] = full(c)
    items["n_systems"] = n_sys.astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):
        items["mean_score"] = np.where(
            n_sys > 0, (w_all * y_all).sum(axis=0) / np.maximum(w_all.sum(axis=0), 1e-300), np.nan
        )
    items["infit"] = full(infit)
    items["outfit"] = full(outfit)
    items["status"] = status
    with np.errstate(invalid="ignore"):
        sys_mean = (w_all * y_all).sum(axis=1) / w_all.sum(axis=1)
    systems = pd.DataFrame(
        {
            "system": matrix.systems,
            "ability": ability,
            "ability_se": ability_se,
            "n_items": seen[:, use].sum(axis=1).astype(int),
            "mean_score": sys_mean,
        }
    )
    priors = (
        "a ~ N(1, 10^2), c ~ N(0, (5 a)^2)" if model == "1pl" else "a ~ N(1, 2.5^2), c ~ N(0, 5^2)"
    )
    method = (
        f"{model.upper()} by marginal maximum likelihood (EM, {nodes.size} quadrature points, "
        f"abilities N(0, 1); weak priors {priors}); "
        f"{int(use.sum())} of {use.size} "
        f"items calibrated on {len(matrix.systems)} systems; abilities EAP with posterior SD"
    )
    return IrtFit(
        model=model,
        items=items.reset_index(drop=True),
        systems=systems,
        loglik=loglik,
        aic=2 * k - 2 * loglik,
        bic=k * np.log(n_obs) - 2 * loglik,
        converged=converged,
        n_iter=it,
        matrix=matrix,
        method=method,
        n_calibrated=int(use.sum()),
        benchmark=benchmark_of(df),
    )


def benchmark_of(df: pd.DataFrame) -> tuple[tuple[str, int], ...]:
    """The ``(probe, version)`` pairs of results rows, sorted; empty when the frame lacks
    either column or a version is not a whole number (a table from elsewhere).

    Example:
        >>> benchmark_of(pd.DataFrame({"probe": ["p", "p", "q"], "version": [2, 2, 1]}))
        (('p', 2), ('q', 1))
        >>> benchmark_of(pd.DataFrame({"case_id": [1]}))
        ()
    """
    if not {"probe", "version"} <= set(df.columns):
        return ()
    pairs = df[["probe", "version"]].drop_duplicates()
    out = []
    for probe, version in pairs.itertuples(index=False, name=None):
        if (
            not isinstance(probe, str)
            or isinstance(version, bool)
            or not isinstance(version, int | np.integer)
        ):
            return ()
        out.append((probe, int(version)))
    return tuple(sorted(out))


def _spread(values: np.ndarray, use: np.ndarray) -> np.ndarray:
    out = np.full(use.size, np.nan)
    out[use] = values
    return out


@dataclass(frozen=True, eq=False)
class Simulated2PL(RowsResult):
    """Results drawn from a known 2PL model (:func:`simulate_2pl`) and the truth they were drawn
    from. Every statistic takes it as its rows.

    Attributes:
        rows: ``system``, ``case_id``, ``repeat``, ``score`` (0 or 1).
        systems: one row per system: ``system``, ``ability`` (the true ability).
        items: one row per item: ``case_id``, ``difficulty``, ``discrimination`` (the true
            parameters, named as :class:`IrtFit`'s ``items``).
    """

    systems: pd.DataFrame
    items: pd.DataFrame


@not_a_statistic("a simulator: draws results from a known 2PL model")
def simulate_2pl(
    *,
    n_systems: int = 60,
    n_items: int = 200,
    repeats: int = 1,
    seed: int | None = 0,
) -> Simulated2PL:
    """Results drawn from a known 2PL model (for tests, benchmarks and the example data).

    Abilities ~ N(0, 1), difficulties ~ N(0, 1), discriminations ~ lognormal(0, 0.3). The rows
    and the true parameters come as a :class:`Simulated2PL` (``rows``, ``systems``,
    ``items``), which every statistic takes as its rows.

    Example:
        >>> sim = simulate_2pl(n_systems=3, n_items=4, seed=0)
        >>> sim.rows.columns.tolist(), len(sim.rows)
        (['system', 'case_id', 'repeat', 'score'], 12)
        >>> sim.systems.columns.tolist(), sim.items.columns.tolist()
        (['system', 'ability'], ['case_id', 'difficulty', 'discrimination'])
    """
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_systems)
    b = rng.normal(size=n_items)
    a = rng.lognormal(0.0, 0.3, size=n_items)
    p = expit(a * (theta[:, None] - b))
    y = rng.random((repeats, n_systems, n_items)) < p
    width = len(str(n_systems - 1))
    system_names = [f"sys{v:0{width}d}" for v in range(n_systems)]
    item_names = [f"q{v:04d}" for v in range(n_items)]
    r, s, j = np.indices(y.shape).reshape(3, -1)
    rows = pd.DataFrame(
        {
            "system": [system_names[v] for v in s],
            "case_id": [item_names[v] for v in j],
            "repeat": r,
            "score": y.reshape(-1).astype(float),
        }
    )
    return Simulated2PL(
        rows,
        systems=pd.DataFrame({"system": system_names, "ability": theta}),
        items=pd.DataFrame({"case_id": item_names, "difficulty": b, "discrimination": a}),
    )
