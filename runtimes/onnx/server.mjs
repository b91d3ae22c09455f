// Hangar's ONNX runtime (issue 16, docs/gateway.md §Supervised runtimes): serves one ONNX
// model over the Open Inference Protocol v2 (KServe's REST dialect) with onnxruntime's CPU
// library (npm onnxruntime-node). The gateway's supervisor starts it per model version:
//
//   node server.mjs --model-dir SNAPSHOT --port PORT [--name MODEL] [--version V]
//
// The model is the --model-dir's `model.onnx`, else its first `.onnx` file (sorted by path).
//   GET  /v2/health/live, /v2/health/ready        200 once the session is loaded
//   GET  /v2/models/{name}[/versions/{v}]         {name, versions, platform, inputs, outputs}
//   GET  …/ready                                  {name, ready: true}
//   POST …/infer   {inputs: [{name, datatype, shape, data}], outputs?: [{name}]}
//        → {model_name, model_version, id, outputs: [{name, datatype, shape, data}]}
// `data` is flat (row-major) or nested; errors are 400 {error}.

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import * as ort from "onnxruntime-node";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const dir = args["model-dir"];
const name = args.name ?? "model";
const version = args.version ?? "1";

function findModel(root) {
  if (fs.existsSync(path.join(root, "model.onnx"))) return path.join(root, "model.onnx");
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".onnx")) found.push(p);
    }
  };
  walk(root);
  if (!found.length) throw new Error("no .onnx file in " + root);
  return found.sort()[0];
}

// OIP datatypes and onnxruntime's tensor types.
const TYPES = {
  FP32: ["float32", Float32Array], FP64: ["float64", Float64Array], INT8: ["int8", Int8Array],
  UINT8: ["uint8", Uint8Array], INT16: ["int16", Int16Array], UINT16: ["uint16", Uint16Array],
  INT32: ["int32", Int32Array], UINT32: ["uint32", Uint32Array], INT64: ["int64", BigInt64Array],
  UINT64: ["uint64", BigUint64Array], BOOL: ["bool", Uint8Array],
};
const OIP = Object.fromEntries(Object.entries(TYPES).map(([k, [t]]) => [t, k]));

function toTensor(input) {
  const t = TYPES[input.datatype];
  if (!t) throw new Error(`input ${input.name}: datatype ${input.datatype} is not one of ${Object.keys(TYPES)}`);
  if (!Array.isArray(input.shape)) throw new Error(`input ${input.name}: shape is required`);
  const flat = Array.isArray(input.data) ? input.data.flat(Infinity) : [];
  const count = input.shape.reduce((a, b) => a * b, 1);
  if (flat.length !== count) throw new Error(`input ${input.name}: ${flat.length} values for shape [${input.shape}]`);
  const values = t[1] === BigInt64Array || t[1] === BigUint64Array ? flat.map((x) => BigInt(x)) : flat;
  return new ort.Tensor(t[0], t[1].from(values), input.shape);
}

const fromTensor = (n, t) => ({
  name: n, datatype: OIP[t.type] ?? t.type, shape: t.dims,
  data: Array.from(t.data, (x) => (typeof x === "bigint" ? Number(x) : x)),
});

const modelPath = findModel(dir);
const session = await ort.InferenceSession.create(modelPath);
const meta = (names, m) => names.map((n, i) => ({ name: n, datatype: OIP[m?.[i]?.type] ?? m?.[i]?.type ?? "", shape: (m?.[i]?.shape ?? []).map((d) => (typeof d === "number" ? d : -1)) }));
const metadata = {
  name, versions: [version], platform: "onnxruntime",
  inputs: meta(session.inputNames, session.inputMetadata), outputs: meta(session.outputNames, session.outputMetadata),
};

function reply(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", async () => {
    const p = new URL(req.url, "http://x").pathname;
    if (p === "/v2/health/live" || p === "/v2/health/ready") return reply(res, 200, {});
    const m = p.match(/^\/v2\/models\/([^/]+)(?:\/versions\/[^/]+)?(\/ready|\/infer)?$/);
    if (!m) return reply(res, 404, { error: "no route " + p });
    if (!m[2]) return reply(res, 200, metadata);
    if (m[2] === "/ready") return reply(res, 200, { name, ready: true });
    if (req.method !== "POST") return reply(res, 405, { error: "infer takes a POST" });
    try {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
      if (!Array.isArray(body.inputs)) throw new Error("'inputs' is required: [{name, datatype, shape, data}]");
      const feeds = {};
      for (const input of body.inputs) {
        if (!session.inputNames.includes(input.name)) throw new Error(`no input '${input.name}' (the model's: ${session.inputNames})`);
        feeds[input.name] = toTensor(input);
      }
      const wanted = Array.isArray(body.outputs) ? body.outputs.map((o) => o.name) : session.outputNames;
      const out = await session.run(feeds, wanted);
      reply(res, 200, { model_name: name, model_version: version, id: body.id ?? "", outputs: wanted.map((n) => fromTensor(n, out[n])) });
    } catch (e) {
      reply(res, 400, { error: String(e.message ?? e).replace(/\s+/g, " ").trim().slice(0, 1000) });
    }
  });
});

server.listen(Number(args.port), "127.0.0.1", () => console.log(`serving ${modelPath} on 127.0.0.1:${args.port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
