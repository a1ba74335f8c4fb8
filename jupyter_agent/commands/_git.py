"""git: which subcommands only read, which options run commands or write files."""

from __future__ import annotations

from collections.abc import Sequence

from ._effects import Effect, code
from ._options import literal, names, parse_options
from ._parsed import Word

_GIT_GLOBAL_TAKES = names(
    "-C -c --git-dir --work-tree --namespace --config-env --super-prefix --exec-path "
    "--list-cmds --attr-source"
)
_GIT_GLOBAL_CODE = names("-c --config-env --exec-path --git-dir --work-tree --super-prefix")
_GIT_CODE_OPTIONS = names(
    "--upload-pack --receive-pack --exec --open-files-in-pager --ext-diff --textconv --filters"
)
_GIT_SUB_CODE_OPTIONS = {
    "grep": ("-O",),
    "ls-remote": ("-u",),
    "clone": ("-u",),
    "fetch": ("-u",),
    "pull": ("-u",),
    "archive": ("--remote",),
}
_GIT_WRITE_OPTIONS = frozenset({"--output", "--output-directory"})
_GIT_READ = names(
    "status log show diff blame annotate shortlog describe rev-parse rev-list "
    "ls-files ls-tree ls-remote cat-file grep whatchanged cherry merge-base name-rev "
    "count-objects check-ignore check-attr check-ref-format var version show-ref "
    "for-each-ref range-diff diff-tree diff-files diff-index show-branch"
)
_GIT_LISTING = {
    # subcommand: words that keep it a listing; any other operand makes it write
    "branch": names(
        "-a --all -r --remotes -v -vv --verbose -l --list --contains --no-contains "
        "--merged --no-merged --points-at --show-current --format --sort --color "
        "--no-color --column --no-column -i --ignore-case --abbrev --no-abbrev"
    ),
    "tag": names(
        "-l --list -n --contains --no-contains --merged --no-merged --points-at --sort "
        "--format --column --no-column --color -i --ignore-case"
    ),
    "remote": names("-v --verbose show get-url"),
    "stash": frozenset({"list", "show"}),
    "worktree": frozenset({"list"}),
    "reflog": frozenset({"show"}),
    "config": names(
        "--get --get-all --get-regexp --list -l --show-origin --show-scope --name-only "
        "--null -z get list --local --global --system --worktree --type --bool --int "
        "--path --default"
    ),
    "submodule": frozenset({"status", "summary"}),
}
_GIT_CONFIG_WRITERS = names("config remote submodule lfs worktree")


def judge_git(name: str, args: tuple[Word, ...]) -> Effect:
    globals_ = parse_options(args, _GIT_GLOBAL_TAKES, stop_at_operand=True)
    if globals_.dynamic and not globals_.operands:
        return Effect("unknown", note="an argument is only known at run time")
    if globals_.has(*_GIT_GLOBAL_CODE):
        return code(
            "sets git's configuration or repository on the command line, which can run commands"
        )
    if not globals_.operands:
        return (
            Effect("reads", key=("git",))
            if globals_.has("--version", "--help")
            else (Effect("unknown"))
        )
    sub_word, *rest = globals_.operands
    sub = sub_word.value if sub_word.static else None
    if sub is None:
        return Effect("unknown", problem="the git subcommand is only known at run time")
    if any(not w.static for w in rest):
        return Effect("unknown", note="an argument is only known at run time")
    values = [w.value or "" for w in rest]
    flags = {v.split("=", 1)[0] for v in values if v.startswith("-")}
    sub_code = _GIT_SUB_CODE_OPTIONS.get(sub, ())
    if (
        flags & _GIT_CODE_OPTIONS
        or any(v.startswith(o) and not v.startswith("--") for v in values for o in sub_code)
        or any(v.startswith("--") and v.split("=", 1)[0] in sub_code for v in values)
    ):
        return code(f"`git {sub}` with an option that runs a command")
    if flags & _GIT_WRITE_OPTIONS:
        written = [v.split("=", 1)[1] for v in values if v.startswith("--output") and "=" in v]
        return Effect(
            "writes",
            writes=tuple(literal(w) for w in written),
            note=f"`git {sub}` writes a file (--output)",
        )
    if sub in _GIT_READ:
        return Effect("reads", key=("git", sub))
    if sub in _GIT_LISTING and _git_lists(sub, values):
        return Effect("reads", key=("git", sub))
    if (
        sub in _GIT_CONFIG_WRITERS
        and not (sub == "lfs" and values[:1] not in (["install"], ["uninstall"], ["update"]))
    ) or (
        sub == "branch"
        and any(
            v.startswith(("--set-upstream", "-u", "--unset-upstream", "--edit-description"))
            for v in values
        )
    ):
        return Effect(
            "writes",
            writes=(literal(".git/config"),),
            note=f"`git {sub}` changes git's configuration",
        )
    if sub in ("apply", "am") and not {"--check", "--stat", "--numstat", "--summary"} & set(values):
        # From the top of the repository (or here): paths only the patch names.
        return Effect("writes", spreads=(literal("."),), note=f"`git {sub}` applies a patch")
    if sub == "clone":
        operands = [w for w in rest if not (w.value or "").startswith("-")]
        target = operands[1:2] or [literal(".")]
        return Effect("writes", writes=tuple(target), note="clones a repository")
    return Effect("writes", note=f"`git {sub}` changes the repository or the files")


def _git_lists(sub: str, values: Sequence[str]) -> bool:
    """Whether a `git branch/tag/remote/stash/config/…` invocation only lists or reads."""
    allowed = _GIT_LISTING[sub]
    if sub == "config":
        reading = {"--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list"}
        return (
            bool(set(values) & reading)
            and all(
                v in allowed or v.split("=", 1)[0] in allowed or not v.startswith("-")
                for v in values
            )
            and not set(values)
            & {
                "set",
                "unset",
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--rename-section",
                "--remove-section",
                "-e",
                "--edit",
            }
        )
    if sub in ("branch", "tag"):
        patterns = any(v in ("-l", "--list") for v in values)
        return all(
            v in allowed or v.split("=", 1)[0] in allowed or (patterns and not v.startswith("-"))
            for v in values
        )
    # remote, stash, worktree, reflog, submodule: the first word says what it does
    return (not values and sub != "submodule") or (bool(values) and values[0] in allowed)
