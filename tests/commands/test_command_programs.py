"""What the program table says each invocation does: read-only uses stay read-only, and
every option that writes, deletes or runs code takes a program out of them."""

from __future__ import annotations

import pytest

from jupyter_agent.commands.analysis import NO_FILE_EFFECTS, analyze


def effect(line: str):
    (invocation,) = analyze(line).invocations
    return invocation


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("ls -la", ("ls",)),
        ("cat a b", ("cat",)),
        ("grep -rn TODO src", ("grep",)),
        ("head -n 5 data.csv", ("head",)),
        ("find . -name '*.py' -type f", ("find",)),
        ("sed -n '1,5p' f", ("sed",)),
        ("sed 's/a/b/g' f", ("sed",)),
        ("sort -k2 data.csv", ("sort",)),
        ("tar tzf a.tgz", ("tar", "--list")),
        ("unzip -l a.zip", ("unzip", "-l")),
        ("git status --short", ("git", "status")),
        ("git -C sub log --oneline -5", ("git", "log")),
        ("git diff HEAD~1 -- notes.md", ("git", "diff")),
        ("git branch -a", ("git", "branch")),
        ("git branch --list 'feat*'", ("git", "branch")),
        ("git remote -v", ("git", "remote")),
        ("git config --get user.name", ("git", "config")),
        ("git stash list", ("git", "stash")),
        ("pip list", ("pip", "list")),
        ("python -m pip show pandas", ("pip", "show")),
        ("python3 --version", ("python3", "--version")),
        ("jupyter kernelspec list", ("jupyter", "kernelspec", "list")),
        ("npm ls", ("npm", "ls")),
        ("command -v git", ("command", "-v")),
        ("env", ("env",)),
        ("/usr/bin/ls", ("ls",)),
        ("timeout 5 nice -n 3 stdbuf -oL ls", ("ls",)),
        ("date +%s", ("date",)),
    ],
)
def test_read_only_uses(line, key):
    invocation = effect(line)
    assert invocation.kind == "reads", invocation.effect
    assert invocation.effect.key == key


@pytest.mark.parametrize("line", ["sleep 30", "echo done", "cd sub", "true", "printf x"])
def test_a_builtin_that_stays_in_the_shell_has_no_file_effects(line):
    """Read-only for the rules (a read-only rule may cover it), but it reads nothing: the
    approval card says "no file effects", not "only reads"."""
    invocation = effect(line)
    assert invocation.kind == "reads"
    assert invocation.effect.note == NO_FILE_EFFECTS


@pytest.mark.parametrize("line", ["cat a.csv", "ls -la", "git log -3"])
def test_a_program_that_reads_files_says_nothing_more(line):
    assert effect(line).effect.note == ""


@pytest.mark.parametrize(
    ("line", "kind", "writes"),
    [
        ("rm -rf build dist", "writes", ["build", "dist"]),
        ("cp a.csv b.csv", "writes", ["b.csv"]),
        ("cp -t backup a b", "writes", ["backup"]),
        ("mv old new", "writes", ["new", "old"]),
        ("touch x y", "writes", ["x", "y"]),
        ("mkdir -p out/plots", "writes", ["out/plots"]),
        ("chmod +x run.sh", "writes", ["run.sh"]),
        ("tee -a log.txt", "writes", ["log.txt"]),
        ("dd if=a of=b", "writes", ["b"]),
        ("sort -o out.csv in.csv", "writes", ["out.csv"]),
        ("uniq in.txt out.txt", "writes", ["out.txt"]),
        ("sed -i.bak s/a/b/ notes.md", "writes", ["notes.md"]),
        ("find build -delete", "writes", ["build"]),
        ("find . -fprint list.txt", "writes", ["list.txt"]),
        ("tar xzf a.tgz -C out", "writes", ["out"]),
        ("unzip a.zip -d out", "writes", ["out"]),
        ("curl -o page.html http://x", "writes", ["page.html"]),
        ("wget -O f.zip http://x", "writes", ["f.zip"]),
        ("git log --output=log.txt", "writes", ["log.txt"]),
        ("git config core.editor vim", "writes", [".git/config"]),
        ("git remote add origin url", "writes", [".git/config"]),
        ("git clone url repo", "writes", ["repo"]),
        ("pre-commit install", "writes", [".git/hooks"]),
        ("git commit -m x", "writes", []),
        ("date -s 2020-01-01", "writes", []),
    ],
)
def test_writes_name_their_targets(line, kind, writes):
    invocation = effect(line)
    assert invocation.kind == kind
    assert sorted(w.value for w in invocation.effect.writes) == sorted(writes)


@pytest.mark.parametrize(
    "line",
    [
        "python3 -c 'print(1)'",
        "python3 analysis.py",
        "python3 -m http.server",
        "python3",
        "bash -c ls",
        "sh script.sh",
        "node -e 1",
        "perl -e 1",
        "awk '{print $1}' f",
        "sed 's/a/b/e' f",
        "find . -exec rm {} +",
        "git -c core.pager=cat log",
        "git --git-dir=elsewhere status",
        "git log --ext-diff",
        "git grep -O foo",
        "git ls-remote --upload-pack=x origin",
        "rg --pre ./x foo",
        "tar --to-command='sh' -xf a.tar",
        "rsync -e 'sh -c x' a b",
        "make",
        "pytest -q",
        "npm test",
        "eval 'ls'",
        "source env.sh",
        "./run.sh",
        "/opt/conda/bin/python x.py",
        "trap 'rm x' EXIT",
        "xargs sh -c 'x'",
        "ldd ./binary",
    ],
)
def test_code_runners_are_never_read_only(line):
    assert effect(line).kind == "runs_code"


@pytest.mark.parametrize(
    "line",
    ["find . $opt", "find *", "sort $f", "git log $args", "sed $script f", "tar $flags"],
)
def test_a_word_known_only_at_run_time_may_be_any_option(line):
    assert effect(line).kind != "reads"


def test_what_a_program_runs_is_named_for_the_changed_code_check():
    runs = {(r.target.value, r.what) for r in analyze("make -C sub").runs()}
    assert ("sub/Makefile", "the Makefile") in runs
    assert [(r.target.value, r.folder) for r in analyze("pytest tests/unit").runs()] == [
        ("tests/unit", True)
    ]
    assert [r.target.value for r in analyze("bash -x build.sh arg").runs()] == ["build.sh"]
    assert [r.target.value for r in analyze("./tools/run").runs()] == ["./tools/run"]
