// Issue #4's browser acceptance test: headless Debian Chromium, driven by playwright-core
// (pinned in tests/js/package.json), walks the web UI the way a person does and checks
// what each page shows. Run through tests/integration/browser_ui.sh, which starts the server, creates the user and sets:
//
//   HANGAR_URL        the server's base URL
//   HANGAR_USER       a user created with `hangar admin user create --password-stdin`
//   HANGAR_PASSWORD   its password
//   HANGAR_WORK       a scratch dir (git work tree, downloads, the browser profile)
//   HANGAR_SHOTS      where the full-page screenshots go, one per step (kept after the run)
//
// The steps share one browser session and run in order; once a step fails the later ones
// are skipped (they would only fail for the same reason). git runs from here, with the
// token the tokens page shows, under the isolated git config lib.sh exported.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync, renameSync, readFileSync } from "node:fs";
import path from "node:path";
import { browserSession, text, texts } from "./browser_session.mjs";

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run tests/integration/browser_ui.sh`);
  return v;
}
const BASE = env("HANGAR_URL");
const USER = env("HANGAR_USER");
const PASSWORD = env("HANGAR_PASSWORD");
const WORK = env("HANGAR_WORK");
const SHOTS = env("HANGAR_SHOTS");
const REPO = "browser-model";
const REPO_PATH = `/${USER}/${REPO}`;
const TOKEN_NAME = "browser-push";

// The content pushed in step 4.
const CODE_LINES = 400;
const CHANGED_LINE = 200;
const codeLine = (i) => `VALUE_${String(i).padStart(4, "0")} = ${i} * 7  # line ${i}`;
const CHANGED_TEXT = `VALUE_0200 = "changed in the second commit"  # line 200`;
const SUBJECT_1 = "Add model card, training code and configs";
const SUBJECT_2 = "Change line 200 and rename params.json";
const README = `---
license: mit
tags:
- vision
- browser-test
library_name: transformers
pipeline_tag: image-classification
---
# Browser Model

A model card pushed by the browser test.

| Metric   | Value |
|----------|-------|
| accuracy | 0.917 |
| f1       | 0.883 |

- [x] trained on the toy set
- [ ] evaluated on the hidden set
`;

let browser;
let page;
const { stepTest, follow } = browserSession({
  work: WORK, shots: SHOTS, acceptDownloads: true, onReady: (s) => ({ browser, page } = s),
});
const state = {};   // values carried from step to step (token, commit ids, URLs)

function git(args, opts = {}) {
  return execFileSync("git", ["-c", "credential.helper=", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    ...opts,
  });
}

// The URL of the repo with the token as git's password (git's user name is ignored).
function authedUrl(token) {
  const u = new URL(BASE + REPO_PATH);
  u.username = "hf_user";
  u.password = token;
  return u.toString();
}

// Code is compared as it is, whitespace included.
const rawTexts = (locator) => locator.evaluateAll((els) => els.map((e) => e.textContent));
const rawText = (locator) => locator.textContent();

// The header's signed-in user link, or null when signed out.
async function headerUser() {
  const me = page.locator("header.top a.me");
  return (await me.count()) ? text(me) : null;
}

async function whoAmI(token) {
  const res = await fetch(`${BASE}/api/whoami-v2`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: res.status === 200 ? await res.json() : null };
}

stepTest("sign in", async () => {
  await page.goto(`${BASE}/login`);
  assert.equal(await text(page.locator("main h1")), "Sign in");
  assert.equal(await headerUser(), null, "nobody is signed in yet");
  assert.equal(await text(page.locator("header.top nav a[href='/login']")), "Sign in");

  // A wrong password: the form again, with a message, and still signed out.
  await page.fill("#username", USER);
  await page.fill("#password", PASSWORD + "-wrong");
  await follow("form[action='/login'] button[type=submit]", `${BASE}/login`);
  assert.match(await text(page.locator("main .flash.error")), /\S/, "an error message on a wrong password");
  assert.equal(await page.inputValue("#username"), USER, "the user name is kept");
  assert.equal(await headerUser(), null);

  await page.fill("#password", PASSWORD);
  await follow("form[action='/login'] button[type=submit]", `${BASE}/`);
  assert.equal(await headerUser(), USER, "the header names the signed-in user");
  assert.equal(await page.locator("header.top a[href='/login']").count(), 0, "no Sign in link once signed in");
  assert.equal(await text(page.locator("header.top form[action='/logout'] button")), "Sign out");
  const session = (await browser.cookies(BASE)).find((c) => c.name === "hangar_session");
  assert.ok(session, "a session cookie");
  assert.ok(session.httpOnly && session.sameSite === "Lax", "the session cookie is HttpOnly, SameSite=Lax");
  state.cookie = `${session.name}=${session.value}`;
});

stepTest("create a repo", async () => {
  await follow("header.top nav a[href='/new']", `${BASE}/new`);
  assert.equal(await text(page.locator("main h1")), "Create a new repository");
  assert.deepEqual(await texts(page.locator("#owner option")), [USER]);
  await page.selectOption("#type", "model");
  await page.fill("#name", REPO);
  await follow("form[action='/new'] button[type=submit]", BASE + REPO_PATH);
  assert.equal(await text(page.locator(".repo-head h1")), `${USER} / ${REPO}`);
  assert.equal(await text(page.locator(".repo-head p.muted")), "Model");
  assert.equal(await text(page.locator(".repo-head nav.tabs a.on")), "Model card");
  assert.match(await text(page.locator(".repo-home .note")), /No card yet/);
  assert.match(await text(page.locator(".clone code")), new RegExp(`git clone ${BASE}${REPO_PATH}$`));
  // A new repo starts with the hub's initial commit: a .gitattributes and no card.
  assert.deepEqual(await texts(page.locator("#files td.name a")), [".gitattributes"]);
});

stepTest("create a write token", async () => {
  await follow("header.top nav a[href='/settings/tokens']", `${BASE}/settings/tokens`);
  assert.equal(await text(page.locator("main h1")), "Access tokens");
  assert.deepEqual(await texts(page.locator("#tokens td")), ["No tokens yet."]);
  await page.fill("#token-name", TOKEN_NAME);
  await page.selectOption("#token-role", "write");
  await follow("form[action='/settings/tokens'] button[type=submit]", `${BASE}/settings/tokens`);
  state.token = await text(page.locator("#token-value"));
  assert.match(state.token, /^hf_[A-Za-z0-9_]+$/, "the new token is shown");
  assert.match(await text(page.locator("#new-token")), new RegExp(`Your new token ${TOKEN_NAME}`));
  const rows = page.locator("#tokens tr:has(td.token-name)");
  assert.equal(await rows.count(), 1);
  const cells = await texts(rows.first().locator("td"));
  assert.deepEqual(cells.slice(0, 2), [TOKEN_NAME, "write"]);
  assert.equal(cells[3], "never", "not used yet");
  const who = await whoAmI(state.token);
  assert.equal(who.status, 200, "the API accepts the new token");
  assert.equal(who.body.name, USER);
});

stepTest("push with git", async () => {
  const w = path.join(WORK, "clone");
  git(["clone", "-q", BASE + REPO_PATH, w]);
  const write = (rel, body) => {
    mkdirSync(path.dirname(path.join(w, rel)), { recursive: true });
    writeFileSync(path.join(w, rel), body);
  };
  write("README.md", README);
  const code = [];
  for (let i = 1; i <= CODE_LINES; i++) code.push(codeLine(i));
  write("src/model/train.py", code.join("\n") + "\n");
  write("src/model/__init__.py", "");
  write("configs/params.json", '{\n  "learning_rate": 0.001,\n  "epochs": 3,\n  "batch_size": 32\n}\n');
  git(["-C", w, "add", "-A"]);
  git(["-C", w, "commit", "-q", "-m", SUBJECT_1]);

  code[CHANGED_LINE - 1] = CHANGED_TEXT;
  write("src/model/train.py", code.join("\n") + "\n");
  renameSync(path.join(w, "configs/params.json"), path.join(w, "configs/hyperparams.json"));
  git(["-C", w, "add", "-A"]);
  git(["-C", w, "commit", "-q", "-m", SUBJECT_2]);
  state.first = git(["-C", w, "rev-parse", "HEAD~1"]).trim();
  state.second = git(["-C", w, "rev-parse", "HEAD"]).trim();
  state.clone = w;

  const push = spawnSync("git", ["-c", "credential.helper=", "-C", w, "push", "-q", authedUrl(state.token), "main"], { encoding: "utf8" });
  assert.equal(push.status, 0, `git push with the token from the page failed: ${push.stderr}`);
  const remote = git(["ls-remote", BASE + REPO_PATH, "refs/heads/main"]);
  assert.equal(remote.split("\t")[0], state.second, "the server's main is the pushed commit");

  // The tokens page (opened again, not reloaded: that would post the form again) now
  // shows the token as used, and no longer its text.
  await page.goto(`${BASE}/settings/tokens`);
  const rows = page.locator("#tokens tr:has(td.token-name)");
  assert.equal(await rows.count(), 1);
  const cells = await texts(rows.first().locator("td"));
  assert.equal(cells[0], TOKEN_NAME);
  assert.notEqual(cells[3], "never", "last used after the push");
  assert.equal(await page.locator("#token-value").count(), 0, "the token text is shown only once");
});

stepTest("rendered card", async () => {
  await page.goto(BASE + REPO_PATH);
  const card = page.locator("article.card");
  assert.equal(await text(card.locator("h1")), "Browser Model");
  assert.deepEqual(await texts(card.locator("table th")), ["Metric", "Value"]);
  assert.deepEqual(await texts(card.locator("table td")), ["accuracy", "0.917", "f1", "0.883"]);
  const boxes = card.locator("input[type=checkbox]");
  assert.equal(await boxes.count(), 2, "two task-list checkboxes");
  assert.deepEqual(await boxes.evaluateAll((els) => els.map((e) => e.checked)), [true, false]);
  assert.deepEqual(await texts(card.locator("li")), ["trained on the toy set", "evaluated on the hidden set"]);
  assert.equal(await card.locator("text=license: mit").count(), 0, "front matter is not rendered as text");
  const badges = await texts(page.locator(".card-meta .badge"));
  for (const b of ["license: mit", "library_name: transformers", "pipeline_tag: image-classification", "tag: vision", "tag: browser-test"])
    assert.ok(badges.includes(b), `badge "${b}" among ${JSON.stringify(badges)}`);
  assert.deepEqual(await texts(page.locator("#files td.name a")), ["configs", "src", ".gitattributes", "README.md"]);
  const last = await text(page.locator(".last-commit"));
  assert.ok(last.includes(SUBJECT_2), `last commit line "${last}" names the second commit`);
  assert.ok(last.startsWith(state.second.slice(0, 12)), `last commit line "${last}" starts with its short id`);
});

stepTest("tree, directory, blob", async () => {
  await follow(".repo-head nav.tabs a:text-is('Files')", `${BASE}${REPO_PATH}/tree/main`);
  assert.deepEqual(await texts(page.locator("#files td.name a")), ["configs", "src", ".gitattributes", "README.md"]);
  await follow("#files a:text-is('src')", `${BASE}${REPO_PATH}/tree/main/src`);
  assert.equal(await text(page.locator("p.crumbs")), `${REPO} / src`);
  assert.equal(await page.locator("#files a:text-is('..')").getAttribute("href"), `${REPO_PATH}/tree/main`);
  assert.deepEqual(await texts(page.locator("#files td.name a")), ["model"]);
  await follow("#files a:text-is('model')", `${BASE}${REPO_PATH}/tree/main/src/model`);
  assert.equal(await text(page.locator("p.crumbs")), `${REPO} / src / model`);
  assert.deepEqual(await texts(page.locator("#files td.name a")), ["__init__.py", "train.py"]);
  await follow("#files a:text-is('train.py')", `${BASE}${REPO_PATH}/blob/main/src/model/train.py`);
  assert.equal(await text(page.locator("p.crumbs")), `${REPO} / src / model / train.py`);
  assert.match(await text(page.locator(".filebar")), new RegExp(`· ${CODE_LINES} lines`));
  assert.equal(await page.locator("#code tr").count(), CODE_LINES);
  assert.equal(await rawText(page.locator("#L10 td.src")), codeLine(10));
  assert.equal(await rawText(page.locator(`#L${CHANGED_LINE} td.src`)), CHANGED_TEXT);
  assert.equal(await rawText(page.locator(`#L${CODE_LINES} td.src`)), codeLine(CODE_LINES));
  // hangar.js highlights it as Python (highlight.js): the comment gets its own span.
  assert.equal(await page.locator("#code").getAttribute("data-lang"), "python");
  assert.equal(await rawText(page.locator("#L10 td.src .hljs-comment")), "# line 10");
  await page.click("#L10 td.ln a[href='#L10']");
  await page.waitForURL(`${BASE}${REPO_PATH}/blob/main/src/model/train.py#L10`);
  assert.equal(await page.locator("tr:target").getAttribute("id"), "L10", "#L10 is the anchor of line 10");
  state.blobUrl = page.url().replace(/#.*/, "");
});

stepTest("file history", async () => {
  await follow(".filebar a:text-is('History')", `${BASE}${REPO_PATH}/commits/main/src/model/train.py`);
  assert.match(await text(page.locator("main h2")), /History of src\/model\/train\.py/);
  const rows = page.locator("#commits tr.commit");
  assert.deepEqual(await texts(rows.locator("a.subject")), [SUBJECT_2, SUBJECT_1]);
  assert.deepEqual(await texts(rows.locator("td.sha code")), [state.second.slice(0, 12), state.first.slice(0, 12)]);
  assert.match(await text(rows.first()), /Hangar Integration committed/);
});

stepTest("commit diff", async () => {
  await follow(`#commits a.subject:text-is('${SUBJECT_2}')`, `${BASE}${REPO_PATH}/commit/${state.second}`);
  assert.equal(await text(page.locator(".commit-head h2.subject")), SUBJECT_2);
  assert.equal(await text(page.locator("#sha")), state.second);
  assert.match(await text(page.locator(".commit-head")), new RegExp(`parent ${state.first.slice(0, 12)}`));
  assert.match(await text(page.locator(".commit-head")), /2 file\(s\) changed, \+1 −1/);

  const code = page.locator("section.diff:has(h3 code:text-is('src/model/train.py'))");
  assert.equal(await text(code.locator("h3 .badge")), "modified");
  assert.deepEqual(await rawTexts(code.locator("pre span.del")), [`-${codeLine(CHANGED_LINE)}`]);
  assert.deepEqual(await rawTexts(code.locator("pre span.add")), [`+${CHANGED_TEXT}`]);
  assert.ok((await code.locator("pre span.hunk").count()) >= 1, "a hunk header");
  assert.ok((await rawTexts(code.locator("pre span.ctx"))).includes(` ${codeLine(CHANGED_LINE - 1)}`), "context lines");

  const renamed = page.locator("section.diff:has(h3 .badge:text-is('renamed'))");
  assert.equal(await renamed.count(), 1, "one rename");
  assert.equal(await text(renamed.locator("h3")), "renamed configs/params.json → configs/hyperparams.json +0 −0");
  assert.equal(await renamed.locator("pre span.add, pre span.del").count(), 0, "an exact rename has no changed lines");
});

stepTest("blame", async () => {
  // Back to the file (at this commit) from the diff, then its blame.
  await follow("section.diff h3 a:has(code:text-is('src/model/train.py'))", `${BASE}${REPO_PATH}/blob/${state.second}/src/model/train.py`);
  assert.equal(await rawText(page.locator(`#L${CHANGED_LINE} td.src`)), CHANGED_TEXT);
  await follow(".filebar a:text-is('Blame')", `${BASE}${REPO_PATH}/blame/${state.second}/src/model/train.py`);
  assert.match(await text(page.locator(".filebar")), new RegExp(`Blame · ${CODE_LINES} lines · 2 commits`));
  // Each line's commit: the link in its row, or in the nearest hunk start above it.
  const lines = await page.locator("#blame tr").evaluateAll((rows) => {
    let commit = null;
    return rows.map((r) => {
      const a = r.querySelector("td.blame a");
      if (a) commit = a.getAttribute("href").replace(/.*\/commit\//, "");
      return { id: r.id, commit, text: r.querySelector("td.src").textContent };
    });
  });
  assert.equal(lines.length, CODE_LINES);
  for (let i = 1; i <= CODE_LINES; i++) {
    const l = lines[i - 1];
    assert.equal(l.id, `L${i}`);
    assert.equal(l.text, i === CHANGED_LINE ? CHANGED_TEXT : codeLine(i), `line ${i}'s text`);
    assert.equal(l.commit, i === CHANGED_LINE ? state.second : state.first, `line ${i} is attributed to ${i === CHANGED_LINE ? "the second" : "the first"} commit`);
  }
  assert.match(await text(page.locator(`#L${CHANGED_LINE} td.blame`)), /Hangar Integration/);
  assert.equal(await page.locator(`#L${CHANGED_LINE} td.blame a`).getAttribute("title"), SUBJECT_2);
});

stepTest("refs and archive", async () => {
  await follow(".repo-head nav.tabs a:text-is('Branches & tags')", `${BASE}${REPO_PATH}/refs`);
  const rows = page.locator("#branches tr");
  assert.equal(await rows.count(), 1);
  assert.equal(await text(rows.locator("td").first()), "main default");
  assert.equal(await text(rows.locator("td").nth(1)), SUBJECT_2);
  assert.deepEqual(await texts(page.locator("#tags td")), ["No tags."]);

  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#branches a:text-is('.tar.gz')")]);
  assert.match(download.suggestedFilename(), /\.tar\.gz$/);
  const file = path.join(WORK, download.suggestedFilename());
  await download.saveAs(file);
  const magic = readFileSync(file).subarray(0, 2);
  assert.deepEqual([...magic], [0x1f, 0x8b], "a gzip file");
  const names = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n").filter((n) => n && !n.endsWith("/"));
  const rel = names.map((n) => n.replace(/^[^/]*\//, "")).sort();
  assert.deepEqual(rel, [".gitattributes", "README.md", "configs/hyperparams.json", "src/model/__init__.py", "src/model/train.py"]);
  const train = names.find((n) => n.endsWith("src/model/train.py"));
  const body = execFileSync("tar", ["-xzOf", file, train], { encoding: "utf8" });
  assert.equal(body.split("\n")[CHANGED_LINE - 1], CHANGED_TEXT, "the archive holds main's train.py");
});

stepTest("revoke the token", async () => {
  await page.goto(`${BASE}/settings/tokens`);
  const row = page.locator("#tokens tr", { has: page.locator(`td.token-name:text-is('${TOKEN_NAME}')`) });
  assert.equal(await row.count(), 1);
  await Promise.all([page.waitForNavigation(), row.locator("button:text-is('Revoke')").click()]);
  assert.equal(page.url(), `${BASE}/settings/tokens`);
  assert.equal(await page.locator("#tokens td.token-name").count(), 0, "the token is gone from the table");
  assert.deepEqual(await texts(page.locator("#tokens td")), ["No tokens yet."]);

  const who = await whoAmI(state.token);
  assert.equal(who.status, 401, "the API refuses the revoked token");
  // git with the revoked token: a push is refused and the branch stays where it was.
  writeFileSync(path.join(state.clone, "after-revoke.txt"), "must not arrive\n");
  git(["-C", state.clone, "add", "after-revoke.txt"]);
  git(["-C", state.clone, "commit", "-q", "-m", "After revoke"]);
  const push = spawnSync("git", ["-c", "credential.helper=", "-C", state.clone, "push", authedUrl(state.token), "main"], { encoding: "utf8" });
  assert.notEqual(push.status, 0, "git push with the revoked token fails");
  assert.match(push.stderr, /401|Authentication failed|could not read Username/i, `git's message: ${push.stderr}`);
  // The repo is public, so git only sends credentials when asked: send them up front,
  // as a client configured with the token does; a revoked token is an error, not anonymous.
  const basic = Buffer.from(`hf_user:${state.token}`).toString("base64");
  const lsr = spawnSync("git", ["-c", "credential.helper=", "-c", `http.extraHeader=Authorization: Basic ${basic}`,
    "ls-remote", BASE + REPO_PATH], { encoding: "utf8" });
  assert.notEqual(lsr.status, 0, `git ls-remote with the revoked token fails (stdout: ${lsr.stdout})`);
  // (git asks for other credentials after the server's 401, and may not prompt here.)
  assert.match(lsr.stderr, /401|Authentication failed|could not read Username/i, `git's message: ${lsr.stderr}`);
  const refs = await fetch(`${BASE}${REPO_PATH}/info/refs?service=git-upload-pack`, { headers: { Authorization: `Basic ${basic}` } });
  assert.equal(refs.status, 401, "git's smart HTTP refuses the revoked token");
  const remote = git(["ls-remote", BASE + REPO_PATH, "refs/heads/main"]);
  assert.equal(remote.split("\t")[0], state.second, "main did not move");
});

stepTest("sign out", async () => {
  await follow("header.top form[action='/logout'] button:text-is('Sign out')", `${BASE}/`);
  assert.equal(await headerUser(), null, "no user in the header");
  assert.equal(await text(page.locator("header.top nav a[href='/login']")), "Sign in");
  assert.equal(await page.locator("header.top a[href='/new'], header.top a[href='/settings/tokens']").count(), 0);
  await page.goto(`${BASE}/settings/tokens`);
  assert.equal(page.url(), `${BASE}/login?next=%2Fsettings%2Ftokens`, "the tokens page sends a signed-out browser to sign in");
  assert.equal(await text(page.locator("main h1")), "Sign in");
  // The old session cookie, replayed, is no good either: the session ended on the server.
  const res = await fetch(`${BASE}/settings/tokens`, { redirect: "manual", headers: { Cookie: state.cookie } });
  assert.equal(res.status, 303, "the old session cookie is refused");
  assert.equal(res.headers.get("location"), "/login?next=%2Fsettings%2Ftokens");
});
