// Issue 19 §2 in a browser: headless Debian Chromium, driven by playwright-core (pinned in
// tests/js/package.json), walks a repo's Community tab — pull requests, comments, merge,
// close and reopen, a new discussion — and its home page's like button (§3), and checks
// what each page shows against the API.
// Run through tests/integration/discussions_ui.sh, which makes ann/ui with pull request #1
// (mergeable: b.txt added, two commits) and #2 (conflicting with main in README.md), and
// sets:
//
//   HANGAR_URL, HANGAR_USER, HANGAR_PASSWORD   the server and ann's password
//   HANGAR_WORK        a scratch dir (the browser profile)
//   HANGAR_SHOTS       where the full-page screenshots go, one per step
//   HANGAR_PR1_HEAD    refs/pr/1's commit
//   HANGAR_MAIN        main's commit before the merges
//
// The steps share one browser session and run in order; once a step fails the later ones
// are skipped.
import assert from "node:assert/strict";
import { browserSession, text, texts } from "./browser_session.mjs";

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run tests/integration/discussions_ui.sh`);
  return v;
}
const BASE = env("HANGAR_URL");
const USER = env("HANGAR_USER");
const PASSWORD = env("HANGAR_PASSWORD");
const WORK = env("HANGAR_WORK");
const SHOTS = env("HANGAR_SHOTS");
const PR1_HEAD = env("HANGAR_PR1_HEAD");
const MAIN_BEFORE = env("HANGAR_MAIN");
const REPO = `${BASE}/${USER}/ui`;

let page;
const { stepTest, follow } = browserSession({
  work: WORK, shots: SHOTS, onReady: (s) => ({ page } = s),
});

async function api(pathname) {
  const res = await fetch(`${BASE}${pathname}`);
  assert.equal(res.status, 200, `GET ${pathname}`);
  return res.json();
}
const mainHead = async () => (await api(`/api/models/${USER}/ui/revision/main`)).sha;

stepTest("an anonymous visitor sees the thread but no forms", async () => {
  await page.goto(`${REPO}/discussions/1`);
  assert.equal(await text(page.locator("#discussion-title")), "Add b.txt #1");
  assert.equal(await page.locator("#comment-form").count(), 0, "no comment form");
  assert.equal(await page.locator("#merge-button").count(), 0, "no merge button");
  assert.match(await text(page.locator("main")), /Sign in to comment/);
});

stepTest("sign in", async () => {
  await page.goto(`${BASE}/login`);
  await page.fill("#username", USER);
  await page.fill("#password", PASSWORD);
  await follow("form[action='/login'] button[type=submit]", `${BASE}/`);
});

stepTest("the Community tab lists both pull requests", async () => {
  await page.goto(REPO);
  await follow(".repo-head nav.tabs a[href$='/discussions']", `${REPO}/discussions`);
  assert.equal(await text(page.locator(".repo-head nav.tabs a.on")), "Community");
  const rows = await page.locator("#discussions tr").evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim()).join(" | ")));
  assert.equal(rows.length, 2, rows.join(" | "));
  assert.match(rows[0], /^PR · open \| Shout in the README \| #2 opened .* by ann \| 0 comment\(s\)$/);
  assert.match(rows[1], /^PR · open \| Add b.txt \| #1 opened .* by ann \| 0 comment\(s\)$/);
});

stepTest("pull request #1: its commits, its diff, mergeable", async () => {
  await follow("#discussions a[href$='/discussions/1']", `${REPO}/discussions/1`);
  assert.equal(await text(page.locator("#discussion-status")), "open");
  const commits = await texts(page.locator("#events li.event-commit"));
  assert.equal(commits.length, 2, commits.join(" | "));
  assert.match(commits[0], /added commit [0-9a-f]{12} Add b.txt/);
  assert.match(commits[1], new RegExp(`added commit ${PR1_HEAD.slice(0, 12)} Add charlie to b.txt`));
  assert.deepEqual(await texts(page.locator("section.diff h3 a code")), ["b.txt"]);
  const patch = await page.locator("section.diff pre").first().textContent();
  assert.match(patch, /\+bravo/);
  assert.match(patch, /\+charlie/);
  assert.match(await text(page.locator("#mergeable")), /can be merged into main/);
  assert.equal(await page.locator("#merge-button").count(), 1);
});

stepTest("a comment through the form, rendered as Markdown", async () => {
  await page.fill("#comment", "Looks **good** to me.\n\n- one\n- two");
  await follow("#comment-button", `${REPO}/discussions/1`);
  const comment = page.locator("#events li.event-comment").last();
  assert.match(await text(comment), /ann commented/);
  assert.equal(await text(comment.locator(".markdown-body strong")), "good");
  assert.deepEqual(await texts(comment.locator(".markdown-body li")), ["one", "two"]);
  const d = await api(`/api/models/${USER}/ui/discussions/1`);
  assert.equal(d.events.filter((e) => e.type === "comment").at(-1).data.latest.raw, "Looks **good** to me.\n\n- one\n- two");
});

stepTest("the merge button merges and closes the pull request", async () => {
  assert.equal(await mainHead(), MAIN_BEFORE);
  await follow("#merge-button", `${REPO}/discussions/1`);
  assert.equal(await text(page.locator("#discussion-status")), "merged");
  assert.equal(await page.locator("#merge-button").count(), 0, "no merge button once merged");
  assert.match(await text(page.locator("#events li.event-status-change").last()), /changed the status to merged/);
  const head = await mainHead();
  assert.notEqual(head, MAIN_BEFORE, "main moved");
  const d = await api(`/api/models/${USER}/ui/discussions/1`);
  assert.equal(d.status, "merged");
  assert.equal(d.changes.mergeCommitId, head);
  const b = await fetch(`${REPO}/resolve/main/b.txt`);
  assert.equal(await b.text(), "bravo\ncharlie\n", "main has the pull request's file");
  const readme = await fetch(`${REPO}/resolve/main/README.md`);
  assert.equal(await readme.text(), "line uno\nline two\n", "and keeps its own change");
});

stepTest("pull request #2 conflicts: no merge button, a forged merge answers 409", async () => {
  await page.goto(`${REPO}/discussions/2`);
  assert.match(await text(page.locator("#conflicts")), /conflicts with main in: README.md/);
  assert.equal(await page.locator("#merge-button").count(), 0);
  const before = await mainHead();
  const csrf = await page.locator("#comment-form input[name=_csrf]").inputValue();
  const status = await page.evaluate(async ([url, token]) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: token }).toString(),
    });
    return res.status;
  }, [`${REPO}/discussions/2/merge`, csrf]);
  assert.equal(status, 409);
  assert.equal(await mainHead(), before, "main did not move");
  assert.equal((await api(`/api/models/${USER}/ui/discussions/2`)).status, "open");
});

stepTest("close and reopen", async () => {
  await follow("#close-button", `${REPO}/discussions/2`);
  assert.equal(await text(page.locator("#discussion-status")), "closed");
  assert.equal(await page.locator("#reopen-button").count(), 1);
  await follow("#reopen-button", `${REPO}/discussions/2`);
  assert.equal(await text(page.locator("#discussion-status")), "open");
  const changes = await texts(page.locator("#events li.event-status-change"));
  assert.equal(changes.length, 2);
});

stepTest("a new discussion through its form", async () => {
  await page.goto(`${REPO}/discussions`);
  await follow("#new-discussion", `${REPO}/discussions/new`);
  await page.fill("#title", "");
  await page.evaluate(() => document.querySelector("#title").removeAttribute("required"));
  await page.fill("#description", "kept");
  await follow("#new-discussion-form button[type=submit]", `${REPO}/discussions/new`);
  assert.match(await text(page.locator("#error")), /title is empty/);
  assert.equal(await page.inputValue("#description"), "kept", "the form keeps what was typed");
  await page.fill("#title", "Which license?");
  await page.fill("#description", "Is it *MIT*?");
  await follow("#new-discussion-form button[type=submit]", `${REPO}/discussions/3`);
  assert.equal(await text(page.locator("#discussion-title")), "Which license? #3");
  assert.equal(await text(page.locator("#events .markdown-body em")), "MIT");
  assert.equal(await page.locator("#merge-box").count(), 0, "a discussion has no merge box");
});

stepTest("like and unlike from the repo's home page", async () => {
  await page.goto(REPO);
  assert.equal(await text(page.locator("#like-count")), "0");
  assert.equal(await text(page.locator("#like-button")), "♡ Like");
  await follow("#like-button", REPO);
  assert.equal(await text(page.locator("#like-count")), "1");
  assert.equal(await text(page.locator("#like-button")), "♥ Unlike");
  const likers = await api(`/api/models/${USER}/ui/likers`);
  assert.deepEqual(likers.map((l) => l.user), [USER]);
  await follow("#like-button", REPO);
  assert.equal(await text(page.locator("#like-count")), "0");
  assert.deepEqual(await api(`/api/models/${USER}/ui/likers`), []);
});
