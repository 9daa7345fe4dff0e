"""The seccomp filter of the local sandbox's jobs: which system calls a job may not make, compiled to BPF.

Runs inside the sandbox next to ``_zygote.py`` (standard library only; ``pyseccomp`` is imported only in the
short-lived helper that compiles the filter). Calls are denied from a list, on top of a default of "allow":
what the list leaves out is allowed, which docs/sandbox.md states among the limits.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NAMESPACE_FLAGS = (0x10000000, 0x20000000, 0x40000000, 0x04000000, 0x08000000, 0x00020000, 0x02000000, 0x00000080)
BLOCKED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "userfaultfd",
    "io_uring_setup",
    "open_by_handle_at",
    "name_to_handle_at",
    "acct",
    "quotactl",
    "syslog",
    "personality",
    "fanotify_init",
    "move_mount",
    "fsopen",
    "fsmount",
    "open_tree",
)


class CompiledFilter:
    """A seccomp BPF program compiled once by libseccomp; a child installs it with two prctl calls."""

    def __init__(self, program: bytes):
        self.buffer = ctypes.create_string_buffer(program, len(program))
        self.fprog = struct.pack("HL", len(program) // 8, ctypes.addressof(self.buffer))  # struct sock_fprog
        self.fprog_buffer = ctypes.create_string_buffer(self.fprog, len(self.fprog))
        # Built here, once: each object a forked child touches costs it a copied page.
        self.prctl, self.zero, self.one, self.two = LIBC.prctl, ctypes.c_ulong(0), ctypes.c_ulong(1), ctypes.c_ulong(2)
        self.address = ctypes.c_ulong(ctypes.addressof(self.fprog_buffer))

    def load(self) -> None:
        zero = self.zero
        if self.prctl(38, self.one, zero, zero, zero) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
        if self.prctl(22, self.two, self.address, zero, zero) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def compile_filter() -> CompiledFilter:
    """Compiled once per zygote, installed in each child (inherited filters cannot be undone).

    libseccomp is loaded in a short-lived forked helper, not in the zygote: pyseccomp pulls in subprocess,
    shutil and the compression libraries, and every mapping the zygote holds makes each job's fork slower.
    """
    program_r, program_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(program_r)
            with os.fdopen(program_w, "wb") as out:
                out.write(_export_seccomp_program())
            os._exit(0)
        finally:
            os._exit(1)
    os.close(program_w)
    with os.fdopen(program_r, "rb") as source:
        program = source.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not program:
        raise RuntimeError(f"could not compile the seccomp filter (helper status {status})")
    return CompiledFilter(program)


def _export_seccomp_program() -> bytes:
    import socket

    import pyseccomp as sc

    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    flt.set_attr(sc.Attr.CTL_OPTIMIZE, 2)  # a binary tree: fewer instructions per syscall, and to attach
    for name in BLOCKED_SYSCALLS:
        try:
            flt.add_rule(sc.ERRNO(errno.EPERM), name)
        except Exception:  # a syscall this architecture or libseccomp does not know
            pass
    # Only AF_UNIX sockets: no TCP/UDP (even inside the empty network namespace), no netlink, no raw packets.
    flt.add_rule(sc.ERRNO(errno.EACCES), "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
    for flag in CLONE_NAMESPACE_FLAGS:  # fork/threads yes, new namespaces no
        flt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")  # its flags hide in a struct; libc falls back to clone
    with os.fdopen(os.memfd_create("seccomp-bpf"), "w+b") as program:
        flt.export_bpf(program)
        program.seek(0)
        return program.read()
