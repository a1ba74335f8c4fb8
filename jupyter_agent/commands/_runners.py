"""Programs that run code: interpreters, shells, test runners, make, package managers and
notebook runners.

Each judge says what one of them does with its arguments. Invariants: only a lone
``--version``/``--help`` or a listing subcommand (``pip list``, ``conda env list``) is
read-only; a subcommand a judge does not know is ``unknown``; the files whose code a use runs
(the script, the Makefile, the test files, ``package.json``) are named in ``runs`` for the
workspace's path rules to judge.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ._effects import Effect, Judge, RunTarget, code, is_version
from ._options import literal, names, parse_options
from ._parsed import Word


def judge_python(name: str, args: tuple[Word, ...]) -> Effect:
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, names("-c -m -W -X -Q"), stop_at_operand=True)
    module = next((v for n, v in opts.flags if n == "-m"), None)
    if opts.has("-c"):
        return code("runs the Python code given with -c")
    if module is not None:
        if module in ("pytest", "unittest"):
            return _tests(opts.operands)
        if module == "pip":
            return judge_pip("pip", tuple(opts.operands))
        if module in ("venv", "virtualenv"):
            return Effect(
                "writes",
                writes=tuple(w for w in opts.operands[:1]),
                note="creates a virtual environment",
            )
        return code(f"runs the module {module}")
    if opts.operands:
        return code("runs a Python script", RunTarget(opts.operands[0], "the script"))
    return code("runs Python code from its input")


def _tests(targets: Sequence[Word]) -> Effect:
    paths = [w for w in targets if not (w.value or "").startswith("-")] or [literal(".")]
    return code(
        "runs the tests (and their conftest.py)",
        *(RunTarget(p, "the test files", folder=True) for p in paths),
    )


def judge_pytest(name: str, args: tuple[Word, ...]) -> Effect:
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(
        args,
        names(
            "-k -m -p -c -o --rootdir --basetemp --junitxml --junit-xml --confcutdir -W "
            "--maxfail --tb --durations --log-file --cov"
        ),
    )
    return _tests(opts.operands)


def judge_shell(name: str, args: tuple[Word, ...]) -> Effect:
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, names("-o +o -O +O --rcfile --init-file"), stop_at_operand=True)
    if opts.has("-c"):
        return code(f"runs the {name} code given with -c")
    if opts.operands:
        return code(f"runs a {name} script", RunTarget(opts.operands[0], "the script"))
    return code(f"runs {name} code from its input")


def interpreter(flags: frozenset[str], takes: frozenset[str] = frozenset()) -> Judge:
    """node -e, perl -e, ruby -e, …: code on the command line, or a script file."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        if is_version(args):
            return Effect("reads", key=(name, args[0].value or ""))
        opts = parse_options(args, takes | flags, stop_at_operand=True)
        if opts.has(*flags):
            return code(f"runs the {name} code given on the command line")
        if opts.operands:
            return code(f"runs a {name} script", RunTarget(opts.operands[0], "the script"))
        return code(f"runs {name} code from its input")

    return judge


def judge_awk(name: str, args: tuple[Word, ...]) -> Effect:
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, names("-f -v -F --file --assign --field-separator"))
    files = [v for v in opts.values("-f", "--file") if v is not None]
    return code(
        "an awk program can run commands and write files",
        *(RunTarget(literal(f), "the awk program") for f in files),
    )


def judge_source(name: str, args: tuple[Word, ...]) -> Effect:
    if not args:
        return code(f"`{name}` runs a file")
    return code("runs a shell file in this shell", RunTarget(args[0], "the script"))


def judge_make(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
            "-f -C -I -j -l -o -W --file --makefile --directory --include-dir --jobs "
            "--load-average --old-file --what-if --assume-new --assume-old --eval"
        ),
    )
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    folder = next((v for v in opts.values("-C", "--directory") if v), ".")
    files = [v for v in opts.values("-f", "--file", "--makefile") if v is not None]
    runs = [RunTarget(literal(os.path.join(folder, f)), "the Makefile") for f in files] or [
        RunTarget(literal(os.path.join(folder, m)), "the Makefile")
        for m in ("GNUmakefile", "makefile", "Makefile")
    ]
    return code("runs the Makefile's recipes", *runs)


def judge_npm(name: str, args: tuple[Word, ...]) -> Effect:
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    sub = args[0].value if args and args[0].static else None
    if sub in ("ls", "list", "view", "info", "outdated", "why", "explain", "--version"):
        return Effect("reads", key=(name, sub))
    if sub in names(
        "run run-script test start exec x dlx install i ci add rebuild restart stop pack publish"
    ):
        return code(
            f"`{name} {sub}` runs package scripts",
            RunTarget(literal("package.json"), "package.json"),
        )
    return Effect("unknown")


def judge_pip(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
            "--python --log --cache-dir --proxy --timeout --retries --exists-action "
            "--trusted-host --cert --client-cert"
        ),
        stop_at_operand=True,
    )
    if is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    if opts.dynamic or not opts.operands:
        return Effect("unknown")
    sub = opts.operands[0].value
    rest = opts.operands[1:]
    if sub in ("list", "show", "freeze", "check", "help", "inspect", "debug"):
        return Effect("reads", key=("pip", sub))
    if sub == "config" and rest and rest[0].value in ("list", "get", "debug"):
        return Effect("reads", key=("pip", "config", rest[0].value or ""))
    if sub in ("install", "download", "wheel", "uninstall"):
        return code(f"`pip {sub}` installs or builds packages, which can run their code")
    return Effect("unknown")


def judge_conda(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    if is_version(args) or sub in ("list", "info", "search"):
        return Effect("reads", key=(name, sub or ""))
    if sub == "env" and len(args) > 1 and args[1].value == "list":
        return Effect("reads", key=(name, "env", "list"))
    if sub == "run":
        return code(f"`{name} run` runs a command")
    return Effect("unknown")


def judge_jupyter(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    rest = args[1:]
    if is_version(args) or sub in ("--paths", "--runtime-dir", "--data-dir", "--config-dir"):
        return Effect("reads", key=(name, sub or ""))
    if sub in ("kernelspec", "labextension", "serverextension", "server", "notebook") and (
        rest and rest[0].value == "list"
    ):
        return Effect("reads", key=(name, sub, "list"))
    if sub == "nbconvert":
        opts = parse_options(rest, names("--to --output --output-dir --template"))
        if opts.has("--execute", "--inplace") or opts.dynamic:
            return code(
                "runs the notebook's code", *(RunTarget(w, "the notebook") for w in opts.operands)
            )
        return Effect("writes", note="writes the converted notebook")
    if sub in ("execute", "run"):
        return code("runs a notebook's code", *(RunTarget(w, "the notebook") for w in rest[:1]))
    return Effect("unknown")


def judge_papermill(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names("-p -r -y -f -k --cwd --parameters --kernel --language"),
    )
    return code(
        "runs the notebook's code", *(RunTarget(w, "the notebook") for w in opts.operands[:1])
    )


def judge_hook_installer(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    if sub in ("install", "init", "uninstall") or name == "husky":
        return Effect(
            "writes", writes=(literal(".git/hooks"),), note=f"`{name}` installs git hooks"
        )
    return code(f"`{name}` runs the hooks")
