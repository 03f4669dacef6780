"""Deterministic text vectors for the sandbox's embedding models.

Each text becomes hashed features (its words and the character trigrams of each word, so that
inflections and typos still overlap) folded into a fixed number of signed dimensions and scaled
to unit length: the same text always gives the same vector, and texts that share words or word
pieces get a high cosine similarity, as with a real embedding model. An input given as token ids
is folded the same way from its ids and each pair of neighbouring ids: arrays that share tokens
are close.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)
WORD_WEIGHT = 1.0
TRIGRAM_WEIGHT = 0.5


def features(text: str) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        found.append(("w:" + word, WORD_WEIGHT))
        padded = f"#{word}#"
        found += [("t:" + padded[i:i + 3], TRIGRAM_WEIGHT) for i in range(len(padded) - 2)]
    return found


def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    return (number >> 1) % dimensions, (1.0 if number & 1 else -1.0)


def token_features(ids: list[int] | tuple[int, ...]) -> list[tuple[str, float]]:
    found = [(f"k:{token}", WORD_WEIGHT) for token in ids]
    found += [(f"p:{a},{b}", TRIGRAM_WEIGHT) for a, b in zip(ids, ids[1:], strict=False)]
    return found


def vector(text: str, dimensions: int) -> list[float]:
    """The unit-length vector of ``text`` in ``dimensions`` dimensions."""
    return _folded(features(text), dimensions)


def token_vector(ids: list[int] | tuple[int, ...], dimensions: int) -> list[float]:
    """The unit-length vector of the token ids ``ids`` in ``dimensions`` dimensions."""
    return _folded(token_features(ids), dimensions)


def _folded(found: list[tuple[str, float]], dimensions: int) -> list[float]:
    values = np.zeros(dimensions, dtype=np.float64)
    for feature, weight in found:
        index, sign = _slot(feature, dimensions)
        values[index] += sign * weight
    norm = float(np.linalg.norm(values))
    if norm == 0.0:  # no word at all: a fixed direction, still unit length
        values[_slot("empty", dimensions)[0]] = 1.0
        norm = 1.0
    return [round(float(v), 8) for v in values / norm]


def token_count(text: str) -> int:
    return max(1, len(_WORD.findall(text)) * 4 // 3)
