"""Volcengine Ark protocol: Seedream images (``ark/images.py``) and Seedance video tasks (``ark/tasks.py``)."""

from __future__ import annotations

import re

from studio.providers.ark.errors import map_error
from studio.providers.ark.images import ArkImagesMixin
from studio.providers.ark.tasks import ArkTasksMixin
from studio.providers.base import BaseUrlRule, Provider
from studio.providers.contracts import Capability


class ArkProvider(ArkImagesMixin, ArkTasksMixin, Provider):
    protocol = "ark"
    capabilities = frozenset({Capability.IMAGES, Capability.VIDEO_TASKS})
    # ``https://ark.cn-beijing.volces.com/api/v3`` or the bare host.
    base_url = BaseUrlRule("/api/v3", re.compile(r"/api/v3$"))
    error_mapping = staticmethod(map_error)

    def check_path(self) -> str:
        return "/contents/generations/tasks?page_num=1&page_size=1"
