"""The local backend's zygote: one warm Python process that forks a child per job.

This file runs *inside* the sandbox (bubblewrap when available), started by ``envgym.sandbox.local``. It
imports only the standard library (plus ``pyseccomp`` when installed), because the envgym package is not
visible in there. Python is started once; each job costs a ``fork`` instead of an interpreter start-up.

Protocol on stdin/stdout: frames of a 4-byte big-endian length and a JSON object. A request is
``{"id", "language", "code", "stdin", "files", "timeout", "memory_mb", ...}``; the answer carries the same
``id`` and ``status, exit_code, stdout, stderr, wall_s, cpu_s``.

Per job, in the forked child: its own session; its slot's namespaces (``_namespaces.py``: a PID namespace
whose init kills whatever the job leaves behind, ``setsid`` or not, and a mount namespace where the job's
directory is a fresh size-capped tmpfs); a uid of its own (``uid_base + slot``) when started as root, else
its slot's user namespace and no capabilities; its files; rlimits; a seccomp filter; then the program.
Where no namespace can be made, leftovers are killed by process group and the directory is emptied.
The first frame the zygote sends says which of these guarantees hold (``{"hello": ...}``).
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import io
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import time
import traceback

from _namespaces import CapabilityDrop, SlotNamespaces, acquire_namespace_rights  # next to this file
from _seccomp import compile_filter
from _verdict import verdict

CONFIG = json.loads(sys.argv[1])
# Started with -S: the host's site-packages directories (a venv's too: -S skips what makes it one) without
# running their .pth files, whose import hooks (editable installs) would load modules that slow every fork.
sys.path.extend(path for path in CONFIG["site_packages"] if os.path.isdir(path))
LIBC = ctypes.CDLL(None, use_errno=True)
JOB_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}  # plus HOME and TMPDIR, the job's directory
WARM_MODULES = (
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "string",
    "typing",
    "heapq",
    "bisect",
    "json",
    "random",
    "statistics",
    "fractions",
    "decimal",
    "hashlib",
    "datetime",
    "copy",
    "operator",
    "dataclasses",
    "socket",
)


class Job:
    def __init__(self, request: dict, slot: int):
        self.request, self.slot = request, slot
        self.uid, self.gid = _slot_ids(slot)
        self.dir = _slot_dir(slot)
        self.out, self.err = bytearray(), bytearray()
        self.pid = self.pidfd = self.setup_r = None
        self.exit_status = self.rusage = None
        self.flag: str | None = None  # "timeout" or "output_limit" when the zygote stopped the job
        self.started = time.monotonic()
        timeout = float(request["timeout"])
        self.deadline = self.started + float(request.get("wall_timeout") or timeout * 2 + 1)


class Zygote:
    def __init__(self):
        os.environ.clear()  # children inherit exactly this, plus HOME and TMPDIR
        os.environ.update(JOB_ENVIRONMENT)
        self.poll = select.epoll()  # direct, not through selectors: less Python work per job
        self.watched: dict[int, tuple[str, Job | None]] = {}  # fd -> (what it carries, its job)
        self.inbox = bytearray()
        self.queue: list[dict] = []
        self.free_slots = list(range(CONFIG["slots"]))
        self.jobs: dict[int, Job] = {}
        self.fallback_reason: str | None = None
        os.makedirs(CONFIG["jobs_root"], mode=0o711, exist_ok=True)
        for slot in range(CONFIG["slots"]):  # mount points of the per-job tmpfs (or the directories themselves)
            os.makedirs(_slot_dir(slot), mode=0o700, exist_ok=True)
            os.chown(_slot_dir(slot), *_slot_ids(slot))
        self.slots = self._slot_namespaces()  # before the imports below: each init is a fork of this process
        self.seccomp = compile_filter() if CONFIG["seccomp"] else None
        self.drop_capabilities = None if CONFIG["drop_privileges"] else CapabilityDrop()  # bwrap's, without root
        self.max_output = int(CONFIG["max_output_bytes"])
        fixed = [
            (resource.RLIMIT_FSIZE, int(CONFIG["file_size_mb"]) * 1024 * 1024),
            (resource.RLIMIT_NOFILE, 256),
            (resource.RLIMIT_CORE, 0),
        ]
        # RLIMIT_NPROC counts the processes of one uid in one user namespace: a job's own with a uid per job,
        # or its slot's user namespace, where the slot's init is one of them.
        if CONFIG["drop_privileges"]:
            fixed.append((resource.RLIMIT_NPROC, int(CONFIG["max_processes"])))
        elif self.slots and all(slot.user_namespace for slot in self.slots.values()):
            fixed.append((resource.RLIMIT_NPROC, int(CONFIG["max_processes"]) + 1))
        self.fixed_limits = [(which, (value, value)) for which, value in fixed]  # the same for every job
        for name in WARM_MODULES:
            __import__(name)
        self.std_streams = _std_streams()
        gc.collect()
        gc.freeze()  # children then leave these pages shared instead of copying them on the first collection

    def _slot_namespaces(self) -> dict[int, SlotNamespaces]:
        """One set of namespaces per slot, or none at all (then the hello frame says why)."""
        if CONFIG["namespaces"] is False:
            self.fallback_reason = "namespaces=False was asked for"
            return {}
        if not acquire_namespace_rights():
            self.fallback_reason = "no CAP_SYS_ADMIN and the kernel refuses an unprivileged user namespace"
            return {}
        own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        job_ids = None if CONFIG["drop_privileges"] else (CONFIG["host_uid"], CONFIG["host_gid"])
        made: dict[int, SlotNamespaces] = {}
        try:
            for slot in range(CONFIG["slots"]):
                made[slot] = SlotNamespaces(slot, _slot_dir(slot), own_pid_namespace, job_ids, CONFIG["package_view"])
        except OSError as error:
            for namespaces in made.values():
                namespaces.close()
            self.fallback_reason = str(error)
            return {}
        return made

    def guarantees(self) -> dict:
        """What confines this pool's jobs (see docs/sandbox.md, 'local'), sent to the host once at start."""
        slots = list(self.slots.values())
        uid_per_job = bool(CONFIG["drop_privileges"])
        return {
            "uid_per_job": uid_per_job,
            "pid_namespace_per_job": bool(slots),  # leftovers, setsid or not, are killed when the job ends
            "tmpfs_per_job": bool(slots),
            "private_files": uid_per_job or bool(slots),  # no other job reaches this job's directory
            "private_proc": bool(slots) and all(slot.private_proc for slot in slots),
            "read_only_outside_job_directory": bool(slots) and all(slot.read_only for slot in slots),
            "process_limit": any(which == resource.RLIMIT_NPROC for which, _ in self.fixed_limits),
            # bwrap hides them for the whole pool (no view left for the slots); else every slot must have
            "installed_packages_hidden": CONFIG["package_view"] is None
            or (bool(slots) and all(slot.packages_hidden for slot in slots)),
            "seccomp": self.seccomp is not None,
            "fallback_reason": self.fallback_reason,
            "slot_pid_namespaces": [slot.pid_namespace_inode for slot in slots],
        }

    # --- main loop -------------------------------------------------------------------------------
    def serve(self) -> None:
        self._send({"hello": self.guarantees()})
        os.set_blocking(0, False)
        self._watch(0, "requests", None)
        while True:
            now = time.monotonic()
            deadlines = [job.deadline for job in self.jobs.values() if job.flag is None]
            wait = max(0.0, min(deadlines) - now) if deadlines else None
            ready = [(fd, self.watched.get(fd)) for fd, _ in self.poll.poll(-1 if wait is None else wait)]
            for fd, entry in ready:
                if entry is None or self.watched.get(fd) is not entry:
                    continue  # closed earlier in this batch by the job's _finish
                kind, job = entry
                if kind == "requests":
                    if not self._read_requests():
                        return
                elif kind == "pid":
                    self._finish(job)
                else:
                    self._read_output(job, kind, fd)
            now = time.monotonic()
            for job in list(self.jobs.values()):
                if job.flag is None and now >= job.deadline:
                    job.flag = "timeout"
                    self._kill_all(job)
            while self.queue and self.free_slots:
                self._start(self.queue.pop(0), self.free_slots.pop(0))

    def _read_requests(self) -> bool:
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        self.inbox += chunk
        while len(self.inbox) >= 4:
            size = struct.unpack(">I", self.inbox[:4])[0]
            if len(self.inbox) < 4 + size:
                break
            self.queue.append(json.loads(self.inbox[4 : 4 + size]))
            del self.inbox[: 4 + size]
        return True

    # --- one job ---------------------------------------------------------------------------------
    def _start(self, request: dict, slot: int) -> None:
        job = Job(request, slot)
        try:
            stdin_fd = os.memfd_create("stdin")
            stdin = request.get("stdin")
            if stdin:
                os.write(stdin_fd, stdin.encode())
                os.lseek(stdin_fd, 0, os.SEEK_SET)
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            job.setup_r, setup_w = os.pipe()  # the child writes one byte once it is fully confined
        except Exception as error:  # noqa: BLE001 - reported to the caller as infra_error
            self.free_slots.append(slot)
            self._send(
                {
                    "id": request["id"],
                    "status": "infra_error",
                    "exit_code": None,
                    "stdout": "",
                    "stderr": f"sandbox could not prepare the job: {error!r}",
                    "wall_s": 0.0,
                    "cpu_s": 0.0,
                }
            )
            return
        namespaces = self.slots.get(slot)
        pid = namespaces.fork() if namespaces else os.fork()
        if pid == 0:
            self._child(job, stdin_fd, out_w, err_w, setup_w)
        os.close(setup_w)
        os.close(stdin_fd)
        os.close(out_w)
        os.close(err_w)
        job.pid, job.pidfd = pid, os.pidfd_open(pid)
        self.jobs[pid] = job
        for fd, kind in ((out_r, "stdout"), (err_r, "stderr")):
            os.set_blocking(fd, False)
            self._watch(fd, kind, job)
        self._watch(job.pidfd, "pid", job)

    def _watch(self, fd: int, kind: str, job: Job | None) -> None:
        self.poll.register(fd, select.EPOLLIN)
        self.watched[fd] = (kind, job)

    def _unwatch(self, fd: int) -> None:
        self.poll.unregister(fd)
        del self.watched[fd]

    def _read_output(self, job: Job, kind: str, fd: int) -> bool:
        """Read what the pipe holds; False when nothing is there yet (its writers still live)."""
        buffer = job.out if kind == "stdout" else job.err
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            self._close_output(fd)
            return True
        room = self.max_output - len(buffer)
        buffer += chunk[: max(room, 0)]
        if len(chunk) > room and job.flag is None:
            job.flag = "output_limit"
            self._kill_all(job)
        return True

    def _close_output(self, fd: int) -> None:
        self._unwatch(fd)
        os.close(fd)

    def _finish(self, job: Job) -> None:
        self._unwatch(job.pidfd)
        os.close(job.pidfd)
        _, job.exit_status, job.rusage = os.wait4(job.pid, 0)
        os.set_blocking(job.setup_r, False)
        try:
            confined = os.read(job.setup_r, 1) == b"1"
        except BlockingIOError:
            confined = False
        os.close(job.setup_r)
        namespaces = self.slots.get(job.slot)
        if namespaces is None or namespaces.has_leftovers():
            self._kill_all(job)  # whatever it left behind (background children) goes too
        for fd, (kind, owner) in list(self.watched.items()):
            if owner is job:
                self._drain(job, kind, fd)
        del self.jobs[job.pid]
        self._cleanup_dir(job)
        self.free_slots.append(job.slot)
        answer = self._verdict(job)
        if not confined:  # the program never ran: a sandbox failure, not the program's
            answer.update(status="infra_error", exit_code=None)
        self._send(answer)

    def _drain(self, job: Job, kind: str, fd: int) -> None:
        """What the pipe holds, then closed: the job's writers are dead (its slot was swept), or, without
        namespaces, a process that escaped the sweep may still hold the pipe, and must not hold the zygote."""
        while fd in self.watched and self._read_output(job, kind, fd):
            pass
        if fd in self.watched:
            self._close_output(fd)

    def _verdict(self, job: Job) -> dict:
        cpu = job.rusage.ru_utime + job.rusage.ru_stime
        stderr = bytes(job.err)
        status, code = verdict(job.exit_status, cpu, float(job.request["timeout"]), job.flag, stderr)
        return {
            "id": job.request["id"],
            "status": status,
            "exit_code": code,
            "stdout": bytes(job.out).decode(errors="replace"),
            "stderr": stderr.decode(errors="replace"),
            "wall_s": round(time.monotonic() - job.started, 6),
            "cpu_s": round(cpu, 6),
        }

    def _kill_all(self, job: Job) -> None:
        """Kill the job's whole process tree: its slot's PID namespace, else (no namespaces) its process group.

        A dead slot init (its namespace died with it) raises: the zygote exits, every pending job is an
        ``infra_error`` and the host starts a fresh pool.
        """
        namespaces = self.slots.get(job.slot)
        if namespaces is not None:
            namespaces.kill_all()
            return
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _cleanup_dir(self, job: Job) -> None:
        if job.slot in self.slots:
            return  # the next job of the slot detaches this tmpfs, files and all; other slots never see it
        import shutil  # only in this mode (see _seccomp.compile_filter for why the zygote stays lean)

        for entry in os.scandir(job.dir):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)

    def _send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        frame = struct.pack(">I", len(data)) + data
        view = memoryview(frame)
        while view:
            written = os.write(1, view)
            view = view[written:]

    # --- in the forked child ---------------------------------------------------------------------
    def _child(self, job: Job, stdin_fd: int, out_w: int, err_w: int, setup_w: int) -> None:
        try:
            os.setsid()
            for sig in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
                signal.signal(sig, signal.SIG_DFL)
            os.dup2(stdin_fd, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.dup2(setup_w, 3)
            namespaces = self.slots.get(job.slot)
            if namespaces is not None:
                namespaces.enter(int(job.request.get("disk_mb") or CONFIG["disk_mb"]), job.uid, job.gid)
            if CONFIG["drop_privileges"]:
                os.setgroups([])
                os.setresgid(job.gid, job.gid, job.gid)
                os.setresuid(job.uid, job.uid, job.uid)
            _write_files(job)  # as the job's own uid, into its own (fresh or emptied) directory
            if namespaces is not None and namespaces.user_namespace:
                namespaces.join_user_namespace()
            if self.drop_capabilities is not None:
                self.drop_capabilities.apply()
            os.closerange(4, 65536)
            os.chdir(job.dir)
            self._limit(job)
            if self.seccomp is not None:
                self.seccomp.load()
            else:
                LIBC.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (the filter sets it too): no gains through exec
            os.environ["HOME"] = os.environ["TMPDIR"] = job.dir
            os.write(3, b"1")
            os.close(3)
        except BaseException:  # noqa: BLE001 - the job must not run half-confined
            os.write(2, f"sandbox setup failed:\n{traceback.format_exc()}".encode())
            os._exit(125)
        language = job.request["language"]
        if language == "python":
            sys.stdin, sys.stdout, sys.stderr = self.std_streams
            _run_python(job.request["code"], _main_file(language), job.dir)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        command = {
            "bash": "exec bash main.sh",
            "c": "gcc -O2 -o main main.c -lm && exec ./main",
            "cpp": "g++ -O2 -o main main.cpp && exec ./main",
        }[language]
        try:
            os.execve("/bin/sh", ["sh", "-c", command], os.environ)
        finally:
            os._exit(127)

    def _limit(self, job: Job) -> None:
        memory = int(job.request["memory_mb"]) * 1024 * 1024
        cpu = max(1, math.ceil(float(job.request["timeout"])))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        for which, limits in self.fixed_limits:
            resource.setrlimit(which, limits)


def _slot_dir(slot: int) -> str:
    return os.path.join(CONFIG["jobs_root"], f"slot{slot}")


def _slot_ids(slot: int) -> tuple[int, int]:
    """The uid and gid owning a slot's jobs' files, as this process sees them: the slot's own when root."""
    if CONFIG["drop_privileges"]:
        return CONFIG["uid_base"] + slot, CONFIG["uid_base"] + slot
    return os.getuid(), os.getgid()


def _write_files(job: Job) -> None:
    """The program and its extra files; the directory starts empty (a fresh tmpfs, or emptied after the last job)."""
    files = dict(job.request.get("files") or {})
    files[_main_file(job.request["language"])] = job.request["code"]
    for name, content in files.items():
        path = os.path.join(job.dir, name)
        if "/" in name:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            data = memoryview(content.encode())
            while data:
                data = data[os.write(descriptor, data) :]
        finally:
            os.close(descriptor)


def _main_file(language: str) -> str:
    return {"python": "main.py", "bash": "main.sh", "c": "main.c", "cpp": "main.cpp"}[language]


def _std_streams() -> tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper]:
    """A job's sys.stdin/stdout/stderr, made in the zygote and never used there: each child gets an untouched copy.

    A stream records at creation whether its file is seekable, so each is made while its descriptor is what a
    job's will be (stdin a memfd, stdout and stderr pipes); the zygote's own descriptors are then put back.
    """
    stdin_file = os.memfd_create("stdin")
    pipe_r, pipe_w = os.pipe()
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    try:
        for source, fd in ((stdin_file, 0), (pipe_w, 1), (pipe_w, 2)):
            os.dup2(source, fd)
        return (
            io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8"),
            io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=False),
            io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace"),
        )
    finally:
        for fd, original in enumerate(saved):
            os.dup2(original, fd)
            os.close(original)
        for fd in (stdin_file, pipe_r, pipe_w):
            os.close(fd)


def _run_python(code: str, filename: str, directory: str) -> None:
    """Run user code in this forked interpreter as if it were ``python main.py``."""
    sys.argv = [filename]
    sys.path[0:0] = [directory]  # the working directory
    namespace = {"__name__": "__main__", "__file__": os.path.join(directory, filename), "__builtins__": builtins}
    status = 0
    try:
        exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - this is the sandboxed program
    except SystemExit as exit_:
        if exit_.code is None:
            status = 0
        elif isinstance(exit_.code, int):
            status = exit_.code
        else:
            print(exit_.code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - report like the interpreter would, without this frame
        kind, value, trace = sys.exc_info()
        traceback.print_exception(kind, value, trace.tb_next)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    os._exit(status & 0xFF)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Zygote().serve()
