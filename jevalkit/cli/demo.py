"""``jevalkit demo`` (``make demo``, ``python -m jevalkit.demo``): the main job, end to end, on
the embedded local models (no API key).

Runs the seeds' probe ``schema-ten-records@2`` on both embedded models, Gemma 3 270M (``local``,
a base model: it continues text) and SmolLM2 135M Instruct (``local-chat``, a chat model), each
in three configurations: free decoding at temperature 0, free decoding at temperature 1 (each
repeat its own seed), and JSON-Schema-constrained decoding at temperature 1. Every answer is
scored by version 2 (as the seeds publish it) and by version 4 (which checks the ids the prompt
asks for, 1 through 10 in order): version 4 sends the same request, so its free answers are
version 2's, read back from the response cache (rows marked ``cached``); constrained, its
schema (and so the grammar) differs, so it is asked again. The results append to
``runs/demo.jsonl`` (re-running resumes, and sends the error rows again); a Markdown summary
(one section per version) plus the probe report of each version and the consistency report
(HTML, with headline JSON) are written under ``reports/demo/``. When no sample at all was
scored it says what failed, writes no report and exits 1.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import UsageError
from ..local import check_installed, local_endpoint, local_model
from ..probes import check_probes
from ..reports import (
    ReportError,
    failed_checks,
    headline,
    output_folder,
    run_report,
    write_probe_summary,
)
from ..results import MAX_REPEATS, check_results_path, read_results
from ..runner import run
from ._commands import add_command
from ._outcome import report_outcome

__all__ = ["CONFIGS", "MAX_DEMO_TOKENS", "MAX_TOKENS", "MODELS", "PROBES", "register"]

PROBES = ("schema-ten-records@2", "schema-ten-records@4")  # as the seeds publish it; ids checked
MODELS = ("local", "local-chat")
MAX_DEMO_TOKENS = 32_768
MAX_TOKENS = 400  # Gemma echoes the prompt until max_tokens; constrained answers need ~180-330
CONFIGS: list[dict[str, Any]] = [  # keywords of run
    {"label": "free, T=0", "temperature": 0.0},
    {"label": "free, T=1", "temperature": 1.0, "seed": 1},
    {"label": "constrained, T=1", "temperature": 1.0, "seed": 1, "constrained": True},
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    demo = add_command(sub, "demo")
    demo.add_argument("--repeats", type=int, default=5, help="samples per model and configuration")
    demo.add_argument(
        "--max-tokens", type=int, default=MAX_TOKENS, help="the longest answer, in tokens"
    )
    demo.add_argument("--out", default="runs/demo.jsonl", help="the results file")
    demo.add_argument("--report-dir", default="reports/demo", help="where the reports go")
    demo.add_argument(
        "--port",
        type=int,
        help="the base model's port when the demo starts it (default 8917, or a free one when "
        "that is taken; the chat model's is its own); a server already running is used where it "
        "is",
    )
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    started = time.monotonic()
    for name, value in (("--repeats", args.repeats), ("--max-tokens", args.max_tokens)):
        if value < 1:  # refused before the embedded model starts
            raise UsageError(f"{name} must be at least 1, got {value}")
    if args.port is not None and not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be from 1 to 65535, got {args.port}")
    if args.repeats > MAX_REPEATS or args.max_tokens > MAX_DEMO_TOKENS:
        raise UsageError(
            f"--repeats must be at most {MAX_REPEATS:,} and --max-tokens at most "
            f"{MAX_DEMO_TOKENS:,} (the embedded model's context)"
        )
    # where the results and the reports go, checked before the embedded model starts
    check_results_path(args.out, writing=True)
    output_folder(args.report_dir)
    check = check_probes(list(PROBES))
    print(
        f"1/3 {', '.join(PROBES)}: {int(check['ok'].sum())} of {len(check)} worked examples "
        "score as they must"
    )
    if not check["ok"].all():
        print(check.to_string(index=False))
        return 1
    for model in MODELS:
        check_installed(model)
    frames = []
    for step, model in enumerate(MODELS):
        spec = local_model(model)
        print(f"2/3 starting --model {model}: {spec.title}, llama.cpp on 127.0.0.1", flush=True)
        port = {"port": args.port} if args.port is not None and step == 0 else {}
        with local_endpoint(model, **port) as server:
            print(
                f"    {server.base_url}: {server.threads} thread(s), {server.slots} slot(s); "
                f"model file sha256 {server.model_sha256[:16]}…",
                flush=True,
            )
            for config in CONFIGS:
                label = f"{model}: {config['label']}"
                print(f"    {label}: {args.repeats} samples, max_tokens {args.max_tokens}")
                for probe in PROBES:  # one after the other: free, v4 reads v2's answers back
                    options = {**config, "label": label}
                    frames.append(
                        run(
                            probe,
                            model,
                            repeats=args.repeats,
                            max_tokens=args.max_tokens,
                            out=args.out,
                            retry_errors=True,
                            **options,
                        ).rows
                    )
    code = report_outcome(pd.concat(frames, ignore_index=True), unit="sample")
    if code:
        print(
            f"no report written after {time.monotonic() - started:.0f} s: nothing was scored. "
            "Re-running resumes and sends the failed samples again."
        )
        return code
    results = read_results(args.out)
    results = results[results["probe"] == "schema-ten-records"]
    folder = Path(args.report_dir)
    report, numbers = write_probe_summary(
        results, folder, title="schema-ten-records on the embedded models"
    )
    print(f"3/3 report: {report}  (headline numbers: {numbers})")
    for notebook, params, out in [
        *(("probe_report", {"probe": p}, folder / p.replace("@", "-v")) for p in PROBES),
        ("consistency", {}, folder),
    ]:
        try:
            done = run_report(notebook, results=args.out, parameters=params, out=out)
            print(f"    {notebook} {params.get('probe', '')}: {done.html}")
        except (ReportError, ImportError) as exc:  # papermill comes with the notebooks extra
            print(f"    {notebook}: not written ({exc})")
    checks = failed_checks(
        results.assign(
            system=results["probe"] + "@" + results["version"].astype(str) + " " + results["system"]
        )
    )
    for h in headline(results):
        if h["probe"] not in PROBES:
            continue
        agreement = (
            f", verdict agreement {h['verdict_agreement']:.2f}" if "verdict_agreement" in h else ""
        )
        print(
            f"    {h['probe']} {h['system']}: pass rate {h['pass_rate']:.2f} "
            f"(95% CI {h['ci_low']:.2f}-{h['ci_high']:.2f}, n = {h['n']}, errors {h['errors']}, "
            f"cut off {h['truncated']}){agreement}{_failure_mode(checks, h)}"
        )
    print(f"done in {time.monotonic() - started:.0f} s")
    return 0


def _failure_mode(checks: pd.DataFrame, h: dict) -> str:
    """The rubric check most often broken by one system's answers on one version, if any."""
    mine = checks[(checks["system"] == f"{h['probe']} {h['system']}") & (checks["failed"] > 0)]
    if mine.empty:
        return ""
    worst = mine.sort_values("failed", ascending=False, kind="stable").iloc[0]
    return f"; most often broken: {worst['text']} ({worst['failed']} of {worst['judged']})"
