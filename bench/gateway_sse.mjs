// The gateway's added time on server-sent events (bench/gateway_bench.sh): the same
// streamed chat completion, one stream at a time, straight from the test backend and
// through the gateway, alternating; prints the median and p99 of the time to the first
// event and of the gaps between events on each path, and the gateway's additions.
//
//   node bench/gateway_sse.mjs BACKEND_URL HUB_URL TOKEN [STREAMS]
const [backend, hub, token, count = "40"] = process.argv.slice(2);
const body = JSON.stringify({ model: "bench", stream: true, messages: [{ role: "user", content: "a b c d e f g h" }] });

async function stream(base) {
  const t0 = performance.now();
  const r = await fetch(base + "/v1/chat/completions", {
    method: "POST", body, headers: { authorization: "Bearer " + token, "content-type": "application/json" },
  });
  if (r.status !== 200) throw new Error(`${base}: ${r.status}`);
  const times = [];
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of r.body) {
    buf += decoder.decode(chunk, { stream: true });
    let at;
    while ((at = buf.indexOf("\n\n")) >= 0) {
      buf = buf.slice(at + 2);
      times.push(performance.now());
    }
  }
  return { first: times[0] - t0, gaps: times.slice(1).map((t, i) => t - times[i]) };
}

const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const paths = { direct: { first: [], gaps: [] }, gateway: { first: [], gaps: [] } };
for (let i = 0; i < Number(count); i++) {
  for (const [name, base] of [["direct", backend], ["gateway", hub]]) {
    const s = await stream(base);
    paths[name].first.push(s.first);
    paths[name].gaps.push(...s.gaps);
  }
}
const f = (x) => x.toFixed(3);
for (const [name, p] of Object.entries(paths)) {
  console.log(`sse ${name}: first event p50 ${f(quantile(p.first, 0.5))} ms p99 ${f(quantile(p.first, 0.99))} ms; ` +
              `gaps p50 ${f(quantile(p.gaps, 0.5))} ms p99 ${f(quantile(p.gaps, 0.99))} ms (${p.gaps.length} gaps)`);
}
const d = paths.direct, g = paths.gateway;
console.log(`sse added: first event p50 ${f(quantile(g.first, 0.5) - quantile(d.first, 0.5))} ms, ` +
            `gap p50 ${f(quantile(g.gaps, 0.5) - quantile(d.gaps, 0.5))} ms, gap p99 ${f(quantile(g.gaps, 0.99) - quantile(d.gaps, 0.99))} ms`);
