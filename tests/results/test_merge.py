"""The checked merge refuses what is not one run's parts and never loses a row (issue 37.5-7):
parts of different runs are refused naming the part and the field; a torn last row is said and
its part kept until its rows are all merged; a parts folder (or part) that is a symbolic link is
refused before anything is read, written or deleted."""

from __future__ import annotations

import dataclasses
import json

import pytest

import jevalkit
from jevalkit.cli import main
from jevalkit.errors import ResultsError
from jevalkit.results import (
    RunConfig,
    config_path,
    iter_rows,
    merge_parts,
    part_files,
    parts_dir,
    read_results,
)


def shard(server, out, which, probe="schema-ten-records", model="m", **options):
    defaults = dict(base_url=server.base_url, out=out, repeats=6, progress=False, cache=False)
    return jevalkit.run(probe, model, shard=which, **{**defaults, **options})


def other_runs_part(server, out, second, names):
    """Shard 0/2 of ``out``, and beside it the ``names`` of shard 1/2 of a run with the options
    ``second`` (``base``: on another server) written elsewhere."""
    from openai_server import OpenAIServer

    elsewhere = out.with_name("elsewhere.jsonl")
    shard(server, out, "0/2")
    second = dict(second)
    if second.pop("base", None):
        with OpenAIServer() as other:
            shard(other, elsewhere, "1/2", **second)
    else:
        shard(server, elsewhere, "1/2", **second)
    for name in names:
        (parts_dir(elsewhere) / name).rename(parts_dir(out) / name)


def refused_merge(capsys, out, *needles):
    before = {p: p.read_bytes() for p in part_files(out)}
    assert main(["merge", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    assert not out.exists()  # nothing merged
    assert {p: p.read_bytes() for p in part_files(out)} == before  # no part touched
    return err


def test_shards_run_at_two_temperatures_are_refused_naming_the_part_and_params_hash(
    openai_server, tmp_path, capsys
):
    out = tmp_path / "r.jsonl"
    shard(openai_server, out, "0/2", temperature=0)
    # the second shard, run by hand with other options, is refused before it sends a request
    with pytest.raises(ResultsError, match=r"0\.jsonl is not a shard of this run: params_hash"):
        shard(openai_server, out, "1/2", temperature=0.9, max_tokens=50)
    assert len(part_files(out)) == 1
    assert len(openai_server.requests) == len(list(iter_rows(part_files(out)[0])))
    # a part written elsewhere (another machine's shard) is refused by the merge
    other = tmp_path / "other.jsonl"
    shard(openai_server, other, "1/2", temperature=0.9, max_tokens=50)
    for name in ("1.jsonl", "1.run.json"):
        (parts_dir(other) / name).rename(parts_dir(out) / name)
    err = refused_merge(capsys, out, "1.jsonl is not a shard of the run of", "params_hash of")
    assert "schema-ten-records@4" in err and "in 0.jsonl" in err


@pytest.mark.parametrize(
    ("second", "field"),
    [
        (dict(model="m2"), "model is m2 here but m in 0.jsonl"),
        (dict(probe="schema-ten-records@2"), "probe versions are schema-ten-records@2 here"),
        (dict(base="other"), "base_url is http://127.0.0.1:"),
        (dict(repeats=8), "number of planned jobs is 8 here but 6 in 0.jsonl"),
        (dict(label="T=1"), "label is T=1 here but none in 0.jsonl"),
    ],
)
def test_parts_of_another_model_version_endpoint_or_plan_are_refused(
    openai_server, tmp_path, capsys, second, field
):
    out = tmp_path / "r.jsonl"
    other_runs_part(openai_server, out, second, ("1.jsonl", "1.run.json"))
    refused_merge(capsys, out, "1.jsonl is not a shard of the run of", field)


def test_shards_of_one_run_merge_and_leave_no_configuration_behind(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    for which in ("0/3", "1/3", "2/3"):
        shard(openai_server, out, which, temperature=0.5, seed=1)
    configs = [RunConfig.read(p) for p in part_files(out)]
    assert len(configs) == 3 and all(c == configs[0] for c in configs)
    assert configs[0].sharding == "3 shards" and configs[0].jobs == 6
    report = merge_parts(out)
    assert sum(r["new"] for r in report) == 6 and not parts_dir(out).exists()


def test_a_part_without_its_configuration_beside_others_is_refused(openai_server, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    config_path(part_files(out)[1]).unlink()
    refused_merge(capsys, out, "1.jsonl: no run configuration beside it (1.run.json)")


def test_a_torn_last_row_is_said_and_its_part_kept_until_its_rows_are_merged(
    openai_server, tmp_path, capsys
):
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    part = part_files(out)[1]
    lines = part.read_bytes().splitlines(keepends=True)
    whole = len(lines)
    part.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # the last write torn by a crash
    assert main(["merge", str(out)]) == 1
    shown = capsys.readouterr()
    assert f"{part}: {whole - 1} rows" in shown.out and "1 kept" in shown.out
    assert f"{part}: its last line is torn (40 bytes" in shown.err
    assert "run its shard again" in shown.err and len(shown.err.strip().splitlines()) == 1
    assert part_files(out) == [part] and config_path(part).exists()  # kept, with its configuration
    assert len(read_results(out)) == 6 - 1  # the complete rows are merged
    sent = len(openai_server.requests)
    shard(openai_server, out, "1/2")  # resumes: mends the line, sends that one request again
    assert len(openai_server.requests) == sent + 1
    assert main(["merge", str(out)]) == 0
    assert len(read_results(out)) == 6 and not parts_dir(out).exists()
    assert len(list(iter_rows(out))) == 6


def test_a_parts_folder_that_is_a_symlink_is_refused_and_its_target_untouched(
    openai_server, tmp_path, capsys
):
    out = tmp_path / "r.jsonl"
    shard(openai_server, out, "0/2")
    target = tmp_path / "precious"
    parts_dir(out).rename(target)
    (target / "notes.jsonl").write_text("mine\n")
    parts_dir(out).symlink_to(target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    assert main(["merge", str(out)]) == 2
    err = capsys.readouterr().err
    assert "r.jsonl.parts is a symbolic link" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(ResultsError, match="is a symbolic link"):
        shard(openai_server, out, "1/2")
    with pytest.raises(ResultsError, match="is a symbolic link"):
        jevalkit.run("schema-ten-records", "m", base_url=openai_server.base_url, out=out, workers=1)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before and not out.exists()


def test_a_part_file_that_is_a_symlink_is_refused(openai_server, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    shard(openai_server, out, "0/2")
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(part_files(out)[0].read_bytes())
    (parts_dir(out) / "1.jsonl").symlink_to(elsewhere)
    assert main(["merge", str(out)]) == 2
    assert "1.jsonl is a symbolic link" in capsys.readouterr().err
    assert elsewhere.exists() and not out.exists()


def test_a_run_configuration_that_is_not_ours_is_refused_in_one_line(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    config = config_path(part_files(out)[0])
    good = json.loads(config.read_text())
    for bad in ({"model": "m"}, {**good, "probes": ["x"]}, {**good, "jobs": "6"}, [1], "[" * 10**5):
        config.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        with pytest.raises(ResultsError, match=r"0\.run\.json: not a run configuration jevalkit"):
            merge_parts(out)
    assert len(part_files(out)) == 2 and not out.exists()


def test_the_configuration_names_what_differs(tmp_path):
    base = RunConfig.of("m", "local", None, "2 shards", [("p", 1, "aa", "h", ("p", 1, 0))])
    other = dataclasses.replace(base, probes={"p@1": {"probe_hash": "bb", "params_hash": ["h"]}})
    assert base.difference(other) == "content (sha256) of p@1 is aa here but bb there"
    assert base.difference(base) is None
    part = tmp_path / "0.jsonl"
    base.write(part)
    assert RunConfig.read(part) == base


@pytest.mark.parametrize(
    ("second", "field"),
    [
        (dict(model="m2"), "model is m2 here but m in 0.jsonl"),
        (dict(label="T=1"), "label is T=1 here but none in 0.jsonl"),
        (dict(base="other"), "base_url is http://127.0.0.1:"),
    ],
)
def test_parts_of_different_runs_without_configurations_are_refused_by_their_rows(
    openai_server, tmp_path, capsys, second, field
):
    # parts written by hand or by an older jevalkit record no configuration: their rows still
    # say which run wrote them, and two runs' rows must not be pooled into one pass rate
    out = tmp_path / "r.jsonl"
    other_runs_part(openai_server, out, second, ("1.jsonl",))
    config_path(part_files(out)[0]).unlink()
    refused_merge(capsys, out, "1.jsonl is not a shard of the run of", field)


def test_parts_of_one_run_without_configurations_still_merge(openai_server, tmp_path):
    out = tmp_path / "r.jsonl"
    for which in ("0/2", "1/2"):
        shard(openai_server, out, which)
    n = sum(len(p.read_text().splitlines()) for p in part_files(out))
    for part in part_files(out):
        config_path(part).unlink()
    assert main(["merge", str(out)]) == 0
    assert len(read_results(out)) == n == 6
