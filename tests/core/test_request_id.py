"""The request id: a sane client id is kept, anything else is replaced by a fresh one; the current
id belongs to the request (task) that set it."""

from __future__ import annotations

import asyncio
import re

import pytest

from studio.core import request_id
from tests.fresh_interpreter import printed

FRESH = re.compile(r"[0-9a-f]{32}")


@pytest.mark.parametrize("incoming", ["trace-42", "a.b:c_d-e", "0" * 128, "1-5759e988-bd862e3fe1be46a9"])
def test_a_sane_client_id_is_kept(incoming: str) -> None:
    assert request_id.accept(incoming) == incoming


@pytest.mark.parametrize("incoming", [None, "", "two words", "line\nbreak", "x" * 129, "quote\"", "a/b",
                                      "naïve", "semi;colon"])
def test_anything_else_gets_a_fresh_id(incoming: str | None) -> None:
    made = request_id.accept(incoming)
    assert FRESH.fullmatch(made)
    assert made != incoming


def test_fresh_ids_differ_and_are_themselves_kept() -> None:
    made = {request_id.accept(None) for _ in range(50)}
    assert len(made) == 50
    one = made.pop()
    assert request_id.accept(one) == one  # sent back by a client, it survives another hop


async def test_the_current_id_is_the_one_its_own_request_set() -> None:
    async def serve(rid: str, seen: dict[str, str | None]) -> None:
        request_id.current.set(rid)
        await asyncio.sleep(0)  # let the other request run in between
        seen[rid] = request_id.current.get()

    seen: dict[str, str | None] = {}
    await asyncio.gather(serve("first", seen), serve("second", seen))
    assert seen == {"first": "first", "second": "second"}
    assert request_id.current.get() is None  # nothing leaks out of the requests' tasks


def test_the_header_name() -> None:
    assert request_id.HEADER == "x-request-id"


def test_processes_forked_from_one_parent_make_ids_of_their_own() -> None:
    """Workers forked after the module was loaded (a pre-forking server's) make ids of their own.
    The parent is a fresh interpreter: a child forked from the test process would inherit every
    earlier test's threads and native state, which it cannot always clean up (a video scaler's
    own threads, joined in a child that does not have them, hang it)."""
    script = ("import multiprocessing\n"
              "from studio.core import request_id\n"
              "with multiprocessing.get_context('fork').Pool(2) as pool:\n"
              "    made = pool.starmap(request_id.accept, [(None,)] * 8, chunksize=1)\n"
              "made.append(request_id.accept(None))\n"
              "print(len(made), len(set(made)))\n")
    assert printed(script) == ["9", "9"]
