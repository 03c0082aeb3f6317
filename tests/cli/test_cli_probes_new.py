"""Authoring a probe: ``probes new`` writes a skeleton, ``probes check --probes-dir`` /
``$JEVALKIT_PROBES`` check a user's folder with the bundled probes' rules, ``probes lock``
publishes it, and ``run`` finds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from probe_folders import write_placeholders

from jevalkit.probes import load_probe


def jevalkit(*args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=180,
    )


def write_cases(tmp_path, n=20):
    path = tmp_path / "capitals.csv"
    rows = ["id,country,expected"] + [f"k{i},Country {i},City {i}" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_new_check_lock_run(tmp_path, openai_server):
    cases = write_cases(tmp_path)
    mine = tmp_path / "mine"
    made = jevalkit("probes", "new", "capitals", "--cases", str(cases), "--probes-dir", str(mine))
    assert made.returncode == 0, made.stderr
    probe_file = mine / "capitals" / "v1.yaml"
    assert "edit every TODO" in made.stdout and probe_file.is_file()
    assert f"`jevalkit probes lock --probes-dir {mine}`" in made.stdout
    assert (mine / "capitals" / "cases.csv").read_bytes() == cases.read_bytes()
    data = yaml.safe_load(probe_file.read_text())
    assert data["messages"][1]["content"] == "country: {{country}}"
    assert data["scoring"] == {"type": "exact_match", "strip": True}
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert check.returncode == 1 and "note" not in check.stdout  # the TODOs fail it, not the lock
    # the skeleton's placeholders fail the check and keep it from being published
    assert (
        f"{probe_file}: still holds the skeleton's TODO placeholder(s) at messages.0"
        in check.stdout
    )
    refused = jevalkit("probes", "lock", "--probes-dir", str(mine))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "nothing was published" in refused.stderr and not (mine / "probes.lock").exists()
    write_placeholders(probe_file)
    assert "TODO" not in probe_file.read_text()
    # a correct version not yet locked is being written, not broken: a note, exit 0 (was FAIL, 1)
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert check.returncode == 0, check.stdout
    # the command to run next names the folder the user gave (it said `jevalkit probes lock`)
    assert (
        f"note capitals@1: not yet published: run `jevalkit probes lock --probes-dir {mine}`"
        in check.stdout
    )
    assert check.stdout.splitlines()[-1] == "2 ok, 0 failed, 1 note(s)"
    assert jevalkit("probes", "lock", "--probes-dir", str(mine)).stdout.strip() == (
        "published: capitals@1"
    )
    env = {"JEVALKIT_PROBES": str(mine)}
    check = jevalkit("probes", "check", env=env)  # the folder from the environment
    assert check.returncode == 0, check.stdout
    assert check.stdout.splitlines()[-1] == "2 ok, 0 failed"
    openai_server.reply = lambda body: body["messages"][-1]["content"].replace("Country", "City")
    out = tmp_path / "r.jsonl"
    run = jevalkit(
        "run",
        "capitals",
        "--model",
        "test/m",
        "--base-url",
        openai_server.base_url,
        "--out",
        str(out),
        "--cases",
        "1-5",
        env=env,
    )
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["case_id"] for r in rows) == ["k0", "k1", "k2", "k3", "k4"]
    assert not any(r["passed"] for r in rows)  # "country: City 0" is not "City 0"
    assert {r["subset"] for r in rows} == {"cases 1-5 of 20"}


def test_a_changed_user_case_file_and_a_broken_field_are_named(tmp_path):
    cases = write_cases(tmp_path)
    mine = tmp_path / "mine"
    jevalkit("probes", "new", "capitals", "--cases", str(cases), "--probes-dir", str(mine))
    write_placeholders(mine / "capitals" / "v1.yaml")
    assert jevalkit("probes", "lock", "--probes-dir", str(mine)).returncode == 0
    copy = mine / "capitals" / "cases.csv"
    copy.write_text(copy.read_text() + "k99,Country 99,City 99\n")
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert check.returncode == 1
    assert "(with its case file cases.csv): content changed since capitals@1" in check.stdout
    copy.write_text(cases.read_text() + "k98,only two cells\n")
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert f"{copy}:22: the row has a different number of cells" in check.stdout
    copy.write_text(cases.read_text())
    text = (mine / "capitals" / "v1.yaml").read_text().replace("role: user", "role: robot")
    (mine / "capitals" / "v1.yaml").write_text(text)
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert "v1.yaml: messages[1].role: " in check.stdout and "Traceback" not in check.stdout


def test_new_refuses_with_one_line(tmp_path):
    cases = write_cases(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "JEVALKIT_PROBES"}
    no_dir = subprocess.run(
        [sys.executable, "-m", "jevalkit.cli", "probes", "new", "x", "--cases", str(cases)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert no_dir.returncode == 2 and "give --probes-dir DIR" in no_dir.stderr
    assert no_dir.stderr.count("\n") == 1
    mine = str(tmp_path / "mine")
    assert jevalkit("probes", "new", "x", "--probes-dir", mine).returncode == 0
    again = jevalkit("probes", "new", "x", "--probes-dir", mine)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n{"id": "a"}\n')
    dup = jevalkit("probes", "new", "y", "--cases", str(bad), "--probes-dir", mine)
    assert dup.returncode == 2 and f"{bad}:2: id: duplicate case id 'a'" in dup.stderr
    upper = jevalkit("probes", "new", "Bad_Id", "--probes-dir", mine)
    assert upper.returncode == 2 and "lowercase letters" in upper.stderr
    missing = jevalkit("probes", "check", "--probes-dir", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such probes folder" in missing.stderr


def test_every_skeleton_scorer_loads_and_checks(tmp_path):
    cases = tmp_path / "c.jsonl"
    cases.write_text('{"id": "a", "text": "hi", "expected": {"k": 1}}\n')
    for scorer in ("exact_match", "levenshtein", "json_similarity", "json_schema", "constraints"):
        mine = tmp_path / scorer
        made = jevalkit(
            "probes",
            "new",
            "p",
            "--cases",
            str(cases),
            "--scoring",
            scorer,
            "--probes-dir",
            str(mine),
        )
        assert made.returncode == 0, (scorer, made.stderr)
        write_placeholders(mine / "p" / "v1.yaml")
        assert jevalkit("probes", "lock", "--probes-dir", str(mine)).returncode == 0
        check = jevalkit("probes", "check", "--probes-dir", str(mine))
        assert check.returncode == 0, (scorer, check.stdout)


def test_check_of_a_user_folder_fails_a_probe_shadowing_a_bundled_id(tmp_path):
    import shutil

    from jevalkit._paths import probes_dir

    mine = tmp_path / "mine"
    shutil.copytree(probes_dir() / "unit-conversion", mine / "unit-conversion")
    assert jevalkit("probes", "lock", "--probes-dir", str(mine)).returncode == 0
    checked = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert checked.returncode == 1
    assert "FAIL unit-conversion@1" in checked.stdout and "bundled probe's" in checked.stdout
    via_env = jevalkit("probes", "check", env={"JEVALKIT_PROBES": str(mine)})
    assert via_env.returncode == 1 and "bundled probe's" in via_env.stdout


def test_new_into_a_folder_it_cannot_use_is_one_line_and_writes_nothing(tmp_path):
    # issue 37.10: a file or /proc/self as --probes-dir ended in NotADirectoryError /
    # FileNotFoundError tracebacks
    cases = write_cases(tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    for probes_dir, words in (
        (a_file, "not a folder"),
        (Path("/proc/self"), "cannot write the new probe there"),
        (a_file / "below", "cannot write the new probe there"),
    ):
        done = jevalkit(
            "probes", "new", "x", "--cases", str(cases), "--probes-dir", str(probes_dir)
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert words in done.stderr and "Traceback" not in done.stderr
    assert a_file.read_text() == "not a folder"
    # a case file refused (a case without its answer) leaves nothing behind either
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"id": "a", "q": 1, "expected": "2"}\n{"id": "b", "q": 2}\n')
    mine = tmp_path / "mine" / "deeper"
    done = jevalkit("probes", "new", "y", "--cases", str(mixed), "--probes-dir", str(mine))
    assert done.returncode == 2 and "is empty in 1 case(s), the first 'b'" in done.stderr
    assert not (tmp_path / "mine").exists()


def write_system_message(probe_file: Path, text: str = "Answer with the answer only.") -> None:
    """What a user writes after `probes new`: the system message (the prompt's instructions)."""
    data = yaml.safe_load(probe_file.read_text())
    data["messages"][0]["content"] = text
    probe_file.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_gold_column_never_reaches_the_prompt_and_only_the_prompt_is_left_to_write(tmp_path):
    """issue 54.2: `id,question,answer` put `answer: {{answer}}` into the user prompt (the gold
    answer sent to the model) and left `expected: TODO`."""
    cases = tmp_path / "qa.csv"
    cases.write_text("id,question,answer,label\nq1,Capital of France?,Paris,geo\nq2,2+2?,4,math\n")
    mine = tmp_path / "mine"
    made = jevalkit("probes", "new", "qa", "--cases", str(cases), "--probes-dir", str(mine))
    assert made.returncode == 0, made.stderr
    assert "expected answer: the `answer` column, copied as `expected`" in made.stdout
    assert "left out of the prompt as well: label" in made.stdout
    probe_file = mine / "qa" / "v1.yaml"
    data = yaml.safe_load(probe_file.read_text())
    assert data["messages"][1]["content"] == "question: {{question}}"
    assert data["scoring"] == {"type": "exact_match", "strip": True}  # no `expected: TODO`
    assert (mine / "qa" / "cases.csv").read_text() == (
        "id,question,expected,label\nq1,Capital of France?,Paris,geo\nq2,2+2?,4,math\n"
    )
    assert "edit every TODO (messages.0.content)" in made.stdout
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert check.returncode == 1 and "placeholder(s) at messages.0.content;" in check.stdout
    write_system_message(probe_file)
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert check.returncode == 0, check.stdout
    assert check.stdout.splitlines()[-1] == "2 ok, 0 failed, 1 note(s)"
    probe = load_probe("qa", root=mine)
    for case in probe.cases:  # what is sent holds the question, never the answer
        sent = json.dumps(probe.chat_messages(case))
        assert case.fields["question"] in sent and case.expected not in sent
        assert case.fields["label"] not in sent
    assert probe.score("Paris", "q1").passed and not probe.score("Rome", "q1").passed


def test_a_case_file_without_ids_is_numbered_and_says_so(tmp_path):
    """issue 54.2: a CSV without an `id` column was refused instead of numbered."""
    cases = tmp_path / "qa.csv"
    cases.write_text("Question,Target\nCapital of Italy?,Rome\nCapital of Spain?,Madrid\n")
    mine = tmp_path / "mine"
    made = jevalkit("probes", "new", "caps", "--cases", str(cases), "--probes-dir", str(mine))
    assert made.returncode == 0, made.stderr
    assert "no `id`: the cases are numbered 1, 2, ... in file order" in made.stdout
    assert "expected answer: the `Target` column, copied as `expected`" in made.stdout
    write_system_message(mine / "caps" / "v1.yaml")
    assert jevalkit("probes", "check", "--probes-dir", str(mine)).returncode == 0
    probe = load_probe("caps", root=mine)
    assert [(c.id, c.expected) for c in probe.cases] == [("1", "Rome"), ("2", "Madrid")]
    assert probe.chat_messages(probe.cases[0])[-1]["content"] == "Question: Capital of Italy?"
    # JSON lines without ids, the answer under `label`: the same
    lines = tmp_path / "sentiment.jsonl"
    lines.write_text(
        '{"text": "great", "label": "positive"}\n{"text": "bad", "label": "negative"}\n'
    )
    made = jevalkit("probes", "new", "senti", "--cases", str(lines), "--probes-dir", str(mine))
    assert made.returncode == 0, made.stderr
    assert "no `id`" in made.stdout and "the `label` column" in made.stdout
    rows = [json.loads(x) for x in (mine / "senti" / "cases.jsonl").read_text().splitlines()]
    assert rows == [
        {"id": "1", "text": "great", "expected": "positive"},
        {"id": "2", "text": "bad", "expected": "negative"},
    ]
    # some cases with an id and others without: refused as before, naming the line
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"id": "a", "text": "x"}\n{"text": "y"}\n')
    done = jevalkit("probes", "new", "mixed", "--cases", str(mixed), "--probes-dir", str(mine))
    assert done.returncode == 2 and f"{mixed}:2: the case has no `id`" in done.stderr


def test_without_an_answer_column_the_skeleton_says_what_to_write(tmp_path):
    cases = tmp_path / "q.csv"
    cases.write_text("id,question\nq1,Why?\n")
    mine = tmp_path / "mine"
    made = jevalkit("probes", "new", "why", "--cases", str(cases), "--probes-dir", str(mine))
    assert made.returncode == 0, made.stderr
    assert "none of the columns expected, answer, target, label" in made.stdout
    data = yaml.safe_load((mine / "why" / "v1.yaml").read_text())
    assert data["scoring"]["expected"] == "TODO"


def test_answer_like_columns_other_names_never_reach_the_prompt(tmp_path):
    """review-c: `correct_answer`, `Gold`, `reference`, `ground truth` went into the user prompt
    (the gold answer sent to the model) because only expected/answer/target/label were known."""
    mine = tmp_path / "mine"
    for i, header in enumerate(
        ["id,question,correct_answer", "id,question,Gold", "id,question,reference,ground truth"]
    ):
        cases = tmp_path / f"qa{i}.csv"
        extra = ",Paris again" if header.count(",") == 3 else ""
        cases.write_text(f"{header}\nq1,Capital of France?,Paris{extra}\n")
        made = jevalkit("probes", "new", f"qa{i}", "--cases", str(cases), "--probes-dir", str(mine))
        assert made.returncode == 0, made.stderr
        gold = header.split(",")[2]
        assert f"expected answer: the `{gold}` column, copied as `expected`" in made.stdout
        write_system_message(mine / f"qa{i}" / "v1.yaml")
        probe = load_probe(f"qa{i}", root=mine)
        sent = json.dumps(probe.chat_messages(probe.cases[0]))
        assert "Capital of France?" in sent and "Paris" not in sent, sent
        assert probe.score("Paris", "q1").passed


def test_a_spreadsheet_export_becomes_a_probe_or_one_line(tmp_path):
    """review-c: a CSV saved by a spreadsheet (BOM, `;` separators, `Question Text` / `Gold
    Answer` headers) was refused with "'{{Question;Gold Answer}}' is not a placeholder"; an
    empty answer was copied as an expected empty reply; a repeated row went unremarked."""
    mine = tmp_path / "mine"
    excel = tmp_path / "excel.csv"
    excel.write_bytes(
        "\ufeffQuestion Text;Gold Answer\nCapital of France?;Paris\nCapital of Italy?;Rome\n"
        "Capital of Italy?;Rome\n".encode()
    )
    made = jevalkit("probes", "new", "excel", "--cases", str(excel), "--probes-dir", str(mine))
    assert made.returncode == 0, made.stderr
    assert "separated by ';': read as such" in made.stdout
    assert "renamed for {{placeholders}} (in the copy): 'Question Text' -> Question_Text" in (
        made.stdout
    )
    assert "case '3' is case '2' again" in made.stdout
    write_system_message(mine / "excel" / "v1.yaml")
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert check.returncode == 0, check.stdout
    probe = load_probe("excel", root=mine)
    assert probe.chat_messages(probe.cases[0])[-1]["content"] == "Question_Text: Capital of France?"
    assert [c.expected for c in probe.cases] == ["Paris", "Rome", "Rome"]
    # a missing answer: refused in one line naming the column and the case
    holes = tmp_path / "holes.csv"
    holes.write_text("id,Prompt,Target\na,Capital of France?,Paris\nb,Capital of Italy?,\n")
    done = jevalkit("probes", "new", "holes", "--cases", str(holes), "--probes-dir", str(mine))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "`Target` (the expected answer) is empty in 1 case(s), the first 'b'" in done.stderr
    assert not (mine / "holes").exists()
    # a probe's own `;`-separated case file: named, not "not a placeholder"
    folder = mine / "semi"
    folder.mkdir()
    (folder / "v1.yaml").write_text(
        (mine / "excel" / "v1.yaml").read_text().replace("id: excel", "id: semi")
    )
    (folder / "cases.csv").write_text("id;Question_Text;expected\n1;Capital of Spain?;Madrid\n")
    check = jevalkit("probes", "check", "--probes-dir", str(mine))
    assert "the file is separated by ';'" in check.stdout + check.stderr, check
