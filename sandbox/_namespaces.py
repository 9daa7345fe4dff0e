"""Per-slot namespaces of the local sandbox: what confines a job when it has no uid of its own.

Runs inside the sandbox next to ``_zygote.py`` (standard library only). Each slot of the zygote gets a
long-lived *slot init*: the pid 1 of a PID namespace of its own, with a mount namespace of its own and, when
the pool is not root, a user namespace of its own. A job is forked straight into its slot's namespaces, so:

- **everything a job starts stays in its slot's PID namespace** (a process cannot leave one, ``setsid`` or
  not): the init's ``kill(-1)`` ends all of it, and "the init has no children" proves nothing is left;
- **its files live on a fresh size-capped tmpfs** mounted in the slot's mount namespace only, so other
  slots cannot reach them by any path, and every other mount but ``/proc`` and ``/sys`` is read-only there
  (bwrap's ``/`` and ``/tmp`` belong to the pool's own uid when it is not root);
- **installed packages are hidden** but the standard library and declared ones, when bwrap has not done it
  for the whole pool (``_package_view.py``): an empty tmpfs over every directory that holds packages;
- **its ``/proc`` shows only its own processes** (a proc mounted for the slot's PID namespace);
- **without root, the slot's user namespace gives it a process count of its own** (``RLIMIT_NPROC`` counts
  per user namespace and uid) and keeps other slots' jobs from tracing or reading its ``/proc`` entries.

Creating these needs ``CAP_SYS_ADMIN`` over the zygote's namespaces: root, bubblewrap's user namespace, or
one the zygote makes itself (:func:`acquire_namespace_rights`). Where none is possible the zygote falls
back to process groups and says so.
"""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import struct
import time

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 2
CAP_SYS_ADMIN = 21
KERNEL_INTERFACES = ("/proc", "/sys")  # left as they are in a slot: their writes are checked per file
# Filesystems that hold no files a job could write: a namespace handle (dockerd bind-mounts them under
# /run/docker/netns) refuses a read-only remount from a user namespace, and has nothing to protect.
UNWRITABLE_TYPES = {b"nsfs"}


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _write(path: str, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY)
    try:
        os.write(descriptor, text.encode())
    finally:
        os.close(descriptor)


def _has_cap_sys_admin() -> bool:
    with open("/proc/self/status") as status:
        effective = next(int(line.split()[1], 16) for line in status if line.startswith("CapEff:"))
    return bool(effective >> CAP_SYS_ADMIN & 1)


def acquire_namespace_rights() -> bool:
    """True when this process may create PID and mount namespaces; makes a user namespace for it if needed.

    Root and bubblewrap's user namespace already grant ``CAP_SYS_ADMIN``. Otherwise (no bwrap, not root)
    the zygote enters a user namespace of its own, mapping only its own uid and gid, where the kernel allows
    unprivileged user namespaces. The PID namespace it forks slots from must be one that user namespace
    owns (the zygote returns to it after each fork): the zygote goes on as pid 1 of a new one, in a child,
    while this process only waits for it and exits with its status.
    """
    if _has_cap_sys_admin():
        return True
    uid, gid = os.getuid(), os.getgid()
    if LIBC.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return False
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    child = os.fork()
    if child != 0:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host stops the pool by closing stdin or by SIGKILL
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed with the waiting parent, and its namespace with it
    return _has_cap_sys_admin()


def _wait_for_children(deadline: float) -> None:
    """Until the caller (a slot init, SIGCHLD ignored) has no child left, so a swept slot is empty when reused.

    Children reparent their own children to the init before they exit, so no child means no process at all.
    Bounded, in case a killed process hangs in the kernel; the leftover check then sweeps again.
    """
    while time.monotonic() < deadline:
        try:
            os.waitpid(-1, os.WNOHANG)  # with SIGCHLD ignored: 0 while children live, ECHILD once none
        except ChildProcessError:
            return
        time.sleep(0.0005)


def mount_tmpfs(path: str, size_mb: int, uid: int, gid: int) -> None:
    options = f"size={size_mb}m,nr_inodes=4096,mode=0700,uid={uid},gid={gid}".encode()
    _check(LIBC.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options), f"mount tmpfs on {path}")


def _mount_points() -> list[str]:
    """Every mount point of this mount namespace but the kernel's interfaces and unwritable filesystems."""
    points = set()
    with open("/proc/self/mountinfo", "rb") as mountinfo:
        for line in mountinfo:
            fields = line.split()
            filesystem = fields[fields.index(b"-") + 1]  # optional fields end with "-", then the type
            if filesystem not in UNWRITABLE_TYPES:
                points.add(fields[4].decode("unicode_escape"))  # "\040" is a space
    return sorted(
        point for point in points if not any(point == top or point.startswith(top + "/") for top in KERNEL_INTERFACES)
    )


def _remount_read_only(path: str) -> bool:
    """Read-only in this mount namespace only; the mount's other flags are kept (locked ones must be).

    Device files stay usable (``/dev/null``): a read-only mount refuses writes to files, not to devices.
    """
    try:
        kept = os.statvfs(path).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)  # ST_ bits equal MS_ bits; atime kept
    except OSError:
        return False
    return LIBC.mount(None, path.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None) == 0


def hide_installed_packages(view: dict) -> None:
    """An empty read-only-to-be tmpfs over each hidden directory, then each exposed path bound back in (opened
    first: the tmpfs covers its source). Raises when one cannot be hidden: the slot then falls back, and says so."""
    sources = []
    for path in view["exposed"]:
        try:
            sources.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC)))
        except OSError:
            continue  # gone since the host listed it
    try:
        for path in view["hidden"]:
            _check(
                LIBC.mount(
                    b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,nr_inodes=1024,mode=0755"
                ),
                f"hide {path}",
            )
        for path, descriptor in sources:
            if stat.S_ISDIR(os.fstat(descriptor).st_mode):
                os.makedirs(path, exist_ok=True)
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
            _check(
                LIBC.mount(f"/proc/self/fd/{descriptor}".encode(), path.encode(), None, MS_BIND | MS_REC, None),
                f"expose {path}",
            )
    finally:
        for _, descriptor in sources:
            os.close(descriptor)


class CapabilityDrop:
    """Empties a process's capability sets (and so its ambient set) with one ``capset``; built once, used per job."""

    def __init__(self):
        self.header = ctypes.create_string_buffer(struct.pack("Ii", 0x20080522, 0), 8)  # _LINUX_CAPABILITY_VERSION_3
        self.data = ctypes.create_string_buffer(24)  # two zeroed {effective, permitted, inheritable}

    def apply(self) -> None:
        _check(LIBC.capset(self.header, self.data), "capset")


class SlotNamespaces:
    """One slot's namespaces, held by its init process; the zygote forks jobs into them."""

    def __init__(
        self,
        slot: int,
        job_dir: str,
        own_pid_namespace: int,
        job_ids: tuple[int, int] | None,
        package_view: dict | None = None,
    ):
        """``job_ids``: the (uid, gid) jobs appear as in a user namespace of the slot's own (None: no such
        namespace, when the pool runs as root and every job has a uid of its own). ``package_view``: the
        ``{"hidden", "exposed"}`` paths to apply in the slot's mount namespace (None: bwrap applied them)."""
        self.slot, self.job_dir, self.own_pid_namespace = slot, job_dir, own_pid_namespace
        self.package_view = package_view
        ready_r, ready_w = os.pipe()
        request_r, self.request_w = os.pipe()
        self.answer_r, answer_w = os.pipe()
        _check(LIBC.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        self.pid = self._fork_and_return(own_pid_namespace)
        if self.pid == 0:
            self._init(ready_w, request_r, answer_w, job_ids)
        for descriptor in (ready_w, request_r, answer_w):
            os.close(descriptor)
        with os.fdopen(ready_r, "rb") as ready:
            report = ready.read().decode()
        if not report.startswith("ok"):
            self.close()
            raise OSError(f"slot {slot} namespaces: {report or 'the slot init died'}")
        proc_pid, *features = report.split()[1:]  # the init's pid where the zygote's /proc counts pids
        self.private_proc, self.user_namespace = "proc" in features, "user" in features
        self.read_only = "read-only" in features
        self.packages_hidden = "packages-hidden" in features
        namespaces = f"/proc/{proc_pid}/ns/"
        self.pid_namespace = os.open(namespaces + "pid", os.O_RDONLY | os.O_CLOEXEC)
        self.mount_namespace = os.open(namespaces + "mnt", os.O_RDONLY | os.O_CLOEXEC)
        self.user_namespace_fd = os.open(namespaces + "user", os.O_RDONLY | os.O_CLOEXEC) if self.user_namespace else -1
        self.pid_namespace_inode = os.fstat(self.pid_namespace).st_ino
        self.children = os.open(f"/proc/{proc_pid}/task/{proc_pid}/children", os.O_RDONLY | os.O_CLOEXEC)

    # --- in the zygote ---------------------------------------------------------------------------
    def fork(self) -> int:
        """``os.fork`` with the child in this slot's PID namespace (the zygote itself stays in its own)."""
        _check(LIBC.setns(self.pid_namespace, CLONE_NEWPID), "setns into the slot's PID namespace")
        return self._fork_and_return(self.own_pid_namespace)

    @staticmethod
    def _fork_and_return(own_pid_namespace: int) -> int:
        """Fork into the namespace set for children, then point the parent's children back at its own."""
        try:
            pid = os.fork()
        except BaseException:
            LIBC.setns(own_pid_namespace, CLONE_NEWPID)
            raise
        if pid != 0:  # the child keeps the slot's namespace for everything it starts
            _check(LIBC.setns(own_pid_namespace, CLONE_NEWPID), "setns back to the zygote's PID namespace")
        return pid

    def has_leftovers(self) -> bool:
        """Whether any process of the slot's last job is alive: once the job's own process has been reaped,
        everything it started is a child of the init or a descendant of one (orphans are reparented to it)."""
        return bool(os.pread(self.children, 64, 0))

    def kill_all(self) -> None:
        """Every process in the slot's PID namespace but the init, now (a pipe round trip, no fork)."""
        os.write(self.request_w, b"k")
        if os.read(self.answer_r, 1) != b"k":
            raise OSError(f"the init of slot {self.slot} is gone")

    def close(self) -> None:
        for descriptor in ("request_w", "answer_r", "pid_namespace", "mount_namespace", "children"):
            if getattr(self, descriptor, -1) >= 0:
                os.close(getattr(self, descriptor))
                setattr(self, descriptor, -1)
        if getattr(self, "user_namespace_fd", -1) >= 0:
            os.close(self.user_namespace_fd)
            self.user_namespace_fd = -1
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

    # --- in a job's forked child, before it drops its rights ----------------------------------------
    def enter(self, size_mb: int, uid: int, gid: int) -> None:
        """Into the slot's mount namespace, on a fresh tmpfs (the previous job's is detached, files and all)."""
        _check(LIBC.setns(self.mount_namespace, CLONE_NEWNS), "setns into the slot's mount namespace")
        LIBC.umount2(self.job_dir.encode(), MNT_DETACH)  # EINVAL for the slot's first job: nothing mounted yet
        mount_tmpfs(self.job_dir, size_mb, uid, gid)

    def join_user_namespace(self) -> None:
        """Into the slot's user namespace (the caller then holds every capability there: drop them next)."""
        _check(LIBC.setns(self.user_namespace_fd, CLONE_NEWUSER), "setns into the slot's user namespace")

    # --- the init --------------------------------------------------------------------------------
    def _init(self, ready_w: int, request_r: int, answer_w: int, job_ids: tuple[int, int] | None) -> None:
        """pid 1 of the slot: builds the mount (and user) namespace, then kills on request until the zygote dies."""
        try:
            keep = {ready_w, request_r, answer_w}
            for descriptor in map(int, os.listdir("/proc/self/fd")):  # the zygote's protocol pipes above all
                if descriptor not in keep:
                    try:
                        os.close(descriptor)
                    except OSError:
                        pass
            for number in range(1, signal.NSIG):  # as pid 1, default dispositions make it deaf to its jobs
                if number not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
                    try:
                        signal.signal(number, signal.SIG_DFL)
                    except (OSError, ValueError):
                        pass
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # orphans reparented here are reaped by the kernel
            LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: gone with the zygote, and with it the whole slot
            # The zygote's /proc may count pids in another namespace than the zygote (the host's, when the
            # zygote made its own user namespace): name this process as that /proc does, before mounting ours.
            proc_pid = os.readlink("/proc/self")
            features = self._build(job_ids)
            os.write(ready_w, " ".join(["ok", proc_pid, *features]).encode())
        except BaseException as error:  # noqa: BLE001 - reported to the zygote, which falls back
            os.write(ready_w, f"{type(error).__name__}: {error}".encode())
            os._exit(1)
        os.close(ready_w)
        try:
            while os.read(request_r, 1):
                for _ in range(3):  # kill(-1) is atomic per call; repeat for forks racing the first
                    try:
                        os.kill(-1, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                _wait_for_children(deadline=time.monotonic() + 2.0)
                os.write(answer_w, b"k")
        finally:
            os._exit(0)

    def _build(self, job_ids: tuple[int, int] | None) -> list[str]:
        features = []
        _check(LIBC.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _check(LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make the slot's mounts private")
        if LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0:
            features.append("proc")  # refused where the host's /proc has masked parts (some containers)
        if self.package_view is not None:
            try:
                hide_installed_packages(self.package_view)
                features.append("packages-hidden")
            except OSError:
                pass  # the guarantee is reported missing, and the pool warns: the slot itself still works
        if all(_remount_read_only(path) for path in _mount_points()):
            features.append("read-only")
        if job_ids is not None:
            parent_uid, parent_gid = os.getuid(), os.getgid()
            if LIBC.unshare(CLONE_NEWUSER) == 0:
                _write("/proc/self/setgroups", "deny")
                _write("/proc/self/uid_map", f"{job_ids[0]} {parent_uid} 1")
                _write("/proc/self/gid_map", f"{job_ids[1]} {parent_gid} 1")
                features.append("user")
        return features
