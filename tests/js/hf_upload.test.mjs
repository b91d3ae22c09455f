// The real @huggingface/hub client (2.15.0) committing to a running Hangar (issue #3,
// hf-api.md §7.1, §7.2, §7.3). Run through tests/integration/hf_commit.sh, which starts
// the server, makes an empty repo and sets HANGAR_URL, HANGAR_TOKEN, HANGAR_REPO.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { deleteFile, downloadFile, fileExists, listFiles, uploadFiles } from "@huggingface/hub";

const hubUrl = process.env.HANGAR_URL;
const accessToken = process.env.HANGAR_TOKEN;
const repo = process.env.HANGAR_REPO;
if (!hubUrl || !accessToken || !repo) throw new Error("run tests/integration/hf_commit.sh");

const small = Buffer.from("hello from the JS client\n");
const random = randomBytes(24 << 20);  // 24 MiB random: LFS through the batch API
// hf_commit.sh compares a git clone against these.
if (process.env.HANGAR_TMP) {
  writeFileSync(join(process.env.HANGAR_TMP, "js-small.txt"), small);
  writeFileSync(join(process.env.HANGAR_TMP, "js-random.bin"), random);
}

async function bytesOf(path) {
  const blob = await downloadFile({ repo, path, hubUrl, accessToken });
  assert.ok(blob, `downloadFile ${path} returned nothing`);
  return Buffer.from(await blob.arrayBuffer());
}

test("uploadFiles: a small file and a 24 MiB random file, read back byte for byte", async () => {
  const out = await uploadFiles({
    repo, hubUrl, accessToken, useXet: false,
    commitTitle: "js: add hello and random",
    files: [
      { path: "notes/hello.txt", content: new Blob([small]) },
      { path: "data/random.bin", content: new Blob([random]) },
    ],
  });
  assert.match(out.commit.oid, /^[0-9a-f]{40}$/);
  assert.deepEqual(await bytesOf("notes/hello.txt"), small);
  assert.deepEqual(await bytesOf("data/random.bin"), random);
  const files = [];
  for await (const f of listFiles({ repo, hubUrl, accessToken, recursive: true })) files.push(f);
  const bin = files.find((f) => f.path === "data/random.bin");
  assert.ok(bin?.lfs, "data/random.bin is stored through LFS");
  assert.equal(bin.size, random.length);
});

test("deleteFile removes the file", async () => {
  await deleteFile({ repo, hubUrl, accessToken, path: "notes/hello.txt", commitTitle: "js: delete hello" });
  assert.equal(await fileExists({ repo, hubUrl, accessToken, path: "notes/hello.txt" }), false);
  assert.deepEqual(await bytesOf("data/random.bin"), random);
});
