"""Static files under the async handler: WhiteNoise's answers (whole file, range, not modified),
without Django's warning about synchronous iterators, and pages passing on without a thread."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import pytest
from django.http import HttpResponse
from django.test import AsyncClient, RequestFactory

from studio.static_files import StaticFilesMiddleware

FAVICON = Path(__file__).resolve().parent.parent / "static" / "studio" / "favicon.svg"
URL = "/static/studio/favicon.svg"


@pytest.fixture
def client() -> AsyncClient:
    return AsyncClient()


async def test_a_static_file_is_answered_whole_with_whitenoises_headers(client: AsyncClient) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns when it must read a synchronous iterator
        response = await client.get(URL)
    assert response.status_code == 200 and response.content == FAVICON.read_bytes()
    assert response["Content-Type"].startswith("image/svg+xml")
    assert int(response["Content-Length"]) == FAVICON.stat().st_size
    assert response["ETag"] and "max-age" in response["Cache-Control"]

    unchanged = await client.get(URL, headers={"If-None-Match": response["ETag"]})
    assert unchanged.status_code == 304 and unchanged.content == b""

    part = await client.get(URL, headers={"Range": "bytes=0-9"})
    assert part.status_code == 206 and part.content == FAVICON.read_bytes()[:10]
    assert part["Content-Range"] == f"bytes 0-9/{FAVICON.stat().st_size}"


async def test_a_compressed_variant_goes_to_a_client_that_takes_it(client: AsyncClient, tmp_path, settings) -> None:
    import gzip

    (tmp_path / "app.js").write_text("console.log('studio');\n" * 200)
    (tmp_path / "app.js.gz").write_bytes(gzip.compress((tmp_path / "app.js").read_bytes()))
    settings.WHITENOISE_USE_FINDERS = False
    settings.STATIC_ROOT = tmp_path
    middleware = StaticFilesMiddleware(_passed_on, settings=settings)
    request = RequestFactory().get("/static/app.js", headers={"Accept-Encoding": "gzip"})
    response = await middleware(request)
    assert response["Content-Encoding"] == "gzip" and gzip.decompress(response.content) == (
        tmp_path / "app.js").read_bytes()


async def _passed_on(request) -> HttpResponse:
    return HttpResponse(str(threading.get_ident()))


async def test_any_other_request_passes_on_in_the_event_loops_thread() -> None:
    middleware = StaticFilesMiddleware(_passed_on)
    response = await middleware(RequestFactory().get("/gallery/"))
    assert response.content == str(threading.get_ident()).encode()


def test_under_a_synchronous_handler_it_is_whitenoise_as_it_is() -> None:
    middleware = StaticFilesMiddleware(lambda request: HttpResponse(b"page"))
    assert middleware(RequestFactory().get("/gallery/")).content == b"page"
    answer = middleware(RequestFactory().get(URL))
    assert b"".join(answer.streaming_content) == FAVICON.read_bytes()
