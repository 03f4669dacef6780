"""Ark Seedream image calls (mixed into ``ArkProvider``)."""


class ArkImagesMixin:
    pass
