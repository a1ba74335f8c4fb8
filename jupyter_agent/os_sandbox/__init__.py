"""The OS sandbox every shell command runs in: bubblewrap (and Seatbelt on macOS), its
mounts, its private ``/tmp``, the seccomp filter and git's confining configuration.
"""
