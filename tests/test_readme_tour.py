"""Every command in README.md and the guide runs (issue 24.12, 26.12, 38.6): each ``jevalkit ...``
line of their shell blocks is listed here with the command line the test runs for it, and the test fails when
the README gains a command this file does not run.

The commands run as written, in a scratch folder with a copy of ``data/``, against the loopback
test server (``--base-url`` added where the README names a hosted model or ``local``: the test
server answers for any model name; the embedded model's own tests live in tests/local/).
A few commands are covered by other tests, named in ``ELSEWHERE``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shlex
import shutil
import zlib
from pathlib import Path

import pytest
from probe_folders import write_placeholders
from race_answers import answerer

from jevalkit._paths import data_dir
from jevalkit.cli import main
from jevalkit.client import PROVIDERS
from jevalkit.errors import ImportFormatError
from jevalkit.io import read_source
from jevalkit.local import is_local_model

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
GOOD = json.dumps([{"id": i, "name": f"User {i}", "active": i % 2 == 0} for i in range(1, 11)])

# README line (as written, comment cut) -> why it is not run here
ELSEWHERE = {
    "jevalkit local build | serve [--chat --slots 4 --threads 2] | status | stop [--chat]": (
        "the embedded servers: tests/local/test_local_state.py, test_local_model.py and "
        "test_local_chat.py"
    ),
    "jevalkit report --batch batch.yaml --workers 2": "a Dask cluster: tests/reports/test_batch.py",
    "jevalkit run schema-ten-records --model m --repeats 500 --workers 4": (
        "a LocalCluster: tests/runner/test_distributed.py"
    ),
    "jevalkit run schema-ten-records --model m --repeats 500 --scheduler tcp://head:8786": (
        "a running scheduler: tests/runner/test_distributed.py starts `dask scheduler`"
    ),
    "jevalkit judge faithfulness --data cases.jsonl --model m --scheduler tcp://head:8786": (
        "judges on a running scheduler: tests/runner/test_distributed.py"
    ),
    "jevalkit probes check --probes-dir my-probes": "run in order under the `probes new` line",
    "jevalkit probes lock --probes-dir my-probes": "run in order under the `probes new` line",
    "jevalkit run my-probe --model local --repeats 3": "run in order under the `probes new` line",
    "jevalkit merge runs/big.jsonl": "run after the eight shards under the `--shard` line",
}


def readme_commands() -> list[str]:
    """Every ``jevalkit ...`` line in the fenced shell blocks of README.md and of the guide
    (docs/guide/, where the README's reference sections went), comments cut."""
    pages = [README, *sorted((REPO / "docs" / "guide").glob("*.md"))]
    blocks = [b for page in pages for b in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S)]
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line.startswith("jevalkit ")]


def inspect_log(server, folder: Path) -> Path:
    spec = importlib.util.spec_from_file_location(
        "inspect_lab", REPO / "tests" / "io" / "test_inspect.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.inspect_eval(server, folder)


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    """A scratch folder with a copy of data/, the test server, and the files the README's
    commands name: logs/x.eval (a real inspect_ai log; the only one, so logs/*.eval is it),
    results.json (a real promptfoo output),
    output.json, base.jsonl, head.jsonl, a.jsonl, b.jsonl, runs/x.jsonl, runs/demo.jsonl."""
    from openai_server import OpenAIServer

    from jevalkit.runner import run

    root = tmp_path_factory.mktemp("tour")
    shutil.copytree(data_dir(), root / "data")
    with OpenAIServer() as server:
        (root / "logs").mkdir()
        log = inspect_log(server, tmp_path_factory.mktemp("inspect"))
        shutil.copy(log, root / "logs" / "x.eval")
        shutil.copy(
            REPO / "tests" / "io" / "fixtures" / "promptfoo-0.121.20-echo-repeat3.json",
            root / "results.json",
        )
        (root / "output.json").write_text(GOOD)
        (root / "answer.txt").write_text("3000\n")
        (root / "questions.csv").write_text(
            "id,question,expected\nq1,Capital of France?,Paris\nq2,Capital of Italy?,Rome\n"
        )
        for name, temperature in (("base", 0.0), ("head", 0.0), ("a", 1.0), ("b", 0.0)):
            run(
                "schema-ten-records",
                name,
                base_url=server.base_url,
                repeats=4,
                temperature=temperature,
                seed=1,
                out=root / f"{name}.jsonl",
                progress=False,
            )
        (root / "runs").mkdir()
        shutil.copy(root / "a.jsonl", root / "runs" / "x.jsonl")
        run(  # a pilot with cases and wordings that vary: what `plan` and total_error read
            "schema-ten-records",
            "pilot",
            base_url=server.base_url,
            variants="all",
            repeats=5,
            temperature=1.0,
            seed=1,
            out=root / "runs" / "pilot.jsonl",
            progress=False,
        )
        shutil.copy(root / "a.jsonl", root / "runs" / "schema-ten-records__local.jsonl")
        shutil.copy(
            data_dir() / "runs" / "schema-ten-records__local-demo.jsonl", root / "runs/demo.jsonl"
        )
        server.logprobs = lambda body: (
            {"tokens": ["4"], "top_logprobs": [{"4": math.log(0.6), "2": math.log(0.4)}]}
            if "prompt" in body
            else security_logprobs(body)
        )
        yield root, server


def security_logprobs(body: dict) -> dict | None:
    """How the bundled cascade's two simulated judges answer the ``security`` prompt: both say
    safe ("No"), as sure as the calibration's judges tend to be (between 0.52 and 0.99, by a
    hash of the prompt: the cascade checks that new answers are like the labelled ones) but
    for the answers that puzzle them (0.51): the small judge those about a password or turning
    something off, the large one those about logging in or turning something off. None for
    other chat requests (no logprobs)."""
    text = json.dumps(body.get("messages"))
    if body.get("model") not in ("small-judge", "large-judge") or "unsafe" not in text:
        return None
    puzzles = ("password", "turn it off")
    if body["model"] == "large-judge":
        puzzles = ("log in", "turn it off")
    spread = 0.52 + 0.47 * (zlib.crc32(text.encode()) % 100) / 99
    p = 0.51 if any(word in text for word in puzzles) else spread
    alts = [{"token": "No", "logprob": math.log(p)}, {"token": "Yes", "logprob": math.log(1 - p)}]
    return {"content": [{"token": "No", "logprob": alts[0]["logprob"], "top_logprobs": alts}]}


def _check_queue(path: Path) -> None:
    """The people's queue of the lazily run cascade: the answers no judge was sure of, with
    their text, as a label plan."""
    plan = [json.loads(line) for line in path.read_text().splitlines()]
    assert {row["strategy"] for row in plan} == {"cascade"}
    assert sorted(row["case_id"] for row in plan) == ["n01", "n10"], plan
    assert "log in" in plan[0]["output"] and "turn it off" in plan[1]["output"]  # to label
    # read as results, the queue is named as what it is, with how to label it (issue 54.2)
    with pytest.raises(ImportFormatError, match=r"a label plan \(the queue .*Labeler"):
        read_source(path)


def jevalkit(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def test_every_readme_command_is_run_by_this_file():
    run_here = set(COMMANDS) | set(ELSEWHERE)
    missing = [line for line in readme_commands() if line not in run_here]
    assert missing == [], "README commands no test runs: add them to COMMANDS"
    stale = [line for line in run_here if line not in readme_commands()]
    assert stale == [], "commands listed here that README no longer has"


def test_the_readme_links_every_guide_page_and_each_link_resolves():
    linked = set(re.findall(r"\]\((docs/[^)]+)\)", README.read_text()))
    assert [link for link in sorted(linked) if not (REPO / link).exists()] == []
    pages = {f"docs/guide/{p.name}" for p in (REPO / "docs" / "guide").glob("*.md")}
    assert sorted(pages - linked - {"docs/guide/index.md"}) == []


def test_a_model_without_a_provider_is_shown_with_its_endpoint():
    """A reader copies a block as it stands: `--model m` (no provider prefix, not local) is refused
    unless the block gives --base-url or sets $JEVALKIT_BASE_URL (issue 38, item 8)."""
    pages = [README, *sorted((REPO / "docs" / "guide").glob("*.md"))]
    bare = []
    for page in pages:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
            for model in re.findall(r"--model (\S+)", block):
                if model.split("/")[0] in PROVIDERS or is_local_model(model) or "$" in model:
                    continue
                if "--base-url" not in block and "JEVALKIT_BASE_URL=" not in block:
                    bare.append(f"{page.name}: --model {model}")
    assert bare == []


def test_a_python_block_names_its_models_providers():
    """review-c: designs.md's Race(models=["a", "b", "c"]) was refused as written ("model 'a'
    names no provider"): a Python block's model names carry their provider, as a shell block's
    do (or the block gives base_url=)."""
    bare = []
    for page in [README, *sorted((REPO / "docs" / "guide").glob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            if "base_url=" in block:
                continue
            for listed in re.findall(r"models=\[([^\]]*)\]", block):
                for model in re.findall(r"\"([^\"]+)\"", listed):
                    if model.split("/")[0] not in PROVIDERS and not is_local_model(model):
                        bare.append(f"{page.name}: {model}")
    assert bare == []


# README line -> (the argv run here, the exit code expected, a text its output must hold)
COMMANDS: dict[str, list[tuple]] = {  # (command, exit code, needle) or (a hand edit, its file)
    "jevalkit probes list | check | show PROBE | lock | new ID --cases FILE": [
        ("probes list", 0, "schema-ten-records"),
        ("probes check", 0, "schema-ten-records"),
        ("probes show schema-ten-records", 0, "schema-ten-records"),
        ("probes lock", 0, "nothing new to publish"),
        ("probes new tour-probe --cases questions.csv --probes-dir tour-probes", 0, ""),
    ],
    "jevalkit score unit-conversion --case km-to-m-1 --file answer.txt": [
        ("score unit-conversion --case km-to-m-1 --file answer.txt", 0, '"passed": true'),
    ],
    "jevalkit run unit-conversion --model local --repeats 3 --cases 1-20": [
        (
            "run unit-conversion --model local --repeats 3 --cases 1-20 {base_url}",
            0,
            "unit-conversion@2",
        ),
    ],
    "jevalkit run schema-ten-records --model local --variants all --repeats 5 --temperature 1 --seed 1": [
        (
            "run schema-ten-records --model local --variants all --repeats 5 --temperature 1 --seed 1 {base_url}",
            0,
            "schema-ten-records@4",
        ),
    ],
    "jevalkit design runs/x.jsonl --target-half-width 0.05 --facets case,variant": [
        # runs/x.jsonl has neither cases nor wordings to generalise over: refused, one line
        ("design runs/x.jsonl --target-half-width 0.05 --facets case,variant", 2, ""),
        # a pilot that has both (built by the fixture on the test server)
        ("design runs/pilot.jsonl --target-half-width 0.05 --facets case,variant", (0, 2), ""),
    ],
    "jevalkit design runs/pilot.jsonl --target-half-width 0.05 --facets case,variant --limit variant=3": [
        (
            "design runs/pilot.jsonl --target-half-width 0.05 --facets case,variant --limit variant=3",
            (0, 2),  # 2: no design within variant=3 reaches 0.05, said in one line
            "",
        ),
    ],
    "jevalkit report total_error --results runs/pilot.jsonl": [
        ("report total_error --results runs/pilot.jsonl", 0, "total_error.html"),
    ],
    "jevalkit probes new my-probe --cases questions.csv --scoring exact_match --probes-dir my-probes": [
        (
            "probes new my-probe --cases questions.csv --scoring exact_match --probes-dir my-probes",
            0,
            "my-probes/my-probe/v1.yaml",
        ),
        # the skeleton's worked examples pass; its placeholders and the publication fail
        ("probes check --probes-dir my-probes", 1, "2 ok, 1 failed"),
        ("probes lock --probes-dir my-probes", 2, ""),
        (write_placeholders, "my-probes/my-probe/v1.yaml"),  # "edit every TODO"
        ("probes lock --probes-dir my-probes", 0, "published: my-probe@1"),
        ("probes check --probes-dir my-probes", 0, "my-probe@1"),
        (
            "JEVALKIT_PROBES=my-probes run my-probe --model local --repeats 3 {base_url}",
            0,
            "my-probe@1",
        ),
    ],
    "jevalkit run schema-ten-records --model m --repeats 500 --out runs/big.jsonl --shard $SLURM_ARRAY_TASK_ID/8": [
        *[
            (
                f"run schema-ten-records --model m --repeats 500 --out runs/big.jsonl --shard {i}/8 {{base_url}}",
                0,
                "",
            )
            for i in range(8)
        ],
        ("merge runs/big.jsonl", 0, ""),
        ("metrics runs/big.jsonl", 0, " 500 "),
    ],
    "jevalkit items data/examples/unit-conversion-systems.jsonl --irt 2pl --save-fit fit.json": [
        (  # the bundled past systems' results (issue 54.4: a newcomer made six runs first)
            "items data/examples/unit-conversion-systems.jsonl --irt 2pl --save-fit fit.json",
            0,
            "item model written to fit.json",
        ),
    ],
    "jevalkit run unit-conversion --model local --cases active:12 --prior fit.json --out runs/new.jsonl": [
        (
            "items data/examples/unit-conversion-systems.jsonl --irt 2pl --save-fit fit.json",
            0,
            "fit.json",
        ),
        (
            "run unit-conversion --model local --cases active:12 --prior fit.json --out runs/new.jsonl {base_url}",
            0,
            "active plan: full-benchmark score",
        ),
    ],
    "jevalkit score schema-ten-records --file output.json": [
        ("score schema-ten-records --file output.json", 0, '"passed": true'),
    ],
    "jevalkit run schema-ten-records --model openai/gpt-4o-mini --repeats 5 --temperature 1 --seed 1": [
        (
            "run schema-ten-records --model openai/gpt-4o-mini --repeats 5 --temperature 1 --seed 1 {base_url}",
            0,
            "schema-ten-records@4",  # no @N: the latest version
        ),
    ],
    "jevalkit run schema-ten-records --model local --max-tokens 400 --constrained": [
        (
            "run schema-ten-records --model local --max-tokens 400 --constrained {base_url}",
            0,
            "1 answer(s) cut off at max_tokens",  # the test server cuts this one (fault "length")
        ),
    ],
    "jevalkit metrics runs/schema-ten-records__local.jsonl --by system": [
        ("metrics runs/schema-ten-records__local.jsonl --by system", 0, "pass_rate"),
    ],
    "jevalkit metrics a.jsonl b.jsonl": [
        # two files of two systems: read as one, each system its own rows (issue 54.2)
        ("metrics a.jsonl b.jsonl", 0, "kept apart: system"),
        ("metrics a.jsonl b.jsonl --pool", 0, "pass_rate"),
    ],
    "jevalkit run schema-ten-records@2 --model local-chat --repeats 5 --temperature 1 --seed 1": [
        (
            "run schema-ten-records@2 --model local-chat --repeats 5 --temperature 1 --seed 1 {base_url}",
            0,
            "schema-ten-records@2 local-chat",
        ),
    ],
    "jevalkit import logs/*.eval results.json --out imported.jsonl": [
        (
            "import logs/x.eval results.json --out imported.jsonl",
            0,
            "imported.jsonl",
        ),
    ],
    "jevalkit export runs/demo.jsonl --to every-eval-ever --out demo.eee.json": [
        ("export runs/demo.jsonl --to every-eval-ever --out demo.eee.json", 0, "demo.eee.json"),
    ],
    "jevalkit compare base.jsonl head.jsonl --html diff.html": [
        ("compare base.jsonl head.jsonl --html diff.html", 0, "diff.html"),
    ],
    "jevalkit gate runs/x.jsonl --metric pass_rate --min 0.9": [
        ("gate runs/x.jsonl --metric pass_rate --min 0.9", None, "system=a"),
    ],
    "jevalkit gate --baseline base.jsonl --candidate head.jsonl --max-drop 0.02": [
        (
            "gate --baseline base.jsonl --candidate head.jsonl --max-drop 0.02",
            None,
            "drop",
        ),
    ],
    "jevalkit judge pairwise --systems a.jsonl b.jsonl --model local --prompt-style completion": [
        (
            "judge pairwise --systems a.jsonl b.jsonl --model local --prompt-style completion {base_url}",
            0,
            "swap consistency",
        ),
    ],
    "jevalkit run schema-ten-records --model openai/gpt-4o-mini --repeats 5 --dry-run": [
        (  # as written: a dry run sends nothing, so it needs neither a server nor a key
            "run schema-ten-records --model openai/gpt-4o-mini --repeats 5 --dry-run",
            0,
            "would send to: https://api.openai.com/v1 as 'gpt-4o-mini'; key $OPENAI_API_KEY",
        ),
    ],
    "jevalkit run schema-ten-records --model local --repeats auto --target-half-width 0.1 --max-repeats 60": [
        (
            "run schema-ten-records --model local --repeats auto --target-half-width 0.1 --max-repeats 60 {base_url}",
            None,
            "adaptive repeats",
        ),
    ],
    "jevalkit run schema-ten-records --model openai/gpt-4o-mini --repeats 20 --budget-usd 0.50": [
        (
            "run schema-ten-records --model openai/gpt-4o-mini --repeats 20 --budget-usd 0.50 {base_url}",
            0,
            "schema-ten-records@4",
        ),
    ],
    "jevalkit gate runs/x.jsonl --repeats auto --probe schema-ten-records --model local --min 0.8": [
        (
            "gate runs/auto.jsonl --repeats auto --probe schema-ten-records --model local --min 0.8 {base_url}",
            None,
            "",
        ),
    ],
    "jevalkit judge faithfulness --data faithfulness --model local --prompt-style completion": [
        (
            "judge faithfulness --data faithfulness --model local --prompt-style completion {base_url}",
            0,
            "mae",
        ),
    ],
    "jevalkit judge tool_call_accuracy --data tool_call_accuracy": [
        ("judge tool_call_accuracy --data tool_call_accuracy", 0, "case_id"),
    ],
    "jevalkit cascade calibrate data/examples/cascade_judged.jsonl --judges small-judge large-judge --labels data/examples/cascade_labels.jsonl --out cascade.json": [
        (
            "cascade calibrate data/examples/cascade_judged.jsonl --judges small-judge large-judge --labels data/examples/cascade_labels.jsonl --out cascade.json",
            0,
            "on average over items like the 400 calibration items",
        ),
    ],
    "jevalkit judge security --data data/examples/cascade_new.jsonl --cascade cascade.json --out runs/new.jsonl --for-people queue.jsonl": [
        (
            "cascade calibrate data/examples/cascade_judged.jsonl --judges small-judge large-judge --labels data/examples/cascade_labels.jsonl --out cascade.json",
            0,
            "wrote cascade.json",
        ),
        (  # the bundled judges are simulated: the test server answers for both (security_logprobs)
            "judge security --data data/examples/cascade_new.jsonl --cascade cascade.json --out runs/new.jsonl --for-people queue.jsonl {base_url}",
            0,
            "10 of 12 case(s) decided by a judge; 2 for people",
        ),
        (_check_queue, "queue.jsonl"),
    ],
    "jevalkit cascade show cascade.json": [
        (
            "cascade calibrate data/examples/cascade_judged.jsonl --judges small-judge large-judge --labels data/examples/cascade_labels.jsonl --out cascade.json",
            0,
            "wrote cascade.json",
        ),
        ("cascade show cascade.json", 0, "large-judge"),
    ],
    "jevalkit report judge_cascade": [
        ("report judge_cascade", 0, "judge_cascade.html"),
    ],
    "jevalkit report probe_report --results runs/demo.jsonl -p probe schema-ten-records@2 --out reports/x": [
        (
            "report probe_report --results runs/demo.jsonl -p probe schema-ten-records@2 --out reports/x",
            0,
            "probe_report.html",
        ),
    ],
    "jevalkit report imported_log --results logs/x.eval --from inspect": [
        (
            "report imported_log --results logs/x.eval --from inspect",
            0,
            "imported_log.html",
        ),
    ],
    "jevalkit items data/examples/benchmark.jsonl --irt 2pl": [
        ("items data/examples/benchmark.jsonl --irt 2pl", 0, "alpha"),
    ],
    "jevalkit leaderboard data/examples/benchmark.jsonl --html board.html": [
        ("leaderboard data/examples/benchmark.jsonl --html board.html", 0, "board.html"),
    ],
    "jevalkit leaderboard data/examples/pairwise.jsonl --from pairwise --pairwise": [
        ("leaderboard data/examples/pairwise.jsonl --from pairwise --pairwise", 0, ""),
    ],
    "jevalkit report benchmark_health": [
        ("report benchmark_health", 0, "benchmark_health.html"),
    ],
    "jevalkit race unit-conversion --models openai/gpt-4o openai/gpt-4o-mini openai/gpt-4.1-nano --target best --budget-requests 400": [
        (
            "race unit-conversion --models openai/gpt-4o openai/gpt-4o-mini openai/gpt-4.1-nano --target best --budget-requests 400 {base_url}",
            0,
            "certified (95%, every statement together): best = openai/gpt-4o",
        ),
    ],
    "jevalkit race unit-conversion --models a b c d --target top:2 --confidence 0.95 --out runs/race.jsonl": [
        (
            "race unit-conversion --models a b c d --target top:2 --confidence 0.95 --out runs/race.jsonl {base_url}",
            0,
            "top:2 = a, b",
        ),
    ],
    "jevalkit report leaderboard -p race runs/race.race.json": [
        (
            "race unit-conversion --models a b c d --target top:2 --confidence 0.95 --out runs/race.jsonl {base_url}",
            0,
            "outcome: runs/race.race.json",
        ),
        ("report leaderboard -p race runs/race.race.json", 0, "leaderboard.html"),
    ],
    "jevalkit probes page schema-ten-records --results runs/demo.jsonl --out page.html": [
        (
            "probes page schema-ten-records --results runs/demo.jsonl --out page.html",
            0,
            "page.html",
        ),
    ],
}


@pytest.mark.parametrize("line", list(COMMANDS))
def test_readme_command(line, tour, capsys, monkeypatch):
    root, server = tour
    monkeypatch.chdir(root)
    monkeypatch.setenv("JEVALKIT_DATA_DIR", str(root / "data"))
    for command, *expected in COMMANDS[line]:
        if callable(command):  # what the user does by hand between two commands
            command(root / expected[0])
            continue
        expected_code, needle = expected
        argv = shlex.split(command.replace("{base_url}", f"--base-url {server.base_url}"))
        with monkeypatch.context() as scoped:
            while "=" in argv[0]:  # NAME=VALUE before the command, as in the shell
                name, value = argv.pop(0).split("=", 1)
                scoped.setenv(name, value)
            run_one(capsys, server, argv, expected_code, needle)


# systems of known skill for the races (the test server answers every other command alike)
RACERS = {"openai/gpt-4o": 1.0, "openai/gpt-4o-mini": 0.6, "openai/gpt-4.1-nano": 0.1,
          "a": 1.0, "b": 0.9, "c": 0.3, "d": 0.0}  # fmt: skip


def run_one(
    capsys, server, argv: list[str], expected_code: int | tuple[int, ...] | None, needle: str
) -> None:
    if "--max-tokens" in argv:
        server.faults["local"] = ["length"]
    kept = server.reply
    if argv[0] == "race":
        server.reply = answerer("unit-conversion", RACERS)[0]
    try:
        code, out, err = jevalkit(capsys, *argv)
    finally:
        server.reply = kept
    if expected_code is None:  # a decision: 0 pass, 1 fail, 2 refused or undecided
        assert code in (0, 1, 2), err
        assert out.split(":", 1)[0] in ("PASS", "FAIL", "REFUSED", "UNDECIDED") or (
            "adaptive repeats" in out
        ), out
    elif isinstance(expected_code, tuple):  # an answer or a one-line refusal, data-dependent
        assert code in expected_code, (argv, out, err)
        assert code == 0 or len(err.strip().splitlines()) == 1, err
    else:
        assert code == expected_code, (argv, out, err)
    assert needle in out, (argv, out, err)


def test_the_python_tour(tour, monkeypatch):
    """README's Python tour, run line by line; two substitutions, each checked against the README
    text: the run goes to the test server, and the log's own system is the baseline."""
    root, server = tour
    monkeypatch.chdir(root)
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    swaps = {
        "max_tokens=240": f'max_tokens=240, base_url="{server.base_url}", progress=False',
        "logs/2026-11-30T10-00-00_mytask.eval": "logs/x.eval",
        '"gpt-4o-mini"': "logs['system'].iloc[0]",
    }
    for old in swaps:
        assert old in block, old
    for old, new in swaps.items():
        block = block.replace(old, new)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)  # the README's own code
    assert scope["probe"].score('[{"id": 1, "name": "a", "active": true}]').passed is False
    rows = scope["result"].rows
    assert len(rows) == 5 and set(rows["system"]) == {"local"} and scope["result"].stopped is None
