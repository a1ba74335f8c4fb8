"""Shell commands: what a command line does (parsed with tree-sitter-bash), the checks no
rule may override, and the OS sandbox commands run in."""

from ..os_sandbox.git_overrides import with_git_overrides
from ..os_sandbox.launch import Launch, OsSandbox, SandboxSettings, SandboxStatus
from ..os_sandbox.mounts import Protected
from .analysis import NO_FILE_EFFECTS, CommandLine, Invocation, PathUse, analyze
from .hazards import command_hazards, sensitive_reach

__all__ = [
    "NO_FILE_EFFECTS",
    "CommandLine",
    "Invocation",
    "Launch",
    "OsSandbox",
    "PathUse",
    "Protected",
    "SandboxSettings",
    "SandboxStatus",
    "analyze",
    "command_hazards",
    "sensitive_reach",
    "with_git_overrides",
]
