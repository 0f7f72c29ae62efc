"""Render the web app's PNG icons (web/icons/*.png) from their SVG sources with Debian's Chromium.

    .venv/bin/python scripts/make_icons.py

The manifest (web/manifest.webmanifest) names them: 192 and 512 px for "any", 512 px "maskable" (the
card inside the safe circle of a maskable icon), and the apple-touch-icon (192 px). Run it again
after changing an SVG; the PNGs are committed (a phone installs them, no build step serves them).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parents[1] / "web" / "icons"
RENDERS = [("icon.svg", 192, "icon-192.png"), ("icon.svg", 512, "icon-512.png"), ("icon-maskable.svg", 512, "icon-maskable-512.png")]  # fmt: skip


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        try:
            for source, size, target in RENDERS:
                page = browser.new_page(viewport={"width": size, "height": size})
                svg = (ICONS / source).read_text()
                page.set_content(
                    "<html><body style='margin:0;background:transparent'>"
                    f"<img alt='' width='{size}' height='{size}' src='data:image/svg+xml;utf8,{svg.replace(chr(35), '%23')}'>"
                    "</body></html>"
                )
                page.wait_for_function("() => document.images[0].complete")
                page.screenshot(path=str(ICONS / target), omit_background=True)
                page.close()
                print(f"web/icons/{target} ({size}x{size})")
        finally:
            browser.close()


if __name__ == "__main__":
    main()
