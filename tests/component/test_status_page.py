"""The operator's status page (roles/monitoring/files/consoles/hopshive.html, a Prometheus
console template) in a real headless browser (Debian's chromium and chromium-driver, through
Selenium): a real Prometheus scrapes a real namenode, which holds a file, and a cleaner port
nobody listens on; the page shows the namenode up and its blocks healthy, the cleaner down
and no cleaner leader."""

from __future__ import annotations

import pytest
import requests
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from tests.support.mariadb import _free_port
from tests.support.namenode import SUPERUSER, NamenodeServer
from tests.support.polling import wait_until
from tests.support.prometheus_server import PrometheusServer, binary

PAGE = "/consoles/hopshive.html"


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = binary("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(binary("chromedriver")), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def prometheus(db, tmp_path):
    namenode = NamenodeServer(tmp_path / "namenode", db.config, workers=1, small_file_limit=0).start()
    created = requests.put(f"{namenode.url}/webhdfs/v1/f", params={"op": "CREATE", "user.name": SUPERUSER},
                           allow_redirects=False, timeout=30)
    assert requests.put(created.headers["Location"], data=b"x" * 4096, timeout=30).status_code == 201
    server = PrometheusServer(tmp_path / "prometheus", {
        "namenode": [("nn-test", namenode.address)],
        "cleaner": [("cleaner-test", f"127.0.0.1:{_free_port()}")],
    }).start()
    wait_until(lambda: len(server.query("up")) == 2 and server.query("hopshive_namenode_live_holders"), 60,
               lambda _: f"Prometheus has not scraped both targets: {server.query('up')}")
    yield server
    assert server.stop() == 0, server.log_tail()
    assert namenode.stop() == 0, namenode.log_tail()


def test_the_page_shows_services_blocks_and_the_cleaner_at_a_glance(browser, prometheus):
    browser.get(prometheus.url + PAGE)
    assert browser.title == "HopsHive"
    rows = {row.get_attribute("data-job"): (row.get_attribute("class"), row.text)
            for row in browser.find_elements(By.CSS_SELECTOR, "#services tr[data-job]")}
    assert rows["namenode"][0] == "up" and rows["namenode"][1].split()[-1] == "up", rows
    assert rows["cleaner"][0] == "down" and rows["cleaner"][1].split()[-1] == "down", rows
    namenode = browser.find_element(By.CSS_SELECTOR, "#namenodes tr[data-host='nn-test']")
    cells = {name: namenode.find_element(By.CSS_SELECTOR, f".{name}").text for name in ("holders", "under", "missing")}
    assert cells == {"holders": "1", "under": "0", "missing": "0"}
    leader = browser.find_element(By.ID, "cleaner-leader")
    assert (leader.text, leader.get_attribute("class")) == ("none", "down")
    # Something a person sees: red where something is wrong, green where all is well.
    colours = {row: browser.find_element(By.CSS_SELECTOR, f"#services tr[data-job='{row}']")
               .value_of_css_property("background-color") for row in ("namenode", "cleaner")}
    assert colours == {"namenode": "rgba(201, 242, 199, 1)", "cleaner": "rgba(246, 196, 196, 1)"}
