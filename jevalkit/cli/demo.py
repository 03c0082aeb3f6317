"""``jevalkit demo`` (``make demo``, ``python -m jevalkit.demo``): the main job, end to end, on
the embedded local model (no API key).

Runs schema-ten-records@2 on Gemma 3 270M served by llama.cpp on 127.0.0.1 in three
configurations: free decoding at temperature 0 (5 repeats), free decoding at temperature 1 with
seeds 1..5, and JSON-Schema-constrained decoding at temperature 1 with seeds 1..5. Every sample
is scored; the results append to ``runs/demo.jsonl`` (re-running resumes, and sends the error rows
again), and a Markdown summary plus the probe and consistency notebook reports (HTML, with
headline JSON) are written under ``reports/demo/``. When no sample at all was scored it says what
failed, writes no report and exits 1.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from ..errors import UsageError
from ..local import check_installed, local_endpoint
from ..probes import check_probes
from ..reports import ReportError, headline, output_folder, run_report, write_probe_summary
from ..results import MAX_REPEATS, check_results_path, read_results
from ..runner import run
from ._commands import add_command
from ._outcome import report_outcome

__all__ = ["CONFIGS", "MAX_DEMO_TOKENS", "MAX_TOKENS", "PROBE", "register"]

PROBE = "schema-ten-records@2"
MAX_DEMO_TOKENS = 32_768
MAX_TOKENS = (
    400  # this base model echoes the prompt until max_tokens; constrained answers need ~180-330
)
CONFIGS = [
    {"label": "free, T=0", "temperature": 0.0},
    {"label": "free, T=1", "temperature": 1.0, "seed": 1},
    {"label": "constrained, T=1", "temperature": 1.0, "seed": 1, "constrained": True},
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    demo = add_command(sub, "demo")
    demo.add_argument("--repeats", type=int, default=5, help="samples per configuration")
    demo.add_argument(
        "--max-tokens", type=int, default=MAX_TOKENS, help="the longest answer, in tokens"
    )
    demo.add_argument("--out", default="runs/demo.jsonl", help="the results file")
    demo.add_argument("--report-dir", default="reports/demo", help="where the reports go")
    demo.add_argument(
        "--port",
        type=int,
        help="the embedded model's port when the demo starts it (default 8917, or a free one "
        "when that is taken); a server already running is used where it is",
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
    check = check_probes([PROBE])
    print(
        f"1/3 {PROBE}: {int(check['ok'].sum())} of {len(check)} worked examples score as they must"
    )
    if not check["ok"].all():
        print(check.to_string(index=False))
        return 1
    check_installed()
    print("2/3 starting the embedded model (Gemma 3 270M, llama.cpp on 127.0.0.1)", flush=True)
    frames = []
    with local_endpoint(port=args.port) as server:
        print(
            f"    {server.base_url}: {server.threads} thread(s), {server.slots} slot(s); model "
            f"file sha256 {server.model_sha256[:16]}…",
            flush=True,
        )
        for config in CONFIGS:
            print(f"    {config['label']}: {args.repeats} samples, max_tokens {args.max_tokens}")
            frames.append(
                run(
                    PROBE,
                    "local",
                    repeats=args.repeats,
                    max_tokens=args.max_tokens,
                    out=args.out,
                    retry_errors=True,
                    **config,
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
    report, numbers = write_probe_summary(
        results, Path(args.report_dir), title=f"{PROBE} on the embedded Gemma 3 270M"
    )
    print(f"3/3 report: {report}  (headline numbers: {numbers})")
    for notebook in ("probe_report", "consistency"):
        try:
            done = run_report(notebook, results=args.out, out=args.report_dir)
            print(f"    {notebook}: {done.html}")
        except (ReportError, ImportError) as exc:  # papermill comes with the notebooks extra
            print(f"    {notebook}: not written ({exc})")
    for h in headline(results):
        agreement = (
            f", verdict agreement {h['verdict_agreement']:.2f}" if "verdict_agreement" in h else ""
        )
        print(
            f"    {h['system']}: pass rate {h['pass_rate']:.2f} "
            f"(95% CI {h['ci_low']:.2f}-{h['ci_high']:.2f}, n = {h['n']}, errors {h['errors']}){agreement}"
        )
    print(f"done in {time.monotonic() - started:.0f} s")
    return 0
