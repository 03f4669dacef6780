from django.apps import AppConfig


class StudioConfig(AppConfig):
    name = "studio"
    verbose_name = "Studio gateway"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Cache invalidation hooks: any change to keys, catalog or upstreams drops the
        # in-process snapshot so the next /v1 request sees it.
        from studio.gateway import snapshot

        snapshot.connect_invalidation()
