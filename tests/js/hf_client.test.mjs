// The real @huggingface/hub client (2.15.0) against a running Hangar.
// Run through tests/integration/js_client.sh, which starts the server, pushes the repos
// and sets HANGAR_FIXTURE to a JSON file describing what the client should see.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import {
  countCommits,
  datasetInfo,
  downloadFile,
  downloadFileToCacheDir,
  fileExists,
  listCommits,
  listFiles,
  listModels,
  modelInfo,
  pathsInfo,
  repoExists,
  whoAmI,
} from "@huggingface/hub";

const fixturePath = process.env.HANGAR_FIXTURE;
if (!fixturePath) throw new Error("HANGAR_FIXTURE is not set: run tests/integration/js_client.sh");
const fx = JSON.parse(readFileSync(fixturePath, "utf8"));
const hubUrl = fx.url;
const accessToken = fx.token;
const M = fx.model;

async function sha256OfBlob(blob) {
  assert.ok(blob, "expected a Blob, got " + blob);
  return createHash("sha256").update(Buffer.from(await blob.arrayBuffer())).digest("hex");
}

async function collect(gen) {
  const out = [];
  for await (const x of gen) out.push(x);
  return out;
}

test("repoExists: public model, dataset, unknown", async () => {
  assert.equal(await repoExists({ repo: M.repo, hubUrl }), true);
  assert.equal(await repoExists({ repo: { type: "dataset", name: fx.dataset.repo }, hubUrl }), true);
  assert.equal(await repoExists({ repo: "alice/does-not-exist", hubUrl }), false);
  assert.equal(await repoExists({ repo: { type: "dataset", name: M.repo }, hubUrl }), false);
});

test("repoExists: private repo needs the owner's token", async () => {
  assert.equal(await repoExists({ repo: fx.private.repo, hubUrl }), false, "anonymous");
  assert.equal(await repoExists({ repo: fx.private.repo, hubUrl, accessToken: fx.otherToken }), false, "bob");
  assert.equal(await repoExists({ repo: fx.private.repo, hubUrl, accessToken }), true, "alice");
});

test("modelInfo: id, sha, privacy, card data", async () => {
  const info = await modelInfo({ name: M.repo, hubUrl, additionalFields: ["sha", "cardData", "library_name", "tags"] });
  assert.equal(info.name, M.repo);
  assert.equal(typeof info.id, "string");
  assert.equal(info.private, false);
  assert.equal(info.sha, M.head);
  assert.equal(info.task, "image-to-text");
  assert.equal(info.cardData?.license, "apache-2.0");
  assert.equal(info.library_name, "tesseract");
  assert.ok(info.updatedAt instanceof Date && !Number.isNaN(info.updatedAt.getTime()), "updatedAt is a date");
});

test("modelInfo at a commit id", async () => {
  const first = M.commits[M.commits.length - 1];
  const info = await modelInfo({ name: M.repo, hubUrl, revision: first, additionalFields: ["sha"] });
  assert.equal(info.sha, first);
});

test("modelInfo: private repo throws without a token, works with one", async () => {
  await assert.rejects(modelInfo({ name: fx.private.repo, hubUrl }));
  const info = await modelInfo({ name: fx.private.repo, hubUrl, accessToken, additionalFields: ["sha"] });
  assert.equal(info.private, true);
  assert.equal(info.sha, fx.private.head);
});

test("datasetInfo", async () => {
  const info = await datasetInfo({ name: fx.dataset.repo, hubUrl, additionalFields: ["sha"] });
  assert.equal(info.name, fx.dataset.repo);
  assert.equal(info.private, false);
  assert.equal(info.sha, fx.dataset.head);
});

test("listFiles recursive: every file and directory, LFS metadata", async () => {
  const entries = await collect(listFiles({ repo: M.repo, hubUrl, recursive: true }));
  const files = entries.filter((e) => e.type === "file").map((e) => e.path).sort();
  const dirs = entries.filter((e) => e.type === "directory").map((e) => e.path).sort();
  assert.deepEqual(files, [...M.files].sort());
  assert.deepEqual(dirs, [...M.dirs].sort());
  const lfs = entries.find((e) => e.path === M.lfs.path);
  assert.equal(lfs.size, M.lfs.size);
  assert.equal(lfs.lfs?.oid, M.lfs.sha256);
  assert.equal(lfs.lfs?.size, M.lfs.size);
  assert.equal(lfs.xetHash, undefined);
  const reg = entries.find((e) => e.path === M.regular.path);
  assert.equal(reg.oid, M.regular.oid);
  assert.equal(reg.size, M.regular.size);
  assert.equal(reg.lfs, undefined);
});

test("listFiles non-recursive, and under a folder with spaces", async () => {
  const top = (await collect(listFiles({ repo: M.repo, hubUrl }))).map((e) => e.path).sort();
  assert.deepEqual(top, [...M.top].sort());
  const sub = await collect(listFiles({ repo: M.repo, hubUrl, path: M.nonAscii.dir }));
  assert.deepEqual(sub.map((e) => e.path), [M.nonAscii.path]);
});

test("listFiles expand: lastCommit per entry", async () => {
  const entries = await collect(listFiles({ repo: M.repo, hubUrl, expand: true }));
  const readme = entries.find((e) => e.path === "README.md");
  assert.equal(readme?.lastCommit?.id, M.head);
  assert.match(readme.lastCommit.date, /Z$/);
});

test("fileExists: true and false", async () => {
  assert.equal(await fileExists({ repo: M.repo, path: M.regular.path, hubUrl }), true);
  assert.equal(await fileExists({ repo: M.repo, path: M.lfs.path, hubUrl }), true);
  assert.equal(await fileExists({ repo: M.repo, path: M.nonAscii.path, hubUrl }), true);
  assert.equal(await fileExists({ repo: M.repo, path: "missing.txt", hubUrl }), false);
  assert.equal(await fileExists({ repo: M.repo, path: M.regular.path, hubUrl, revision: M.head }), true);
});

test("downloadFile: regular file bytes", async () => {
  const blob = await downloadFile({ repo: M.repo, path: M.regular.path, hubUrl });
  assert.equal(blob.size, M.regular.size);
  assert.equal(await sha256OfBlob(blob), M.regular.sha256);
});

test("downloadFile: non-ASCII path", async () => {
  const blob = await downloadFile({ repo: M.repo, path: M.nonAscii.path, hubUrl });
  assert.equal(await sha256OfBlob(blob), M.nonAscii.sha256);
});

test("downloadFile: LFS files give the real model bytes", async () => {
  const tess = await downloadFile({ repo: M.repo, path: M.lfs.path, hubUrl });
  assert.equal(tess.size, M.lfs.size);
  assert.equal(await sha256OfBlob(tess), M.lfs.sha256);
  const onnx = await downloadFile({ repo: M.repo, path: M.onnx.path, hubUrl, revision: M.head });
  assert.equal(await sha256OfBlob(onnx), M.onnx.sha256);
});

test("downloadFile: a slice of an LFS blob (ranged GET)", async () => {
  const tess = await downloadFile({ repo: M.repo, path: M.lfs.path, hubUrl });
  const part = Buffer.from(await tess.slice(100, 164).arrayBuffer());
  const local = readFileSync(M.dir + "/" + M.lfs.path);
  assert.deepEqual(part, local.subarray(100, 164));
});

test("downloadFile raw: the LFS pointer", async () => {
  const blob = await downloadFile({ repo: M.repo, path: M.lfs.path, hubUrl, raw: true });
  const text = await blob.text();
  assert.match(text, new RegExp(`^version https://git-lfs.github.com/spec/v1\noid sha256:${M.lfs.sha256}\nsize ${M.lfs.size}\n$`));
});

test("downloadFile: missing file gives null", async () => {
  assert.equal(await downloadFile({ repo: M.repo, path: "missing.txt", hubUrl }), null);
});

test("downloadFile: dataset file", async () => {
  const blob = await downloadFile({ repo: { type: "dataset", name: fx.dataset.repo }, path: fx.dataset.file, hubUrl });
  assert.equal(await sha256OfBlob(blob), fx.dataset.sha256);
});

test("private repo: not found without a token, readable with it", async () => {
  await assert.rejects(downloadFile({ repo: fx.private.repo, path: fx.private.file, hubUrl }));
  await assert.rejects(downloadFile({ repo: fx.private.repo, path: fx.private.file, hubUrl, accessToken: fx.otherToken }));
  await assert.rejects(collect(listFiles({ repo: fx.private.repo, hubUrl })));
  const blob = await downloadFile({ repo: fx.private.repo, path: fx.private.file, hubUrl, accessToken });
  assert.equal(await blob.text(), "only for alice\n");
  const lfs = await downloadFile({ repo: fx.private.repo, path: fx.private.lfs, hubUrl, accessToken });
  assert.equal(await sha256OfBlob(lfs), fx.private.lfsSha256);
});

test("listCommits and countCommits", async () => {
  const commits = await collect(listCommits({ repo: M.repo, hubUrl }));
  assert.deepEqual(commits.map((c) => c.oid), M.commits);
  assert.equal(commits[0].title, "Describe the files");
  assert.ok(commits[0].date instanceof Date && !Number.isNaN(commits[0].date.getTime()));
  assert.equal(typeof commits[0].authors[0]?.username, "string");
  const paged = await collect(listCommits({ repo: M.repo, hubUrl, batchSize: 2 }));
  assert.deepEqual(paged.map((c) => c.oid), M.commits, "following Link pages of 2");
  assert.equal(await countCommits({ repo: M.repo, hubUrl }), M.commits.length);
});

test("pathsInfo with expand", async () => {
  const info = await pathsInfo({ repo: M.repo, hubUrl, paths: [M.regular.path, M.lfs.path, "missing.txt"], expand: true });
  assert.deepEqual(info.map((p) => p.path).sort(), [M.regular.path, M.lfs.path].sort());
  const lfs = info.find((p) => p.path === M.lfs.path);
  assert.equal(lfs.lfs?.oid, M.lfs.sha256);
  assert.match(lfs.lastCommit?.id ?? "", /^[0-9a-f]{40}$/);
});

test("downloadFileToCacheDir: snapshot layout and bytes", async () => {
  const p = await downloadFileToCacheDir({ repo: M.repo, path: M.lfs.path, hubUrl, cacheDir: fx.cacheDir });
  const bytes = await readFile(p);
  assert.equal(createHash("sha256").update(bytes).digest("hex"), M.lfs.sha256);
  assert.ok(p.includes("/snapshots/"), p);
});

test("whoAmI", async () => {
  const me = await whoAmI({ accessToken, hubUrl });
  assert.equal(me.name, "alice");
  assert.equal(me.type, "user");
  assert.ok(Array.isArray(me.orgs));
  await assert.rejects(whoAmI({ accessToken: "hf_NotAValidTokenAtAll0123456789", hubUrl }));
});

test("listModels: owner filter, private ones hidden from anonymous", async () => {
  const anon = await collect(listModels({ search: { owner: "alice" }, hubUrl }));
  const names = anon.map((m) => m.name).sort();
  assert.deepEqual(names, [M.repo]);
  const mine = await collect(listModels({ search: { owner: "alice" }, hubUrl, accessToken }));
  assert.deepEqual(mine.map((m) => m.name).sort(), [M.repo, fx.private.repo].sort());
});
