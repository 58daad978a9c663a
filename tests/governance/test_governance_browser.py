"""The participation report as a person sees it, in headless Chromium (like the audit report).

Chromium and its driver come from the Debian packages ``chromium`` and ``chromium-driver``; when
they are missing this test fails: it must not pass unseen.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from trustlab.audit.sections.participation import write_page
from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def test_participation_report_opens_with_every_part_and_the_chart(tmp_path):
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(f"headless Chromium is needed but {', '.join(missing)} is missing: "
                    "apt-get install chromium chromium-driver", pytrace=False)  # fmt: skip
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    html = write_page(assess([data_path(n) for n in EXAMPLE_ANSWERS]), tmp_path)[0]
    profile = tempfile.mkdtemp(prefix="trustlab-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--no-first-run",
                     "--window-size=1200,900", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.get(html.resolve().as_uri())
        driver.execute_script("return document.readyState")
        for section_id, title in (
            ("profile", "Participation profile"),
            ("missing-evidence", "Missing evidence"),
            ("next-tier", "Moving up a tier"),
            ("agreement", "Agreement between assessors"),
            ("tiers", "Rung-to-tier table"),
        ):
            element = driver.find_element(By.ID, section_id)
            assert element.is_displayed() and title in element.text, section_id
        profile_text = driver.find_element(By.ID, "profile").text
        assert "UNVERIFIED" in profile_text and "Tier 2 (unverified)" in profile_text
        images = driver.find_elements(By.TAG_NAME, "img")
        assert len(images) == 1
        assert driver.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth > 0", images[0]
        )
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
