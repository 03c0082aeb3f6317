"""What a run would send and cost, computed before anything is sent (``jevalkit run --dry-run``).

Prompt tokens: counted exactly for the embedded model, by its own tokenizer (llama-server's
``/apply-template`` then ``/tokenize``, on this machine); for any other model they are estimated
at about 4 UTF-8 bytes per token (said so in ``prompt_tokens_method``), with one token per byte
as the upper bound. Completion tokens: between 0 and ``max_tokens`` per request; when earlier
rows of the same probe, configuration and model exist in the results file, their observed mean
gives the expected total, with a normal-approximation interval for the sum over the planned
requests. Cost: from the price table (or ``price_in`` / ``price_out``); unknown prices give
NaN (a free model costs 0 whatever its token counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Unpack

import httpx
import numpy as np
import pandas as pd
from scipy import stats

from ..costs import Price, prompt_token_bound
from ..errors import UsageError
from ..local import is_local_model, local_endpoint
from ..probes import Probe
from ..results import check_results_path, params_hash, read_results
from ._design_run import Source, candidates_of
from ._options import ProbeOptions
from ._plan import jobs_of, probe_parameters
from ._run import ProbeRun
from ._target import endpoint_identity

BYTES_PER_TOKEN = 4.0
PLAN_COLUMNS = [
    "probe",
    "requests",
    "requests_max",
    "already_done",
    "prompt_tokens",
    "prompt_tokens_method",
    "completion_tokens_low",
    "completion_tokens_expected",
    "completion_tokens_high",
    "completion_tokens_method",
    "cost_low",
    "cost_expected",
    "cost_high",
    "price_source",
    "parameters",
]


def _local_prompt_tokens(model: str, bodies: list[dict[str, Any]]) -> list[int]:
    with (
        local_endpoint(model) as server,
        httpx.Client(timeout=30, headers=server.headers()) as http,
    ):
        root = server.base_url.rsplit("/v1", 1)[0]
        counts = []
        for body in bodies:
            prompt = body.get("prompt")  # a completion probe's text is sent as it is
            if prompt is None:
                text = http.post(f"{root}/apply-template", json={"messages": body["messages"]})
                text.raise_for_status()
                prompt = text.json()["prompt"]
            tokens = http.post(f"{root}/tokenize", json={"content": prompt, "add_special": True})
            tokens.raise_for_status()
            counts.append(len(tokens.json()["tokens"]))
        return counts


def _earlier_completions(path: Path, probe: Probe, digest: str, model: str) -> np.ndarray:
    if not path.is_file():
        return np.array([])
    rows = read_results(path)
    mine = rows[
        (rows["probe"] == probe.id)
        & (rows["version"] == probe.version)
        & (rows["params_hash"] == digest)
        & (rows["model"] == model)
        & rows["error"].isna()
    ]
    return pd.to_numeric(mine["completion_tokens"], errors="coerce").dropna().to_numpy(float)


def _already_done(
    path: Path,
    probe: Probe,
    digest: str,
    model: str,
    label: str | None,
    units: list[tuple[str | None, str | None]],
    repeats: int,
) -> int:
    """Rows of these (case, variant) units with repeat < ``repeats`` that resuming keeps."""
    if not path.is_file():
        return 0
    rows = read_results(path)
    same_label = rows["label"].isna() if label is None else rows["label"] == label
    mine = rows[
        (rows["probe"] == probe.id)
        & (rows["version"] == probe.version)
        & (rows["params_hash"] == digest)
        & (rows["model"] == model)
        & same_label
        & rows["error"].isna()
        & (rows["repeat"] < repeats)
    ]
    wanted = set(units)
    pairs = zip(mine["case_id"], mine["variant"], strict=True)
    return sum(
        ((None if pd.isna(c) else c), (None if pd.isna(v) else v)) in wanted for c, v in pairs
    )


def plan(
    probes: str | Probe | Sequence[str | Probe],
    model: str,
    *,
    confidence: float = 0.95,
    **options: Unpack[ProbeOptions],
) -> pd.DataFrame:
    """What ``run`` with the same arguments would send and cost; sends nothing to the model.
    Takes :func:`jevalkit.run`'s arguments (``confidence``: of the completion-token interval),
    and refuses what ``run`` refuses before sending: the settings, the results path (a folder,
    a device), the endpoint (a malformed or non-http(s) URL, a model name that names no
    provider), a dollar budget without a price. It needs no API key: nothing is sent.

    ``cases``, ``sample``, ``sample_seed`` and ``variants`` choose the (case, variant) units as
    in :func:`jevalkit.run`; each is sent ``repeats`` times.

    Returns:
        One row per probe and a ``total`` row: ``probe``, ``requests`` (to send; the fewest a
        ``design`` may send, such as adaptive repeats), ``requests_max``, ``already_done`` (rows in ``out`` that resuming
        skips), ``prompt_tokens`` (for the requests to send), ``prompt_tokens_method``
        (``exact: ...`` or ``estimate: ...``), ``completion_tokens_low`` /
        ``_expected`` / ``_high`` and ``completion_tokens_method``, ``cost_low`` /
        ``cost_expected`` / ``cost_high`` (US dollars; NaN without a price, and
        ``cost_expected`` NaN while no earlier rows give an expected completion length; 0 for
        a free model, the embedded one, whatever the tokens), ``price_source``,
        ``parameters`` (what each probe is sent with: its own, the generation parameters
        given, ``extra_params``; the seed of repeat 0; None on the total row).

    Example:
        >>> import tempfile
        >>> p = plan("schema-ten-records", "openai/gpt-4o-mini", repeats=5, max_tokens=200,
        ...          base_url="http://127.0.0.1:9/v1", out=tempfile.mkdtemp() + "/r.jsonl")
        >>> row = p.iloc[0]
        >>> int(row["requests"]), int(row["completion_tokens_high"]), row["prompt_tokens_method"][:8]
        (5, 1000, 'estimate')
        >>> bool(row["cost_low"] < row["cost_high"] == row["cost_high"])
        True
    """
    r = ProbeRun.of(probes, model, dict(options))
    probe_list, settings, overrides = r.probes, r.settings, r.overrides
    base_url, label, repeats = settings.base_url, settings.label, settings.repeats
    selection, constrained = r.choices.selection, r.choices.constrained
    units = [selection.units(p)[0] for p in probe_list]
    design = settings.design
    if design is not None and design.bounds(1) is None:
        raise UsageError(
            f"--dry-run cannot list what {design.name} sends: it draws its cases from the "
            "model's answers; a fixed run of as many cases (--sample K) costs the same number of "
            "requests"
        )
    if design is not None:
        jobs = jobs_of(
            probe_list,
            settings.planned_repeats(),
            overrides,
            constrained=constrained,
            selection=selection,
        )
        candidates, _ = candidates_of([Source(model, jobs, model, r.path, settings)])
        design.start(candidates, in_flight=settings.concurrency)  # refuses what the run would
    path = r.path
    # refuse what the run would refuse before sending, so a plan that prints is a run that starts
    check_results_path(path, writing=True)
    # a bad URL or model name is refused as the run would; the key is not needed to send nothing
    endpoint_identity(model, base_url, api_key_env=settings.api_key_env, require_key=False)
    if settings.budget_usd is not None:
        settings.require_price(model)
    price = settings.price(model)
    params = [probe_parameters(p, overrides, constrained=constrained) for p in probe_list]
    bodies = [
        {**p.request_input(case, variant), **q}
        for p, q, chosen in zip(probe_list, params, units, strict=True)
        for case, variant in chosen
    ]
    if is_local_model(model) and base_url is None:
        counts = [float(n) for n in _local_prompt_tokens(model, bodies)]
        prompt_method = "exact: the embedded model's tokenizer (llama-server /tokenize)"
    else:
        counts = [math.ceil(prompt_token_bound(b) / BYTES_PER_TOKEN) for b in bodies]
        prompt_method = (
            f"estimate: about {BYTES_PER_TOKEN:g} UTF-8 bytes per token (no tokenizer for {model})"
        )
    # prompt tokens of one repeat of every unit of each probe, and its mean per request
    prompt_each, start = [], 0
    for chosen in units:
        prompt_each.append(sum(counts[start : start + len(chosen)]))
        start += len(chosen)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    rows = []
    for probe, q, sweep_tokens, chosen in zip(probe_list, params, prompt_each, units, strict=True):
        digest = params_hash(q)
        n_units = len(chosen)
        keys = [(None if c is None else c.id, v) for c, v in chosen]
        if design is not None:
            bounds = design.bounds(n_units)
            assert bounds is not None  # a design that cannot bound its rows is refused above
            low_n, high_n = bounds
            done = 0
        else:
            done = _already_done(path, probe, digest, model, label, keys, int(repeats))
            low_n = high_n = max(0, n_units * int(repeats) - done)
        prompt_tokens = sweep_tokens / n_units
        limit = q.get("max_tokens")
        seen = _earlier_completions(path, probe, digest, model)
        if limit is None and seen.size == 0:
            raise UsageError(
                f"{probe.name} sets no max_tokens and no earlier rows exist: completion tokens "
                "cannot be bounded; give --max-tokens"
            )
        high_tokens = high_n * (limit if limit is not None else float(seen.max()))
        if seen.size >= 2:
            mean, sd = float(seen.mean()), float(seen.std(ddof=1))
            expected = low_n * mean
            spread = z * sd * math.sqrt(max(low_n, 1))
            low_tokens = max(0.0, expected - spread)
            high_expected = min(high_tokens, high_n * mean + z * sd * math.sqrt(max(high_n, 1)))
            completion_method = (
                f"observed: mean {mean:.1f} (sd {sd:.1f}) over {seen.size} earlier rows; "
                f"{confidence:.0%} normal interval of the sum"
            )
            high_tokens = high_expected if limit is None else min(high_tokens, high_expected)
        else:
            expected, low_tokens = math.nan, 0.0
            completion_method = "no earlier rows: from 0 to max_tokens per request"
        rows.append(
            {
                "probe": probe.name,
                "requests": low_n,
                "requests_max": high_n,
                "already_done": done,
                "prompt_tokens": prompt_tokens * low_n,
                "prompt_tokens_method": prompt_method,
                "completion_tokens_low": low_tokens,
                "completion_tokens_expected": expected,
                "completion_tokens_high": high_tokens,
                "completion_tokens_method": completion_method,
                "_prompt_high": prompt_tokens * high_n,
                "parameters": q,
            }
        )
    table = pd.DataFrame(rows)
    # an unknown expectation anywhere leaves the total's unknown too
    total = table.drop(columns=["probe"]).sum(numeric_only=True, skipna=False)
    total_row = {**total.to_dict(), "probe": "total"}
    total_row["prompt_tokens_method"] = prompt_method
    total_row["completion_tokens_method"] = "sum of the rows above"
    total_row["parameters"] = None
    table = pd.concat([table, pd.DataFrame([total_row])], ignore_index=True)
    if price is None:
        for column in ("cost_low", "cost_expected", "cost_high"):
            table[column] = math.nan
        table["price_source"] = (
            f"no price for {model!r} in data/prices.yaml (give --price-in/--price-out)"
        )
    else:
        for column, prompt, completion in (
            ("cost_low", "prompt_tokens", "completion_tokens_low"),
            ("cost_expected", "prompt_tokens", "completion_tokens_expected"),
            ("cost_high", "_prompt_high", "completion_tokens_high"),
        ):
            table[column] = [
                _dollars(price, p, c) for p, c in zip(table[prompt], table[completion], strict=True)
            ]
        table["price_source"] = f"{price.source}" + (
            f" (as of {price.as_of})" if price.as_of else ""
        )
    for column in ("requests", "requests_max", "already_done"):
        table[column] = table[column].astype(int)
    return table[PLAN_COLUMNS]


def _dollars(price: Price, prompt_tokens: float, completion_tokens: float) -> float:
    """The cost of these token counts; a count priced at 0 costs 0 even when it is unknown (a
    free model's expected cost is 0, not NaN)."""
    terms = [(prompt_tokens, price.input), (completion_tokens, price.output)]
    if any(rate and math.isnan(count) for count, rate in terms):
        return math.nan
    return sum(count * rate for count, rate in terms if rate) / 1e6
