// Issue 16: the gateway driven by the real `openai` client (tests/js/package.json pins it),
// against test backends (gateway_backend.mjs) this file starts, stops and kills. Run by
// tests/integration/gateway_openai.sh, which starts the hub and writes HANGAR_FIXTURE:
// {url, adminToken, otherToken, repo, commits: [first, second], backend}.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import OpenAI from "openai";

const fx = JSON.parse(readFileSync(process.env.HANGAR_FIXTURE, "utf8"));
const backends = [];

// Starts a test backend; resolves to {name, url, port, proc, control(), stats()}.
function startBackend(name, { port = 0, paceMs = 5 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [fx.backend, "--name", name, "--port", String(port), "--pace-ms", String(paceMs)], { stdio: ["ignore", "pipe", "inherit"] });
    backends.push(proc);
    proc.on("error", reject);
    proc.stdout.once("data", (chunk) => {
      const m = String(chunk).match(/listening on (http:\/\/127\.0\.0\.1:(\d+))/);
      if (!m) return reject(new Error("backend said " + chunk));
      const url = m[1];
      resolve({
        name, url, port: Number(m[2]), proc,
        control: (body) => fetch(url + "/control", { method: "POST", body: JSON.stringify(body) }).then((r) => r.json()),
        stats: () => fetch(url + "/stats").then((r) => r.json()),
      });
    });
  });
}

function kill(b) {
  return new Promise((resolve) => {
    b.proc.once("exit", resolve);
    b.proc.kill("SIGKILL");
  });
}

after(() => backends.forEach((p) => p.kill("SIGKILL")));

const hub = (path, token, init = {}) =>
  fetch(fx.url + path, { ...init, headers: { authorization: "Bearer " + token, "content-type": "application/json", ...(init.headers ?? {}) } });

async function mustHub(path, init) {
  const r = await hub(path, fx.adminToken, init);
  const body = await r.json();
  assert.ok(r.status < 300, `${init?.method ?? "GET"} ${path}: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

async function createRoute(name, backendList, extra = {}) {
  return mustHub("/api/v1/gateway/routes", {
    method: "POST",
    body: JSON.stringify({ name, model: "gw", alias: "champion", timeout_ms: 3000, retries: 2,
      backends: backendList.map(([b, weight]) => ({ url: b.url, weight })), ...extra }),
  });
}

const client = (opts = {}) => new OpenAI({ baseURL: fx.url + "/v1", apiKey: fx.adminToken, maxRetries: 0, timeout: 20000, ...opts });
const chat = (c, model, content = "hi there", extra = {}) =>
  c.chat.completions.create({ model, messages: [{ role: "user", content }], ...extra });

// Runs `count` calls of `fn(i)` with `concurrency` at once; resolves to their results
// ({ok, value} or {ok: false, error}).
async function pool(count, concurrency, fn) {
  const out = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      try {
        out[i] = { ok: true, value: await fn(i) };
      } catch (error) {
        out[i] = { ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

async function metrics(route) {
  return mustHub(`/api/v1/gateway/routes/${route}/metrics`);
}

let A, B, C;

test("setup: register two versions, champion on the first, backends and routes", async () => {
  const first = await mustHub("/api/v1/models", { method: "POST", body: JSON.stringify({ name: "gw", repo: fx.repo, revision: fx.commits[0] }) });
  assert.equal(first.version.version, 1);
  const second = await mustHub("/api/v1/models/gw/versions", { method: "POST", body: JSON.stringify({ repo: fx.repo, revision: fx.commits[1] }) });
  assert.equal(second.version, 2);
  await mustHub("/api/v1/models/gw/aliases/champion", { method: "PUT", body: JSON.stringify({ version: 1 }) });
  [A, B, C] = await Promise.all([startBackend("A"), startBackend("B"), startBackend("C", { paceMs: 40 })]);
  await createRoute("chat", [[A, 100]]);
  await createRoute("canary", [[A, 90], [B, 10]]);
  await createRoute("single", [[C, 100]], { retries: 0 });
});

test("models.list names the routes", async () => {
  const ids = [];
  for await (const m of client().models.list()) ids.push(m.id);
  for (const r of ["chat", "canary", "single"]) assert.ok(ids.includes(r), `${r} in ${ids}`);
});

test("chat completion, plain: the backend's answer with its usage", async () => {
  const r = await chat(client(), "chat", "how are you");
  assert.equal(r.object, "chat.completion");
  assert.equal(r.system_fingerprint, "A");
  assert.equal(r.choices[0].message.content, "Hello from A. You said: how are you");
  assert.equal(r.usage.total_tokens, 3 + 8);
  assert.match(r.id, /-v1$/, "the backend was told version 1");
});

test("the backend joins the client's trace: traceparent with the hub's span as parent", async () => {
  const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const r = await client().chat.completions.create(
    { model: "chat", messages: [{ role: "user", content: "traced" }] },
    { headers: { traceparent: parent } });
  assert.equal(r.system_fingerprint, "A");
  const sent = (await A.stats()).last_traceparent;
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent ?? "");
  assert.ok(m, `the backend got a traceparent: ${sent}`);
  assert.equal(m[1], "4bf92f3577b34da6a3ce929d0e0e4736", "the client's trace");
  assert.notEqual(m[2], "00f067aa0ba902b7", "the hub's own span as parent, not the client's");
  // Without one, the hub starts a trace of its own and still tells the backend.
  await chat(client(), "chat", "untraced");
  assert.match((await A.stats()).last_traceparent ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
});

test("chat completion, streamed: each event as the backend sends it", async () => {
  // C sends a word every 40 ms: a buffered stream would arrive all at once at the end.
  const stream = await chat(client(), "single", "one two three four", { stream: true });
  const times = [];
  let text = "";
  for await (const chunk of stream) {
    times.push(performance.now());
    text += chunk.choices[0]?.delta?.content ?? "";
  }
  assert.equal(text, "Hello from C. You said: one two three four");
  assert.ok(times.length >= 9, `chunks: ${times.length}`);
  const spread = times[times.length - 1] - times[0];
  assert.ok(spread > 40 * (times.length - 3), `events spread over ${spread.toFixed(0)} ms`);
});

test("completions and embeddings", async () => {
  const c = client();
  const done = await c.completions.create({ model: "chat", prompt: "say it" });
  assert.equal(done.choices[0].text, "Hello from A. You said: say it");
  const e = await c.embeddings.create({ model: "chat", input: ["abc", "de"] });
  assert.deepEqual(e.data.map((d) => d.embedding), [[3, 0, 0.5], [2, 1, 0.5]]);
});

test("errors map onto the client's classes", async () => {
  await assert.rejects(chat(client(), "no-such-route"), (e) => e instanceof OpenAI.NotFoundError && /not found/.test(e.message));
  await assert.rejects(chat(client({ apiKey: "hf_wrong" }), "chat"), (e) => e instanceof OpenAI.AuthenticationError);
  await assert.rejects(chat(client({ apiKey: fx.otherToken }), "chat@nope"), (e) => e.status === 404);
  await assert.rejects(chat(client(), "chat@" + "x".repeat(100000)),
    (e) => e.status === 404 && e.message.length < 400);
  const bad = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body: "{not json" });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.type, "invalid_request_error");
  const noModel = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body: "{}" });
  assert.match((await noModel.json()).error.message, /'model' is required/);
});

test("the client retries a 5xx and a 429 the gateway passes on", async () => {
  await C.control({ fail_next: 1 });
  const before = (await C.stats()).requests;
  const r = await chat(client({ maxRetries: 2 }), "single");
  assert.equal(r.system_fingerprint, "C");
  assert.equal((await C.stats()).requests - before, 2, "one 503, then the retry");
  await C.control({ limit_next: 1 });
  const t0 = performance.now();
  const again = await chat(client({ maxRetries: 2 }), "single");
  assert.equal(again.system_fingerprint, "C");
  assert.ok(performance.now() - t0 >= 900, "the client waited the backend's retry-after: 1");
  // Without retries the client sees the backend's 503 (the route has no other backend).
  await C.control({ fail_next: 1 });
  await assert.rejects(chat(client(), "single"), (e) => e instanceof OpenAI.InternalServerError && e.status === 503);
});

test("per-token request limit: 429 with retry-after", async () => {
  await createRoute("limited", [[A, 100]], { limits: { requests_per_minute: 2 } });
  await chat(client(), "limited");
  await chat(client(), "limited");
  await assert.rejects(chat(client(), "limited"), (e) => {
    assert.ok(e instanceof OpenAI.RateLimitError, String(e));
    assert.ok(Number(e.headers.get("retry-after")) >= 1, "retry-after " + e.headers.get("retry-after"));
    return true;
  });
  // Another token has its own budget.
  const other = await chat(client({ apiKey: fx.otherToken }), "limited");
  assert.equal(other.system_fingerprint, "A");
  assert.equal((await metrics("limited")).limited, 1);
});

test("per-token token limit: the answer's usage is charged", async () => {
  await createRoute("metered", [[A, 100]], { limits: { tokens_per_minute: 10 } });
  const r = await chat(client(), "metered", "how are you");
  assert.equal(r.usage.total_tokens, 11);
  await assert.rejects(chat(client(), "metered"), (e) => e instanceof OpenAI.RateLimitError);
  assert.equal((await metrics("metered")).tokens, 11);
});

test("a route whose backends all fail falls back to another route", async () => {
  const I = await startBackend("I");
  await I.control({ mode: "fail" });
  await createRoute("primary", [[I, 100]], { retries: 0, fallback: "chat" });
  const r = await chat(client(), "primary");
  assert.equal(r.system_fingerprint, "A");
  assert.equal((await I.stats()).requests, 1);
});

test("a canary of 10 % takes 10 % ± 1.5 % of 20,000 requests", async () => {
  const body = JSON.stringify({ model: "canary", messages: [{ role: "user", content: "x" }] });
  const results = await pool(20000, 32, async () => {
    const r = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body });
    assert.equal(r.status, 200);
    return (await r.json()).system_fingerprint;
  });
  const failed = results.filter((r) => !r.ok);
  assert.equal(failed.length, 0, String(failed[0]?.error));
  const share = results.filter((r) => r.value === "B").length / results.length;
  console.log(`# canary share: ${(share * 100).toFixed(2)} % of ${results.length}`);
  assert.ok(Math.abs(share - 0.10) <= 0.015, `B took ${(share * 100).toFixed(2)} %`);
});

test("killing a backend mid-run loses no plain request; it returns once it recovers", async () => {
  const [D, E] = await Promise.all([startBackend("D"), startBackend("E")]);
  await createRoute("ha", [[D, 50], [E, 50]]);
  const body = JSON.stringify({ model: "ha", messages: [{ role: "user", content: "x" }] });
  let done = 0;
  const killed = (async () => {
    while (done < 300) await new Promise((r) => setTimeout(r, 5));
    await kill(E);
  })();
  const results = await pool(1500, 8, async () => {
    const r = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body });
    done++;
    if (r.status !== 200) throw new Error(`status ${r.status}: ${await r.text()}`);
    return (await r.json()).system_fingerprint;
  });
  await killed;
  const failed = results.filter((r) => !r.ok);
  assert.equal(failed.length, 0, `${failed.length} failed; first: ${failed[0]?.error}`);
  const m = await metrics("ha");
  const e = m.backends.find((b) => b.url === E.url);
  assert.ok(e.ejected && e.ejections >= 1, JSON.stringify(m.backends));
  // E comes back on the same port: the health checks (200 ms) bring it back.
  const E2 = await startBackend("E", { port: E.port });
  const deadline = Date.now() + 10000;
  while ((await metrics("ha")).backends.find((b) => b.url === E.url).ejected) {
    assert.ok(Date.now() < deadline, "E still ejected 10 s after it came back");
    await new Promise((r) => setTimeout(r, 100));
  }
  await pool(200, 4, () => chat(client(), "ha"));
  assert.ok((await E2.stats()).chat > 20, "E serves again");
});

test("a stream whose backend dies ends with an error, not a hang", async () => {
  const F = await startBackend("F", { paceMs: 100 });
  await createRoute("fragile", [[F, 100]], { retries: 0 });
  const stream = await chat(client(), "fragile", "a b c d e f g h", { stream: true });
  let chunks = 0;
  const t0 = performance.now();
  await assert.rejects(
    (async () => {
      for await (const chunk of stream) {
        if (++chunks === 2) await kill(F);
      }
    })(),
    (e) => e instanceof OpenAI.APIError && /broke off/.test(e.message),
  );
  assert.ok(performance.now() - t0 < 5000, "ended at once");
  assert.ok(chunks >= 2);
});

test("a client that goes away cancels the backend's stream", async () => {
  const before = (await C.stats()).cancelled;
  const ac = new AbortController();
  const stream = await client().chat.completions.create(
    { model: "single", messages: [{ role: "user", content: "a b c d e f g h i j k l m n o p" }], stream: true },
    { signal: ac.signal });
  let n = 0;
  try {
    for await (const _ of stream) if (++n === 2) ac.abort();
  } catch { /* aborted */ }
  const deadline = Date.now() + 3000;
  while ((await C.stats()).cancelled === before) {
    assert.ok(Date.now() < deadline, "the backend's stream was not cancelled");
    await new Promise((r) => setTimeout(r, 50));
  }
});

test("moving champion switches the route with no failed request", async () => {
  const body = JSON.stringify({ model: "chat", messages: [{ role: "user", content: "x" }] });
  let done = 0;
  const moved = (async () => {
    while (done < 200) await new Promise((r) => setTimeout(r, 2));
    await mustHub("/api/v1/models/gw/aliases/champion", { method: "PUT", body: JSON.stringify({ version: 2 }) });
  })();
  const results = await pool(1000, 8, async () => {
    const r = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body });
    done++;
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    return (await r.json()).id.split("-v")[1];
  });
  await moved;
  assert.equal(results.filter((r) => !r.ok).length, 0);
  assert.equal(results[0].value, "1");
  assert.equal(results[results.length - 1].value, "2");
  const log = await mustHub("/api/v1/models/gw/aliases/log");
  assert.deepEqual([log.events[0].alias, log.events[0].from, log.events[0].to], ["champion", 1, 2]);
});

test("bad backends: garbage, a hang, a never-ending body — clear 5xx, other routes serve", async () => {
  const G = await startBackend("G");
  await createRoute("bad", [[G, 100]], { retries: 0, timeout_ms: 500 });
  const call = () => hub("/v1/chat/completions", fx.adminToken, { method: "POST", body: JSON.stringify({ model: "bad", messages: [] }) });
  for (const [mode, status, pattern] of [["garbage", 502, /malformed JSON/], ["hang", 504, /no answer within 500 ms/], ["endless", 504, /did not end within/]]) {
    await G.control({ mode });
    const r = await call();
    const text = await r.text();
    assert.equal(r.status, status, `${mode}: ${text}`);
    assert.match(JSON.parse(text).error.message, pattern, mode);
    const ok = await chat(client(), "chat");
    assert.equal(ok.system_fingerprint, "A", "another route still serves");
  }
});

// A backend that answers raw bytes (what no well-behaved server sends) and closes.
function rawBackend(answer) {
  return new Promise((resolve) => {
    const server = net.createServer((sock) => {
      sock.unref();  // the hub may keep the connection: it must not keep this process up
      sock.once("data", () => sock.end(answer));
      sock.on("error", () => {});
    });
    server.unref();
    server.listen(0, "127.0.0.1", () => resolve({ url: "http://127.0.0.1:" + server.address().port, server }));
  });
}

test("hostile backends: a cut head, a 101, control bytes in headers — never passed on", async () => {
  const cut = await rawBackend("HTTP/1.1 200 OK\r\nContent-Ty");
  const upgrade = await rawBackend("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nraw bytes");
  const body = JSON.stringify({ object: "chat.completion", choices: [] });
  const ctl = await rawBackend("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: a\rb\r\n" +
    "Retry-After: 1\x01\r\nContent-Length: " + body.length + "\r\n\r\n" + body);
  const call = (model, token = fx.adminToken) => hub("/v1/chat/completions", token, { method: "POST", body: JSON.stringify({ model, messages: [] }) });
  for (const [name, b] of [["cut", cut], ["upgrade", upgrade]]) {
    await createRoute("raw-" + name, [[b, 100]], { retries: 0 });
    const r = await call("raw-" + name);
    const text = await r.text();
    assert.equal(r.status, 502, `${name}: ${text}`);
    assert.equal(JSON.parse(text).error.code, "BadGateway");
  }
  // With a standby, the cut head is retried there.
  await createRoute("raw-cut-standby", [[cut, 100], [A, 0]], { retries: 1 });
  assert.equal((await (await call("raw-cut-standby")).json()).system_fingerprint, "A");
  await createRoute("raw-ctl", [[ctl, 100]]);
  const r = await call("raw-ctl");
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("cache-control"), null, "a header with a bare CR is dropped");
  assert.equal(r.headers.get("retry-after"), null);
  // Another user is not told where the backend is.
  const bob = await call("raw-cut", fx.otherToken);
  const msg = (await bob.json()).error.message;
  assert.ok(!msg.includes(cut.url), msg);
  assert.match(msg, /<backend>/);
  for (const b of [cut, upgrade, ctl]) b.server.close();
});

test("the body's model is found without building its tree; deep and large bodies pass", async () => {
  const deep = "[".repeat(500) + "]".repeat(500);
  const big = JSON.stringify({ messages: [{ role: "user", content: "x" }], pad: "y".repeat(1 << 20) });
  for (const text of [`{"extra": ${deep}, "model": "chat", "messages": []}`, big.slice(0, -1) + ',"model":"chat"}']) {
    const r = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body: text + "\n" });
    assert.equal(r.status, 200, await r.clone().text());
  }
  for (const [text, why] of [['{"model": "chat"} x', /extra/], ['[{"model": "chat"}]', /JSON object/], ['{"model": 3}', /'model' is required/]]) {
    const r = await hub("/v1/chat/completions", fx.adminToken, { method: "POST", body: text });
    assert.equal(r.status, 400);
    assert.match((await r.json()).error.message, why);
  }
});

test("a stream without a usage chunk is charged too", async () => {
  await createRoute("metered-stream", [[A, 100]], { limits: { tokens_per_minute: 5 } });
  const stream = await chat(client(), "metered-stream", "one two three", { stream: true });
  for await (const _ of stream);
  assert.ok((await metrics("metered-stream")).tokens >= 5);
  await assert.rejects(chat(client(), "metered-stream"), (e) => e instanceof OpenAI.RateLimitError);
});

test("routes refuse backend URLs with a query, a fragment or a backslash, and a fallback that is not there", async () => {
  for (const [backends, extra, why] of [
    [[{ url: A.url + "/p?x=1" }], {}, /query/], [[{ url: A.url + "#f" }], {}, /fragment/],
    [[{ url: "http://h\\evil" }], {}, /backslashes/], [[{ url: A.url }], { fallback: "nowhere" }, /does not exist/],
    [[{ url: A.url }], { fallback: "tensor-x", protocol: "openai" }, /does not exist/],
  ]) {
    const r = await hub("/api/v1/gateway/routes", fx.adminToken, { method: "POST",
      body: JSON.stringify({ name: "bad-url", model: "gw", alias: "champion", backends, ...extra }) });
    assert.equal(r.status, 400);
    assert.match((await r.json()).error, why);
  }
});

test("OIP: ready, metadata and infer through the gateway", async () => {
  const H = await startBackend("H");
  await createRoute("tensor", [[H, 100]], { protocol: "oip" });
  const ready = await hub("/v2/models/tensor/ready", fx.adminToken);
  assert.equal(ready.status, 200, await ready.clone().text());
  const infer = await hub("/v2/models/tensor/infer", fx.adminToken, {
    method: "POST", body: JSON.stringify({ inputs: [{ name: "x", datatype: "FP32", shape: [3], data: [1, 2, 3.5] }] }) });
  assert.equal(infer.status, 200);
  assert.deepEqual((await infer.json()).outputs[0].data, [2, 4, 7]);
  // The backend gets the canonical path, whatever form the client used.
  const v1 = await hub("/v2/models/tensor@v1/versions/1/infer", fx.adminToken, {
    method: "POST", body: JSON.stringify({ inputs: [] }) });
  assert.equal((await v1.json()).model_name, "tensor");
  const none = await hub("/v2/models/tensor/versions/7/infer", fx.adminToken, { method: "POST", body: "{}" });
  assert.equal(none.status, 404, "no version 7");
  const wrong = await chat(client(), "tensor").catch((e) => e);
  assert.equal(wrong.status, 404, "an OIP route is not an OpenAI model");
});
