"""Shell commands: what a command line does (parsed with tree-sitter-bash), the checks no
rule may override, and the OS sandbox commands run in."""

from ..os_sandbox.git_overrides import with_git_overrides
from ..os_sandbox.launch import Launch, OsSandbox, SandboxSettings, SandboxStatus
from ..os_sandbox.mounts import Protected
from .analysis import CommandLine, Invocation, PathUse, analyze
from .hazards import command_hazards

__all__ = [
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
    "with_git_overrides",
]
