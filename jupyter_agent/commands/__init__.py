"""Shell commands: what a command line does (parsed with tree-sitter-bash), the checks no
rule may override, and the OS sandbox commands run in."""

from .analysis import CommandLine, Invocation, PathUse, analyze
from .hazards import command_hazards
from .os_sandbox import Launch, OsSandbox, SandboxSettings, SandboxStatus

__all__ = [
    "CommandLine",
    "Invocation",
    "Launch",
    "OsSandbox",
    "PathUse",
    "SandboxSettings",
    "SandboxStatus",
    "analyze",
    "command_hazards",
]
