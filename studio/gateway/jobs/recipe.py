"""The Generate form that would make a recorded result again (model, prompt, options, seed), and
fresh seeds for variations of it. Read from the generation's recorded request, either family.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from studio.models import Generation

MAX_VARIATIONS = 4
MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class Recipe:
    """The Generate form that would make this result again: model, prompt and option values."""

    model: str
    prompt: str
    options: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def recipe(generation: Generation) -> Recipe:
    """The form values of a recorded generation (native or images family)."""
    params = generation.parameters or {}
    options: dict[str, Any] = {}
    config = params.get("generationConfig") if isinstance(params.get("generationConfig"), dict) else {}
    image_config = config.get("imageConfig") if isinstance(config.get("imageConfig"), dict) else {}
    if image_config.get("aspectRatio"):
        options["aspect_ratio"] = str(image_config["aspectRatio"])
    if image_config.get("imageSize"):
        options["image_size"] = str(image_config["imageSize"])
    for name in ("size", "quality", "output_format", "background"):
        if isinstance(params.get(name), str) and params[name]:
            options[name] = params[name]
    seed = config.get("seed", params.get("seed"))
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
    return Recipe(model=generation.model_id, prompt=generation.prompt or "", options=options, seed=seed)


def variation_seeds(count: int, rng: random.Random | None = None) -> list[int]:
    """Distinct fresh seeds, one per variation."""
    rng = rng or random.SystemRandom()
    seeds: set[int] = set()
    while len(seeds) < max(1, min(count, MAX_VARIATIONS)):
        seeds.add(rng.randrange(1, MAX_SEED))
    return sorted(seeds)
