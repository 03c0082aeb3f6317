"""Keys go only to the endpoint they belong to and never reach anything written (issue 19.5)."""

from __future__ import annotations

import base64

import pytest

from jevalkit.client import Endpoint, key_variable_for, resolve_endpoint
from jevalkit.errors import ClientError
from jevalkit.results import read_results
from jevalkit.runner import run

KEY = "sk-jk-SECRET-0123456789abcdef"


def run_here(server, tmp_path, **options):
    options.setdefault("progress", False)
    options.setdefault("out", tmp_path / "results.jsonl")
    options.setdefault("base_url", server.base_url)
    options.setdefault("cache_dir", tmp_path / "cache")
    return run("schema-ten-records", "m", **options).rows


def written(tmp_path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())


def test_a_key_echoed_json_escaped_is_redacted_everywhere(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_API_KEY", KEY)
    openai_server.faults["m"] = ["echo_key_escaped"]
    df = run_here(openai_server, tmp_path)
    assert df.loc[0, "finish_reason"].startswith("stop Bearer ***")
    text = written(tmp_path)
    assert KEY not in text and KEY.replace("-", "\\u002d") not in text


def test_credentials_in_the_url_are_sent_as_basic_auth_and_never_written(openai_server, tmp_path):
    url = openai_server.base_url.replace("http://", "http://ann:pass-123456789@")
    df = run_here(openai_server, tmp_path, base_url=url)
    sent = openai_server.requests[0]["headers"]["Authorization"]
    assert sent == "Basic " + base64.b64encode(b"ann:pass-123456789").decode()
    assert df.loc[0, "base_url"] == openai_server.base_url
    assert "pass-123456789" not in written(tmp_path)


def test_each_key_goes_only_to_its_own_endpoint(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-not-for-loopback-000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-for-loopback-00")
    run_here(openai_server, tmp_path)
    assert "Authorization" not in openai_server.requests[-1]["headers"]
    monkeypatch.setenv("MY_GATEWAY_KEY", KEY)
    run_here(
        openai_server, tmp_path, out=tmp_path / "b.jsonl", api_key_env="MY_GATEWAY_KEY", cache=False
    )
    assert openai_server.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert key_variable_for("https://openrouter.ai/api/v1") == "OPENROUTER_API_KEY"
    assert key_variable_for("https://api.openai.com/v1") == "OPENAI_API_KEY"
    assert key_variable_for("https://evil.example/v1") == "JEVALKIT_API_KEY"
    with pytest.raises(
        ClientError, match=r"no API key for https://evil.example/v1: set \$JEVALKIT_API_KEY"
    ):
        resolve_endpoint("https://evil.example/v1")  # the OpenRouter key is not offered to it


def test_a_short_key_is_refused_remotely_and_never_redacted(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_API_KEY", "1")
    with pytest.raises(ClientError, match="1 character"):
        resolve_endpoint("https://api.example.com/v1")
    openai_server.reply = lambda body: '[{"id": 1, "name": "1", "active": true}]'
    df = run_here(openai_server, tmp_path)
    assert df.loc[0, "output"] == '[{"id": 1, "name": "1", "active": true}]'  # not "***"
    assert Endpoint("http://x", "1").redact("version 1.0") == "version 1.0"


def test_the_key_is_not_in_results_rows_read_back(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_API_KEY", KEY)
    openai_server.reply = lambda body: f"echo {KEY}"
    run_here(openai_server, tmp_path)
    df = read_results(tmp_path / "results.jsonl")
    assert df.loc[0, "output"] == "echo ***"


@pytest.mark.parametrize(
    ("fault", "password"),
    [("echo_auth", "pw"), ("echo_auth_cut", "pass-123456789")],  # "pw": short, its base64 is not
)
def test_basic_auth_echoed_in_base64_or_cut_short_is_never_written(
    openai_server, tmp_path, fault, password
):
    # issue 24.3 / 24.21: the URL's credentials go on the wire as base64; an echo of that header,
    # whole or minus its last characters, must not reach rows or the cache
    openai_server.faults["m"] = [fault]
    url = openai_server.base_url.replace("http://", f"http://ann:{password}@")
    df = run_here(openai_server, tmp_path, base_url=url)
    wire = base64.b64encode(f"ann:{password}".encode()).decode()
    assert openai_server.requests[0]["headers"]["Authorization"] == "Basic " + wire
    assert df.loc[0, "output"] == "you sent Basic ***"
    text = written(tmp_path)
    assert wire[:8] not in text and f"ann:{password}" not in text


def test_a_key_echoed_minus_its_end_is_redacted(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("JEVALKIT_API_KEY", KEY)
    openai_server.faults["m"] = ["echo_auth_cut"]
    df = run_here(openai_server, tmp_path)
    assert df.loc[0, "output"] == "you sent Bearer ***"
    assert KEY[:-4] not in written(tmp_path) and KEY[:8] not in written(tmp_path)


def test_a_malformed_url_never_prints_its_password(monkeypatch):
    for bad in ("http://ann:hunter2-secret@host:99999/v1", "ftp://ann:hunter2-secret@host/v1"):
        with pytest.raises(ClientError) as info:
            resolve_endpoint(bad)
        assert "hunter2" not in str(info.value) and "***@host" in str(info.value)
        monkeypatch.setenv("JEVALKIT_BASE_URL", bad)
        with pytest.raises(ClientError) as info:
            resolve_endpoint()
        assert "hunter2" not in str(info.value)
        monkeypatch.delenv("JEVALKIT_BASE_URL")


def test_a_key_and_url_credentials_together_are_refused_not_silently_chosen(monkeypatch):
    monkeypatch.setenv("JEVALKIT_API_KEY", KEY)
    with pytest.raises(ClientError, match=r"carries credentials and \$JEVALKIT_API_KEY is set"):
        resolve_endpoint("https://ann:pass-123456789@gateway.example/v1")


@pytest.mark.parametrize("password", ["p/ss0rdXYZ", "pa#ss0rdXYZ", "pa?ss0rdXYZ", "pa@ss0rdXYZ"])
def test_an_unencoded_password_never_reaches_the_parse_error(password):
    """A password with a character that ends the authority (/, #, ?) or an extra @ makes the URL
    unparsable; the message must not show any of it (not even the 'port' urllib cut from it)."""
    with pytest.raises(ClientError) as caught:
        resolve_endpoint(f"http://ann:{password}@127.0.0.1:99999/v1")
    message = str(caught.value)
    assert "cannot be parsed" in message
    assert "ss0rdXYZ" not in message and "'p'" not in message and "'pa'" not in message
