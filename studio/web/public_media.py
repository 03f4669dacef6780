"""The view behind signed public media links (``/m/<token>``; see ``gateway.media.links``).

Files are streamed in chunks, never read whole.
"""

from __future__ import annotations

import asyncio
import time

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from studio.core.errors import NotFound
from studio.gateway.media import links
from studio.models import Asset
from studio.web.files import stream_file

# Outputs are written just after the response that names them; a client quick enough to ask
# before the write lands waits for it, but only while the link is this young: a link to an
# asset that does not exist (deleted, or never made) is answered at once.
ARRIVAL_WAIT = 10.0


async def public_media(request: HttpRequest, token: str) -> HttpResponse:
    try:
        asset_id, age = links.read(token)
    except NotFound as exc:
        raise Http404(exc.message) from None
    deadline = time.monotonic() + max(ARRIVAL_WAIT - age, 0.0)
    asset = await Asset.objects.filter(id=asset_id).afirst()
    while asset is None and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        asset = await Asset.objects.filter(id=asset_id).afirst()
    if asset is None:
        raise Http404("no such media")
    return stream_file(request, asset.file.storage, asset.file.name, asset.bytes, asset.mime,
                       cache_control=f"private, max-age={min(settings.STUDIO_MEDIA_URL_TTL, 86400)}")
