"""Build Docker images for the sandbox without pulling anything: from the host's own Python.

``build_python_base_image(tag)`` packs a minimal root file system into a tarball and ``docker import``s it:
the running interpreter's installation (standard library; site-packages only for the packages named), the
shared libraries it and its extension modules link against (found with ``ldd``), ``sh``/``bash`` and a few
core utilities, and an ``/etc/passwd`` with the unprivileged ``sandbox`` user (uid/gid 65534). The
interpreter keeps its host path (``sys.executable``), so the image is as offline as the machine that built
it. Other parts of envgym (e.g. env-server Dockerfiles) can start ``FROM`` such an image.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

DEFAULT_TAG = "envgym-sandbox-python:latest"
SANDBOX_UID = 65534
TOOLS = (
    "sh",
    "bash",
    "rm",
    "ls",
    "cat",
    "echo",
    "sleep",
    "kill",
    "env",
    "id",
    "mkdir",
    "cp",
    "mv",
    "touch",
    "head",
    "tail",
    "wc",
    "sort",
    "uniq",
    "tr",
    "grep",
    "sed",
    "true",
    "false",
    "ps",
)
# Shared libraries that site-packages load with ctypes at run time, which ldd cannot see.
CTYPES_LIBRARIES = {"pyseccomp": ["seccomp"]}
SKIPPED_STDLIB = {"site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3"}


def build_python_base_image(tag: str = DEFAULT_TAG, *, site_packages: Sequence[str] = (), client=None) -> str:
    """Build (or rebuild) ``tag`` from the host's Python; return the image id.

    ``site_packages``: top-level module names from the host's site-packages to include as well (for images
    that run more than the standard library, e.g. ``["pydantic", "httpx"]``).
    """
    import docker

    client = client or docker.from_env()
    with tempfile.TemporaryDirectory(prefix="envgym-image-") as folder:
        tarball = Path(folder) / "rootfs.tar"
        write_rootfs(tarball, site_packages=site_packages)
        repository, _, version = tag.partition(":")
        changes = [
            f"USER {SANDBOX_UID}:{SANDBOX_UID}",
            "WORKDIR /tmp",
            f"ENV PATH={Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "ENV LANG=C.UTF-8",
            "ENV PYTHONDONTWRITEBYTECODE=1",
        ]
        client.api.import_image_from_file(str(tarball), repository=repository, tag=version or "latest", changes=changes)
    return client.images.get(tag).id


def write_rootfs(path: Path, *, site_packages: Sequence[str] = ()) -> None:
    """The root file system tarball the image is imported from (answer-key packages refused, as locally)."""
    from envgym.sandbox._package_view import declared_packages

    declared_packages(tuple(site_packages))
    prefix = Path(sys.base_prefix)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    purelib = Path(sysconfig.get_paths()["purelib"])
    files: set[Path] = set()
    for item in (prefix / "bin").iterdir():
        if item.name.startswith("python"):
            files.add(item)
    files.update((prefix / "lib").glob("libpython*"))
    for item in stdlib.iterdir():
        if item.name not in SKIPPED_STDLIB:
            files.update(_walk(item))
    for name in site_packages:
        matches = (
            list(purelib.glob(name)) + list(purelib.glob(f"{name}.py")) + list(purelib.glob(f"{name}-*.dist-info"))
        )
        if not matches:
            raise ValueError(f"site-packages has no {name!r} (looked in {purelib})")
        for match in matches:
            files.update(_walk(match))
        for library in CTYPES_LIBRARIES.get(name, []):
            files.update(_ldconfig_paths(library))
    tools = [Path(found) for name in TOOLS if (found := _which(name))]
    files.update(tools)
    binaries = [
        file
        for file in files
        if file.suffix == ".so" or ".so." in file.name or file in tools or file.parent == prefix / "bin"
    ]
    files.update(_shared_libraries(binaries))
    with tarfile.open(path, "w") as archive:
        _add_dir(archive, "tmp", 0o1777)
        for directory in ("etc", "dev", "proc", "usr", "usr/bin"):
            _add_dir(archive, directory, 0o755)
        for top in ("bin", "sbin", "lib", "lib64", "lib32"):  # mirror the host's merged-/usr links
            if os.path.islink(f"/{top}"):
                _add_link(archive, top, os.readlink(f"/{top}"))
        for parent in reversed(prefix.parents):  # host parents such as /root are 0700
            if str(parent) not in ("/", "/usr"):
                _add_dir(archive, str(parent).lstrip("/"), 0o755)
        _add_bytes(
            archive, "etc/passwd", f"root:x:0:0::/root:/bin/sh\nsandbox:x:{SANDBOX_UID}:{SANDBOX_UID}::/tmp:/bin/sh\n"
        )
        _add_bytes(archive, "etc/group", f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\n")
        added: set[str] = set()
        for file in sorted(files):
            for member in (file, file.resolve()) if file.is_symlink() else (file,):
                name = os.path.join(os.path.realpath(member.parent), member.name).lstrip("/")
                if name not in added:
                    added.add(name)
                    archive.add(str(member), arcname=name, recursive=False, filter=_readable)
        for tool in tools:  # reachable as /usr/bin/NAME whatever the host layout
            name = f"usr/bin/{tool.name}"
            if name not in added:
                added.add(name)
                _add_link(archive, name, str(tool))


def _walk(path: Path) -> Iterable[Path]:
    if path.is_dir() and not path.is_symlink():
        for root, _, names in os.walk(path):
            for name in names:
                yield Path(root) / name
    else:
        yield path


def _which(name: str, path: str = "/usr/bin:/bin") -> str | None:
    from shutil import which

    found = which(name, path=path)
    return os.path.realpath(found) if found and os.path.basename(os.path.realpath(found)) == name else found


def _ldconfig_paths(library: str) -> set[Path]:
    """Where the dynamic linker finds ``lib<library>.so*``: the names it loads and the files they link to."""
    output = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout
    paths = [
        line.rsplit("=>", 1)[1].strip()
        for line in output.splitlines()
        if line.strip().startswith(f"lib{library}.so") and "=>" in line
    ]
    if not paths:
        raise ValueError(f"lib{library} is not installed on this host (a site package in the image loads it)")
    # ctypes.util.find_library asks `ldconfig -p`, which reads /etc/ld.so.cache: both go in too.
    ldconfig = _which("ldconfig", "/usr/sbin:/sbin")
    lookup = {Path("/etc/ld.so.cache")} | ({Path(ldconfig)} if ldconfig else set())
    return lookup | {Path(path) for path in paths} | {Path(os.path.realpath(path)) for path in paths}


def _shared_libraries(binaries: Iterable[Path]) -> set[Path]:
    libraries: set[Path] = set()
    for binary in binaries:
        try:
            output = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in output.splitlines():
            parts = line.split()
            candidate = parts[2] if "=>" in parts and len(parts) > 2 else parts[0] if parts else ""
            if candidate.startswith("/"):
                libraries.add(Path(candidate))
    return libraries


def _readable(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode |= 0o444 | (0o111 if info.mode & 0o100 or info.isdir() else 0)
    return info


def _add_dir(archive: tarfile.TarFile, name: str, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, mode
    archive.addfile(info)


def _add_bytes(archive: tarfile.TarFile, name: str, text: str) -> None:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    archive.addfile(info, io.BytesIO(data))


def _add_link(archive: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
    archive.addfile(info)
