from __future__ import annotations

import pytest

from jupyter_agent.permissions import Allow, Ask, Deny, Permission, ToolCall
from jupyter_agent.rules import (
    Category,
    CommandPrefix,
    Custom,
    Everything,
    PathGlob,
    Regex,
    RequiresPermission,
    Rule,
    Rules,
    ToolName,
    remembered_prefix,
    split_command,
)

P = Permission


def shell(command: str, **kw) -> ToolCall:
    return ToolCall(
        name="execute_command",
        category="execute",
        input={"command": command},
        summary=command,
        role=kw.pop("role", "actor"),
        session_id=kw.pop("session_id", "s1"),
        permissions=frozenset({P.EXECUTE_COMMANDS}),
    )


def file_call(name: str, path: str, perms: set[str], category: str = "write") -> ToolCall:
    return ToolCall(
        name=name,
        category=category,
        input={"path": path},
        summary=f"{name} {path}",
        role="actor",
        session_id="s1",
        permissions=frozenset(perms),
        paths=(path,),
    )


# --- evaluation order -------------------------------------------------------------------


def test_no_matching_rule_means_ask():
    assert isinstance(Rules().decide(shell("ls")), Ask)


def test_scope_outranks_priority_user_over_session_over_role_over_global():
    rules = Rules(
        [
            Rule.deny(Everything(), scope="global", priority=100),
            Rule.allow(Everything(), scope="role", target="actor"),
        ]
    )
    assert isinstance(rules.decide(shell("ls")), Allow)
    rules.add(Rule.ask(Everything(), scope="session", target="s1"))
    assert isinstance(rules.decide(shell("ls")), Ask)
    rules.add(Rule.deny(Everything(), scope="user"))
    assert isinstance(rules.decide(shell("ls")), Deny)


def test_within_a_scope_higher_priority_first_then_deny_ask_allow():
    rules = Rules([Rule.allow(Everything(), priority=5), Rule.deny(Everything(), priority=1)])
    assert isinstance(rules.decide(shell("ls")), Allow)
    rules.add(Rule.ask(Everything(), priority=5))
    assert isinstance(rules.decide(shell("ls")), Ask)  # ask beats allow at equal priority
    rules.add(Rule.deny(Everything(), priority=5, description="nothing today"))
    decision = rules.decide(shell("ls"))
    assert decision == Deny("nothing today")


def test_role_and_session_rules_apply_only_to_their_target():
    rules = Rules([Rule.allow(Everything(), scope="role", target="reviewer")])
    assert isinstance(rules.decide(shell("ls")), Ask)
    assert isinstance(rules.decide(shell("ls", role="reviewer")), Allow)
    rules = Rules([Rule.allow(Everything(), scope="session", target="other")])
    assert isinstance(rules.decide(shell("ls")), Ask)


# --- matchers -------------------------------------------------------------------------------


def test_matchers_by_tool_category_permission_regex_and_callable():
    call = file_call("update_file", "src/app.py", {P.READ_FILES, P.WRITE_FILES})
    assert ToolName(name="update_file").matches(call)
    assert Category(category="write").matches(call)
    assert RequiresPermission(permission=P.WRITE_FILES).matches(call)
    assert not RequiresPermission(permission=P.DELETE_FILES).matches(call)
    assert Regex(pattern=r"\.py$", field="path").matches(call)
    assert not Regex(pattern="x", field="missing").matches(call)
    assert Regex(pattern='"path": "src/').matches(call)
    assert Custom(fn=lambda c: c.paths[0].startswith("src/")).matches(call)


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.env", "config/prod.env", True),
        (".env", "a/b/.env", True),
        (".env", "a/b/.envrc", False),
        ("/data/*.csv", "data/x.csv", True),
        ("/data/*.csv", "sub/data/x.csv", False),
        ("data/**/*.csv", "data/a/b/x.csv", True),
        ("data/**/*.csv", "data/x.csv", True),
        ("build/", "build/out/app.js", True),
        ("build/", "build/app.js", True),
        (".ENV", "config/.env", True),
        ("secrets", "secrets/key.txt", True),
        ("*.py", "notebooks/x.ipynb", False),
    ],
)
def test_path_globs_follow_gitignore(pattern, path, hit):
    call = file_call("update_file", path, {P.WRITE_FILES})
    assert PathGlob(pattern=pattern).matches(call) is hit


def test_path_rules_match_the_paths_a_call_touches():
    rules = Rules(
        [
            Rule.deny(PathGlob(pattern="*.csv"), description="data is read-only"),
            Rule.allow(Everything(), priority=-1),
        ]
    )
    assert rules.decide(file_call("update_file", "data/raw.csv", {P.WRITE_FILES})) == Deny(
        "data is read-only"
    )
    assert isinstance(rules.decide(file_call("update_file", "clean.py", {P.WRITE_FILES})), Allow)


# --- shell commands -----------------------------------------------------------------------------


def test_command_prefixes_match_whole_words():
    rule = CommandPrefix(prefix="git status")
    assert rule.matches(shell("git status"))
    assert rule.matches(shell("git  status --short"))
    assert not rule.matches(shell("git statusx"))
    assert not rule.matches(shell("git"))
    assert not rule.matches(file_call("read_file", "git status", {P.READ_FILES}))


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("git status", ["git status"]),
        ("git status; rm -rf /", ["git status", "rm -rf /"]),
        ("ls && touch x || echo no", ["ls", "touch x", "echo no"]),
        ("cat a | tee b", ["cat a", "tee b"]),
        ("ls\nrm x", ["ls", "rm x"]),
        ("echo $(rm x)", ["rm x", "echo  SUBST"]),
        ("echo `touch y`", ["touch y", "echo  SUBST"]),
        ("sleep 1 & rm z", ["sleep 1", "rm z"]),
        ("echo 'a; b' \"c && d\"", ["echo 'a; b' \"c && d\""]),
    ],
)
def test_compound_commands_split_into_their_parts(command, parts):
    assert split_command(command) == parts


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf data",
        "git status && touch pwned",
        "git status | sh",
        "git status\nrm x",
        "git status $(rm x)",
        "git status `rm x`",
        "git status & rm x",
    ],
)
def test_an_allowed_prefix_cannot_smuggle_in_another_command(command):
    rules = Rules([Rule.allow(CommandPrefix(prefix="git status"))])
    assert isinstance(rules.decide(shell("git status --short")), Allow)
    assert not isinstance(rules.decide(shell(command)), Allow)


def test_a_compound_command_is_denied_if_any_part_is():
    rules = Rules([Rule.allow(CommandPrefix(prefix="ls")), Rule.deny(CommandPrefix(prefix="rm"))])
    assert isinstance(rules.decide(shell("ls; rm x")), Deny)
    assert isinstance(rules.decide(shell("ls && ls -la")), Allow)


# --- remember ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git commit -m 'fix bug'", "git commit"),
        ("ls -la", "ls"),
        ("pytest tests/test_x.py", "pytest"),
        ("npm install left-pad", "npm install"),
        ("rm -rf build", "rm -rf build"),
        ("curl http://x | sh", "curl http://x '|' sh"),
    ],
)
def test_remember_keeps_the_prefix_words_not_the_whole_string(command, prefix):
    assert remembered_prefix(command) == prefix


def test_always_allow_adds_a_narrow_session_rule():
    rules = Rules.defaults()
    call = shell("git commit -m 'first'")
    assert isinstance(rules.decide(call), Ask)
    assert rules.remember(call) == "allow commands starting with `git commit`"
    assert isinstance(rules.decide(shell("git commit -m 'second'")), Allow)
    assert isinstance(rules.decide(shell("git push")), Ask)  # stays narrow
    assert isinstance(rules.decide(shell("git commit -m x; rm -rf ~")), Ask)
    other_session = shell("git commit -m x", session_id="s2")
    assert isinstance(rules.decide(other_session), Ask)
    assert rules.remember(call) is None  # not added twice


def test_remembering_a_compound_command_remembers_each_part():
    rules = Rules.defaults()
    rules.remember(shell("make build && make test"))
    assert isinstance(rules.decide(shell("make test")), Allow)
    assert isinstance(rules.decide(shell("make build")), Allow)


def test_remembering_a_tool_allows_that_tool_only():
    rules = Rules.defaults()
    delete = file_call("delete_file", "old.csv", {P.READ_FILES, P.DELETE_FILES}, "delete")
    assert isinstance(rules.decide(delete), Ask)
    rules.remember(delete)
    assert isinstance(rules.decide(delete), Allow)
    assert isinstance(rules.decide(shell("rm old.csv")), Ask)


# --- defaults and files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (file_call("read_file", "a.txt", {P.READ_FILES}, "read"), Allow),
        (file_call("update_file", "a.txt", {P.READ_FILES, P.WRITE_FILES}), Allow),
        (file_call("create_file", "b.txt", {P.WRITE_FILES, P.CREATE_FILES}), Allow),
        (file_call("delete_file", "a.txt", {P.READ_FILES, P.DELETE_FILES}, "delete"), Ask),
        (shell("ls"), Ask),
        (file_call("update_cell", "", {P.EDIT_NOTEBOOK}, "notebook"), Allow),
        (file_call("run_cell", "", {P.EXECUTE_CODE}, "notebook"), Ask),
        (file_call("inspect_variable", "", {P.INSPECT_KERNEL}, "kernel"), Allow),
        (file_call("read_notebook", "", {P.READ_NOTEBOOK}, "notebook"), Allow),
        (file_call("my_pure_function", "", set(), "general"), Allow),
    ],
)
def test_sensible_defaults(call, expected):
    assert isinstance(Rules.defaults().decide(call), expected)


def test_rules_round_trip_through_json(tmp_path):
    rules = Rules.defaults()
    rules.add(Rule.deny(PathGlob(pattern="data/"), scope="role", target="actor", priority=3))
    rules.add(Rule.allow(CommandPrefix(prefix="git status"), scope="user"))
    rules.add(Rule.allow(Custom(name="in-memory only", fn=lambda c: True)))
    path = tmp_path / "rules.json"
    rules.save(path)
    loaded = Rules.load(path)
    assert len(loaded) == len(rules) - 1  # the Python callable is not saved
    assert [r.model_dump() for r in loaded] == [
        r.model_dump() for r in rules if not isinstance(r.matcher, Custom)
    ]
    assert isinstance(loaded.decide(shell("git status")), Allow)


def test_a_bad_rules_file_says_what_is_wrong(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('[{"matcher": {"kind": "tool", "name": "x"}, "decision": "maybe"}]')
    with pytest.raises(ValueError, match="decision"):
        Rules.load(path)
