"""``envgym sandbox build-image``: the Docker backend's image, built from this machine's Python
(:func:`envgym.sandbox.images.build_python_base_image`)."""

from __future__ import annotations

import typer

from envgym.sandbox.images import DEFAULT_TAG, build_python_base_image


def build_image_command(
    tag: str = typer.Option(DEFAULT_TAG, help="Image name:tag to create."),
    site_packages: list[str] = typer.Option([], "--site-package", help="Also include this site-packages module."),
) -> None:
    """Build the Docker backend's image from this machine's Python (no registry, no network)."""
    image_id = build_python_base_image(tag, site_packages=site_packages)
    print(f"built {tag} ({image_id})")
