"""A seccomp filter, in classic BPF, that stops a sandboxed command from creating Unix sockets.

A filesystem sandbox leaves doors open through Unix sockets: the session D-Bus (and through it
``systemd-run``), ``docker.sock``, X11's abstract socket, a tmux server. Each can start a
process outside the sandbox. The filter makes ``socket(AF_UNIX, …)`` fail with ``EPERM`` and
allows every other call; ``socketpair`` stays allowed (multiprocessing and pipes-like uses need
it, and a pair reaches nothing outside).

Invariants:
- The program checks ``seccomp_data.arch`` first: a syscall number means something else on
  another ABI. On x86_64, x32 calls (``nr >= 0x40000000``) are refused, and i386 calls get the
  same check on their own numbers, with ``socketcall`` (whose arguments the filter cannot read)
  refused outright. Any other ABI is refused.
- ``io_uring_setup`` is refused too: io_uring can create sockets without the ``socket`` call.
- Architectures we have no table for get no filter (:func:`unix_socket_filter` returns None),
  and the caller says so; it never guesses syscall numbers.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# linux/filter.h, linux/bpf_common.h
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

# linux/seccomp.h
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | errno.EPERM

# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
_NR = 0
_ARCH = 4
_ARG0_LOW = 16  # the low half of args[0] on little-endian ABIs; socket()'s domain is an int

_AF_UNIX = 1
_IO_URING_SETUP = 425  # one number on every architecture since Linux 5.1
_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Abi:
    arch: int  # AUDIT_ARCH_* as the kernel puts it in seccomp_data.arch
    socket: int
    refused: tuple[int, ...] = ()  # calls refused whatever their arguments
    refuse_from: int | None = None  # refuse every call numbered this or higher (x32)


_X86_64 = _Abi(0xC000003E, socket=41, refused=(_IO_URING_SETUP,), refuse_from=_X32_SYSCALL_BIT)
_I386 = _Abi(0x40000003, socket=359, refused=(102, _IO_URING_SETUP))  # 102: socketcall
_AARCH64 = _Abi(0xC00000B7, socket=198, refused=(_IO_URING_SETUP,))

_ABIS: dict[str, tuple[_Abi, ...]] = {
    "x86_64": (_X86_64, _I386),
    "amd64": (_X86_64, _I386),
    "aarch64": (_AARCH64,),
    "arm64": (_AARCH64,),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _abi_block(abi: _Abi) -> list[bytes]:
    """Instructions for one ABI; they always end in a return, so blocks can follow each other."""
    block = [_insn(_LD_W_ABS, _NR)]
    if abi.refuse_from is not None:
        block += [_insn(_JGE_K, abi.refuse_from, jf=1), _insn(_RET_K, _RET_EPERM)]
    for nr in abi.refused:
        block += [_insn(_JEQ_K, nr, jf=1), _insn(_RET_K, _RET_EPERM)]
    block += [
        _insn(_JEQ_K, abi.socket, jf=3),
        _insn(_LD_W_ABS, _ARG0_LOW),
        _insn(_JEQ_K, _AF_UNIX, jf=1),
        _insn(_RET_K, _RET_EPERM),
        _insn(_RET_K, _RET_ALLOW),
    ]
    return block


def _program(abis: tuple[_Abi, ...]) -> bytes:
    # Layout: load arch; for each ABI "if arch == A: jump to its block"; refuse other ABIs;
    # then the blocks. Jump offsets are 8 bits, which these short blocks never exceed.
    blocks = [_abi_block(abi) for abi in abis]
    dispatch_len = 1 + len(abis) + 1
    out = [_insn(_LD_W_ABS, _ARCH)]
    target = dispatch_len  # index of the first instruction of the next block
    for i, (abi, block) in enumerate(zip(abis, blocks, strict=True)):
        here = 1 + i
        out.append(_insn(_JEQ_K, abi.arch, jt=target - here - 1))
        target += len(block)
    out.append(_insn(_RET_K, _RET_EPERM))
    for block in blocks:
        out += block
    return b"".join(out)


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The filter program for this machine (``struct sock_filter`` array), or None if unknown.

    ``machine`` is ``platform.machine()`` unless given (tests build other architectures).
    """
    abis = _ABIS.get((machine or platform.machine()).lower())
    return _program(abis) if abis else None
