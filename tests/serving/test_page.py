"""The page at / in a real headless chromium (Debian's, driven by its chromedriver): type
sentences, see their similarity matrix; type a query, see its nearest indexed sentences; on a
server with API keys, give the key, which stays in the tab."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from laser.search.vectors import unit_rows

from serving.conftest import INDEXED, start_server


def browser_programs() -> tuple[str | None, str | None]:
    """chromium and its chromedriver, where PATH finds them (Debian: /usr/bin, others: anywhere)."""
    return shutil.which("chromium"), shutil.which("chromedriver")


def test_the_browser_and_its_driver_are_found_on_path(tmp_path, monkeypatch):
    for name in ("chromium", "chromedriver"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert browser_programs() == (str(tmp_path / "chromium"), str(tmp_path / "chromedriver"))


@pytest.fixture(scope="module")
def browser():
    chromium, chromedriver = browser_programs()
    if not (chromium and chromedriver):
        reason = ("chromium and chromedriver are not on PATH (Debian: apt-get install chromium "
                  "chromium-driver; .ci/run does)")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu"):
        options.add_argument(argument)
    # the driver is given: selenium-manager never looks for, or downloads, another one
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    yield driver
    driver.quit()


def wait_for(driver, css: str, count: int = 1):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, 60).until(
        lambda d: (found := d.find_elements(By.CSS_SELECTOR, css)) and len(found) >= count
        and found)


def test_page_shows_the_similarity_matrix(server, browser, default_encoder):
    from selenium.webdriver.common.by import By
    sentences = ["Hello world.", "Bonjour le monde.", "The cat sleeps."]
    browser.get(server.url + "/")
    area = browser.find_element(By.ID, "sentences")
    area.clear()
    area.send_keys("\n".join(sentences))
    browser.find_element(By.ID, "compare").click()
    cells = wait_for(browser, "#matrix td", len(sentences) ** 2)
    shown = np.array([float(cell.text) for cell in cells]).reshape(3, 3)
    rows = unit_rows(default_encoder.encode(sentences, "auto"))  # the page's default language
    np.testing.assert_allclose(shown, rows @ rows.T, atol=0.0006)  # shown to 3 decimals
    headers = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#matrix tr th")]
    assert [text for text in headers if text] == sentences * 2


def test_page_searches_the_index(server, browser):
    from selenium.webdriver.common.by import By
    browser.get(server.url + "/")
    wait_for(browser, "#search:not(.hidden)")
    query = browser.find_element(By.ID, "query")
    query.send_keys("Where is the station?")
    browser.find_element(By.ID, "find").click()
    hits = wait_for(browser, "#neighbours li", 5)
    assert hits[0].text.endswith(INDEXED[2])
    scores = [float(hit.find_element(By.CLASS_NAME, "score").text) for hit in hits]
    assert scores == sorted(scores, reverse=True)


def test_page_shows_a_refusal(server, browser):
    from selenium.webdriver.common.by import By
    browser.get(server.url + "/")
    language = browser.find_element(By.ID, "lang")
    language.clear()
    language.send_keys("klingonese")
    browser.find_element(By.ID, "compare").click()
    from selenium.webdriver.support.ui import WebDriverWait
    status = browser.find_element(By.ID, "status")
    WebDriverWait(browser, 60).until(lambda _: status.text)
    assert "unknown language" in status.text


def test_page_asks_for_the_key_and_keeps_it_in_the_tab_only(serving_dir, index_path, browser):
    from selenium.webdriver.common.by import By
    keyed = start_server(serving_dir, "--index", str(index_path), "--api-key", "page-key")
    try:
        browser.get(keyed.url + "/")
        wait_for(browser, "#key-box:not(.hidden)")
        # asked first: the server is not called (so nothing is refused) before a key is typed
        assert browser.find_element(By.ID, "status").text == ""
        calls = ("return performance.getEntriesByType('resource').filter((entry) => "
                 "entry.initiatorType === 'fetch').map((entry) => entry.name)")
        assert browser.execute_script(calls) == []
        assert browser.switch_to.active_element == browser.find_element(By.ID, "key")
        browser.find_element(By.ID, "key").send_keys("wrong-key")
        browser.find_element(By.ID, "use-key").click()
        wait_for(browser, "#key-box:not(.hidden)")  # refused: asked again, and told why
        status = browser.find_element(By.ID, "status")
        from selenium.webdriver.support.ui import WebDriverWait
        WebDriverWait(browser, 60).until(lambda _: status.text)
        assert "API key" in status.text
        browser.find_element(By.ID, "key").send_keys("page-key")
        browser.find_element(By.ID, "use-key").click()
        wait_for(browser, "#search:not(.hidden)")
        assert [call.rsplit("/", 1)[1] for call in browser.execute_script(calls)] == \
            ["info", "info"]  # the wrong key's call, then the right one's
        assert browser.find_element(By.ID, "models").text.startswith("Models: ")
        browser.find_element(By.ID, "compare").click()
        cells = wait_for(browser, "#matrix td", 9)
        assert float(cells[0].text) == 1.0
        storage = browser.execute_script(
            "return [sessionStorage.getItem('laser-api-key'), localStorage.length, "
            "document.cookie]")
        assert storage == ["page-key", 0, ""]
        browser.switch_to.new_window("tab")  # another tab: no key, asked again
        browser.get(keyed.url + "/")
        wait_for(browser, "#key-box:not(.hidden)")
        assert browser.execute_script("return sessionStorage.getItem('laser-api-key')") is None
        browser.close()
        browser.switch_to.window(browser.window_handles[0])
    finally:
        keyed.stop()
