"""The command parser: every simple command of a line is found, whatever the construct,
and whatever it cannot fully understand is reported as a problem (the line then asks)."""

from __future__ import annotations

import pytest

from jupyter_agent.commands._syntax import MAX_SOURCE, parse_script
from jupyter_agent.commands._tree_walk import MAX_PARTS
from jupyter_agent.commands.analysis import analyze


def programs(line: str) -> list[list[str | None]]:
    """The words of every simple command the parser found, in source order."""
    return [[w.value for w in c.words] for c in parse_script(line).commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("ls | wc -l | sort", [["ls"], ["wc", "-l"], ["sort"]]),
        (
            "make && make test || echo failed; ls",
            [["make"], ["make", "test"], ["echo", "failed"], ["ls"]],
        ),
        ("ls &\ntouch x", [["ls"], ["touch", "x"]]),
        ("(cd sub; rm x)", [["cd", "sub"], ["rm", "x"]]),
        ("{ ls; rm x; }", [["ls"], ["rm", "x"]]),
        ("! rm x", [["rm", "x"]]),
        ("ls $(touch x)", [["touch", "x"], ["ls", None]]),
        ("ls `touch x`", [["touch", "x"], ["ls", None]]),
        ("ls $( (touch x) )", [["touch", "x"], ["ls", None]]),
        (
            "echo $(echo $(echo $(rm deep)))",
            [["rm", "deep"], ["echo", None], ["echo", None], ["echo", None]],
        ),
        ("diff <(sort a) >(tee b)", [["sort", "a"], ["tee", "b"], ["diff", None, None]]),
        ('echo "$(rm quoted)"', [["rm", "quoted"], ["echo", None]]),
        ("echo ${x:-$(rm default)}", [["rm", "default"], ["echo", None]]),
        ("cat <<EOF\n$(rm heredoc)\nEOF", [["cat"], ["rm", "heredoc"]]),
        ("cat <<< $(rm herestring)", [["rm", "herestring"], ["cat"]]),
        (
            "if test -f a; then rm a; elif ls; then :; else touch b; fi",
            [["test", "-f", "a"], ["rm", "a"], ["ls"], [":"], ["touch", "b"]],
        ),
        ('while read l; do rm "$l"; done', [["read", "l"], ["rm", None]]),
        ("for f in *.tmp; do rm $f; done", [["rm", None]]),
        ("case $x in a) rm a;; *) rm b;; esac", [["rm", "a"], ["rm", "b"]]),
        ("f() { rm inside; }; f", [["rm", "inside"], ["f"]]),
        ("function g { rm inside; }", [["rm", "inside"]]),
        ("eval 'rm x'", [["eval", "rm x"]]),
        ("source ./env.sh; . ./other.sh", [["source", "./env.sh"], [".", "./other.sh"]]),
        ("exec ls", [["exec", "ls"]]),
        ("time ls", [["time", "ls"]]),
        ("x=$(rm assigned)", [["rm", "assigned"]]),
        ("[[ -f $(rm tested) ]]", [["rm", "tested"]]),
        ("ls #'\ntouch x\n#'", [["ls"], ["touch", "x"]]),  # a comment hides no quote
        ("ls \\\n  -la", [["ls", "-la"]]),
    ],
)
def test_every_simple_command_is_found(line, expected):
    assert programs(line) == expected
    assert not parse_script(line).problems


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("'a b'", "a b"),
        ('"a\\"b\\$c"', 'a"b$c'),
        ("l\\s", "ls"),
        ("$'a\\x3bb'", "a;b"),
        ("$'tab\\there'", "tab\there"),
        ("'x'\"y\"z", "xyz"),
        ('--color="auto"', "--color=auto"),
    ],
)
def test_words_are_read_as_the_shell_reads_them(word, value):
    (command,) = parse_script(f"echo {word}").commands
    assert command.words[1].value == value
    assert command.words[1].static


@pytest.mark.parametrize(
    "word", ["$x", "${x}", "$(pwd)", "{a,b}", "{1..3}", '"$HOME/x"', "$'\\cx'"]
)
def test_words_known_only_at_run_time_have_no_value(word):
    (command, *_) = parse_script(f"echo {word}").commands[-1:]
    assert command.words[1].value is None


def test_unquoted_globs_are_marked_and_quoted_ones_are_not():
    (command,) = parse_script("ls *.py '*.txt' a\\*b").commands
    assert [(w.value, w.glob) for w in command.words[1:]] == [
        ("*.py", True),
        ("*.txt", False),
        ("a*b", False),
    ]


def test_redirections_are_found_with_their_direction():
    script = parse_script("cat < in.txt > out.txt 2>&1 >> log &> all >| clobber 3>&- <&0")
    found = [(r.operator, r.target.value, r.writes, r.reads) for r in script.redirects]
    assert found == [
        ("<", "in.txt", False, True),
        (">", "out.txt", True, False),
        (">>", "log", True, False),
        ("&>", "all", True, False),
        (">|", "clobber", True, False),
    ]


def test_redirections_of_groups_functions_and_exec_are_found():
    script = parse_script("{ ls; } > group.txt; f() { :; } > fn.txt; exec 3> fd.txt")
    assert [r.target.value for r in script.redirects] == ["group.txt", "fn.txt", "fd.txt"]


def test_a_redirection_target_with_a_substitution_is_only_known_at_run_time():
    script = parse_script("ls > $(echo f)")
    assert script.redirects[0].target.value is None
    assert programs("ls > $(echo f)") == [["ls"], ["echo", "f"]]


def test_cd_is_followed_and_a_subshell_keeps_its_own():
    script = parse_script("cd sub && make > log; (cd /x; rm y); rm z; cd $d; ls")
    by_name = {
        " ".join(str(v) for v in c[0]): c[1]
        for c in (([w.value for w in cmd.words], cmd.cwds) for cmd in script.commands)
    }
    assert by_name["make"] == {".", "sub"}
    assert by_name["rm y"] == {".", "sub", "/x"}
    assert by_name["rm z"] == {".", "sub"}
    assert None in by_name["ls"]  # after `cd $d`, only run time knows
    # tree-sitter hangs the redirection on the whole `cd sub && make`; the shell opens it
    # for make, in sub: judged in every folder the line has been in, it is judged there
    assert script.redirects[0].cwds == {".", "sub"}


def test_assignments_for_later_commands_are_reported():
    script = parse_script(
        "export PATH=.:$PATH; LD_PRELOAD=x; local y=1; declare -x Z; for w in a; do :; done"
    )
    assert [a.name for a in script.assignments] == ["PATH", "LD_PRELOAD", "y", "Z", "w"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("ls $(", "syntax error"),
        ("echo 'unclosed", "syntax error"),
        ("cat <> f", "syntax error"),
        ("if then fi", "syntax error"),
        ("echo $((x + 1))", "arithmetic"),
        ("((i++))", "arithmetic"),
        ("for ((i=0; i<n; i++)); do :; done", "arithmetic"),
        ("[[ $x -eq 1 ]]", "arithmetically"),
        ("echo ${a[$i]}", "arithmetic"),
        ("a[$(rm x)]=1", "arithmetic"),
        ("echo ${x@P}", "can run code"),
        ("declare -n ref=x", "changes how later words are read"),
        ("ls " + "$(" * 300 + "x" + ")" * 300, "nested too deeply"),
        ("ls " + "x" * (MAX_SOURCE + 1), "too long"),
        ("ls \0 x", "NUL"),
    ],
)
def test_what_cannot_be_understood_is_a_problem(line, problem):
    problems = parse_script(line).problems
    assert any(problem in p for p in problems), problems


def test_plain_arithmetic_on_numbers_is_understood():
    assert not parse_script("echo $((1 + 2 * 3))").problems


def test_the_commands_before_a_syntax_error_are_still_found():
    script = parse_script("rm -rf important; ls $(")
    assert ["rm", "-rf", "important"] in programs("rm -rf important; ls $(")
    assert script.problems


def test_a_line_with_too_many_parts_is_judged_on_its_first_ones_and_asks():
    line = "; ".join(f"echo {i} > f{i}" for i in range(5_000))  # ~70,000 characters
    script = parse_script(line)  # the walk stops: its cost is bounded by MAX_PARTS
    assert len(script.commands) + len(script.redirects) <= MAX_PARTS + 1
    assert script.redirects[0].target.value == "f0"  # the first ones are still judged
    assert any(f"more than {MAX_PARTS}" in p for p in script.problems)


@pytest.mark.parametrize(
    ("line", "program", "problem"),
    [
        ("$CMD arg", None, "only known at run time"),
        ("sudo rm x", "sudo", "another user"),
        ("coproc cat", "coproc", "coprocess"),
        ("alias ls='rm -rf'", "alias", "alias"),
        ("systemd-run --user touch x", "systemd-run", "outside this one"),
        ("crontab evil.txt", "crontab", "later"),
        ("env -S 'sh -c x'", "env", "splits a string"),
        ("IFS=/ ls", "ls", "IFS"),
        ("export PATH=.", None, "PATH"),
    ],
)
def test_analysis_problems_for_programs_and_environment(line, program, problem):
    found = analyze(line)
    assert any(problem in p for p in found.problems), found.problems
    if program is not None:
        assert found.invocations[0].program == program
