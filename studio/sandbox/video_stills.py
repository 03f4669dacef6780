"""Image-driven sandbox video: camera moves over stills the caller supplied.

Image-to-video (a first or a last frame), first+last frame interpolation and reference-image
slideshows all come down to a slow zoom-and-drift over a still, combined with crossfades. The
frame that should *be* a given image (the first, or the last) lands on it exactly, so clips can
be chained without a visible seam.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PIL import Image

from studio.sandbox.video_drawing import Motes, cover, ease, progress, prompt_caption, seeded_rng


def _pan(rng: np.random.Generator) -> tuple[float, float]:
    angle = rng.uniform(0, math.tau)
    return 0.7 * math.cos(angle), 0.7 * math.sin(angle)


class _CameraMove:
    """A slow zoom with a drift toward one side over a still; zoom 1 shows exactly the still."""

    def __init__(
        self, image: Image.Image, size: tuple[int, int], zoom: tuple[float, float], pan: tuple[float, float]
    ) -> None:
        self.size = size
        self.zoom = zoom
        self.pan = pan
        self.base = cover(image, size)
        top = max(zoom)
        # A larger source keeps zoomed frames sharp instead of upsampling the output-size still.
        self.source = cover(image, (round(size[0] * top), round(size[1] * top))) if top > 1 else self.base

    def at(self, t: float) -> Image.Image:
        zoom = self.zoom[0] + (self.zoom[1] - self.zoom[0]) * ease(t)
        if zoom <= 1.0 + 1e-6:
            return self.base
        source_w, source_h = self.source.size
        box_w, box_h = source_w / zoom, source_h / zoom
        # Drift is proportional to the zoom margin, so there is none (and no crop) at zoom 1.
        cx = source_w / 2 + self.pan[0] * (source_w - box_w) / 2
        cy = source_h / 2 + self.pan[1] * (source_h - box_h) / 2
        box = (cx - box_w / 2, cy - box_h / 2, cx + box_w / 2, cy + box_h / 2)
        return self.source.resize(self.size, Image.Resampling.BILINEAR, box=box)


class ImageMotion:
    """Image-to-video: a camera move from (or, with ``ending``, onto) one still, with dust in the light."""

    def __init__(
        self, image: Image.Image, size: tuple[int, int], frames: int, fps: int, key: bytes, ending: bool
    ) -> None:
        zoom = (1.15, 1.0) if ending else (1.0, 1.15)
        self.camera = _CameraMove(image, size, zoom, _pan(seeded_rng(key, "pan")))
        self.frames = frames
        self.ending = ending
        self.fade = max(1, round(0.6 * fps))
        glow = np.array([255.0, 246.0, 224.0], np.float32)
        self.motes = Motes(seeded_rng(key, "dust"), size, 40, glow, (1.2, 3.5), (3.0 / fps, -9.0 / fps), 0.35)

    def __call__(self, index: int) -> np.ndarray:
        frame = np.array(self.camera.at(progress(index, self.frames)))
        # The dust fades in (or out) so the frame on the given image is the image itself.
        edge = self.frames - 1 - index if self.ending else index
        self.motes.draw(frame, index, min(1.0, edge / self.fade))
        return frame


class Interpolation:
    """First+last frame: zoom into the first still while crossfading to the last, which settles at zoom 1."""

    def __init__(
        self,
        first: Image.Image,
        last: Image.Image,
        size: tuple[int, int],
        frames: int,
        rng: np.random.Generator,
    ) -> None:
        pan = _pan(rng)
        self.start = _CameraMove(first, size, (1.0, 1.12), pan)
        self.end = _CameraMove(last, size, (1.12, 1.0), (-pan[0], -pan[1]))
        self.frames = frames

    def __call__(self, index: int) -> np.ndarray:
        t = progress(index, self.frames)
        mix = ease((t - 0.12) / 0.76)  # hold briefly on each end so both stills read clearly
        if mix <= 0.0:
            return np.asarray(self.start.at(t))
        if mix >= 1.0:
            return np.asarray(self.end.at(t))
        return np.asarray(Image.blend(self.start.at(t), self.end.at(t), mix))


class Slideshow:
    """Reference images: each gets a camera move, with crossfades between them and the prompt caption."""

    def __init__(
        self,
        images: Sequence[Image.Image],
        prompt: str,
        size: tuple[int, int],
        frames: int,
        fps: int,
        key: bytes,
    ) -> None:
        rng = seeded_rng(key, "slides")
        self.moves = [
            _CameraMove(image, size, (1.0, 1.15) if n % 2 == 0 else (1.15, 1.0), _pan(rng))
            for n, image in enumerate(images)
        ]
        self.span = frames / len(self.moves)
        self.fade = min(0.6 * fps, self.span * 0.4)
        self.caption = prompt_caption(prompt, size)

    def _slide(self, n: int, index: int) -> Image.Image:
        # Each slide's move spans its own time plus half a crossfade on either side.
        start = n * self.span - self.fade / 2
        return self.moves[n].at((index - start) / (self.span + self.fade))

    def __call__(self, index: int) -> np.ndarray:
        n = min(len(self.moves) - 1, int(index // self.span))
        image = self._slide(n, index)
        into_next = index - ((n + 1) * self.span - self.fade / 2)
        from_prev = index - (n * self.span - self.fade / 2)
        if n + 1 < len(self.moves) and into_next > 0:
            image = Image.blend(image, self._slide(n + 1, index), ease(into_next / self.fade))
        elif n > 0 and from_prev < self.fade:
            image = Image.blend(self._slide(n - 1, index), image, ease(from_prev / self.fade))
        frame = np.array(image)
        if self.caption is not None:
            self.caption.apply(frame)
        return frame
