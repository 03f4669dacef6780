"""The Video page in a real browser: a task from a first frame picked in the gallery, live status
from the in-process worker, playback with seeking, extend from the last frame, a failure's reason."""

from __future__ import annotations

import pytest

from studio.models import VideoTask
from tests.api.video_support import fast_video  # noqa: F401
from tests.web.library_factories import make_image, png

from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]

PLAYS = """async (video) => {
  if (video.readyState < 2) await new Promise((ok, fail) => {
    video.addEventListener("loadeddata", ok, { once: true });
    video.addEventListener("error", () => fail(new Error("the video did not load")), { once: true });
  });
  const duration = video.duration;
  video.currentTime = duration / 2;
  await new Promise((ok) => video.addEventListener("seeked", ok, { once: true }));
  return { readyState: video.readyState, duration, currentTime: video.currentTime };
}"""


@pytest.fixture
def worker_on(settings):
    """The live server starts its in-process worker at startup: request this before live_asgi."""
    settings.STUDIO_INPROCESS_WORKER = True


def choose(page, model: str) -> None:
    page.get_by_label("Model", exact=True).select_option(model)
    page.get_by_label("Resolution").select_option("480p")
    page.get_by_label("Duration (s)").fill("4")


def test_first_frame_to_playback_then_extend(worker_on, page, live_asgi, alice):
    make_image(alice.user, "a red kite", data=png("red", (640, 360)))
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/video/")
    choose(page, "alpha-2.0-fast")
    assert page.get_by_label("Generate audio").is_visible() and not page.get_by_label("Seed").is_visible()
    page.get_by_text("First frame", exact=True).click()
    assert page.get_by_role("button", name="First frame: empty").is_visible()
    page.get_by_role("button", name="Gallery image 1").click()
    assert page.get_by_role("button", name="First frame: chosen (click to clear)").is_visible()
    page.get_by_label("Prompt", exact=True).fill("the kite lifts off")
    page.get_by_role("button", name="Create task").click()

    card = page.locator(".task").first
    card.locator(".badge").wait_for()
    video = page.locator('.task[data-status="succeeded"] video').first
    video.wait_for(timeout=60000)
    played = video.evaluate(PLAYS)
    assert played["readyState"] >= 2 and played["duration"] > 0
    assert abs(played["currentTime"] - played["duration"] / 2) < 0.5
    first = VideoTask.objects.get(prompt="the kite lifts off")
    assert first.status == "succeeded" and first.request["medias"][0]["role"] == "first_frame"
    assert page.locator(".task .spinner").count() == 0  # nothing is left spinning
    page.screenshot(path="test-artifacts/test_video_first_frame_playing.png", full_page=True)

    page.locator(f'.task[data-task="{first.id}"]').get_by_role("button", name="Extend from last frame").click()
    assert f"Extending {first.id}" in page.locator("#video-status").inner_text()
    page.get_by_label("Prompt", exact=True).fill("the kite climbs into the clouds")
    page.get_by_role("button", name="Create task").click()
    page.locator('.task[data-status="succeeded"]').nth(1).wait_for(timeout=60000)
    second = VideoTask.objects.get(prompt="the kite climbs into the clouds")
    assert second.status == "succeeded"
    (media,) = second.request["medias"]
    assert media["role"] == "first_frame" and media["url"].startswith("data:image/png;base64,")
    assert page.locator(".task").first.get_attribute("data-task") == second.id
    played = page.locator(f'.task[data-task="{second.id}"] video').evaluate(PLAYS)
    assert played["readyState"] >= 2 and played["duration"] > 0

    # the finished video lives in the gallery too, and plays there
    page.locator(f'.task[data-task="{second.id}"]').get_by_role("link", name="In gallery").click()
    page.wait_for_url(f"**/assets/{second.video_id}/")
    played = page.locator(".detail video").evaluate(PLAYS)
    assert played["readyState"] >= 2 and played["duration"] > 0


def test_failed_video_shows_the_upstream_reason(worker_on, page, live_asgi, alice):
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/video/")
    choose(page, "alpha-2.0-fast")
    page.get_by_label("Prompt", exact=True).fill("a storm at sea [fail]")
    page.get_by_role("button", name="Create task").click()
    failed = page.locator('.task[data-status="failed"]')
    failed.wait_for(timeout=60000)
    task = VideoTask.objects.get(prompt="a storm at sea [fail]")
    assert task.error_code and task.error_message
    alert = failed.get_by_role("alert")
    assert alert.locator("code").inner_text() == task.error_code
    assert task.error_message in alert.inner_text()
    assert failed.locator(".spinner").count() == 0

    page.get_by_label("Prompt", exact=True).fill("")  # the engine's rule, named by its field
    page.get_by_role("button", name="Create task").click()
    page.locator("#video-status.error").wait_for()
    assert page.locator("#video-status").inner_text().startswith("prompt")
