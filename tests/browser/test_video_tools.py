"""The Video page in a real browser, as a designer uses it on a 1280×900 desktop and a 390×844 phone:
a model by name, a preset, first frame picked in the gallery dialog (or uploaded), the expected cost,
progress against the usual time, playback with a poster frame and the cost charged, extend from the
last frame, a failure's reason, and the raw fields kept in collapsed "Advanced" panels. No console
errors, no sideways scroll on the phone; screenshots in test-artifacts/."""

from __future__ import annotations

import re

import pytest

from studio.models import VideoTask
from tests.api.video.video_support import fast_video  # noqa: F401
from tests.browser.conftest import DESKTOP, PHONE, no_sideways_scroll, open_page, shot, sign_in
from tests.web.library_factories import make_image, png

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
MONEY = re.compile(r"\$\d+(\.\d+)?")

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
POSTER_LOADS = """async (src) => {
  const image = new Image();
  image.src = src;
  await image.decode();
  return image.naturalWidth;
}"""


@pytest.fixture
def worker_on(settings):
    """The live server starts its in-process worker at startup: request this before live_asgi."""
    settings.STUDIO_INPROCESS_WORKER = True


@pytest.fixture
def slow_video(fast_video, settings):  # noqa: F811 - after it, to override its pace
    """Sandbox tasks take several seconds, long enough to watch their progress."""
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 8


def chip(page, group: str, text: str):
    return page.locator(f"#{group} label", has_text=text)


def test_designer_makes_a_video_from_a_gallery_frame_on_desktop(worker_on, slow_video, browser, request,
                                                                  live_asgi, alice):
    make_image(alice.user, "a red kite", data=png("red", (640, 360)))
    page, errors = open_page(browser, request, DESKTOP)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/video/")
    model = page.get_by_label("Model", exact=True)
    model.select_option("alpha-2.0-fast")
    assert model.locator("option:checked").inner_text() == "Alpha 2.0 Fast"  # a name, not an id
    card_text = page.locator("#video-model-card").inner_text()
    assert "sound" in card_text and "per second" in card_text
    # Only what the model offers: no 1080p on this one, and the Advanced panel starts collapsed.
    assert chip(page, "video-resolutions", "1080p").count() == 0
    assert not page.get_by_label("Seed").is_visible()
    assert not page.locator("#video-advanced").evaluate("d => d.open")

    chip(page, "video-presets", "Social story").click()
    assert page.locator("input[name=ratio]:checked").input_value() == "9:16"
    assert page.locator("input[name=resolution]:checked").input_value() == "720p"
    chip(page, "video-resolutions", "480p").click()
    page.get_by_label("Duration").fill("4")
    assert page.locator("#video-duration-out").inner_text() == "4 s"
    estimate = page.locator("#video-estimate").inner_text()
    assert MONEY.search(estimate) and "usually ready in about" in estimate

    page.get_by_text("First frame", exact=True).click()
    page.get_by_role("button", name="First frame: choose an image").click()
    dialog = page.locator("#video-picker-dialog[open]")
    dialog.wait_for()
    assert dialog.locator("img").first.evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    shot(page, "picker-desktop", prefix="video")
    dialog.get_by_role("button", name="Gallery image 1").click()
    dialog.wait_for(state="hidden")
    assert page.get_by_role("button", name="First frame: chosen (click to change)").is_visible()
    page.get_by_label("Prompt", exact=True).fill("the kite lifts off")
    page.get_by_role("button", name="Create video").click()

    card = page.locator(".task").first
    bar = card.get_by_role("progressbar")
    bar.wait_for(timeout=10000)
    assert re.search(r"about .* left|longer than usual", card.locator(".progress-text").inner_text())
    assert card.locator(".facts").inner_text().startswith("9:16 · 4 s · 480p")
    assert "≈ $" in card.locator(".facts .cost").inner_text()  # the expected cost while it runs
    shot(page, "progress-desktop", prefix="video")
    video = page.locator('.task[data-status="succeeded"] video').first
    video.wait_for(timeout=60000)
    played = video.evaluate(PLAYS)
    assert played["readyState"] >= 2 and played["duration"] > 0
    assert abs(played["currentTime"] - played["duration"] / 2) < 0.5
    first = VideoTask.objects.get(prompt="the kite lifts off")
    assert first.status == "succeeded" and first.request["medias"][0]["role"] == "first_frame"
    done = page.locator(f'.task[data-task="{first.id}"]')
    assert "poster.jpg" in video.get_attribute("poster") and page.evaluate(POSTER_LOADS, video.get_attribute("poster")) > 0
    assert MONEY.fullmatch(done.locator(".facts .cost").inner_text())  # the cost charged
    assert first.id not in done.inner_text()  # the task id waits in the Advanced panel
    done.locator("details.advanced summary").click()
    assert first.id in done.locator("details.advanced").inner_text()
    assert page.locator(".task .spinner").count() == 0  # nothing is left spinning
    shot(page, "playing-desktop", prefix="video")

    done.get_by_role("button", name="Extend from last frame").click()
    assert "Extending this video" in page.locator("#video-status").inner_text()
    page.get_by_label("Prompt", exact=True).fill("the kite climbs into the clouds")
    page.get_by_role("button", name="Create video").click()
    page.locator('.task[data-status="succeeded"]').nth(1).wait_for(timeout=60000)
    second = VideoTask.objects.get(prompt="the kite climbs into the clouds")
    (media,) = second.request["medias"]
    assert media["role"] == "first_frame" and media["url"].startswith("data:image/png;base64,")
    assert page.locator(".task").first.get_attribute("data-task") == second.id

    # the finished video lives in the gallery too, and plays there
    page.locator(f'.task[data-task="{second.id}"]').get_by_role("link", name="In gallery").click()
    page.wait_for_url(f"**/assets/{second.video_id}/")
    played = page.locator(".detail video").evaluate(PLAYS)
    assert played["readyState"] >= 2 and played["duration"] > 0
    assert errors == []


def test_designer_uploads_a_first_frame_on_a_phone(worker_on, browser, request, live_asgi, alice, tmp_path):
    frame = tmp_path / "sketch.png"
    frame.write_bytes(png("orange", (480, 270)))
    page, errors = open_page(browser, request, PHONE, touch=True)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/video/")
    assert no_sideways_scroll(page)
    page.get_by_label("Model", exact=True).select_option("beta3.0-video")
    assert page.get_by_label("Model", exact=True).locator("option:checked").inner_text() == "Beta 3.0"
    chip(page, "video-resolutions", "480p").click()
    page.get_by_label("Duration").fill("2")
    page.get_by_text("First frame", exact=True).click()
    page.get_by_role("button", name="First frame: choose an image").click()
    dialog = page.locator("#video-picker-dialog[open]")
    dialog.wait_for()
    assert "No images in your gallery yet" in dialog.inner_text()
    dialog.get_by_label("Upload an image").set_input_files(str(frame))
    dialog.wait_for(state="hidden")
    slot = page.get_by_role("button", name="First frame: chosen (click to change)")
    assert slot.is_visible() and slot.locator("img").evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    page.get_by_label("Prompt", exact=True).fill("the sketch comes alive")
    shot(page, "form-phone", prefix="video")
    assert no_sideways_scroll(page)
    page.get_by_role("button", name="Create video").click()
    page.locator('.task[data-status="succeeded"] video').first.wait_for(timeout=60000)
    task = VideoTask.objects.get(prompt="the sketch comes alive")
    assert task.request["medias"][0]["role"] == "first_frame"
    page.locator(".task").first.scroll_into_view_if_needed()
    shot(page, "card-phone", prefix="video")
    assert no_sideways_scroll(page)
    assert errors == []


def test_failed_video_shows_the_upstream_reason(worker_on, browser, request, live_asgi, alice):
    page, errors = open_page(browser, request, DESKTOP)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/video/")
    page.get_by_label("Model", exact=True).select_option("alpha-2.0-fast")
    chip(page, "video-resolutions", "480p").click()
    page.get_by_label("Duration").fill("4")
    page.get_by_label("Prompt", exact=True).fill("a storm at sea [fail]")
    page.get_by_role("button", name="Create video").click()
    failed = page.locator('.task[data-status="failed"]')
    failed.wait_for(timeout=60000)
    task = VideoTask.objects.get(prompt="a storm at sea [fail]")
    assert task.error_code and task.error_message
    assert task.error_message in failed.get_by_role("alert").inner_text()
    assert failed.locator(".facts .cost").inner_text() == "not charged"
    assert failed.locator(".spinner").count() == 0
    failed.locator("details.advanced summary").click()
    assert task.error_code in failed.locator("details.advanced").inner_text()  # the raw code, for developers
    assert errors == []

    page.get_by_label("Prompt", exact=True).fill("")  # the engine's rule, named by its field
    page.get_by_role("button", name="Create video").click()
    page.locator("#video-status.error").wait_for()
    assert page.locator("#video-status").inner_text().startswith("prompt")
    shot(page, "failed-desktop", prefix="video")
    assert all("400 (Bad Request)" in e for e in errors)  # the browser's note of the refused request only
