"""Real-browser tests: Playwright driving Debian's Chromium (never a downloaded browser)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _chromium_missing() -> str | None:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (install Debian's 'chromium' package)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    return None


@pytest.fixture(scope="module")
def browser():
    # Module scope, not session: Playwright's sync API keeps an event loop running in this
    # thread while it is open, which would break every async test collected after it.
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


def sign_in(page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base_url}/generate/")


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    """One live server for the whole module (each test has its own data: see ``studio``)."""
    import uvicorn

    from studio.asgi import application
    from tests.conftest import free_port

    with django_db_blocker.unblock():
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="on",
                                               log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.time() + 20
        while not server.started:
            assert time.time() < deadline and thread.is_alive(), "the test server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
        server.should_exit = True
        thread.join(timeout=10)


def open_page(browser, request, viewport, touch=False):
    """A page in its own context, with the console errors it logs collected."""
    context = browser.new_context(viewport=viewport, has_touch=touch, is_mobile=touch, device_scale_factor=1,
                                  accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    request.addfinalizer(context.close)
    return page, errors


@pytest.fixture
def watched(browser, request):
    """A desktop page with the console errors it logs: ``page, errors = watched``."""
    page, errors = open_page(browser, request, DESKTOP)
    yield page, errors
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)


VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


def open_on(browser, request, viewport):
    """A page on this viewport (a phone is a touch screen), with its console errors collected."""
    return open_page(browser, request, viewport, touch=viewport == PHONE)


def shot(page, name: str, prefix: str = "designer") -> None:
    """A full-page screenshot kept as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{prefix}-{name}.png"), full_page=True)


def no_sideways_scroll(page) -> bool:
    """Nothing wider than the screen: measured against the viewport asked for, since a mobile
    browser widens its layout viewport to fit content that overflows."""
    return page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
