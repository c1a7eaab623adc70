#!/usr/bin/env python3
"""Takes the README's screenshot of the watch page: `filmstrip serve Samples` in headless Chromium, the pointer
held over the scrub bar. Usage: Scripts/screenshot.py [OUTPUT.png] (default docs/images/watch-page.png)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver import ActionChains
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
output = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "docs", "images", "watch-page.png")
binary = os.path.join(subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=root, text=True).strip(),
                      "filmstrip")
cache = tempfile.mkdtemp(prefix="filmstrip-screenshot-")
server = subprocess.Popen([binary, "serve", os.path.join(root, "Samples"), "--port", "0", "--cache-dir", cache],
                          stdout=subprocess.PIPE, text=True)
try:
    url = next(line.strip() for line in server.stdout if line.strip().startswith("http://"))
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=960,720",
                     "--hide-scrollbars"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        driver.get(url + "watch/sample.mp4")
        deadline = time.time() + 120
        while driver.execute_script("return document.getElementById('track-status').dataset.state") != "ready":
            if time.time() > deadline:
                raise SystemExit("the track never became ready")
            time.sleep(0.2)
        driver.execute_script("const v = document.getElementById('video'); v.currentTime = 23;")
        time.sleep(1)
        scrubber = driver.find_element("id", "scrubber")
        width = scrubber.size["width"]
        ActionChains(driver).move_to_element_with_offset(scrubber, round(0.62 * width - width / 2), 0).perform()
        time.sleep(1)
        os.makedirs(os.path.dirname(output), exist_ok=True)
        driver.save_screenshot(output)
        print("wrote", output)
    finally:
        driver.quit()
finally:
    server.terminate()
    server.wait()
    shutil.rmtree(cache, ignore_errors=True)
