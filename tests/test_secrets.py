"""Secret masking: names read word by word, credential-shaped values, no false alarms."""

from __future__ import annotations

import pytest

from jupyter_agent.secrets.redaction import Secrets
from jupyter_agent.secrets.shapes import (
    MASK,
    is_secret_name,
    looks_secret,
    mask_secrets,
    mask_value,
)

SECRET_NAMES = [
    "OPENAI_API_KEY",
    "api_key",
    "apiKey",
    "APIKey",
    "token",
    "GITHUB_TOKEN",
    "authToken",
    "refresh_token",
    "access_tokens",
    "password",
    "DB_PASSWORD",
    "mypassword",
    "password2",
    "db_pass",
    "passwd",
    "secret",
    "client_secret",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "private_key",
    "session_key",
    "credentials",
    "creds",
    "auth",
    "basic_auth",
    "Authorization",
    "bearer",
    "cookies",
    "jwt",
]

HARMLESS_NAMES = [
    "df",
    "passengers",
    "pass_rate",
    "bypass",
    "compass",
    "max_tokens",
    "n_tokens",
    "token_count",
    "token_ids",
    "tokens",
    "tokenizer",
    "author",
    "authors",
    "key",
    "keys",
    "sort_key",
    "primary_key",
    "keyboard",
    "secretary",
    "session_id",
    "signature",
    "monkey",
    "",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_names_that_only_look_secret(name):
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "value",
    [
        "sk-ant-api03-abcdefghijklmnop",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        "glpat-abcdefghijklmnopqrstu",
        "xoxb-1234567890-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "hf_abcdefghijklmnopqrstuvwxyz0123456",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "postgresql://bob:s3cr3t@db.example.com:5432/sales",
    ],
)
def test_credential_shaped_values_are_masked(value):
    assert looks_secret(value)
    masked = mask_secrets(f"the value is {value} here")
    assert MASK in masked
    assert masked.startswith("the value is ") and masked.endswith(" here")
    assert value not in masked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # literal values assigned to secret-named keys
        ("password = 'hunter22'", "password = '•••'"),
        ('{"api_key": "abc123xyz"}', '{"api_key": "•••"}'),
        ("{'password': 'hunter2'}", "{'password': '•••'}"),
        ("DB_PASSWORD=swordfish", "DB_PASSWORD=•••"),
        ("API_KEY=abcdef1234", "API_KEY=•••"),
        ("token: 0123456789abcdef0123", "token: 0123•••"),
        # prefixes of known formats are kept so the user can tell keys apart
        ("OPENAI_API_KEY = 'sk-proj-abcdefghijklmnopqrstuvwx'", "OPENAI_API_KEY = 'sk-p•••'"),
        ("postgres://bob:s3cr3tpw@db:5432/x", "postgres://bob:•••@db:5432/x"),
        # code is not a secret: the agent must still read it
        ("token = getpass()", "token = getpass()"),
        ("token = os.environ['GITHUB_TOKEN']", "token = os.environ['GITHUB_TOKEN']"),
        ("api_key = cfg.api_key", "api_key = cfg.api_key"),
        ("client(api_key=api_key)", "client(api_key=api_key)"),
        ("password: None", "password: None"),
        # names that only look secret keep their values
        ("max_tokens: 100000", "max_tokens: 100000"),
        ("author: Shakespeare", "author: Shakespeare"),
        ("passengers = 123456789", "passengers = 123456789"),
        ("token_count=4096000", "token_count=4096000"),
    ],
)
def test_mask_secrets(text, expected):
    assert mask_secrets(text) == expected


def test_masking_is_idempotent_and_keeps_plain_text():
    text = "API_KEY = 'sk-ant-abcdefghijklmnop1234'\nprint(API_KEY)"
    once = mask_secrets(text)
    assert once == "API_KEY = 'sk-a•••'\nprint(API_KEY)"
    assert mask_secrets(once) == once
    plain = "df = pd.read_csv('sales.csv')\ndf.groupby('region').sum()"
    assert mask_secrets(plain) == plain
    assert mask_secrets("") == ""


def test_mask_value_keeps_a_prefix_of_long_values_only():
    assert mask_value("sk-ant-abcdefghijklmnop") == "sk-a•••"
    assert mask_value("short") == "•••"


def test_plain_values_do_not_look_secret():
    for value in ["hello world", "https://example.com/path", "sk-short", "2024-01-01", ""]:
        assert not looks_secret(value), value


HOSTILE_TEXTS = {
    "one long word": "p" * 1_000_000,
    "dotted run": "a." * 500_000,
    "JWT starts": "eyJ" * 300_000,
    "key blocks without an end": "-----BEGIN PRIVATE KEY-----\n" * 30_000,
    "pairs without a close": "'password', '" * 70_000,
    "assignments without a value": "api_key = " * 100_000,
    "schemes without a host": "a://" * 200_000,
    "blank lines": "\n" * 1_000_000,
    "spaced passwords": "password " * 100_000,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shape", list(HOSTILE_TEXTS))
def test_masking_takes_linear_time_on_any_text(shape):
    """A megabyte of text shaped to make a backtracking pattern try every start (a model's
    tool input, a file): masking ends (in seconds, where quadratic patterns took hours) and
    keeps the text's length order."""
    text = HOSTILE_TEXTS[shape]
    assert len(mask_secrets(text)) <= len(text) + 10
    redacted = Secrets(lambda: {"DB_PASS": "correct horse battery staple"}).redact(text)
    assert len(redacted) <= len(text) + 10


def test_netrc_pgpass_and_spaced_passwords_are_masked_but_prose_is_not():
    netrc = "machine api.example.com login me password netrc-pw-77\n"
    assert "netrc-pw-77" not in mask_secrets(netrc)
    table = "      name  value\n0  password  hunter2-in-a-frame"
    assert "hunter2-in-a-frame" not in mask_secrets(table)
    pgpass = "     1\tdb.internal:5432:sales:analyst:S3cr3t-pg\n"
    assert "S3cr3t-pg" not in mask_secrets(pgpass)
    prose = "Click the password reset link, then choose a new password below."
    assert mask_secrets(prose) == prose


def test_a_known_value_split_over_numbered_lines_is_hidden():
    """read_file numbers its lines: a value cut by a line break also has the gutter inside."""
    secrets = Secrets(lambda: {"GH_PAT": "github_pat_11AQWERTY0123456789_zyxwvutsr"})
    shown = "     1\ttoken: github_pat_11AQWERTY01\n     2\t23456789_zyxwvutsr\n"
    assert secrets.redact(shown) == "     1\ttoken: ‹secret:GH_PAT›\n"
