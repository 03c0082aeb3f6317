"""``jevalkit.run(PROBE, None, design=Race(...))`` and ``jevalkit race PROBE --models ...``
against the loopback server: each system is sent only the cases of the waves it raced in (one
shared order of the cases), a run killed with SIGKILL resumes without drawing anew, a request
budget stops it with the rank sets certified so far, and hostile races end in one line."""

from __future__ import annotations

import json

import pytest
from killed_run import kill_after
from loopback import options
from race_answers import PROBE, SKILL, answerer

import jevalkit
from jevalkit.cli import main
from jevalkit.errors import UsageError
from jevalkit.metrics import Race, RaceOutcome
from jevalkit.results import read_results


def sent_cases(server):
    """(model, case index) of every request the server saw, in order."""
    _, by_index = answerer()
    index = {content: j for j, content in by_index.items()}
    return [
        (r["body"]["model"], index[r["body"]["messages"][-1]["content"]]) for r in server.requests
    ]


def test_a_race_sends_each_system_only_the_cases_of_its_waves(openai_server, tmp_path):
    reply, _ = answerer()
    openai_server.reply = reply
    race = Race(models=["good", "mid", "bad"], target="ranks")
    result = jevalkit.run(PROBE, None, design=race, **options(openai_server, tmp_path / "r.jsonl"))
    outcome = result.design
    assert outcome.certified and outcome.answer == ("good", "mid", "bad")
    sent = sent_cases(openai_server)
    assert len(sent) == len(result.rows) == outcome.n_requests < outcome.n_uniform == 120
    shown = outcome.table().set_index("system")
    # every system got a prefix of the same order of cases, as long as it stayed in the race
    by_model = {m: [c for mm, c in sent if mm == m] for m in SKILL if m != "twin"}
    order = sorted(by_model.values(), key=len)[-1]
    rows = result.rows.assign(draw=[d["draw"] for d in result.rows["design"]])
    for model, cases in by_model.items():
        assert len(cases) == len(set(cases)) == shown.loc[model, "n_requests"]
        assert set(cases) == set(order[: len(cases)])
        assert sorted(rows.loc[rows["model"] == model, "draw"]) == list(range(len(cases)))
    assert len(by_model["bad"]) < len(by_model["good"])  # the worst left the race early
    # each system's rows are in its own file beside out, named by the race
    for model in ("good", "mid", "bad"):
        mine = read_results(tmp_path / f"r__{model}.jsonl")
        assert len(mine) == shown.loc[model, "n_requests"] and set(mine["model"]) == {model}
        assert {d["name"] for d in mine["design"]} == {race.name}
    # the same call again sends nothing: every wave's rows are written
    again = jevalkit.run(PROBE, None, design=race, **options(openai_server, tmp_path / "r.jsonl"))
    assert len(openai_server.requests) == len(sent)
    pd_equal = again.design.table().equals(outcome.table())
    assert pd_equal


KILLED = """
import sys, jevalkit
from jevalkit.metrics import Race
jevalkit.run("unit-conversion@1", None, design=Race(models=["good", "mid", "bad"], target="ranks"),
             base_url=sys.argv[1], out=sys.argv[2], progress=False, cache=False, concurrency=1)
"""


def test_a_killed_race_resumes_without_drawing_anew(openai_server, tmp_path):
    reply, _ = answerer()
    first, out = 25, tmp_path / "killed.jsonl"

    def written():
        files = [tmp_path / f"killed__{m}.jsonl" for m in ("good", "mid", "bad")]
        return sum(f.read_bytes().count(b"\n") for f in files if f.exists())

    # the server answers 25 requests and holds the next; then SIGKILL
    kill_after(openai_server, reply, first, KILLED, out, written=written)
    assert written() == first
    before = len(openai_server.requests)
    code = main(
        ["race", PROBE, "--models", "good", "mid", "bad", "--target", "ranks",
         "--base-url", openai_server.base_url, "--out", str(out), "--no-cache",
         "--concurrency", "1"]
    )  # fmt: skip
    assert code == 0
    resumed = sent_cases(openai_server)[before:]
    straight = tmp_path / "straight.jsonl"
    done = jevalkit.run(
        PROBE, None, design=Race(models=["good", "mid", "bad"], target="ranks"),
        **options(openai_server, straight),
    )  # fmt: skip
    # the resumed race sent only what the killed one had not, and ended as a straight one
    assert len(resumed) == done.design.n_requests - first
    outcome = RaceOutcome.load(out.with_suffix(".race.json"))
    assert outcome.table().drop(columns="value").equals(done.design.table().drop(columns="value"))
    for m in ("good", "mid", "bad"):
        killed = read_results(tmp_path / f"killed__{m}.jsonl")["case_id"]
        assert sorted(killed) == sorted(read_results(tmp_path / f"straight__{m}.jsonl")["case_id"])


def test_a_budget_stops_the_race_with_the_ranks_certified_so_far(openai_server, tmp_path, capsys):
    reply, _ = answerer()
    openai_server.reply = reply
    out = tmp_path / "b.jsonl"
    argv = ["race", PROBE, "--models", "good", "mid", "bad", "--target", "ranks",
            "--base-url", openai_server.base_url, "--out", str(out), "--no-cache",
            "--concurrency", "1", "--budget-requests", "75"]  # fmt: skip
    code = main(argv)
    printed = capsys.readouterr().out
    assert code == 1 and len(openai_server.requests) == 75
    assert "not certified at 95% (budget)" in printed and "the same command resumes" in printed
    outcome = RaceOutcome.load(out.with_suffix(".race.json"))
    assert outcome.stop_reason == "budget" and outcome.n_requests == 75
    shown = outcome.table().set_index("system")
    assert shown.loc["bad", "status"] == "rank 3"  # settled before the budget ran out
    assert (shown.loc[["good", "mid"], "status"] == "open").all()
    # the same command without the budget resumes and finishes
    code = main(argv[:-2])
    assert code == 0 and RaceOutcome.load(out.with_suffix(".race.json")).certified


def test_two_identical_systems_run_every_case_and_are_not_certified(
    openai_server, tmp_path, capsys
):
    reply, _ = answerer()
    openai_server.reply = reply
    code = main(
        ["race", PROBE, "--models", "mid", "twin", "--base-url", openai_server.base_url,
         "--out", str(tmp_path / "t.jsonl"), "--no-cache", "--concurrency", "2"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1 and len(openai_server.requests) == 80
    assert "not certified at 95% (complete): still open: mid, twin" in printed


def test_a_system_that_errors_on_every_request_stops_the_race(openai_server, tmp_path, capsys):
    reply, _ = answerer()
    openai_server.reply = reply
    openai_server.faults["bad"] = ["500"] * 1000
    code = main(
        ["race", PROBE, "--models", "good", "bad", "--base-url", openai_server.base_url,
         "--out", str(tmp_path / "e.jsonl"), "--no-cache", "--max-retries", "0"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    assert "not certified at 95% (errors)" in captured.out
    assert "bad answered no case" in captured.out
    assert len(openai_server.requests) == 20  # one wave, then it stopped


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--models", "good"], "a race needs at least two systems"),
        (["--models", "good", "good"], "given twice: good"),
        (["--models", "good", "mid", "--target", "top:2"], "K must be from 1 to 1"),
        (["--models", "good", "mid", "--target", "top:x"], "give best, top:K or ranks"),
        (["--models", "good", "mid", "--confidence", "1.5"], "confidence must be between 0 and 1"),
        (["--models", "good", "mid", "--repeats", "auto"], "drop --repeats auto"),
        (["--models", "good", "mid", "--sample-seed", "-2"], "seed must be a whole number"),
    ],
)
def test_bad_races_are_one_line_and_exit_2(openai_server, tmp_path, capsys, args, says):
    code = main(
        ["race", PROBE, *args, "--base-url", openai_server.base_url,
         "--out", str(tmp_path / "r.jsonl")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert openai_server.requests == []
    assert not list(tmp_path.iterdir())


def test_an_outcome_that_cannot_be_written_is_one_line(openai_server, tmp_path, capsys):
    reply, _ = answerer()
    openai_server.reply = reply
    argv = ["race", PROBE, "--models", "good", "bad", "--base-url", openai_server.base_url,
            "--out", str(tmp_path / "r.jsonl"), "--no-cache"]  # fmt: skip
    assert main([*argv, "--outcome", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err and openai_server.requests == []
    (tmp_path / "file").write_text("")
    assert main([*argv, "--outcome", str(tmp_path / "file" / "race.json")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]  # after the progress bars: one line
    assert last.startswith("jevalkit: error: ") and "cannot write the race's outcome" in last
    # the rows are written: the same command with a good path resumes without sending
    sent = len(openai_server.requests)
    assert main([*argv, "--outcome", str(tmp_path / "race.json")]) == 0
    assert len(openai_server.requests) == sent


def test_a_probe_of_one_case_is_refused(openai_server, tmp_path, capsys):
    code = main(
        ["race", "schema-ten-records", "--models", "a", "b", "--base-url",
         openai_server.base_url, "--out", str(tmp_path / "r.jsonl")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "has 1 case" in err and openai_server.requests == []


def test_a_race_names_its_own_models(openai_server, tmp_path):
    race = Race(models=["good", "mid"])
    with pytest.raises(UsageError, match="names its own models"):
        jevalkit.run(PROBE, "good", design=race, **options(openai_server, tmp_path / "r.jsonl"))
    with pytest.raises(UsageError, match="drop label="):
        jevalkit.run(
            PROBE, None, design=race, label="x", **options(openai_server, tmp_path / "r.jsonl")
        )
    with pytest.raises(UsageError, match="give the model to run"):
        jevalkit.run(PROBE, None, **options(openai_server, tmp_path / "r.jsonl"))
    with pytest.raises(UsageError, match="not as --shard"):
        jevalkit.run(
            PROBE, None, design=race, shard="0/2", **options(openai_server, tmp_path / "r.jsonl")
        )
    assert openai_server.requests == []


def test_the_outcome_file_is_what_the_cli_printed(openai_server, tmp_path, capsys):
    reply, _ = answerer()
    openai_server.reply = reply
    where = tmp_path / "elsewhere" / "race.json"
    code = main(
        ["race", PROBE, "--models", "good", "mid", "bad", "--target", "top:1",
         "--base-url", openai_server.base_url, "--out", str(tmp_path / "r.jsonl"),
         "--no-cache", "--outcome", str(where)]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0 and "certified (95%, every statement together): top:1 = good" in printed
    record = json.loads(where.read_text())
    assert record["answer"] == ["good"] and record["target"] == "top:1"
    assert f"requests: {record['n_requests']} of the 120" in printed


@pytest.mark.parametrize(
    "changed",
    [
        ["--sample-seed", "1"],
        ["--confidence", "0.9"],
        ["--target", "ranks"],
        ["--method", "hoeffding"],
        ["--first-wave", "20"],
        ["--models", "good", "mid", "twin"],  # another system (a shared file: good's)
        ["--models", "good", "mid"],  # one dropped: more confidence for each pair
    ],
)
def test_a_race_changed_after_its_answer_is_refused_in_one_line(
    openai_server, tmp_path, capsys, changed
):
    """Resuming a race's files with another question (seed, confidence, target, systems, ...)
    would let it be asked again until it certifies: refused before anything is sent."""
    reply, _ = answerer()
    openai_server.reply = reply
    argv = ["race", PROBE, "--base-url", openai_server.base_url, "--out",
            str(tmp_path / "r.jsonl"), "--no-cache", "--budget-requests", "30"]  # fmt: skip
    assert main([*argv, "--models", "good", "mid", "bad"]) == 1
    capsys.readouterr()
    sent = len(openai_server.requests)
    models = [] if changed[0] == "--models" else ["--models", "good", "mid", "bad"]
    assert main([*argv, *models, *changed]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "not by 'race: " in err and "changed after an answer was seen" in err
    assert len(openai_server.requests) == sent
    # the same race resumes
    assert main([*argv[:-2], "--models", "good", "mid", "bad"]) == 0


def test_a_race_reads_the_rows_of_a_plain_run(openai_server, tmp_path):
    """Rows of a run without a design (every case, drawn by no one) are answers a race may
    read: resuming from them sends nothing new for the cases they hold."""
    reply, _ = answerer()
    openai_server.reply = reply
    for model in ("good", "bad"):
        jevalkit.run(PROBE, model, **options(openai_server, tmp_path / f"r__{model}.jsonl"))
    sent = len(openai_server.requests)
    race = Race(models=["good", "bad"])
    done = jevalkit.run(PROBE, None, design=race, **options(openai_server, tmp_path / "r.jsonl"))
    assert done.design.answer == ("good",) and len(openai_server.requests) == sent


def test_systems_whose_names_share_a_results_file_are_refused(openai_server, tmp_path, capsys):
    """``x/y`` and ``x_y`` would both write ``r__x_y.jsonl`` (``A`` and ``a`` too on a disk that
    ignores case): refused before anything is sent, naming both."""
    for models in (["x/y", "x_y"], ["Good", "good"]):
        code = main(
            ["race", PROBE, "--models", *models, "--base-url", openai_server.base_url,
             "--out", str(tmp_path / "r.jsonl"), "--no-cache"]
        )  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and "would write one results file" in err and "Traceback" not in err
        assert f"{models[0]!r} and {models[1]!r}" in err
        assert openai_server.requests == [] and not list(tmp_path.iterdir())
