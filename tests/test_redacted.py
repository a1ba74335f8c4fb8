"""The redacted view of a text is exactly the redaction of the text, and its map is exact:
putting back the real text of every hidden span gives the real text, character for
character. Texts are drawn at random from pieces that trip every pass (known values split
over lines, keys, assignments, URLs, private keys, pairs), so passes overlap and nest."""

from __future__ import annotations

import itertools
import random

import pytest

from jupyter_agent.secrets.redacted import Redacted
from jupyter_agent.secrets.redaction import Secrets
from jupyter_agent.secrets.shapes import mask_secrets

KNOWN = "Zq8xKf3LmN0pR7sT2vW9yB4cD6"
PIECES = [
    KNOWN,
    f'"{KNOWN[:10]}"\n    "{KNOWN[10:]}"',
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
    "password = hunter22-x",
    'api_key: "abcdef123456"',
    "postgresql://bob:s3cr3t-pw@db:5432/x",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----",
    "('password', 'opensesame1')",
    "db:5432:sales:bob:pgpass-secret",
    "Authorization: Bearer abcdefghijklmnopqrstu",
    "ghp_" + "a" * 36,
    "token = getpass()",
    "‹secret:X›",
    "•••",
    "plain text",
    "\n",
    " ",
    "=",
    '"',
]


def _secrets() -> Secrets:
    return Secrets(lambda: {"MY_TOKEN": KNOWN})


def _restored(view: Redacted) -> str:
    """The view with each hidden span's real text put back."""
    out, at = [], 0
    for h in view.hidden:
        out += [view.text[at : h.start], view.raw[h.raw_start : h.raw_end]]
        at = h.end
    out.append(view.text[at:])
    return "".join(out)


@pytest.mark.parametrize("seed", range(300))
def test_the_view_is_the_redaction_and_its_map_gives_back_the_real_text(seed):
    rng = random.Random(seed)
    raw = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
    masker = _secrets().masker()
    view = masker.view(raw)
    assert view.text == masker.redact(raw) == _secrets().redact(raw)
    assert _restored(view) == raw
    spans = [(h.raw_start, h.raw_end, h.start, h.end) for h in view.hidden]
    assert all(a[1] <= b[0] and a[3] <= b[2] for a, b in itertools.pairwise(spans))
    assert all(h.start < h.end for h in view.hidden)  # every hidden span shows
    # Each line of the view is the view of a line of the real text.
    assert len(view.lines()) == raw.count("\n") + 1


def test_what_a_mask_keeps_of_a_value_is_text_and_the_rest_is_hidden():
    raw = "key = sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 # prod"
    view = _secrets().masker().view(raw)
    assert view.text == "key = sk-a••• # prod"
    (hidden,) = view.hidden
    assert view.text[hidden.start : hidden.end] == "•••"
    assert raw[hidden.raw_start : hidden.raw_end] == "nt-api03-abcdefghijklmnopqrstuvwxyz0123"
    # A span of the view maps back unless it cuts a hidden span.
    assert view.raw_span(0, 3) == (0, 3)
    start = view.text.index("sk-a")
    assert view.raw_span(start, start + len("sk-a•••")) == (start, raw.index(" # prod"))
    assert view.raw_span(start, start + len("sk-a•")) is None
    assert view.hides(hidden.raw_start, hidden.raw_end)
    assert not view.hides(hidden.raw_start - 1, hidden.raw_end)


def test_a_value_over_several_lines_shows_on_the_line_it_begins_on():
    raw = f'x = 1\nkey = ("{KNOWN[:10]}"\n       "{KNOWN[10:]}")\ny = 2'
    view = _secrets().masker().view(raw)
    assert view.lines() == ["x = 1", 'key = ("‹secret:MY_TOKEN›', '")', "y = 2"]


def test_the_shape_masks_alone_are_the_same_passes():
    raw = "password = hunter22-x and ghp_" + "b" * 36
    assert mask_secrets(raw) == Secrets(dict).redact(raw)


SHAPES = [
    "password = hunter22-x",
    "PassWord: 'abcdef1'",
    "paſsword = abcdefgh",  # ſ matches s when case is ignored
    "\u212aEY = abcdefgh",  # so does the Kelvin sign K
    "my_long_name_" + "x" * 27 + "token = abcdefgh",  # the word 40 characters into its key
    "y" * 41 + "_key = abcdefgh",  # and 41
    "api.key\n=\n  'abcdefghij'",
    "passwd\thunter22!",
    "db:5432:sales:bob:pgpass-secret",
    "\tdb:*:x:y:z1",
    "a:b:5432:c:d:e",
    "https://u:p4ssw0rd@host/x",
    "x" * 45 + "://u:pw@h",
    "S3://bob:pw@bucket",
    "eyJabcdefghijk.eyJabcdefghijk.abcdefghijk",
    "xeyJabcdefghijk.eyJabcdefghijk.abcdefghijk",
    "Authorization: BEARER abcdefghijklmnopq",
    "sk_live_abcdefghijklmnop",
    "rk_test_abcdefghijklmnopq",
    "é",
    "İ",
    "token=",
    " ",
    "\n",
    ":",
    "=",
    "'",
]


@pytest.mark.parametrize("seed", range(400))
def test_each_fast_pass_finds_what_the_pattern_finds_at_every_position(seed):
    from jupyter_agent.secrets.shapes import MASK_PASSES, Anchored

    rng = random.Random(seed)
    text = "".join(rng.choice(SHAPES) for _ in range(rng.randint(1, 10)))
    for fast in (p for p in MASK_PASSES if isinstance(p, Anchored)):
        assert list(fast(text)) == list(fast.everywhere(text)), (fast.pattern.pattern, text)
