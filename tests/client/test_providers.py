"""Model names as researchers write them: ``openai/`` is OpenAI's API, ``openrouter/`` is
OpenRouter, ``anthropic/`` is Anthropic's OpenAI-compatible endpoint, ``local`` the embedded
model; ``--dry-run`` sends nothing and needs no key."""

from __future__ import annotations

import pytest

import jevalkit
from jevalkit.cli import main
from jevalkit.client import destination, key_variable_for, route_model
from jevalkit.errors import ClientError


@pytest.mark.parametrize(
    ("model", "url", "sent", "key"),
    [
        ("openai/gpt-4o-mini", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
        (
            "openrouter/openai/gpt-4o-mini",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4o-mini",
            "OPENROUTER_API_KEY",
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "https://api.anthropic.com/v1",
            "claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
        ),
    ],
)
def test_the_prefix_names_the_provider_and_its_key(model, url, sent, key):
    route = route_model(model)
    assert (route.base_url, route.model) == (url, sent)
    assert key_variable_for(route.base_url) == key


def test_an_explicit_base_url_sends_the_name_as_written():
    assert route_model("openai/gpt-oss-20b", "http://127.0.0.1:8000/v1").model == (
        "openai/gpt-oss-20b"
    )


def test_a_name_without_a_provider_is_refused_unless_a_base_url_says_where(monkeypatch):
    with pytest.raises(ClientError, match="names no provider: write openai/<model>") as err:
        route_model("meta-llama/llama-3.1-8b-instruct")
    assert "openrouter/meta-llama/llama-3.1-8b-instruct" in str(err.value)
    monkeypatch.setenv("JEVALKIT_BASE_URL", "http://127.0.0.1:9/v1")
    assert route_model("meta-llama/llama-3.1-8b-instruct").base_url is None  # the env's URL
    with pytest.raises(ClientError, match="name the model after the provider"):
        route_model("openai/")


def test_a_run_sends_openai_names_to_openai_with_only_openais_key(monkeypatch, tmp_path):
    # OpenRouter's key is set, OpenAI's is not: `openai/` went to OpenRouter with it before
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-0123456789abcdef")
    with pytest.raises(
        ClientError, match=r"no API key for https://api\.openai\.com/v1: set \$OPENAI"
    ):
        jevalkit.run("schema-ten-records", "openai/gpt-4o-mini", out=tmp_path / "r.jsonl")
    assert not (tmp_path / "r.jsonl").exists() or (tmp_path / "r.jsonl").stat().st_size == 0


def test_the_run_sends_the_name_without_the_prefix(openai_server, tmp_path, monkeypatch):
    # a loopback stand-in for OpenRouter (the table's URL is a constant: point it here)
    monkeypatch.setitem(jevalkit.client.PROVIDERS, "openrouter", openai_server.base_url)
    df = jevalkit.run(
        "schema-ten-records@2",
        "openrouter/openai/gpt-4o-mini",
        max_tokens=50,
        out=tmp_path / "r.jsonl",
        progress=False,
    ).rows
    assert [r["body"]["model"] for r in openai_server.requests] == ["openai/gpt-4o-mini"]
    assert df["model"].tolist() == ["openrouter/openai/gpt-4o-mini"]  # the system as written
    assert df["base_url"].tolist() == [openai_server.base_url]


def test_the_dry_run_sends_nothing_and_needs_no_key(capsys, tmp_path):
    argv = ["run", "schema-ten-records", "--model", "openai/gpt-4o-mini", "--dry-run"]
    assert main([*argv, "--repeats", "5", "--out", str(tmp_path / "r.jsonl")]) == 0
    out = capsys.readouterr().out
    assert (
        "would send to: https://api.openai.com/v1 as 'gpt-4o-mini'; key $OPENAI_API_KEY (not set"
        in out
    )
    assert "dry run: nothing was sent" in out and not (tmp_path / "r.jsonl").exists()


def test_the_destination_line_says_whether_the_key_is_set_never_its_value(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    line = destination("anthropic/claude-sonnet-4-5")
    assert line == (
        "https://api.anthropic.com/v1 as 'claude-sonnet-4-5'; key $ANTHROPIC_API_KEY (set)"
    )
