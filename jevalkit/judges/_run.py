"""Run a judge over a case file: one results row per (case, repeat), resumable and cached."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from .._sync import run_sync
from .._version import __version__
from ..client import ChatClient, ResponseCache, RetryPolicy, default_cache_dir
from ..runner import ResultRow, ResultsWriter, params_hash, read_results, row_key
from ..runner._run import _now, open_target
from ..runner._store import latest_rows
from ._cases import load_cases
from ._evaluate import JudgeConfig, JudgeRequestError, judge_case
from ._judgment import JudgeError
from ._prompts import JudgePrompt, load_judge_prompt
from ._tool_calls import _arguments, tool_call_accuracy

DETERMINISTIC = {"tool_call_accuracy"}


async def ajudge(
    evaluator: str,
    data: str | Path | list[dict[str, Any]],
    model: str | None = None,
    *,
    base_url: str | None = None,
    repeats: int = 1,
    out: str | Path | None = None,
    config: JudgeConfig | None = None,
    criteria: str | None = None,
    label: str | None = None,
    seed: int | None = None,
    concurrency: int = 4,
    timeout: float = 120.0,
    max_retries: int = 3,
    cache: bool = True,
    progress: bool = True,
) -> pd.DataFrame:
    """Async form of :func:`judge`."""
    cases = load_cases(data) if not isinstance(data, list) else data
    if criteria is not None:
        cases = [{**c, "criteria": criteria} for c in cases]
    config = config or JudgeConfig()
    path = (
        Path(out)
        if out
        else Path("runs")
        / f"judge__{evaluator}__{(model or 'deterministic').replace('/', '-')}.jsonl"
    )
    if evaluator in DETERMINISTIC:
        prompt, version, digest, params = None, 1, None, {"method": "deterministic"}
    else:
        if model is None:
            raise JudgeError(f"{evaluator} is a model judge: give --model (e.g. local)")
        prompt = load_judge_prompt(evaluator)
        version, digest, params = prompt.version, prompt.content_hash, config.parameters()
    phash = params_hash(params)
    asked = model or "deterministic"
    jobs = [(c, r) for c in cases for r in range(repeats)]
    done = latest_rows(path)
    key = lambda c, r: (evaluator, version, c["id"], asked, phash, label, r)  # noqa: E731
    pending = [(c, r) for c, r in jobs if key(c, r) not in done]
    run_id = uuid.uuid4().hex[:12]

    def base_row(case: dict[str, Any], r: int) -> ResultRow:
        return ResultRow(run_id=run_id, kind="judge", probe=evaluator, version=version, model=asked,
                         repeat=r, probe_hash=digest, case_id=case["id"], parameters=params,
                         params_hash=phash, label=label, gold=case.get("gold"),
                         started_at=_now(), jevalkit_version=__version__)  # fmt: skip

    bar = tqdm(total=len(jobs), initial=len(jobs) - len(pending), desc=f"judge {evaluator}",
               unit="case", disable=not progress)  # fmt: skip
    async with ResultsWriter(path) as writer:
        if prompt is None:
            for case, r in pending:
                row = base_row(case, r)
                s = await _tool_calls_case(case, model, base_url, config, r)
                row.score, row.passed, row.score_errors = s.value, s.passed, list(s.errors)
                row.verdict = "match" if s.passed else "mismatch"
                row.finished_at = _now()
                await writer.write(row)
                bar.update(1)
        elif pending:
            with open_target(model, base_url) as target:
                client = ChatClient(target.endpoint, concurrency=concurrency, timeout=timeout,
                                    retry=RetryPolicy(max_retries=max_retries),
                                    cache=ResponseCache(default_cache_dir() / "responses") if cache else None)  # fmt: skip
                async with client:

                    async def one(case: dict[str, Any], r: int) -> None:
                        row = base_row(case, r)
                        row.model_sha256, row.base_url = (
                            target.model_sha256,
                            target.endpoint.base_url,
                        )
                        try:
                            j = await judge_case(prompt, case, client, target.model, config, repeat=r,
                                                 seed=None if seed is None else seed + r * config.n_samples)  # fmt: skip
                            row.probs, row.expected_level, row.verdict = (
                                list(j.probs),
                                j.expected_level,
                                j.verdict,
                            )
                            row.coverage, row.method, row.score = j.coverage, j.method, j.score
                            row.explanation = j.explanation
                            row.passed = j.score >= 0.5
                            row.output = j.verdict if j.method == "logprobs" else " | ".join(j.raw)
                        except JudgeRequestError as exc:
                            row.error = exc.error
                        except JudgeError as exc:
                            row.error = {"type": "judge", "message": str(exc), "status": None}
                        row.model_resolved = target.model
                        row.finished_at = _now()
                        await writer.write(row)
                        bar.update(1)

                    await asyncio.gather(*(one(c, r) for c, r in pending))
    bar.close()
    results = read_results(path)
    keys = {key(c, r) for c, r in jobs}
    return results[[row_key(r) in keys for r in results.to_dict("records")]].reset_index(drop=True)


async def _tool_calls_case(
    case: dict[str, Any], model: str | None, base_url: str | None, config: JudgeConfig, repeat: int
):
    """Deterministic comparison; free-text arguments go to the argument_equivalence judge when a
    model is given (probabilities are gathered first, since the comparison itself is sync)."""
    free = tuple(case.get("free_text_arguments") or ())
    calls, expected = case.get("tool_calls") or [], case.get("expected_tool_calls") or []
    if not free or model is None:
        return tool_call_accuracy(calls, expected, free_text=free)
    prompt = load_judge_prompt("argument_equivalence")
    pairs: dict[tuple[str, str], float] = {}
    for got, want in zip(calls, expected, strict=False):
        g, w = _arguments(got), _arguments(want)
        for key in free:
            if isinstance(g.get(key), str) and isinstance(w.get(key), str):
                pairs[(w[key], g[key])] = 0.0
    with open_target(model, base_url) as target:
        async with ChatClient(target.endpoint, concurrency=2) as client:
            for w_value, g_value in list(pairs):
                j = await judge_case(prompt, {"expected": w_value, "output": g_value}, client,
                                     target.model, config, repeat=repeat)  # fmt: skip
                pairs[(w_value, g_value)] = j.score
    return tool_call_accuracy(calls, expected, free_text=free,
                              same_meaning=lambda want, got: pairs[(want, got)])  # fmt: skip


def judge(
    evaluator: str,
    data: str | Path | list[dict[str, Any]],
    model: str | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Judge every case of ``data`` with ``evaluator``; rows in the runner's results format with
    ``probs``, ``expected_level``, ``verdict``, ``coverage``, ``method`` and ``gold``.

    Args:
        evaluator: a judge in ``data/judges/`` (``faithfulness``, ``answer_relevancy``,
            ``answer_correctness``, ``translation``, ``security``, ``factuality``,
            ``llm_judge``) or ``tool_call_accuracy`` (deterministic, no model).
        data: a case file path, a bundled case set name, or a list of case dicts.
        model: the judge model (``local`` for the embedded one).
        **options: ``base_url``, ``repeats``, ``out``, ``config`` (:class:`JudgeConfig`),
            ``criteria`` (for ``llm_judge``), ``label``, ``seed``, ``concurrency``, ``timeout``,
            ``max_retries``, ``cache``, ``progress``.

    A judgment that cannot be trusted (no logprobs, coverage below the threshold) becomes an error
    row saying so, never a silent fallback to an integer.

    Example:
        >>> import tempfile, jevalkit.judges as jj
        >>> df = jj.judge("tool_call_accuracy", "tool_call_accuracy", out=tempfile.mkdtemp() + "/r.jsonl", progress=False)
        >>> bool((df["verdict"] == df["gold"]).all())
        True
    """
    return run_sync(ajudge(evaluator, data, model, **options))


def get_prompt(evaluator: str) -> JudgePrompt:
    """The prompt file behind ``evaluator``."""
    return load_judge_prompt(evaluator)
