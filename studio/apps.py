from django.apps import AppConfig


class StudioConfig(AppConfig):
    name = "studio"
    verbose_name = "Studio gateway"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Cache invalidation hooks: any change to keys, catalog or upstreams drops the
        # in-process snapshot so the next /v1 request sees it.
        from studio.gateway import snapshot
        from studio.providers.registry import sandbox_modules
        from studio.sandbox.app import application as sandbox

        snapshot.connect_invalidation()
        # The offline vendor cloud imitates every registered vendor.
        sandbox.install(sandbox_modules())

        # Webhooks carry the task in the client's protocol; the inbound layer knows how to spell it.
        from api.video.render import render
        from studio.gateway.video import webhooks

        webhooks.use_renderer(render)
