"""The sandbox video's soundtrack: a quiet synthesised pad, for requests that ask for audio.

Hosted models return clips with sound when asked; the stand-in must too, so players show an
audio track and callers exercise their audio paths. A seeded chord progression with a soft
chime at each change is pleasant enough to leave on and costs a few milliseconds of numpy.
"""

from __future__ import annotations

import math

import numpy as np

AUDIO_RATE = 48_000

_ROOTS_HZ = (130.81, 146.83, 164.81, 174.61, 196.00)  # C3..G3: warm without getting muddy
# Chords as semitones above the root; progressions every listener has heard a thousand times.
_PROGRESSIONS: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((0, 4, 7), (7, 11, 14), (9, 12, 16), (5, 9, 12)),
    ((0, 4, 7), (9, 12, 16), (5, 9, 12), (7, 11, 14)),
    ((9, 12, 16), (5, 9, 12), (0, 4, 7), (7, 11, 14)),
    ((0, 4, 7, 11), (5, 9, 12, 16), (2, 5, 9, 12), (7, 11, 14, 17)),
)


def _smoothstep(values: np.ndarray) -> np.ndarray:
    values = np.clip(values, 0.0, 1.0)
    return values * values * (3.0 - 2.0 * values)


def _voice(t: np.ndarray, frequency: float) -> np.ndarray:
    """A soft organ-like tone: the fundamental with two quiet harmonics."""
    phase = math.tau * frequency * t
    return np.sin(phase) + 0.3 * np.sin(2 * phase) + 0.1 * np.sin(3 * phase)


def soundtrack(rng: np.random.Generator, seconds: float, rate: int = AUDIO_RATE) -> np.ndarray:
    """A stereo pad cycling through a chord progression chosen by the digest, faded in and out.

    ``rng`` (seeded from the prompt+seed digest) picks the root and progression, so the same
    request always sounds the same. Returns float32 samples shaped (2, n) in [-1, 1], the layout
    the AAC encoder wants (fltp).
    """
    root = float(rng.choice(_ROOTS_HZ))
    progression = _PROGRESSIONS[int(rng.integers(len(_PROGRESSIONS)))]
    total = max(1, round(seconds * rate))
    t = np.arange(total, dtype=np.float64) / rate
    chords = max(1, round(seconds / 2.5))
    span = seconds / chords
    fade = min(0.5, span / 2)
    out = np.zeros((2, total))
    for n in range(chords):
        notes = progression[n % len(progression)]
        lo, hi = max(0, int((n * span - fade) * rate)), min(total, int(((n + 1) * span + fade) * rate) + 1)
        part = t[lo:hi]
        # Complementary smoothsteps at each boundary sum to one, so chord changes never dip or swell.
        rise = 1.0 if n == 0 else _smoothstep((part - n * span) / fade + 0.5)
        fall = 1.0 if n == chords - 1 else 1.0 - _smoothstep((part - (n + 1) * span) / fade + 0.5)
        frequencies = [root * 2 ** (s / 12) for s in notes] + [root * 2 ** ((notes[0] - 12) / 12)]
        chime = _chime(part - n * span, root * 2 ** (notes[-1] / 12 + 1))
        for channel, detune in enumerate((0.9986, 1.0014)):  # slight detune between ears for width
            pad = sum(_voice(part, f * detune) for f in frequencies)
            out[channel, lo:hi] += (pad + chime) * rise * fall
    for channel, phase in enumerate((0.0, 1.7)):
        out[channel] *= 1.0 + 0.12 * np.sin(math.tau * 0.3 * t + phase)  # slow swell so the pad breathes
    envelope = _smoothstep(t / min(0.6, seconds / 4)) * _smoothstep((seconds - t) / min(1.0, seconds / 3))
    out *= envelope
    peak = float(np.abs(out).max())
    if peak > 0:
        out *= 0.3 / peak  # about -10 dBFS: present but never loud
    return np.ascontiguousarray(out, dtype=np.float32)


def _chime(t: np.ndarray, frequency: float) -> np.ndarray:
    """A decaying bell note at each chord change; the 5 ms attack avoids a click."""
    started = np.clip(t / 0.005, 0.0, 1.0)
    return 1.2 * started * np.exp(-np.maximum(t, 0.0) * 2.5) * np.sin(math.tau * frequency * t)
