# The studio gateway: one image for the web processes and the worker (see compose.yaml).
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
WORKDIR /app
COPY pyproject.toml README.md ./
COPY studio ./studio
COPY api ./api
RUN /opt/venv/bin/pip install -e .

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DEBUG=0 \
    STATIC_ROOT=/app/staticfiles \
    MEDIA_ROOT=/app/media \
    PROMETHEUS_MULTIPROC_DIR=/run/prometheus
RUN groupadd --system --gid 10001 studio \
    && useradd --system --uid 10001 --gid studio --home-dir /app --shell /usr/sbin/nologin studio
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
COPY manage.py ./
COPY templates ./templates
COPY static ./static
# Static files are collected (and compressed) once, at build; the key is only for this step.
RUN SECRET_KEY=collectstatic-only-never-used-to-serve-anything-0123456789 python manage.py collectstatic --no-input -v 0 \
    && mkdir -p /app/media /run/prometheus && chown studio:studio /app/media /run/prometheus
USER studio
EXPOSE 8000
# Web: the default command. Worker: python manage.py run_worker (compose.yaml runs both).
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
