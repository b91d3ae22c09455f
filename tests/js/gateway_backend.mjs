// A test backend for the gateway (issue 16): a small OpenAI-compatible and Open Inference
// Protocol v2 server that streams its tokens at a set pace and can be told to fail, hang,
// break off or send garbage. Its answers name it (`system_fingerprint`, OIP `model_version`
// and the `x-backend` header), so a test counts which backend served what.
//
//   node gateway_backend.mjs --name NAME [--pace-ms 20]
// prints `listening on http://127.0.0.1:PORT` once it accepts connections.
//
// Control (POST /control, JSON): {mode}: "ok" | "fail" (500 to everything) | "hang" (never
// answers) | "break" (a non-stream answer cut midway, a stream cut after two events) |
// "garbage" (200 with a body that is not JSON) | "endless" (an answer that never ends) |
// "sick" (health checks fail, requests pass); {fail_next: n}: the next n requests get 503;
// {limit_next: n}: the next n get 429 with `retry-after: 1`; {pace_ms}. GET /stats: {name,
// requests, chat, streams, cancelled, last_traceparent}. A chat answer's `id` ends with the model version the
// gateway named (X-Hangar-Model-Version).

import http from "node:http";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const name = args.name ?? "backend";
let paceMs = Number(args["pace-ms"] ?? 20);
let mode = "ok";
let failNext = 0;
let limitNext = 0;
const stats = { name, requests: 0, chat: 0, streams: 0, cancelled: 0 };

const words = (prompt) => ["Hello", "from", name + ".", "You", "said:", ...String(prompt).split(/\s+/)];

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "x-backend": name, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function lastUserText(body) {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  const last = msgs.filter((m) => m.role === "user").pop();
  return last ? String(last.content) : String(body.prompt ?? "");
}

function usage(prompt, completion) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

// An SSE stream of chat (or completion) chunks, one per word, `paceMs` apart.
function stream(req, res, body, chat) {
  stats.streams++;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-backend": name });
  const toks = words(lastUserText(body));
  const id = "chatcmpl-" + Math.random().toString(36).slice(2) + "-v" + body.version;
  let i = 0;
  let closed = false;
  res.on("close", () => {
    if (!res.writableFinished) {
      closed = true;
      stats.cancelled++;
    }
  });
  const send = (obj) => res.write("data: " + JSON.stringify(obj) + "\n\n");
  const tick = () => {
    if (closed) return;
    if (mode === "break" && i === 2) {
      res.socket.destroy();
      return;
    }
    if (i < toks.length) {
      const text = (i ? " " : "") + toks[i++];
      const choice = chat ? { index: 0, delta: i === 1 ? { role: "assistant", content: text } : { content: text }, finish_reason: null }
                          : { index: 0, text, finish_reason: null };
      send({ id, object: chat ? "chat.completion.chunk" : "text_completion", created: 1, model: body.model, system_fingerprint: name, choices: [choice] });
      setTimeout(tick, paceMs);
      return;
    }
    const done = chat ? { index: 0, delta: {}, finish_reason: "stop" } : { index: 0, text: "", finish_reason: "stop" };
    send({ id, object: chat ? "chat.completion.chunk" : "text_completion", created: 1, model: body.model, system_fingerprint: name, choices: [done] });
    if (body.stream_options?.include_usage) {
      send({ id, object: "chat.completion.chunk", created: 1, model: body.model, choices: [], usage: usage(3, toks.length) });
    }
    res.end("data: [DONE]\n\n");
  };
  setTimeout(tick, paceMs);
}

function chat(req, res, body, isChat) {
  stats.chat++;
  body.version = req.headers["x-hangar-model-version"] ?? "none";
  if (body.stream) return stream(req, res, body, isChat);
  const text = words(lastUserText(body)).join(" ");
  const answer = isChat
    ? { id: "chatcmpl-1-v" + body.version, object: "chat.completion", created: 1, model: body.model, system_fingerprint: name,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: usage(3, text.split(" ").length) }
    : { id: "cmpl-1-v" + body.version, object: "text_completion", created: 1, model: body.model, system_fingerprint: name,
        choices: [{ index: 0, text, finish_reason: "stop" }], usage: usage(3, text.split(" ").length) };
  if (mode === "break") {
    const s = JSON.stringify(answer);
    res.writeHead(200, { "content-type": "application/json", "content-length": s.length });
    res.write(s.slice(0, 10));
    setTimeout(() => res.socket.destroy(), 5);
    return;
  }
  json(res, 200, answer);
}

// OIP inference: each input's data doubled, under the output name "output".
function infer(res, modelName, body) {
  const inputs = Array.isArray(body.inputs) ? body.inputs : [];
  json(res, 200, {
    model_name: modelName, model_version: name, id: body.id ?? "1",
    outputs: inputs.map((t) => ({ name: "output_" + t.name, datatype: t.datatype, shape: t.shape, data: (t.data ?? []).flat().map((x) => x * 2) })),
  });
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://x");
  const raw = await readBody(req);
  let body = {};
  try { body = raw ? JSON.parse(raw) : {}; } catch { /* the routes below answer 400 */ }
  if (url.pathname === "/control") {
    if (body.mode) mode = body.mode;
    if (body.fail_next !== undefined) failNext = body.fail_next;
    if (body.limit_next !== undefined) limitNext = body.limit_next;
    if (body.pace_ms !== undefined) paceMs = body.pace_ms;
    return json(res, 200, { mode, failNext, paceMs });
  }
  if (url.pathname === "/stats") return json(res, 200, stats);
  if (url.pathname === "/health" || url.pathname === "/v2/health/ready") {
    return mode === "sick" || mode === "fail" ? json(res, 503, { error: "sick" }) : json(res, 200, {});
  }
  stats.requests++;
  stats.last_traceparent = req.headers.traceparent ?? null;
  if (failNext > 0) {
    failNext--;
    return json(res, 503, { error: { message: name + " is overloaded", type: "server_error" } });
  }
  if (limitNext > 0) {
    limitNext--;
    res.setHeader("retry-after", "1");
    return json(res, 429, { error: { message: name + " is rate limited", type: "rate_limit_error" } });
  }
  if (mode === "fail") return json(res, 500, { error: { message: name + " failed", type: "server_error" } });
  if (mode === "hang") return; // never answers
  if (mode === "garbage") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end("<html>not json");
  }
  if (mode === "endless") {
    res.writeHead(200, { "content-type": "application/json" });
    const more = () => { if (!res.destroyed) res.write("[".repeat(1024), () => setTimeout(more, 1)); };
    return more();
  }
  if (req.method === "POST" && raw && Object.keys(body).length === 0 && raw.trim() !== "{}") {
    return json(res, 400, { error: { message: "body is not JSON", type: "invalid_request_error" } });
  }
  const p = url.pathname;
  if (p === "/v1/models") return json(res, 200, { object: "list", data: [{ id: name, object: "model", created: 1, owned_by: "test" }] });
  if (p === "/v1/chat/completions") return chat(req, res, body, true);
  if (p === "/v1/completions") return chat(req, res, body, false);
  if (p === "/v1/embeddings") {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    return json(res, 200, { object: "list", model: body.model,
      data: inputs.map((s, i) => {
        const v = [String(s).length, i, 0.5];
        // The openai client asks for base64 (little-endian float32) unless told otherwise.
        const embedding = body.encoding_format === "base64" ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v;
        return { object: "embedding", index: i, embedding };
      }),
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
  }
  const m = p.match(/^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(\/ready|\/infer)?$/);
  if (m) {
    if (m[3] === "/infer") return infer(res, m[1], body);
    if (m[3] === "/ready") return json(res, 200, { name: m[1], ready: true });
    return json(res, 200, { name: m[1], versions: [name], platform: "test", inputs: [], outputs: [] });
  }
  json(res, 404, { error: { message: "no route " + p, type: "invalid_request_error" } });
});

server.keepAliveTimeout = 60000;
server.listen(Number(args.port ?? 0), "127.0.0.1", () => {
  console.log("listening on http://127.0.0.1:" + server.address().port);
});
