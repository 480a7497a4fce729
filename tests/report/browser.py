"""Headless Chromium for the report tests: open a page, report what rendered, screenshot.

Chromium and its driver come from the system (Debian: ``apt-get install -y chromium
chromium-driver``); ``CREAGRAPH_CHROMIUM`` / ``CREAGRAPH_CHROMEDRIVER`` override the paths.
Nothing is downloaded: Selenium is pointed at the system chromedriver.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

INSTALL_HINT = "install it with `apt-get install -y chromium chromium-driver`"

# What the page shows, gathered in the browser after load (all images decoded or failed).
_INSPECT = """
const done = arguments[arguments.length - 1];
Promise.all([...document.images].map(img => img.decode().catch(() => null))).then(() => {
  const text = el => (el ? el.innerText : null);
  done({
    title: document.title,
    sections: [...document.querySelectorAll('section')].map(s => ({
      id: s.id, heading: text(s.querySelector('h2')),
      na: s.querySelector('.na') !== null, text: s.innerText})),
    leaderboard: [...document.querySelectorAll('#leaderboard tbody tr')].map(tr => ({
      model: tr.dataset.model, cells: [...tr.cells].map(td => td.innerText)})),
    grounding: [...document.querySelectorAll('#grounding tbody tr')].map(tr => tr.dataset.model),
    tasks: [...document.querySelectorAll('#cliches h3')].map(h => h.dataset.task),
    images: [...document.images].map(img => ({
      file: img.dataset.file, section: img.closest('section')?.id,
      width: img.naturalWidth, height: img.naturalHeight,
      inline: img.src.startsWith('data:image/png;base64,')})),
    injected: document.querySelectorAll('script, td b, td i, h3 b').length,
    pwned: window.__pwned === undefined ? null : window.__pwned,
    text: document.body.innerText,
    height: document.documentElement.scrollHeight,
  });
});
"""


def chromium_paths() -> tuple[str, str]:
    """The Chromium binary and chromedriver to use; fails the test when missing."""
    import pytest

    browser = os.environ.get("CREAGRAPH_CHROMIUM") or shutil.which("chromium") or ""
    driver = os.environ.get("CREAGRAPH_CHROMEDRIVER") or shutil.which("chromedriver") or ""
    for name, path in (("chromium", browser), ("chromedriver", driver)):
        if not path or not Path(path).exists():
            pytest.fail(
                f"{name} not found (the report's browser test needs it): {INSTALL_HINT}, "
                f"or set CREAGRAPH_{name.upper()} to its path",
                pytrace=False,
            )
    return browser, driver


def start_chromium():
    """A headless Chromium driven through the system chromedriver."""
    import pytest

    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: pip install 'selenium>=4.20,<5'", pytrace=False)
    browser, driver = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    chrome.set_script_timeout(30)
    return chrome


def inspect_page(chrome, page: Path) -> dict[str, Any]:
    """Open ``page`` (a local file) and return what rendered (see ``_INSPECT``)."""
    chrome.get(page.resolve().as_uri())
    return chrome.execute_async_script(_INSPECT)


def screenshot(chrome, height: int, targets: list[Path]) -> np.ndarray:
    """Screenshot the whole page (up to 12,000 px tall) to every path in ``targets``;
    returns the image as an RGB array."""
    from PIL import Image

    chrome.set_window_size(1280, max(600, min(int(height) + 40, 12000)))
    png = chrome.get_screenshot_as_png()
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def screenshot_targets(tmp_path: Path, name: str) -> list[Path]:
    """``tmp_path/name`` and, when ``CREAGRAPH_SCREENSHOT_DIR`` is set, a copy there."""
    targets = [tmp_path / name]
    extra = os.environ.get("CREAGRAPH_SCREENSHOT_DIR")
    if extra:
        targets.append(Path(extra) / name)
    return targets


def check_rendered(
    found: dict[str, Any], models: list[str], image: np.ndarray, literal: tuple[str, ...] = ()
) -> None:
    """The checks every rendered report must pass; ``literal`` are input texts that
    contain markup on purpose (left out of the "markup shown as text" check)."""
    from creagraph.report import SECTIONS

    assert [s["id"] for s in found["sections"]] == [sid for sid, _ in SECTIONS]
    assert [s["heading"] for s in found["sections"]] == [h for _, h in SECTIONS]
    assert sorted(r["model"] for r in found["leaderboard"]) == sorted(models)
    for row in found["leaderboard"]:
        # model, queries, s0.7 [lo, hi], s0.9 [lo, hi], ...: numbers with their intervals
        assert row["cells"][0].endswith(row["model"])
        for cell in row["cells"][2:4]:
            mean, interval = cell.split(" [")
            lo, hi = (float(x) for x in interval.rstrip("]").split(", "))
            assert lo <= float(mean) <= hi
    assert found["images"], "no figures on the page"
    for img in found["images"]:
        assert img["inline"], f"{img['file']} is not embedded in the page"
        assert img["width"] > 0 and img["height"] > 0, f"{img['file']} did not decode"
    assert {"leaderboard", "curves"} <= {img["section"] for img in found["images"]}
    assert found["injected"] == 0 and found["pwned"] is None
    text = found["text"]
    for allowed in sorted(literal, key=len, reverse=True):
        text = text.replace(allowed, "")
    for entity in ("&lt;", "&gt;", "&amp;", "&quot;", "&#x27;", "<td", "<tr", "</", "<img"):
        assert entity not in text, f"markup shown as text: {entity!r}"
    # a real page: mostly white background, with a fair amount of ink in several colours
    assert image.shape[0] >= 600 and image.shape[1] >= 1000
    ink = (image < 200).any(axis=2).mean()
    packed = image.reshape(-1, 3)[::5].astype(np.int32) @ np.array([65536, 256, 1], np.int32)
    colours = len(np.unique(packed))
    assert 0.01 < ink < 0.6, f"screenshot looks blank or broken (ink {ink:.3f})"
    assert colours > 50, f"screenshot has only {colours} colours"
