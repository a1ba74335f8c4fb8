"""Small helpers for the sentences the model and the user read."""

from __future__ import annotations


def plural(n: int, noun: str) -> str:
    """``n`` and the noun in the number it needs: "1 step", "3 steps", "1,200 cells"."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"
