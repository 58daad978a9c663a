"""The report as a person sees it: the default audit opened in headless Chromium.

Chromium and its driver come from the Debian packages ``chromium`` and ``chromium-driver``
(`make test` installs them, or stops saying what to install). When they are missing this test
fails: it must not pass unseen.
"""

import json
import shutil
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser():
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"headless Chromium is needed for the report test but {', '.join(missing)} is "
            "missing: apt-get install chromium chromium-driver",
            pytrace=False,
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="trustlab-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1200,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def opened_report(browser, default_audit):
    browser.get(default_audit.html_path.resolve().as_uri())
    browser.execute_script("return document.readyState")  # waits for the load to finish
    return browser, json.loads(default_audit.json_path.read_text())


def test_every_section_of_the_json_is_visible(opened_report):
    from selenium.webdriver.common.by import By

    browser, report = opened_report
    assert report["sections"], "the default audit has sections"
    for section in report["sections"]:
        element = browser.find_element(By.ID, section["id"])
        assert element.is_displayed(), section["id"]
        assert section["title"] in element.text


def test_every_image_is_decoded(opened_report):
    from selenium.webdriver.common.by import By

    browser, report = opened_report
    images = browser.find_elements(By.TAG_NAME, "img")
    expected = sum(len(s["figures"]) for s in report["sections"])
    assert len(images) == expected > 0
    for image in images:
        loaded = browser.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth > 0", image
        )
        assert loaded, image.get_attribute("alt")
        assert image.is_displayed()


def test_browser_log_has_no_errors(opened_report):
    browser, _ = opened_report
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []


@pytest.mark.parametrize("width", [1300, 800])
def test_the_page_never_scrolls_sideways_and_wide_tables_scroll_in_their_card(opened_report, width):
    browser, _ = opened_report
    browser.set_window_size(width, 900)
    try:
        page = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert page[0] <= page[1], f"the page is {page[0]} px wide in a {page[1]} px window"
        wraps = browser.execute_script(
            """return Array.from(document.querySelectorAll('.table-wrap')).map(w => {
                 const card = w.closest('section.card').getBoundingClientRect();
                 const box = w.getBoundingClientRect();
                 const first = w.querySelector('tbody td');
                 return {inside: box.left >= card.left - 0.5 && box.right <= card.right + 0.5,
                         overflow: getComputedStyle(w).overflowX,
                         sticky: first ? getComputedStyle(first).position : 'sticky'};
               })"""
        )
        assert wraps, "the default audit has tables"
        for wrap in wraps:
            assert wrap["inside"] and wrap["overflow"] == "auto"
            assert wrap["sticky"] == "sticky"  # the row names stay in view while scrolling
    finally:
        browser.set_window_size(1200, 900)
