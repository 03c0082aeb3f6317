"""``make demo``: the main job, end to end, on the embedded local model (no API key).

Runs schema-ten-records@2 on Gemma 3 270M served by llama.cpp on 127.0.0.1 in three
configurations: free decoding at temperature 0 (5 repeats), free decoding at temperature 1 with
seeds 1..5, and JSON-Schema-constrained decoding at temperature 1 with seeds 1..5. Every sample
is scored; the results append to ``runs/demo.jsonl`` (re-running resumes), and a Markdown summary
plus the probe and consistency notebook reports (HTML, with headline JSON) are written under
``reports/demo/``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import JevalkitError
from .local import check_installed, local_endpoint
from .probes import check_probes
from .reports import ReportError, headline, run_report, write_probe_summary
from .results import read_results
from .runner import run

__all__ = ["CONFIGS", "MAX_TOKENS", "PROBE", "main"]

PROBE = "schema-ten-records@2"
MAX_TOKENS = (
    400  # this base model echoes the prompt until max_tokens; constrained answers need ~180-330
)
CONFIGS = [
    {"label": "free, T=0", "temperature": 0.0},
    {"label": "free, T=1", "temperature": 1.0, "seed": 1},
    {"label": "constrained, T=1", "temperature": 1.0, "seed": 1, "constrained": True},
]


def main(argv: list[str] | None = None) -> int:
    """Run the demo; print where the report is and the headline numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="runs/demo.jsonl")
    parser.add_argument("--report-dir", default="reports/demo")
    args = parser.parse_args(argv)
    try:
        return _demo(args)
    except JevalkitError as exc:
        print(f"jevalkit demo: error: {exc}", file=sys.stderr)
        return 2


def _demo(args: argparse.Namespace) -> int:
    started = time.monotonic()
    check = check_probes([PROBE])
    print(
        f"1/3 {PROBE}: {int(check['ok'].sum())} of {len(check)} worked examples score as they must"
    )
    if not check["ok"].all():
        print(check.to_string(index=False))
        return 1
    check_installed()
    print("2/3 starting the embedded model (Gemma 3 270M, llama.cpp on 127.0.0.1)")
    with local_endpoint() as server:
        print(f"    {server.base_url}, model file sha256 {server.model_sha256[:16]}…")
        for config in CONFIGS:
            options = {k: v for k, v in config.items()}
            print(f"    {options['label']}: {args.repeats} samples, max_tokens {MAX_TOKENS}")
            run(
                PROBE,
                "local",
                repeats=args.repeats,
                max_tokens=MAX_TOKENS,
                out=args.out,
                **options,
            )
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


if __name__ == "__main__":
    sys.exit(main())
