"""A frame too big to hold, relayed as it arrives.

A native answer with a 4K picture is one JSON frame of 10-20 MB, nearly all of it one base64
string. Read whole before it is handed on, it is copied into one growing buffer, and the client
waits for its last byte before it gets the first. Opened instead, it travels in three kinds of
part, in this order, each as soon as it has come:

- :class:`FrameHead`: the frame's JSON up to and including the opening quote of its big string;
- :class:`StringPiece`: the string's contents, piece by piece, as the upstream sent them;
- :class:`FrameTail`: from the string's closing quote to the frame's end (the usage, the model's
  name: what a gateway changes in an answer lives here).

The parts joined are the frame, byte for byte. A stream of frames may mix whole frames
(``bytes``) and the parts of opened ones.
"""

from __future__ import annotations

from dataclasses import dataclass

Buffer = bytes | bytearray


@dataclass(slots=True, frozen=True)
class FrameHead:
    data: bytes


@dataclass(slots=True, frozen=True)
class StringPiece:
    data: bytes


@dataclass(slots=True, frozen=True)
class FrameTail:
    data: Buffer


FramePart = FrameHead | StringPiece | FrameTail
