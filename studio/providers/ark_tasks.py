"""Ark Seedance video task calls (mixed into ``ArkProvider``)."""


class ArkTasksMixin:
    pass
