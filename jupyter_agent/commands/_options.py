"""Reading a program's options the way getopt does, for the program table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ._parsed import Word


def names(text: str) -> frozenset[str]:
    """A set of names written as one string (long tables stay readable)."""
    return frozenset(text.split())


@dataclass
class Options:
    """A getopt-style reading of arguments (GNU style: options may follow operands)."""

    flags: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[Word] = field(default_factory=list)
    dynamic: bool = False
    """A word only known at run time: it could be any option."""

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.flags)

    def values(self, *names: str) -> list[str | None]:
        return [value for name, value in self.flags if name in names]


def parse_options(
    args: Sequence[Word],
    takes_value: frozenset[str] = frozenset(),
    *,
    stop_at_operand: bool = False,
) -> Options:
    """Split ``args`` into options and operands. ``takes_value`` names the options (``-o``,
    ``--output``) whose value follows them."""
    out = Options()
    i = 0

    def value_after() -> str | None:
        """The next word, as the current option's value."""
        nonlocal i
        if i + 1 >= len(args):
            return None
        i += 1
        if not args[i].static:
            out.dynamic = True
        return args[i].value

    while i < len(args):
        word = args[i]
        value = word.value
        if not word.static or value is None:
            out.dynamic = True
            out.operands.append(word)
            i += 1
            continue
        if value == "--":
            out.operands.extend(args[i + 1 :])
            break
        if value.startswith("--") and len(value) > 2:
            name, eq, given = value.partition("=")
            if eq:
                out.flags.append((name, given))
            else:
                out.flags.append((name, value_after() if name in takes_value else None))
        elif value.startswith("-") and len(value) > 1 and value != "-":
            letters = value[1:]
            for j, letter in enumerate(letters):
                name = "-" + letter
                if name in takes_value:
                    out.flags.append((name, letters[j + 1 :] or value_after()))
                    break
                out.flags.append((name, None))
        else:
            out.operands.append(word)
            if stop_at_operand:
                out.operands.extend(args[i + 1 :])
                break
        i += 1
    return out


def literal(value: str) -> Word:
    return Word(value, value)
