"""Secrets: what looks like a credential (by shape), what is one (by value), the text the
model sees with them masked, and the user's own API keys.
"""

# ``jupyter_agent.secrets`` was one module: its names are still imported from here.
from .shapes import (
    MASK,
    MASK_PASSES,
    Anchored,
    is_secret_name,
    looks_secret,
    mask_secrets,
    mask_value,
    pattern_pass,
)

__all__ = [
    "MASK",
    "MASK_PASSES",
    "Anchored",
    "is_secret_name",
    "looks_secret",
    "mask_secrets",
    "mask_value",
    "pattern_pass",
]
