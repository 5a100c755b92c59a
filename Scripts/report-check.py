#!/usr/bin/env python3
"""Renders a `courier load --report` page in headless Chromium and checks it as a person would see it.

    Scripts/report-check.py REPORT.html OUT_DIR [STAGES | compare]

`compare` checks a `courier load compare --report` page instead: every chart draws both runs.

Through the DevTools protocol, for a light and a dark page: no script error or console error,
every chart's lines and bars have a drawn length or area (measured by the browser's layout, not
read from the text), the page's colours follow the colour scheme, and a full-page screenshot
lands in OUT_DIR (report-light.png, report-dark.png). Exits 1 naming each failure.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # websocket-client

MEASURE = r"""
(() => {
  const rows = title => [...document.querySelectorAll('section')].filter(s => s.querySelector('h2')?.textContent === title)
                          .map(s => s.querySelectorAll('tbody tr').length)[0] ?? 0;
  const charts = [...document.querySelectorAll('svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    const lines = [...svg.querySelectorAll('path.line')].map(p => ({
      name: p.querySelector('title')?.textContent ?? '?', length: p.getTotalLength()
    }));
    const markers = [...svg.querySelectorAll('line.marker')].map(l => l.getBoundingClientRect().height);
    return { label: svg.getAttribute('aria-label'), width: box.width, height: box.height, lines, markers };
  });
  const bars = [...document.querySelectorAll('svg.bars path.bar')].map(p => {
    const b = p.getBBox(); return { name: p.querySelector('title')?.textContent ?? '?', area: b.width * b.height };
  });
  const body = getComputedStyle(document.body);
  return JSON.stringify({ charts, bars, background: body.backgroundColor, color: body.color,
                          title: document.title, sections: document.querySelectorAll('section').length,
                          stages: rows('Stages'), checks: rows('Checks'), steps: rows('Requests and flow steps') });
})()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Page:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=30)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, event, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(e.get("method") == event for e in self.events):
                return
            self.events.append(json.loads(self.ws.recv()))
        raise RuntimeError(f"no {event} within {timeout}s")


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    sys.exit("report-check: no Chromium found (Debian: apt-get install chromium; `make report-check` installs it)")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    report, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    compare = len(sys.argv) == 4 and sys.argv[3] == "compare"
    stages = int(sys.argv[3]) if len(sys.argv) == 4 and not compare else None  # the run's stages, when it ramped
    name = "compare" if compare else "report"
    os.makedirs(out, exist_ok=True)
    port = free_port()
    profile = tempfile.mkdtemp(prefix="courier-chromium-")
    chrome = subprocess.Popen([browser(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-extensions", f"--user-data-dir={profile}",
                               f"--remote-debugging-port={port}", "about:blank"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures = []
    try:
        targets = None
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as answer:
                    targets = [t for t in json.load(answer) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not targets:
            sys.exit("report-check: Chromium did not start")
        page = Page(targets[0]["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=1100, height=900, deviceScaleFactor=1, mobile=False)
        seen = {}
        for scheme in ("light", "dark"):
            page.events.clear()
            page.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}])
            page.call("Page.navigate", url="file://" + report)
            page.wait_for("Page.loadEventFired")
            errors = [e for e in page.events if e.get("method") == "Runtime.exceptionThrown"
                      or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
                      or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")]
            for error in errors:
                failures.append(f"{scheme}: {json.dumps(error['params'])[:300]}")
            measured = json.loads(page.call("Runtime.evaluate", expression=MEASURE, returnByValue=True)["result"]["value"])
            seen[scheme] = measured
            if len(measured["charts"]) < 3:
                failures.append(f"{scheme}: {len(measured['charts'])} charts, expected 3")
            for chart in measured["charts"]:
                if chart["width"] < 300 or chart["height"] < 80:
                    failures.append(f"{scheme}: chart {chart['label']!r} is {chart['width']}×{chart['height']}")
                if not chart["lines"]:
                    failures.append(f"{scheme}: chart {chart['label']!r} has no line")
                for line in chart["lines"]:
                    if not line["length"] > 0:
                        failures.append(f"{scheme}: {chart['label']!r}: line {line['name']!r} has no drawn length")
                if compare and len(chart["lines"]) != 2:
                    failures.append(f"{scheme}: chart {chart['label']!r} draws {len(chart['lines'])} lines, not the two runs")
            # A ramp's report: a row per stage, and each chart over time marks where stages 2… begin.
            if stages is not None and measured["stages"] != stages:
                failures.append(f"{scheme}: {measured['stages']} rows in Stages, the run had {stages}")
            for chart in measured["charts"]:
                if "over the run" in chart["label"] or "per interval" in chart["label"]:
                    markers = chart["markers"]
                    if len(markers) != max(0, measured["stages"] - 1) or any(not height > 50 for height in markers):
                        failures.append(f"{scheme}: {chart['label']!r}: stage markers {markers} for {measured['stages']} stages")
            # The run's scenario has a flow of three steps and checks: their tables show.
            if not compare and (measured["steps"] < 3 or measured["checks"] < 1):
                failures.append(f"{scheme}: {measured['steps']} rows of requests and steps, {measured['checks']} checks")
            if not compare and not measured["bars"] or any(not bar["area"] > 0 for bar in measured["bars"]):
                failures.append(f"{scheme}: status bars missing or empty: {measured['bars']}")
            shot = page.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
            path = os.path.join(out, f"{name}-{scheme}.png")
            with open(path, "wb") as file:
                file.write(base64.b64decode(shot["data"]))
            lines = sum(len(c["lines"]) for c in measured["charts"])
            print(f"report-check {name} {scheme}: {len(measured['charts'])} charts, {lines} lines, {len(measured['bars'])} bars, "
                  f"{measured['stages']} stages, {measured['steps']} requests and steps, {measured['checks']} checks, "
                  f"background {measured['background']}, {len(errors)} errors → {path}")
        if seen["light"]["background"] == seen["dark"]["background"]:
            failures.append("the page looks the same in the light and the dark colour scheme")
    finally:
        chrome.terminate()
        try:
            chrome.wait(10)
        except subprocess.TimeoutExpired:
            chrome.kill()
        shutil.rmtree(profile, ignore_errors=True)
    for failure in failures:
        print("report-check FAIL:", failure)
    print(f"report-check: {'FAILED' if failures else 'passed'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
