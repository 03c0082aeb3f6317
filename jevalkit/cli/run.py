"""``jevalkit run PROBE... --model MODEL``: send probes, score, append results, print a summary."""

from __future__ import annotations

import argparse
import sys
import warnings

import pandas as pd

from ..runner import run


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` command."""
    cmd = sub.add_parser("run", help="run probes against a model (k repeats, resumable)")
    cmd.add_argument("probes", nargs="+", metavar="PROBE", help="id or id@N")
    cmd.add_argument("--model", required=True, help="model name; `local` for the embedded model")
    cmd.add_argument(
        "--base-url",
        help="OpenAI-compatible base URL (default: $JEVALKIT_BASE_URL, else OpenRouter)",
    )
    cmd.add_argument(
        "--repeats", type=int, default=1, metavar="K", help="requests per probe (default 1)"
    )
    cmd.add_argument(
        "--concurrency", type=int, default=8, metavar="N", help="requests in flight (default 8)"
    )
    cmd.add_argument(
        "--out", metavar="PATH", help="results JSONL (default runs/<probes>__<model>.jsonl)"
    )
    cmd.add_argument("--temperature", type=float)
    cmd.add_argument("--seed", type=int, help="seed of repeat 0; repeat r is sent seed + r")
    cmd.add_argument("--max-tokens", type=int)
    cmd.add_argument("--top-p", type=float)
    cmd.add_argument("--label", help="a name for this configuration (a 'system' in comparisons)")
    cmd.add_argument(
        "--json-schema-output",
        action="store_true",
        help="constrain decoding to the probe's schema via response_format (where supported)",
    )
    cmd.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="per request (default 60)"
    )
    cmd.add_argument("--max-retries", type=int, default=5, metavar="N")
    cmd.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    cmd.add_argument("--retry-errors", action="store_true", help="re-run only the error rows")
    cmd.set_defaults(handler=_run)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Pass rate per probe and model with n (requests), errors, and the Wilson 95% interval.

    Example:
        >>> df = pd.DataFrame({"probe": ["p"] * 3, "version": [1] * 3, "model": ["m"] * 3,
        ...                    "label": [None] * 3, "passed": [True, False, None],
        ...                    "error": [None, None, {"type": "timeout"}]})
        >>> summary(df)[["probe", "n", "passed", "errors", "pass_rate"]].values.tolist()
        [['p@1', 2, 1, 1, 0.5]]
    """
    from statsmodels.stats.proportion import proportion_confint

    out = []
    frame = df.assign(probe=df["probe"] + "@" + df["version"].astype(str))
    frame["system"] = frame["label"].fillna(frame["model"])
    for (probe, system), group in frame.groupby(["probe", "system"], sort=True):
        scored = group[group["error"].isna()]
        n, k = len(scored), int(scored["passed"].astype(bool).sum())
        low, high = proportion_confint(k, n, method="wilson") if n else (float("nan"),) * 2
        out.append({"probe": probe, "model": system, "n": n, "passed": k,
                    "errors": len(group) - n, "pass_rate": k / n if n else float("nan"),
                    "ci_low": low, "ci_high": high})  # fmt: skip
    return pd.DataFrame(out)


def _run(args: argparse.Namespace) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = run(
            args.probes,
            args.model,
            base_url=args.base_url,
            repeats=args.repeats,
            concurrency=args.concurrency,
            out=args.out,
            temperature=args.temperature,
            seed=args.seed,
            max_tokens=args.max_tokens,
            top_p=args.top_p,
            label=args.label,
            constrained=args.json_schema_output,
            timeout=args.timeout,
            max_retries=args.max_retries,
            cache=not args.no_cache,
            retry_errors=args.retry_errors,
        )
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    table = summary(df)
    with pd.option_context("display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    return 0
