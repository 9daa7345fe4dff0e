"""Build the server images offline: a base image from the host's Python, then the Dockerfiles in docker/.

    python -m envgym.server.images          # envgym-server-base, envgym-env-server, envgym-sandbox-server

The base image comes from :func:`envgym.sandbox.images.build_python_base_image` (a root file system packed
from this machine's interpreter, ``docker import``-ed), holding the site-packages the servers import, found
by importing them here. The Dockerfiles then only add envgym's source. Nothing is pulled from a registry.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DOCKERFILES = REPOSITORY / "docker"
BASE_TAG = "envgym-server-base:latest"
IMAGES = {
    "envgym-env-server:latest": "env-server.Dockerfile",
    "envgym-sandbox-server:latest": "sandbox-server.Dockerfile",
}
SOURCE_FOLDERS = ("envgym", "envs", "sandbox", "agents")
EXTRAS = ("server", "search")  # besides the core dependencies: uvloop/httptools, and the search server's


def server_site_packages() -> list[str]:
    """Top-level site-packages modules of envgym's dependencies (core and :data:`EXTRAS`, transitively), and
    ``envgym`` itself, whose metadata carries the entry points that register the built-in envs."""
    from importlib.metadata import PackageNotFoundError, distribution, packages_distributions

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    wanted: set[str] = set()
    pending: list[tuple[str, tuple[str, ...]]] = [("envgym", EXTRAS)]
    while pending:
        name, extras = pending.pop()
        if canonicalize_name(name) in wanted:
            continue
        try:
            requirements = distribution(name).requires or []
        except PackageNotFoundError:  # an optional dependency this machine lacks: the image lacks it too
            continue
        wanted.add(canonicalize_name(name))
        for text in requirements:
            requirement = Requirement(text)
            if requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in extras or ("",)):
                pending.append((requirement.name, tuple(requirement.extras)))
    modules = {
        module
        for module, owners in packages_distributions().items()
        if any(canonicalize_name(owner) in wanted for owner in owners)
    }
    return sorted({"envgym", *modules} - {"_distutils_hack"} - {m for m in modules if m.startswith("__editable__")})


def build_images(client=None) -> dict[str, str]:
    """Build the base image and every image of :data:`IMAGES`; returns ``{tag: image id}``."""
    import docker
    from envgym.sandbox.images import build_python_base_image

    client = client or docker.from_env()
    built = {BASE_TAG: build_python_base_image(BASE_TAG, site_packages=server_site_packages(), client=client)}
    for tag, dockerfile in IMAGES.items():
        image, _ = client.images.build(
            fileobj=_context(dockerfile),
            custom_context=True,
            tag=tag,
            pull=False,
            buildargs={"BASE": BASE_TAG},
            rm=True,
            forcerm=True,
        )
        built[tag] = image.id
    return built


def _context(dockerfile: str) -> io.BytesIO:
    """The build context: the Dockerfile and envgym's source folders only (no runs/, no caches)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(str(DOCKERFILES / dockerfile), arcname="Dockerfile")
        for folder in SOURCE_FOLDERS:
            archive.add(str(REPOSITORY / folder), arcname=folder, filter=_source_only)
    buffer.seek(0)
    return buffer


def _source_only(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    name = Path(info.name).name
    return None if name in ("__pycache__", ".pytest_cache") or name.endswith(".pyc") else info


if __name__ == "__main__":
    for tag, image_id in build_images().items():
        print(f"built {tag} ({image_id})")
