// Issue #15's dataset viewer in a browser: headless Debian Chromium, driven by playwright-core
// (pinned in tests/js/package.json), pages, searches, filters and switches splits of a real
// dataset the way a person does, and checks each table three ways: against the JSON API's
// answer, against the page the server renders for the same URL (opened in a second browser
// context without JavaScript), and that hangar.js did it in place (no page load) under the
// page's CSP (no console errors). Run through tests/integration/viewer_ui.sh, which pushes
// the dataset alice/tables (configs birdstrikes, boston and notes), waits for its export,
// and sets:
//
//   HANGAR_URL        the server's base URL
//   HANGAR_SHOTS      where the full-page screenshots go, one per step (kept after the run)
//   HANGAR_LONG_CELL  the text of notes' first row (301 bytes of UTF-8)
//
// The steps share one browser page and run in order; once a step fails the later ones are
// skipped (they would only fail for the same reason).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { chromium } from "playwright-core";

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run tests/integration/viewer_ui.sh`);
  return v;
}
const BASE = env("HANGAR_URL");
const SHOTS = env("HANGAR_SHOTS");
const LONG_CELL = env("HANGAR_LONG_CELL");
const DATASET = "alice/tables";
const VIEWER = `/datasets/${DATASET}/viewer`;
const EMBED = `/datasets/${DATASET}/embed/viewer`;
const BIRD_COLUMNS = ["Airport Name", "Aircraft Make Model", "Effect Amount of damage", "Flight Date",
  "Aircraft Airline Operator", "Origin State", "Phase of flight", "Wildlife Size", "Wildlife Species",
  "Time of day", "Cost Other", "Cost Repair", "Cost Total $", "Speed IAS in knots"];
const BOSTON_COLUMNS = ["crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio", "b", "lstat", "medv"];
const SEARCH_WORD = "vulture";
const WHERE = `"Wildlife Size" = 'Large'`;
const ORDERBY = `"Speed IAS in knots" DESC`;

let browser;
let page;        // JavaScript on: the page under test
let plainPage;   // in a context with JavaScript off: the server's own rendering
let shown;       // the page a step's screenshot shows
let step = 0;
let broken = null;
let problems = [];  // uncaught exceptions and console errors (a CSP refusal is one)

// A step: skipped after an earlier failure; ends with no console error on the page and a
// full-page screenshot, whatever happened.
function stepTest(name, fn) {
  test(name, async (t) => {
    if (broken) {
      t.skip(`after the failure of "${broken}"`);
      return;
    }
    step += 1;
    shown = page;
    problems = [];
    const shot = path.join(SHOTS, `${String(step).padStart(2, "0")}-${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase().replace(/^-|-$/g, "")}.png`);
    try {
      await fn();
      assert.deepEqual(problems, [], "no script error or console error (CSP refusals are console errors)");
    } catch (e) {
      broken = name;
      throw e;
    } finally {
      if (shown) await shown.screenshot({ path: shot, fullPage: true }).catch(() => {});
    }
  });
}

// Percent-encoding as the server's PercentEncode (everything but A-Z a-z 0-9 - . _ ~).
const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
const text = async (locator) => (await locator.textContent()).replace(/\s+/g, " ").trim();
const texts = (locator) => locator.evaluateAll((els) => els.map((e) => e.textContent.replace(/\s+/g, " ").trim()));

async function api(endpoint, params) {
  const q = Object.entries({ dataset: DATASET, ...params }).map(([k, v]) => `${k}=${enc(String(v))}`).join("&");
  const res = await fetch(`${BASE}/${endpoint}?${q}`);
  assert.equal(res.status, 200, `/${endpoint}?${q}`);
  return res.json();
}

// A cell's text as the page shows it.
const cellText = (v) => (v === null ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v));

// The table of `p`: row indexes, each row's cells' text and HTML, the header's columns.
function table(p) {
  return p.locator("section.viewer").evaluate((s) => {
    const rows = [...s.querySelectorAll("table.viewer-table tbody tr")];
    return {
      idx: rows.map((r) => Number(r.cells[0].textContent)),
      // A long cell: its whole text after the summary.
      cells: rows.map((r) => [...r.cells].slice(1).map((c) => (c.querySelector("details.long")?.lastChild ?? c).textContent)),
      html: rows.map((r) => [...r.cells].map((c) => c.innerHTML)),
      columns: [...s.querySelectorAll("table.viewer-table th[data-column]")].map((th) => th.dataset.column),
      names: [...s.querySelectorAll("table.viewer-table th .col-name")].map((e) => e.textContent),
      types: [...s.querySelectorAll("table.viewer-table th .col-type")].map((e) => e.textContent),
      count: s.querySelector("p.viewer-count")?.textContent.trim() ?? null,
      pager: [...s.querySelectorAll("nav.pager a")].map((a) => `${a.rel} ${a.getAttribute("href")}`),
      error: s.querySelector("p.flash.error")?.textContent.trim() ?? null,
    };
  });
}

// The page's table equals the API's answer `body` at `offset`.
function assertTableIs(t, body, offset) {
  const names = body.features.map((f) => f.name);
  assert.deepEqual(t.columns, names, "the header's columns are the API's features");
  assert.deepEqual(t.idx, body.rows.map((r) => r.row_idx), "the rows are the API's, in its order");
  assert.deepEqual(t.cells, body.rows.map((r) => names.map((n) => cellText(r.row[n]))), "each cell shows the API's value");
  const first = body.rows.length ? offset + 1 : 0;
  assert.equal(t.count, `Rows ${first}–${offset + body.rows.length} of ${body.num_rows_total}`);
}

// The server renders the same table for this URL (the JavaScript-off context's page).
async function assertServerRendersSame(url) {
  await plainPage.goto(BASE + url);
  const server = await table(plainPage);
  const here = await table(page);
  for (const k of ["idx", "html", "columns", "names", "types", "count", "pager", "error"])
    assert.deepEqual(here[k], server[k], `the ${k} hangar.js drew are what the server renders for ${url}`);
}

// Runs `action`, which starts a navigation of hangar.js, and waits until it has rendered
// (and, for a history step, whose popstate may come after `action`, until the first row is
// `firstRow`); checks it happened in place (no page load) and where the URL went.
async function inPlace(action, url, firstRow) {
  await page.evaluate(() => { window.viewerTestMark = true; });
  await action();
  if (firstRow !== undefined)
    await page.waitForFunction((n) => document.querySelector("table.viewer-table tbody td.idx")?.textContent === String(n), firstRow);
  await page.locator("section.viewer:not([aria-busy])").waitFor();
  assert.equal(page.url(), BASE + url, "the URL is the one the server renders");
  assert.equal(await page.evaluate(() => window.viewerTestMark), true, "no page load: hangar.js did it in place");
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  const viewport = { width: 1400, height: 900 };
  page = await (await browser.newContext({ viewport })).newPage();
  page.setDefaultTimeout(15000);
  page.setDefaultNavigationTimeout(15000);
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  // (The browser asks for /favicon.ico, which the hub does not have.)
  page.on("console", (m) => m.type() === "error" && !m.location().url.endsWith("/favicon.ico") && problems.push(`console: ${m.text()}`));
  plainPage = await (await browser.newContext({ viewport, javaScriptEnabled: false })).newPage();
  plainPage.setDefaultTimeout(15000);
});

after(async () => {
  if (browser) await browser.close();
});

stepTest("the first page of the default split", async () => {
  const res = await page.goto(BASE + VIEWER);
  assert.equal(res.status(), 200);
  const body = await api("rows", { config: "birdstrikes", split: "train", offset: 0, length: 100 });
  const t = await table(page);
  assert.equal(t.idx.length, 100, "100 rows");
  assert.deepEqual(t.idx, [...Array(100).keys()], "row indexes 0–99");
  assert.deepEqual(t.columns, BIRD_COLUMNS);
  assert.deepEqual(t.names, BIRD_COLUMNS, "each header shows its column's name");
  assert.deepEqual(t.types, body.features.map((f) => f.type.dtype), "each header shows its column's type");
  assert.equal(t.types[BIRD_COLUMNS.indexOf("Speed IAS in knots")], "int64");
  assert.equal(t.types[BIRD_COLUMNS.indexOf("Airport Name")], "string");
  assertTableIs(t, body, 0);
  assert.equal(t.count, "Rows 1–100 of 10000");
  assert.deepEqual(t.pager, [`next ${VIEWER}/birdstrikes/train?offset=100`]);
  assert.equal(await page.getAttribute("section.viewer", "data-config"), "birdstrikes");
  assert.deepEqual(await texts(page.locator(".viewer-splits .viewer-config")), ["birdstrikes: train", "boston: train", "notes: train"]);
  assert.equal(await page.getAttribute(".viewer-splits a.on", "href"), `${VIEWER}/birdstrikes/train`);
  // Empty CSV cells are nulls, shown as such.
  const nulls = body.rows.flatMap((r) => Object.values(r.row)).filter((v) => v === null).length;
  assert.ok(nulls > 0, "birdstrikes has empty cells on its first page");
  assert.equal(await page.locator("table.viewer-table tbody span.null").count(), nulls, "one span.null per null cell");
});

stepTest("next page in place", async () => {
  await inPlace(() => page.click("nav.pager a[rel=next]"), `${VIEWER}/birdstrikes/train?offset=100`);
  const t = await table(page);
  assert.deepEqual(t.idx, Array.from({ length: 100 }, (_, i) => 100 + i), "row indexes 100–199");
  assertTableIs(t, await api("rows", { config: "birdstrikes", split: "train", offset: 100, length: 100 }), 100);
  assert.equal(t.count, "Rows 101–200 of 10000");
  assert.deepEqual(t.pager, [`prev ${VIEWER}/birdstrikes/train?offset=0`, `next ${VIEWER}/birdstrikes/train?offset=200`]);
  await assertServerRendersSame(`${VIEWER}/birdstrikes/train?offset=100`);

  // Back and forward through the pushed history, still in place.
  await inPlace(() => page.goBack(), VIEWER, 0);
  assertTableIs(await table(page), await api("rows", { config: "birdstrikes", split: "train", offset: 0, length: 100 }), 0);
  await inPlace(() => page.goForward(), `${VIEWER}/birdstrikes/train?offset=100`, 100);
  assert.equal((await table(page)).idx[0], 100, "forward: the second page again");
  // A reload is the server's page of the same rows.
  await page.reload();
  assert.equal(await page.evaluate(() => window.viewerTestMark), undefined, "the reload loaded the page");
  assert.deepEqual((await table(page)).idx, Array.from({ length: 100 }, (_, i) => 100 + i), "reload: rows 100–199");
});

stepTest("search", async () => {
  const want = await api("search", { config: "birdstrikes", split: "train", query: SEARCH_WORD, offset: 0, length: 100 });
  assert.ok(want.num_rows_total > 0, `the API finds "${SEARCH_WORD}"`);
  await page.fill("form.viewer-search input[name=q]", SEARCH_WORD);
  await inPlace(() => page.press("form.viewer-search input[name=q]", "Enter"), `${VIEWER}/birdstrikes/train?offset=0&q=${SEARCH_WORD}`);
  const t = await table(page);
  assertTableIs(t, want, 0);
  assert.match(t.count, new RegExp(` of ${want.num_rows_total}$`), "the count is the API's");
  for (const cells of t.cells) assert.match(cells.join(" "), /vultur/i, "each row found holds the word");
  await assertServerRendersSame(`${VIEWER}/birdstrikes/train?offset=0&q=${SEARCH_WORD}`);
  if (want.num_rows_total > 100) {
    await inPlace(() => page.click("nav.pager a[rel=next]"), `${VIEWER}/birdstrikes/train?offset=100&q=${SEARCH_WORD}`);
    assertTableIs(await table(page), await api("search", { config: "birdstrikes", split: "train", query: SEARCH_WORD, offset: 100, length: 100 }), 100);
  }
  assert.equal(await page.inputValue("form.viewer-search input[name=q]"), SEARCH_WORD);
});

stepTest("filter and order", async () => {
  const url = `${VIEWER}/birdstrikes/train?offset=0&where=${enc(WHERE)}`;
  await page.fill("form.viewer-filter input[name=where]", WHERE);
  await inPlace(() => page.click("form.viewer-filter button[type=submit]"), url);
  let t = await table(page);
  const want = await api("filter", { config: "birdstrikes", split: "train", where: WHERE, offset: 0, length: 100 });
  assertTableIs(t, want, 0);
  assert.ok(t.idx.length > 0, "some rows are Large");
  const size = BIRD_COLUMNS.indexOf("Wildlife Size");
  assert.deepEqual([...new Set(t.cells.map((c) => c[size]))], ["Large"], "every row's Wildlife Size is Large");
  assert.equal(await page.inputValue("form.viewer-search input[name=q]"), "", "the search is gone, as on the server's page");
  assert.equal(await page.locator("form.viewer-filter a:text-is('Clear')").count(), 1, "a Clear link");
  await assertServerRendersSame(url);

  await page.fill("form.viewer-filter input[name=orderby]", ORDERBY);
  const ordered = `${url}&orderby=${enc(ORDERBY)}`;
  await inPlace(() => page.click("form.viewer-filter button[type=submit]"), ordered);
  t = await table(page);
  assertTableIs(t, await api("filter", { config: "birdstrikes", split: "train", where: WHERE, orderby: ORDERBY, offset: 0, length: 100 }), 0);
  const speed = BIRD_COLUMNS.indexOf("Speed IAS in knots");
  const speeds = t.cells.map((c) => c[speed]).filter((s) => s !== "null").map(Number);
  assert.deepEqual(speeds, [...speeds].sort((a, b) => b - a), "speeds descend");
  assert.deepEqual([...new Set(t.cells.map((c) => c[size]))], ["Large"]);

  // A clause the server refuses: its error in place of the table, as the server shows it.
  const bad = `"no such column" = 1`;
  await page.fill("form.viewer-filter input[name=where]", bad);
  await page.fill("form.viewer-filter input[name=orderby]", "");
  await inPlace(() => page.click("form.viewer-filter button[type=submit]"), `${VIEWER}/birdstrikes/train?offset=0&where=${enc(bad)}`);
  t = await table(page);
  assert.match(t.error ?? "", /^InvalidParameter: \S/, "the error's code and message");
  // Chromium logs the API's 422 to the console; that one is expected.
  assert.deepEqual(problems.map((p) => p.replace(/ \(.*/, "")), ["console: Failed to load resource: the server responded with a status of 422"]);
  problems = [];
  assert.equal(t.idx.length, 0, "no table under the error");
  await assertServerRendersSame(`${VIEWER}/birdstrikes/train?offset=0&where=${enc(bad)}`);

  await inPlace(() => page.click("form.viewer-filter a:text-is('Clear')"), `${VIEWER}/birdstrikes/train?offset=0`);
  t = await table(page);
  assert.equal(t.error, null);
  assert.equal(t.count, "Rows 1–100 of 10000");
  assert.equal(await page.locator("form.viewer-filter a:text-is('Clear')").count(), 0, "no Clear link once cleared");
  assert.equal(await page.inputValue("form.viewer-filter input[name=where]"), "");
});

stepTest("switch to another config", async () => {
  await inPlace(() => page.click(`.viewer-splits a[href='${VIEWER}/boston/train']`), `${VIEWER}/boston/train?offset=0`);
  const t = await table(page);
  assert.deepEqual(t.columns, BOSTON_COLUMNS, "boston's columns");
  assert.deepEqual(t.types, BOSTON_COLUMNS.map((c) => (c === "chas" || c === "rad" ? "int64" : "float64")));
  const body = await api("rows", { config: "boston", split: "train", offset: 0, length: 100 });
  assertTableIs(t, body, 0);
  assert.equal(t.count, "Rows 1–100 of 506");
  assert.equal(t.cells[0][0], "0.00632", "floats read as JavaScript writes them");
  assert.equal(await page.getAttribute("section.viewer", "data-config"), "boston");
  assert.equal(await page.getAttribute(".viewer-splits a.on", "href"), `${VIEWER}/boston/train`);
  assert.equal(await page.getAttribute("form.viewer-search", "action"), `${VIEWER}/boston/train`);
  // Floats included, the server writes every cell as hangar.js does.
  await assertServerRendersSame(`${VIEWER}/boston/train?offset=0`);
  await inPlace(() => page.click("nav.pager a[rel=next]"), `${VIEWER}/boston/train?offset=100`);
  assertTableIs(await table(page), await api("rows", { config: "boston", split: "train", offset: 100, length: 100 }), 100);
});

stepTest("histograms", async () => {
  const stats = await api("statistics", { config: "boston", split: "train" });
  await page.locator("th[data-column='medv'] .hist .bar").first().waitFor();
  for (const s of stats.statistics) {
    const hist = page.locator(`th[data-column='${s.column_name}'] .hist`);
    const cs = s.column_statistics;
    assert.equal(await hist.locator(".bar").count(), cs.histogram.hist.length, `${s.column_name}: one bar per bin`);
    assert.equal(await hist.getAttribute("title"), `min ${cs.min} · max ${cs.max} · mean ${cs.mean}`);
    const heights = await hist.locator(".bar").evaluateAll((bars) => bars.map((b) => parseFloat(b.style.height)));
    const top = Math.max(...cs.histogram.hist);
    heights.forEach((h, i) => assert.ok(Math.abs(h - (100 * cs.histogram.hist[i]) / top) < 0.01, `${s.column_name} bar ${i}: ${h}%`));
  }
  const drawn = await page.locator(".hist").evaluateAll((hs) => hs.map((h) => h.getBoundingClientRect().height));
  assert.ok(drawn.every((h) => h > 10), "the CSS gives the bars room");

  // birdstrikes' category columns: bars of their most frequent values.
  await inPlace(() => page.click(`.viewer-splits a[href='${VIEWER}/birdstrikes/train']`), `${VIEWER}/birdstrikes/train?offset=0`);
  const size = page.locator(`th[data-column='Wildlife Size'] .hist`);
  await size.locator(".bar").first().waitFor();
  const bird = await api("statistics", { config: "birdstrikes", split: "train" });
  const freq = bird.statistics.find((s) => s.column_name === "Wildlife Size").column_statistics;
  const top = Object.entries(freq.frequencies).sort((a, b) => b[1] - a[1]);
  assert.equal(await size.locator(".bar").count(), top.length);
  assert.ok((await size.getAttribute("title")).startsWith(top.map(([k, n]) => `${k}: ${n}`).join(" · ")),
    "the title lists the frequencies, the largest first");
  assert.equal(await page.locator("th[data-column] .hist:empty").count(), 0, "every column of birdstrikes has a histogram");
});

stepTest("long cells and nulls", async () => {
  await inPlace(() => page.click(`.viewer-splits a[href='${VIEWER}/notes/train']`), `${VIEWER}/notes/train?offset=0`);
  const t = await table(page);
  assertTableIs(t, await api("rows", { config: "notes", split: "train", offset: 0, length: 100 }), 0);
  // 301 bytes: cut at 200, back to 199 so as not to split an "é".
  const long = page.locator("table.viewer-table tbody tr").first().locator("td").nth(2).locator("details.long");
  assert.equal(await long.locator("summary").textContent(), `a${"é".repeat(99)}…`);
  assert.equal(await long.evaluate((d) => d.lastChild.textContent), LONG_CELL);
  assert.equal(await long.evaluate((d) => d.open), false, "folded");
  await assertServerRendersSame(`${VIEWER}/notes/train?offset=0`);
  await long.locator("summary").click();
  assert.equal(await long.evaluate((d) => d.open), true, "unfolds on a click");
  assert.equal(await text(page.locator("table.viewer-table tbody tr").nth(1).locator("td").nth(2)), "null");
  assert.equal(await page.locator("table.viewer-table tbody tr").nth(1).locator("td span.null").count(), 1);
  assert.deepEqual(t.pager, [], "no pager links for three rows");
});

stepTest("without JavaScript", async () => {
  shown = plainPage;
  await plainPage.goto(BASE + VIEWER);
  let t = await table(plainPage);
  assert.deepEqual(t.idx, [...Array(100).keys()]);
  assert.equal(await plainPage.locator(".hist .bar").count(), 0, "no histograms without JavaScript");
  await Promise.all([plainPage.waitForNavigation(), plainPage.click("nav.pager a[rel=next]")]);
  assert.equal(plainPage.url(), `${BASE}${VIEWER}/birdstrikes/train?offset=100`);
  t = await table(plainPage);
  assert.deepEqual(t.idx, Array.from({ length: 100 }, (_, i) => 100 + i), "the server's page 2");
  assert.equal(t.count, "Rows 101–200 of 10000");
  await plainPage.fill("form.viewer-search input[name=q]", SEARCH_WORD);
  await Promise.all([plainPage.waitForNavigation(), plainPage.press("form.viewer-search input[name=q]", "Enter")]);
  assert.equal(plainPage.url(), `${BASE}${VIEWER}/birdstrikes/train?q=${SEARCH_WORD}`, "the form's own GET");
  const want = await api("search", { config: "birdstrikes", split: "train", query: SEARCH_WORD, offset: 0, length: 100 });
  assertTableIs(await table(plainPage), want, 0);
});

stepTest("the embed", async () => {
  const res = await page.goto(BASE + EMBED);
  assert.equal(res.status(), 200);
  const headers = await res.allHeaders();
  assert.notEqual((headers["x-frame-options"] ?? "").toUpperCase(), "DENY", "no X-Frame-Options DENY");
  assert.match(headers["content-security-policy"] ?? "", /frame-ancestors \*/);
  assert.match(headers["content-security-policy"] ?? "", /script-src 'self'/);
  assert.equal(await page.locator("header.top").count(), 0, "no site header");
  assert.equal(await page.locator("footer").count(), 0, "no site footer");
  assert.equal((await table(page)).idx.length, 100);
  await inPlace(() => page.click("nav.pager a[rel=next]"), `${EMBED}/birdstrikes/train?offset=100`);
  assert.equal((await table(page)).idx[0], 100);

  // Framed by another site (another origin: a page of this test's own HTTP server): the
  // embed shows and works; the viewer page itself refuses to be framed.
  const site = createServer((req, res) => {
    res.setHeader("Content-Type", "text/html");
    res.end(`<!doctype html><iframe id="embed" src="${BASE}${EMBED}/boston/train" width="900" height="500"></iframe>` +
            `<iframe id="page" src="${BASE}${VIEWER}/boston/train" width="900" height="200"></iframe>`);
  });
  await new Promise((ok) => site.listen(0, "127.0.0.1", ok));
  try {
    await page.goto(`http://127.0.0.1:${site.address().port}/`);
    const embed = page.locator("iframe#embed").contentFrame();
    await embed.locator("th[data-column='medv'] .hist .bar").first().waitFor();
    assert.equal(await embed.locator("table.viewer-table tbody tr").count(), 100);
    await embed.locator("nav.pager a[rel=next]").click();
    await embed.locator("table.viewer-table tbody tr:first-child td.idx:text-is('100')").waitFor();
    assert.equal(await embed.locator("section.viewer").evaluate(() => location.pathname + location.search),
      `${EMBED}/boston/train?offset=100`, "the framed embed pages in place too");
    assert.equal(await page.locator("iframe#page").contentFrame().locator("section.viewer").count(), 0,
      "the site's own viewer page does not show in another site's frame");
  } finally {
    site.close();
  }
  assert.ok(problems.length > 0 && problems.every((p) => /frame-ancestors 'none'|X-Frame-Options/.test(p)),
    `the browser's refusal of the framed page is the only console error: ${problems}`);
  problems = [];
});
