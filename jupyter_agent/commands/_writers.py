"""Programs that write the files their arguments name: removers, copiers, archivers,
downloaders, and ``find`` with its writing actions.

Each judge lists in ``writes`` the words that name what the invocation writes, creates, moves
or deletes, for the workspace's path rules to judge. Invariants: a use is read-only only when
its arguments, all known before running, show that it only reads (``find`` without a writing
action, ``tar -t``, ``unzip -l``, ``uniq IN``); an option that runs a program (``find
-exec``, ``tar --to-command``, ``rsync -e``) makes it ``runs_code``.
"""

from __future__ import annotations

from ._effects import Effect, Judge, code
from ._options import literal, names, parse_options
from ._parsed import Word


def judge_find(name: str, args: tuple[Word, ...]) -> Effect:
    values = [w.value for w in args]
    if any(not w.static for w in args):
        return Effect("unknown", note="an argument is only known at run time")
    if any(v in ("-exec", "-execdir", "-ok", "-okdir") for v in values):
        return code("runs a command on each file found (-exec)")
    if "-delete" in values:
        starts: list[Word] = []
        for w in args:
            if (w.value or "").startswith(("-", "(", ")", "!")):
                break
            starts.append(w)
        return Effect(
            "writes",
            writes=tuple(starts) or (literal("."),),
            note="deletes what it finds (-delete)",
        )
    for option in ("-fprint", "-fprint0", "-fprintf", "-fls"):
        if option in values:
            target = values.index(option) + 1
            written = (args[target],) if target < len(args) else ()
            return Effect("writes", writes=written, note=f"writes a file ({option})")
    return Effect("reads", key=(name,))


def judge_tar(name: str, args: tuple[Word, ...]) -> Effect:
    if not args:
        return Effect("unknown")
    first = args[0].value or ""
    # Old style: the first word holds the letters without a dash (tar xzf a.tgz).
    letters = first if first and not first.startswith("-") else ""
    opts = parse_options(
        args[1:] if letters else args,
        names(
            "-f -C -T -X -I --file --directory --files-from --exclude-from "
            "--use-compress-program --to-command --transform --exclude"
        ),
    )
    listed = "t" in letters or opts.has("-t", "--list")
    if opts.has(
        "--to-command",
        "-I",
        "--use-compress-program",
        "--checkpoint-action",
        "--info-script",
        "--new-volume-script",
        "-F",
    ):
        return code("runs a command (--to-command, -I, …)")
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    if (
        listed
        and not any(c in letters for c in "xcrua")
        and not opts.has(
            "-x", "-c", "-r", "-u", "-A", "--extract", "--get", "--create", "--append", "--update"
        )
    ):
        return Effect("reads", key=(name, "--list"))
    folder = next((v for v in opts.values("-C", "--directory") if v), ".")
    archive = [v for v in opts.values("-f", "--file") if v]
    if "x" in letters or opts.has("-x", "--extract", "--get"):
        return _extracts(folder)
    return Effect("writes", writes=tuple(literal(a) for a in archive), note="writes an archive")


def judge_unzip(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, frozenset({"-d", "-x", "-P"}))
    if opts.has("-l", "-Z", "-t", "-v") and not opts.dynamic:
        return Effect("reads", key=(name, "-l"))
    folder = next((v for v in opts.values("-d") if v), ".")
    return _extracts(folder)


def _extracts(folder: str, note: str = "extracts files") -> Effect:
    """Files named by its input land in ``folder``."""
    return Effect("writes", writes=(literal(folder),), spreads=(literal(folder),), note=note)


def judge_7z(name: str, args: tuple[Word, ...]) -> Effect:
    """7z x|e ARCHIVE [-oDIR] extracts; l and t list; a, u, d, rn write the archive."""
    if any(not w.static for w in args):
        return Effect("unknown", note="an argument is only known at run time")
    values = [w.value or "" for w in args]
    command = next((v for v in values if not v.startswith("-")), "")
    if command in ("l", "t", "i", "h", "b"):
        return Effect("reads", key=(name, command))
    if command in ("x", "e"):
        folder = next((v[2:] for v in values if v.startswith("-o") and len(v) > 2), ".")
        return _extracts(folder)
    operands = [v for v in values if not v.startswith("-")][1:2]
    return Effect("writes", writes=tuple(literal(v) for v in operands), note="writes an archive")


def judge_cpio(name: str, args: tuple[Word, ...]) -> Effect:
    """cpio -i extracts (into -D DIR), -p copies a tree into DIR, -t lists, -o creates."""
    opts = parse_options(args, names("-D --directory -E -F -H -I -O -M -R --format --file"))
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    letters = "".join(n[1:] for n, _ in opts.flags if n.startswith("-") and not n.startswith("--"))
    if "t" in letters or opts.has("--list"):
        return Effect("reads", key=(name, "-t"))
    folder = next((v for v in opts.values("-D", "--directory") if v), ".")
    if "i" in letters or opts.has("--extract"):
        return _extracts(folder)
    if "p" in letters or opts.has("--pass-through"):
        target = opts.operands[-1].value if opts.operands else None
        return _extracts(target or ".", "copies a tree of files")
    archive = [v for v in opts.values("-O", "-F", "--file") if v]
    return Effect("writes", writes=tuple(literal(a) for a in archive), note="writes an archive")


def judge_patch(name: str, args: tuple[Word, ...]) -> Effect:
    """patch writes the files its patch names (under -d DIR), or the one file it is given."""
    opts = parse_options(
        args, names("-d --directory -p --strip -i --input -o --output -r --reject-file -B -z")
    )
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    written = [v for v in opts.values("-o", "--output", "-r", "--reject-file") if v]
    folder = next((v for v in opts.values("-d", "--directory") if v), ".")
    files = opts.operands[:1]
    return Effect(
        "writes",
        writes=(*files, *(literal(w) for w in written)),
        spreads=() if files else (literal(folder),),
        note="patches files",
    )


def operand_writer(note: str, takes: frozenset[str] = frozenset(), skip: int = 0) -> Judge:
    """Programs that change every file they name (rm, touch, mkdir, chmod…)."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        opts = parse_options(args, takes)
        operands = opts.operands[skip:] if not opts.has("--reference") else opts.operands
        return Effect("writes", writes=tuple(operands), note=note)

    return judge


def copier(moves: bool) -> Judge:
    """cp / mv / ln / install: the last operand (or -t DIR) is written; mv also its sources."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        opts = parse_options(
            args,
            names(
                "-t --target-directory -S --suffix -m --mode -o --owner -g --group --backup "
                "--sparse --reflink"
            ),
        )
        target = opts.values("-t", "--target-directory")
        operands = list(opts.operands)
        written: list[Word] = [Word(t, t) if t is not None else Word("?", None) for t in target]
        if not target and operands:
            written.append(operands.pop())
        if moves:
            written.extend(operands)
        return Effect("writes", writes=tuple(written), note="writes files")

    return judge


def judge_tee(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, frozenset({"--output-error"}))
    return Effect("writes", writes=tuple(opts.operands), note="writes files")


def judge_dd(name: str, args: tuple[Word, ...]) -> Effect:
    written = tuple(
        Word(w.text, (w.value or "")[3:]) if w.static else Word(w.text, None)
        for w in args
        if (w.value or w.text).startswith("of=")
    )
    return Effect("writes", writes=written, note="writes a file (of=)")


def judge_two_operand_writer(name: str, args: tuple[Word, ...]) -> Effect:
    """uniq IN OUT, xxd IN OUT: a second operand is written."""
    opts = parse_options(
        args,
        names(
            "-f -s -w -c -g -l -o -n --skip-fields --skip-chars --check-chars --cols "
            "--groupsize --len --seek --name"
        ),
    )
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    if len(opts.operands) >= 2:
        return Effect("writes", writes=(opts.operands[1],), note="writes its output file")
    return Effect("reads", key=(name,))


def judge_curl(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
            "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr "
            "--libcurl -K --config --output-dir -d --data -H --header -X --request -u --user "
            "-F --form -T --upload-file -A --user-agent -e --referer -b --cookie -x --proxy "
            "-m --max-time -w --write-out --data-binary --data-raw --data-urlencode "
            "--connect-timeout --retry -r --range"
        ),
    )
    written = [
        v
        for v in opts.values(
            "-o",
            "--output",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
        )
        if v
    ]
    folder = [v for v in opts.values("--output-dir") if v]
    if opts.has("-O", "--remote-name", "--remote-name-all", "-J"):
        written.extend(folder or ["."])
    return Effect(
        "writes", writes=tuple(literal(w) for w in written), note="transfers data over the network"
    )


def judge_wget(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
            "-O --output-document -P --directory-prefix -o --output-file -a --append-output "
            "-i --input-file -t --tries -T --timeout -U --user-agent --header -e --execute"
        ),
    )
    written = [
        v
        for v in opts.values(
            "-O", "--output-document", "-o", "--output-file", "-a", "--append-output"
        )
        if v and v != "-"
    ]
    if not opts.has("-O", "--output-document"):
        written.extend(v for v in opts.values("-P", "--directory-prefix") if v)
        if not opts.has("-P", "--directory-prefix"):
            written.append(".")
    return Effect("writes", writes=tuple(literal(w) for w in written), note="downloads files")


def judge_remote_copy(name: str, args: tuple[Word, ...]) -> Effect:
    """rsync / scp: a copy, unless an option names a program to run for the transport."""
    values = [w.value or "" for w in args]
    if any(not w.static for w in args) or any(
        v.split("=", 1)[0] in ("-e", "--rsh", "-S", "--rsync-path", "-o", "-F")
        or (v.startswith("-e") and not v.startswith("--"))
        for v in values
    ):
        return code(f"`{name}` with an option that runs a program")
    copied = copier(moves=False)(name, args)
    # A folder's contents land with the names the source has (`rsync -a dotfiles/ ~/`).
    return Effect("writes", writes=copied.writes, spreads=copied.writes, note=copied.note)
