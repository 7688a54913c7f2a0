"""The page's alignment panel in a real headless chromium: two texts in, the beads side by side
with their scores, as POST /align answers them."""
from __future__ import annotations

from serving.conftest import start_server
from serving.test_page import browser, wait_for  # noqa: F401 (the browser fixture)


def test_the_panel_shows_the_beads_side_by_side(serving_dir, browser):  # noqa: F811
    from selenium.webdriver.common.by import By
    server = start_server(serving_dir)
    try:
        src = ["Ich habe Hunger.", "Es regnet heute.", "Ich bleibe zu Hause.",
               "Wo ist der Bahnhof?"]
        trg = ["I am hungry.", "It is raining today, so I stay at home.",
               "Where is the station?"]
        browser.get(server.url + "/")
        for field, lines in (("align-src", src), ("align-trg", trg)):
            area = browser.find_element(By.ID, field)
            area.clear()
            area.send_keys("\n".join(lines))
        for field, lang in (("align-src-lang", "de"), ("align-trg-lang", "en")):
            box = browser.find_element(By.ID, field)
            box.clear()
            box.send_keys(lang)
        browser.find_element(By.ID, "align").click()
        expected = server.post("/align", {"src": src, "trg": trg, "src_lang": "de",
                                          "trg_lang": "en"}).json()["beads"]
        rows = wait_for(browser, "#beads tbody tr", len(expected))
        shown = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
        assert shown == [[bead["src_text"], bead["trg_text"], f"{bead['score']:.3f}"]
                         for bead in expected]
        assert " ".join(row[0] for row in shown if row[0]) == " ".join(src)
        assert " ".join(row[1] for row in shown if row[1]) == " ".join(trg)
    finally:
        server.stop()
