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
from django.core.exceptions import ImproperlyConfigured

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


# A local install runs without any environment: no SECRET_KEY means development, with DEBUG on
# and a fixed key that keeps sessions and signed URLs stable across restarts. A deployment sets
# SECRET_KEY (and DEBUG is then off unless asked for); DEBUG off with the public development key
# is refused, since anyone could forge sessions, signed media links and the credential key.
DEVELOPMENT_SECRET_KEY = "studio-gateway-local-development-key-change-me-in-production"
SECRET_KEY = env("SECRET_KEY", DEVELOPMENT_SECRET_KEY)
DEBUG = env_bool("DEBUG", SECRET_KEY == DEVELOPMENT_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEVELOPMENT_SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: with DEBUG off the gateway refuses the public development key. Set SECRET_KEY "
        "to a long random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'), or DEBUG=1 for "
        "a local development run."
    )
# Older keys that still verify sessions and signed links while a new SECRET_KEY rolls out.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
PORT = int(env("PORT", "8000"))
PUBLIC_BASE_URL = env("PUBLIC_BASE_URL", f"http://127.0.0.1:{PORT}").rstrip("/")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [PUBLIC_BASE_URL])

# HTTPS behind a TLS-terminating proxy: each one off by default (a local install speaks plain
# HTTP), set from the environment in production (README, "Run in production").
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Probes and scrapers on the internal network speak plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = int(env("SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
# "X-Forwarded-Proto,https": the header a trusted proxy sets on HTTPS requests, and its value.
_proxy_ssl_header = env_list("SECURE_PROXY_SSL_HEADER", [])
if _proxy_ssl_header:
    if len(_proxy_ssl_header) != 2:
        raise ImproperlyConfigured("SECURE_PROXY_SSL_HEADER is 'Header-Name,value', e.g. 'X-Forwarded-Proto,https'")
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_ssl_header[0].upper().replace("-", "_"), _proxy_ssl_header[1])
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
    "studio.static_files.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# /v1 needs none of the session, CSRF or message machinery: each request carries its key.
API_MIDDLEWARE: list[str] = ["api.spend_headers.SpendHeadersMiddleware", "api.observe.ObserveMiddleware",
                             "api.body_limit.BodyLimitMiddleware"]

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
                "studio.web.budget_status.budget_status",
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
    # WAL lets the in-process worker write while pages read. A transaction takes the write lock when
    # it begins (IMMEDIATE), so a writer waits up to the timeout for another one: a deferred
    # transaction that read first and then writes after another connection committed fails at once
    # with "database is locked", whatever the timeout.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", "timeout": 20,
         "transaction_mode": "IMMEDIATE"}
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
    # Django's file system storage, each file synced to the disk and dropped from the cache (core/file_storage.py)
    "default": {"BACKEND": "studio.core.file_storage.MediaFileStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
STUDIO_MEDIA_WRITE_THROUGH = env_bool("STUDIO_MEDIA_WRITE_THROUGH", True)
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Large native-image bodies (several reference images, 4K edits) are normal here.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(env("DATA_UPLOAD_MAX_MEMORY_SIZE", str(64 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

# --- the gateway -------------------------------------------------------------------------------
# Seconds the in-process caches of keys, catalog and upstreams stay fresh before a background
# check of their revision number (a reload when it moved); changes made in this process
# invalidate them at once. They are loaded again at least every STUDIO_SNAPSHOT_MAX_AGE seconds.
STUDIO_CACHE_TTL = float(env("STUDIO_CACHE_TTL", "5"))
STUDIO_SNAPSHOT_MAX_AGE = float(env("STUDIO_SNAPSHOT_MAX_AGE", "60"))
STUDIO_INPROCESS_WORKER = env_bool("STUDIO_INPROCESS_WORKER", True)
# The base URL at which the built-in sandbox vendor cloud is reached in-process.
STUDIO_SANDBOX_BASE_URL = "http://sandbox.studio.internal"
STUDIO_UPSTREAM_TIMEOUT = float(env("STUDIO_UPSTREAM_TIMEOUT", "300"))
STUDIO_UPSTREAM_CONNECT_TIMEOUT = float(env("STUDIO_UPSTREAM_CONNECT_TIMEOUT", "10"))
# Per family, seconds an upstream call may take: to connect, to the first byte of the answer
# (its status line), and in all (the answer's last byte included). Each is answered with the
# family's timeout error, counted by the breaker, and failed over while nothing was sent.
# Environment: STUDIO_<FAMILY>_CONNECT_TIMEOUT, STUDIO_<FAMILY>_FIRST_BYTE_TIMEOUT, STUDIO_<FAMILY>_DEADLINE.
STUDIO_UPSTREAM_DEADLINES = {
    family: {
        "connect": float(env(f"STUDIO_{family.upper()}_CONNECT_TIMEOUT", str(STUDIO_UPSTREAM_CONNECT_TIMEOUT))),
        "first_byte": float(env(f"STUDIO_{family.upper()}_FIRST_BYTE_TIMEOUT", first_byte)),
        "total": float(env(f"STUDIO_{family.upper()}_DEADLINE", total)),
    }
    for family, first_byte, total in (("text", "60", "600"), ("images", "120", "600"), ("video", "60", "120"))
}
# Which HTTP transport carries upstream calls: "aiohttp" (measured cheaper per request) or "httpx".
STUDIO_UPSTREAM_TRANSPORT = env("STUDIO_UPSTREAM_TRANSPORT", "aiohttp")
# Media waiting to be written by the background recorder beyond which new requests wait. Below a
# 4K frame (10-20 MB), so a stream of 4K images holds one frame at a time, not a backlog of them.
STUDIO_RECORDER_MAX_PENDING_BYTES = int(env("STUDIO_RECORDER_MAX_PENDING_BYTES", str(8 * 1024 * 1024)))
# Milliseconds the recorder may wait for more /v1 usage rows to share one write (0: write each at once).
STUDIO_RECORDER_LINGER_MS = float(env("STUDIO_RECORDER_LINGER_MS", "100"))
# Freed memory a web process keeps for the next big frames while it is busy (glibc only; 0: the
# allocator's defaults). 16 concurrent 4K streams work in about 450 MB.
STUDIO_MALLOC_KEEP_BYTES = int(env("STUDIO_MALLOC_KEEP_BYTES", str(1024 * 1024 * 1024)))
# Seconds without a request in flight before a web process gives the memory it keeps back.
STUDIO_MALLOC_IDLE_SECONDS = float(env("STUDIO_MALLOC_IDLE_SECONDS", "1.0"))
# Seconds before each new try of a record that could not be written; after the last, it is logged as lost.
STUDIO_RECORDER_RETRY_DELAYS = tuple(float(s) for s in env("STUDIO_RECORDER_RETRY_DELAYS", "1,5,30,120,600").split(","))
# Days a stored response (``POST /v1/responses`` without ``store: false``) is kept, as the vendor
# keeps them; older ones answer as never stored and the worker deletes them.
STUDIO_RESPONSE_RETENTION_DAYS = float(env("STUDIO_RESPONSE_RETENTION_DAYS", "30"))
# Lifetime of the unguessable public URLs handed out for stored outputs (response_format=url).
STUDIO_MEDIA_URL_TTL = int(env("STUDIO_MEDIA_URL_TTL", str(24 * 3600)))
# Allow client-supplied URLs that resolve to private addresses (only for closed networks).
STUDIO_FETCH_ALLOW_PRIVATE = env_bool("STUDIO_FETCH_ALLOW_PRIVATE", False)

# The video engine: seconds before a new task's first poll, a factor on the poll schedule
# (2, 3, 5, 8, 12 s), the age past which an unfinished task is expired, how long after creation an
# upstream's "not found" means "not visible yet", a worker's lease on a task it polls, whether
# upstreams are asked for callbacks, the largest video mirrored and the time allowed to copy it,
# and a factor on the pauses between client webhook retries (1, 4, 16, 60 s).
STUDIO_VIDEO_FIRST_POLL = float(env("STUDIO_VIDEO_FIRST_POLL") or 2.0)
STUDIO_VIDEO_POLL_SCALE = float(env("STUDIO_VIDEO_POLL_SCALE") or 1.0)
STUDIO_VIDEO_MAX_TASK_AGE = float(env("STUDIO_VIDEO_MAX_TASK_AGE") or 259200.0)
STUDIO_VIDEO_NOT_FOUND_GRACE = float(env("STUDIO_VIDEO_NOT_FOUND_GRACE") or 120.0)
STUDIO_VIDEO_UNREADABLE_POLLS = int(env("STUDIO_VIDEO_UNREADABLE_POLLS") or 5)
STUDIO_VIDEO_LEASE_SECONDS = float(env("STUDIO_VIDEO_LEASE_SECONDS") or 60.0)
STUDIO_VIDEO_CALLBACKS = env("STUDIO_VIDEO_CALLBACKS", "1").strip().lower() in ("1", "true", "yes", "on")
STUDIO_VIDEO_MIRROR_MAX_BYTES = int(float(env("STUDIO_VIDEO_MIRROR_MAX_BYTES") or 512 * 1024 * 1024))
STUDIO_VIDEO_MIRROR_TIMEOUT = float(env("STUDIO_VIDEO_MIRROR_TIMEOUT") or 120.0)
STUDIO_VIDEO_WEBHOOK_BACKOFF = float(env("STUDIO_VIDEO_WEBHOOK_BACKOFF") or 1.0)

# The sandbox: the pause between its streamed chunks (words: a fifth of it), how long it takes to
# make a video, and how long a render stays claimed without renewal (after which another process
# takes over the render of one that died).
STUDIO_SANDBOX_DELAY = float(env("STUDIO_SANDBOX_DELAY", "0.15"))
STUDIO_SANDBOX_VIDEO_SECONDS = float(env("STUDIO_SANDBOX_VIDEO_SECONDS", "4"))
STUDIO_SANDBOX_RENDER_LEASE = float(env("STUDIO_SANDBOX_RENDER_LEASE", "30"))

# Where the shared rate-limit and budget counters live in Redis (names start with this).
STUDIO_COUNTER_PREFIX = env("STUDIO_COUNTER_PREFIX", "studio:spend:")
# Seconds a process admits calls from the room it leased of those counters before it gives the
# rest back: longer means fewer round trips to Redis, shorter that processes see each other's
# calls sooner (a lease also ends when its room, at most 256 calls' worth, is used).
STUDIO_COUNTER_LEASE_SECONDS = float(env("STUDIO_COUNTER_LEASE_SECONDS", "1"))

# Upstream credentials are encrypted with these Fernet keys (comma-separated; the first encrypts,
# all decrypt; ``manage.py rotate_credentials`` moves every credential to the first). Unset: a
# key derived from SECRET_KEY.
STUDIO_CREDENTIAL_KEYS = env_list("STUDIO_CREDENTIAL_KEYS", [])

# --- operations: health, metrics, logs -------------------------------------------------------------
# A healthy upstream's last success is written (to its row, and the shared breaker state in Redis)
# at most this often per process, in seconds: a steady stream of successes writes nothing more.
STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS = float(env("STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS", "10"))
# /readyz wants a worker heartbeat at most this old (seconds).
STUDIO_READY_WORKER_SECONDS = float(env("STUDIO_READY_WORKER_SECONDS", "30"))
# Prometheus metrics at /metrics; with a token it wants "Authorization: Bearer <token>", without
# one it answers loopback clients only. PROMETHEUS_MULTIPROC_DIR (an empty folder shared by the
# processes of a host) sums the metrics of several processes.
STUDIO_METRICS = env_bool("STUDIO_METRICS", True)
# Seconds at most between two hand-overs of a process's request counts to the metrics (a scrape
# of that process hands them over first; in multiprocess mode the others' scrapes wait for it).
STUDIO_METRICS_INTERVAL = float(env("STUDIO_METRICS_INTERVAL", "1"))
if not STUDIO_METRICS_INTERVAL > 0:  # 0 would hand over in a loop without a pause
    raise ImproperlyConfigured("STUDIO_METRICS_INTERVAL is a number of seconds above 0, e.g. 1")
STUDIO_METRICS_TOKEN = env("STUDIO_METRICS_TOKEN", "")
# prometheus-client reads the variable itself too (where each process writes its values).
PROMETHEUS_MULTIPROC_DIR = env("PROMETHEUS_MULTIPROC_DIR", "")
if PROMETHEUS_MULTIPROC_DIR:
    Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
# One JSON line per /v1 request on the "studio.requests" logger; prompts only when asked for. The
# lines of an event loop are written together, this many seconds after the first of them.
STUDIO_REQUEST_LOG = env_bool("STUDIO_REQUEST_LOG", True)
STUDIO_REQUEST_LOG_BATCH_SECONDS = float(env("STUDIO_REQUEST_LOG_BATCH_SECONDS", "0.05"))
STUDIO_LOG_PROMPTS = env_bool("STUDIO_LOG_PROMPTS", False)
# "json": every log record as one JSON object per line; "plain" (default): readable text.
STUDIO_LOG_FORMAT = env("STUDIO_LOG_FORMAT", "plain")
_log_level = env("STUDIO_LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "studio.core.logs.JsonFormatter"},
        "line": {"()": "studio.core.logs.MessageFormatter"},  # the request log's lines are JSON already
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler",
                    "formatter": "json" if STUDIO_LOG_FORMAT == "json" else "plain"},
        "requests": {"class": "studio.core.logs.BatchedLineHandler", "formatter": "line",
                     "delay": STUDIO_REQUEST_LOG_BATCH_SECONDS},
    },
    "loggers": {
        "studio": {"handlers": ["console"], "level": _log_level},
        "api": {"handlers": ["console"], "level": _log_level},
        "studio.requests": {"handlers": ["requests"], "level": "INFO", "propagate": False},
    },
}
if STUDIO_LOG_FORMAT == "json":
    LOGGING["root"] = {"handlers": ["console"], "level": "WARNING"}
    for _name in ("django", "uvicorn", "uvicorn.error", "uvicorn.access"):
        LOGGING["loggers"][_name] = {"handlers": ["console"], "level": "INFO", "propagate": False}

# --- several processes: Redis connections, shared gateway state, object storage ----------------
# channels-redis waits for messages with a blocking pop of up to 5 s; redis-py's default 5 s
# socket timeout would cut that wait and drop every idle WebSocket. The read timeout stays above
# the pop, keepalive and a periodic health check keep hours-idle pooled connections usable.
REDIS_CONNECTION_OPTIONS = {
    "socket_timeout": float(env("REDIS_SOCKET_TIMEOUT", "30")),
    "socket_connect_timeout": 5.0,
    "socket_keepalive": True,
    "health_check_interval": 25,
}
if REDIS_URL:
    CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = [{"address": REDIS_URL, **REDIS_CONNECTION_OPTIONS}]
    CACHES["default"]["OPTIONS"] = dict(REDIS_CONNECTION_OPTIONS)
# Breaker state and upstream health: in Redis when there is one (every process agrees), else
# in this process. Config changes are announced on this pub/sub channel.
STUDIO_REDIS_PREFIX = env("STUDIO_REDIS_PREFIX", "studio")

# Object storage: with STUDIO_S3_BUCKET every stored file (assets, thumbnails, mirrored videos,
# sandbox files) goes to S3-compatible storage; the credentials come from AWS_ACCESS_KEY_ID /
# AWS_SECRET_ACCESS_KEY as boto3 reads them. Files are still served by the gateway, with the
# same access checks and HTTP Range (see studio/web/files.py).
STUDIO_S3_BUCKET = env("STUDIO_S3_BUCKET", "")
if STUDIO_S3_BUCKET:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": STUDIO_S3_BUCKET,
            "endpoint_url": env("STUDIO_S3_ENDPOINT_URL", "") or None,
            "region_name": env("STUDIO_S3_REGION", "") or None,
            "addressing_style": "path" if env("STUDIO_S3_ENDPOINT_URL", "") else None,
            "file_overwrite": False,
            "default_acl": None,
            "querystring_auth": True,
        },
    }
