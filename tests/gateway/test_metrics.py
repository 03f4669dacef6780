"""The gateway's Prometheus metrics: each update counts under the right labels, the switch turns
the optional ones off, upstreams are named, and the exposition carries this process's values."""

from __future__ import annotations

import uuid

import pytest
from prometheus_client import REGISTRY

from studio.gateway import metrics, snapshot
from studio.gateway.cost import Usage


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def model() -> str:
    """A model name no other test counts under, so every value starts at zero."""
    return f"metrics-unit-{uuid.uuid4().hex[:8]}"


def test_a_request_is_counted_by_family_model_upstream_and_status(model) -> None:
    metrics.request_done("chat", model, "openai-main", 200, 0.25, 0.05)
    metrics.request_done("chat", model, "openai-main", 200, 0.5, 0.1)
    metrics.request_done("chat", model, "openai-main", 429, 0.01, 0.01)
    assert sample("studio_requests_total", family="chat", model=model, upstream="openai-main", status="200") == 2
    assert sample("studio_requests_total", family="chat", model=model, upstream="openai-main", status="429") == 1
    route = {"family": "chat", "model": model, "upstream": "openai-main"}
    assert sample("studio_request_duration_seconds_count", **route) == 3
    assert sample("studio_request_duration_seconds_sum", **route) == pytest.approx(0.76)
    assert sample("studio_time_to_first_byte_seconds_sum", **route) == pytest.approx(0.16)
    assert sample("studio_request_duration_seconds_bucket", **route, le="0.25") == 2


def test_usage_adds_tokens_by_kind_images_and_video_seconds(model) -> None:
    metrics.used(model, Usage(input_tokens=100, output_tokens=20, cached_tokens=60))
    metrics.used(model, Usage(input_tokens=5, images=[("1K", "auto"), ("1K", "auto")]))
    metrics.used(model, Usage(output_tokens=1290, token_images=1))  # a native image, billed as tokens
    metrics.used(model, Usage(video_seconds=5.0))
    assert sample("studio_tokens_total", model=model, kind="input") == 105
    assert sample("studio_tokens_total", model=model, kind="output") == 1310
    assert sample("studio_tokens_total", model=model, kind="cached") == 60
    assert sample("studio_images_total", model=model) == 3
    assert sample("studio_video_seconds_total", model=model) == 5.0


def test_upstream_failures_retries_and_failovers(model) -> None:
    upstream = model  # a fresh name, used as the upstream's here
    metrics.upstream_failed(upstream, "timeout", tried_next=True)
    metrics.upstream_failed(upstream, "server_error", tried_next=False)
    metrics.failed_over(upstream)
    assert sample("studio_upstream_errors_total", upstream=upstream, kind="timeout") == 1
    assert sample("studio_upstream_errors_total", upstream=upstream, kind="server_error") == 1
    assert sample("studio_upstream_retries_total", upstream=upstream) == 1  # only the one tried elsewhere
    assert sample("studio_upstream_failovers_total", upstream=upstream) == 1


def test_a_finished_video_task_is_counted_with_what_it_made(model) -> None:
    metrics.video_finished(model, "succeeded", Usage(video_seconds=4.0))
    metrics.video_finished(model, "failed", None)
    assert sample("studio_video_tasks_finished_total", model=model, state="succeeded") == 1
    assert sample("studio_video_tasks_finished_total", model=model, state="failed") == 1
    assert sample("studio_video_seconds_total", model=model) == 4.0


def test_open_websockets_go_up_and_down() -> None:
    before = sample("studio_websocket_connections")
    metrics.websocket_opened()
    metrics.websocket_opened()
    metrics.websocket_closed()
    assert sample("studio_websocket_connections") == before + 1
    metrics.websocket_closed()
    assert sample("studio_websocket_connections") == before


def test_turned_off_nothing_optional_is_counted(model, settings) -> None:
    settings.STUDIO_METRICS = False
    before = sample("studio_websocket_connections")
    metrics.upstream_failed(model, "timeout", tried_next=True)
    metrics.failed_over(model)
    metrics.video_finished(model, "succeeded", Usage(video_seconds=4.0))
    metrics.websocket_opened()
    assert sample("studio_upstream_errors_total", upstream=model, kind="timeout") == 0
    assert sample("studio_upstream_retries_total", upstream=model) == 0
    assert sample("studio_upstream_failovers_total", upstream=model) == 0
    assert sample("studio_video_tasks_finished_total", model=model, state="succeeded") == 0
    assert sample("studio_video_seconds_total", model=model) == 0
    assert sample("studio_websocket_connections") == before
    assert metrics.enabled() is False


def test_upstreams_are_named_from_the_snapshot_and_remembered(catalog) -> None:
    assert metrics.upstream_name(None) == ""
    up = next(iter(snapshot.load_now().upstreams.values()))
    assert metrics.upstream_name(up.id) == up.name
    snapshot.invalidate()  # a reload under way: the name is still known
    assert metrics.upstream_name(up.id) == up.name
    assert metrics.upstream_name(987_654_321) == "987654321"  # no such upstream: its id


def test_multiprocess_mode_follows_the_setting(settings, tmp_path) -> None:
    settings.PROMETHEUS_MULTIPROC_DIR = ""
    assert metrics.multiprocess() is False
    settings.PROMETHEUS_MULTIPROC_DIR = str(tmp_path)
    assert metrics.multiprocess() is True


@pytest.mark.django_db
def test_the_exposition_carries_this_process_values(model, settings) -> None:
    settings.PROMETHEUS_MULTIPROC_DIR = ""
    metrics.request_done("images", model, "sandbox", 200, 1.0, 0.5)
    text = metrics.exposition().decode()
    assert (f'studio_requests_total{{family="images",model="{model}",status="200",upstream="sandbox"}} 1.0'
            in text)
    assert "# TYPE studio_video_tasks gauge" in text  # read at scrape time, next to the counters
    assert metrics.CONTENT_TYPE.startswith("text/plain")
