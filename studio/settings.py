"""Settings: everything from the environment, with embedded defaults that need nothing installed.

With no environment at all the studio runs on SQLite, the in-memory channel layer, media on local
disk, the in-process worker and the built-in sandbox upstream. ``DATABASE_URL`` switches to
PostgreSQL, ``REDIS_URL`` to the Redis channel layer and cache.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return [v.strip() for v in value.split(",") if v.strip()] if value else default


# A fixed development key keeps sessions and signed URLs stable across restarts of a local
# install; any real deployment sets SECRET_KEY.
SECRET_KEY = env("SECRET_KEY", "studio-gateway-local-development-key-change-me-in-production")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
PORT = int(env("PORT", "8000"))
PUBLIC_BASE_URL = env("PUBLIC_BASE_URL", f"http://127.0.0.1:{PORT}").rstrip("/")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [PUBLIC_BASE_URL])
STUDIO_ADMIN_PASSWORD = env("STUDIO_ADMIN_PASSWORD", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "studio.apps.StudioConfig",
]

# The studio's pages. /v1 is served by a separate handler without these (see studio/asgi.py).
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# /v1 needs none of the session, CSRF or message machinery: each request carries its key.
API_MIDDLEWARE: list[str] = []

ROOT_URLCONF = "studio.urls"
ASGI_APPLICATION = "studio.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        # Background writers (recorder, worker) keep their connection between batches.
        conn_max_age=int(env("DB_CONN_MAX_AGE", "60")), conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the in-process worker write while pages read.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", "timeout": 20}
    )
    # Tests use a file too: an in-memory database shared between threads locks whole tables and
    # ignores the busy timeout, while a file in WAL mode lets the live server's threads wait.
    DATABASES["default"].setdefault("TEST", {})["NAME"] = env(
        "SQLITE_TEST_NAME", str(Path(tempfile.gettempdir()) / f"studio-test-{os.getpid()}.sqlite3")
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise serves from finders; it only needs the folder
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(env("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "/media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Large native-image bodies (several reference images, 4K edits) are normal here.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(env("DATA_UPLOAD_MAX_MEMORY_SIZE", str(64 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

# --- the gateway -------------------------------------------------------------------------------
# Seconds the in-process caches of keys, catalog and upstreams stay fresh before a background
# refresh; changes made in this process invalidate them at once.
STUDIO_CACHE_TTL = float(env("STUDIO_CACHE_TTL", "5"))
STUDIO_INPROCESS_WORKER = env_bool("STUDIO_INPROCESS_WORKER", True)
# The base URL at which the built-in sandbox vendor cloud is reached in-process.
STUDIO_SANDBOX_BASE_URL = "http://sandbox.studio.internal"
STUDIO_UPSTREAM_TIMEOUT = float(env("STUDIO_UPSTREAM_TIMEOUT", "300"))
STUDIO_UPSTREAM_CONNECT_TIMEOUT = float(env("STUDIO_UPSTREAM_CONNECT_TIMEOUT", "10"))
# Which HTTP transport carries upstream calls: "aiohttp" (measured cheaper per request) or "httpx".
STUDIO_UPSTREAM_TRANSPORT = env("STUDIO_UPSTREAM_TRANSPORT", "aiohttp")
# Media waiting to be written by the background recorder beyond which new requests wait.
STUDIO_RECORDER_MAX_PENDING_BYTES = int(env("STUDIO_RECORDER_MAX_PENDING_BYTES", str(128 * 1024 * 1024)))
# Lifetime of the unguessable public URLs handed out for stored outputs (response_format=url).
STUDIO_MEDIA_URL_TTL = int(env("STUDIO_MEDIA_URL_TTL", str(24 * 3600)))
# Allow client-supplied URLs that resolve to private addresses (only for closed networks).
STUDIO_FETCH_ALLOW_PRIVATE = env_bool("STUDIO_FETCH_ALLOW_PRIVATE", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "studio": {"handlers": ["console"], "level": env("STUDIO_LOG_LEVEL", "INFO")},
        "api": {"handlers": ["console"], "level": env("STUDIO_LOG_LEVEL", "INFO")},
    },
}
