// The headless Chromium session the browser tests share (browser_ui, discussions_ui): one
// persistent profile and page for all the steps of a test file, steps that are skipped once
// one has failed, a full-page screenshot after each step, and the helpers every step uses.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

// A locator's text (all of them: texts) with runs of whitespace as one space, trimmed.
export const text = async (locator) => (await locator.textContent()).replace(/\s+/g, " ").trim();
export const texts = (locator) =>
  locator.evaluateAll((els) => els.map((e) => e.textContent.replace(/\s+/g, " ").trim()));

// Registers the session's before/after hooks: Debian's Chromium with its profile under
// `work`, screenshots into `shots`; `onReady({ browser, page })` once it runs. Returns
// stepTest and follow.
export function browserSession({ work, shots, acceptDownloads = false, onReady = () => {} }) {
  const session = { browser: null, page: null };
  let step = 0;
  let broken = null;  // the first failed step: later steps are skipped

  before(async () => {
    mkdirSync(shots, { recursive: true });
    const profile = path.join(work, "chromium-profile");
    mkdirSync(profile, { recursive: true });
    session.browser = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      acceptDownloads,
      viewport: { width: 1280, height: 900 },
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ],
    });
    session.page = session.browser.pages()[0] ?? (await session.browser.newPage());
    session.page.setDefaultTimeout(15000);
    session.page.setDefaultNavigationTimeout(15000);
    onReady(session);
  });

  after(async () => {
    if (session.browser) await session.browser.close();
  });

  // A step: skipped after an earlier failure; a full-page screenshot at the end, whatever
  // happened (the one of a failing step shows what the browser saw).
  session.stepTest = (name, fn) => {
    test(name, async (t) => {
      if (broken) {
        t.skip(`after the failure of "${broken}"`);
        return;
      }
      step += 1;
      const slug = name.replace(/[^a-z0-9]+/gi, "-").toLowerCase().replace(/^-|-$/g, "");
      const shot = path.join(shots, `${String(step).padStart(2, "0")}-${slug}.png`);
      try {
        await fn();
      } catch (e) {
        broken = name;
        throw e;
      } finally {
        if (session.page) await session.page.screenshot({ path: shot, fullPage: true }).catch(() => {});
      }
    });
  };

  // Clicks what `selector` names and waits for the page it leads to (also when that is the
  // same URL, as after a form post answered by 303 to the form's page); checks the URL.
  session.follow = async (selector, url) => {
    const page = session.page;
    await Promise.all([page.waitForNavigation(), page.locator(selector).first().click()]);
    assert.equal(page.url(), url, `clicking ${selector} leads to ${url}`);
  };
  return session;
}
