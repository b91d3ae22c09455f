// Progressive enhancement only: every page works without this file.
document.addEventListener("DOMContentLoaded", () => {
  // Syntax highlighting of blob views (highlight.js from Debian's libjs-highlight.js).
  if (window.hljs) {
    document.querySelectorAll("table.code[data-lang] td.src").forEach((td) => {
      const lang = td.closest("table").dataset.lang;
      if (!lang || !window.hljs.getLanguage(lang)) return;
      td.innerHTML = window.hljs.highlight(lang, td.textContent, true).value;
    });
  }
  // Copy buttons next to clone URLs and new tokens.
  document.querySelectorAll("[data-copy]").forEach((el) => {
    el.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(el.dataset.copy));
  });
  const viewer = document.querySelector("section.viewer[data-dataset]");
  if (viewer && viewer.querySelector("form.viewer-search") && window.fetch) enhanceViewer(viewer);
});

// The dataset viewer (viewer.mustache, viewer_pages.cc): pages, searches, filters and
// switches splits in place through the JSON API (dataset-viewer.md §4.4–4.6), building the
// rows as the server does, and draws each column's histogram from /statistics (§4.10). The
// URLs it pushes are the ones the server renders, so a reload shows the same page. Data
// only ever reaches the page as text nodes and attributes, never as HTML.
const PAGE_ROWS = 100;          // viewer_pages.cc kPageRows
const SHOWN_CELL_BYTES = 200;   // viewer_pages.cc kShownCellChars (bytes of UTF-8)

// Percent-encodes as the server's PercentEncode does (everything but A-Z a-z 0-9 - . _ ~).
const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());

function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  e.append(...children);  // strings become text nodes
  return e;
}

// A column's type label from its feature, as viewer_pages.cc TypeLabel.
function typeLabel(f) {
  if (!f || typeof f !== "object" || Array.isArray(f)) return "list";
  if (!("_type" in f)) return "dict";
  if (f._type === "Value") return f.dtype;
  if (f._type === "List") return `list<${typeLabel(f.feature)}>`;
  return f._type;
}

// One cell, as viewer_pages.cc CellHtml: null in grey, media URLs as media, long text folded
// at 200 bytes (not inside a UTF-8 sequence).
function cell(v) {
  if (v === null || v === undefined) return el("td", null, el("span", "null", "null"));
  const text = typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
  if (typeof v === "string" && /^(https?:\/\/|\/)/.test(v)) {
    const media = /\.(png|jpe?g|gif|webp|svg)$/i.test(v) ? "img" : /\.(wav|mp3|ogg|flac|opus)$/i.test(v) ? "audio" : null;
    if (media === "img") return el("td", null, Object.assign(el("img", "cell-media"), { loading: "lazy", alt: "", src: v }));
    if (media === "audio") return el("td", null, Object.assign(el("audio", "cell-media"), { controls: true, preload: "none", src: v }));
  }
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= SHOWN_CELL_BYTES) return el("td", null, text);
  let n = SHOWN_CELL_BYTES;
  while (n > 0 && (bytes[n] & 0xc0) === 0x80) n--;
  const summary = el("summary", null, new TextDecoder().decode(bytes.subarray(0, n)) + "…");
  return el("td", null, el("details", "long", summary, text));
}

// A column's bars (its histogram's bins, or its ten most frequent values) into its header's
// span.hist; heights through the CSSOM, which the CSP allows (style attributes it does not).
function drawHistogram(span, s) {
  const cs = s.column_statistics || {};
  let bars;
  if (cs.histogram) {
    const edges = cs.histogram.bin_edges;
    bars = cs.histogram.hist.map((n, i) => [`${edges[i]}–${edges[i + 1]}`, n]);
    const of = { string_text: "length ", list: "length " }[s.column_type] || "";
    span.title = `${of}min ${cs.min} · max ${cs.max} · mean ${cs.mean}`;
  } else if (cs.frequencies) {
    bars = Object.entries(cs.frequencies).sort((a, b) => b[1] - a[1]).slice(0, 10);
    span.title = bars.map(([k, n]) => `${k}: ${n}`).join(" · ");
  } else {
    return;
  }
  if (cs.nan_count) span.title += ` · ${cs.nan_count} null`;
  const max = Math.max(1, ...bars.map(([, n]) => n));
  span.replaceChildren(...bars.map(([label, n]) => {
    const bar = el("span", "bar");
    bar.style.height = `${(100 * n) / max}%`;
    bar.title = `${label}: ${n}`;
    return bar;
  }));
}

async function getJson(path) {
  const res = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(body.error || res.statusText), { code: res.headers.get("X-Error-Code") || String(res.status) });
  return body;
}

function enhanceViewer(section) {
  const dataset = section.dataset.dataset;
  const search = section.querySelector("form.viewer-search");
  const filter = section.querySelector("form.viewer-filter");
  const statistics = new Map();  // split key -> promise of its /statistics (again after a failure)
  const splitKey = (s) => JSON.stringify([s.config, s.split]);
  let seq = 0;                   // only the latest navigation renders
  let headKey = section.querySelector("table.viewer-table") ? splitKey(section.dataset) : null;

  // A state is what a viewer URL names: base (the split's page path), config, split,
  // offset, q, where, orderby.
  const query = (href) => {
    const p = new URL(href, location.href).searchParams;
    const get = (k) => (p.get(k) || "").trim();
    return { offset: Math.max(0, parseInt(p.get("offset"), 10) || 0), q: get("q"), where: get("where"), orderby: get("orderby") };
  };
  let current = { base: new URL(search.action).pathname, config: section.dataset.config, split: section.dataset.split, ...query(location.href) };
  history.replaceState({ viewer: current }, "");

  // The URL the server renders for a state (viewer_pages.cc PageUrl).
  const pageUrl = (s) => s.base + `?offset=${s.offset}` + (s.q ? `&q=${enc(s.q)}` : "") +
    (s.where ? `&where=${enc(s.where)}` : "") + (s.orderby ? `&orderby=${enc(s.orderby)}` : "");
  const splitParams = (s) => `dataset=${enc(dataset)}&config=${enc(s.config)}&split=${enc(s.split)}`;
  const apiPath = (s) => {
    const page = `&offset=${s.offset}&length=${PAGE_ROWS}`;
    if (s.q) return `/search?${splitParams(s)}&query=${enc(s.q)}${page}`;
    if (s.where || s.orderby)
      return `/filter?${splitParams(s)}` + (s.where ? `&where=${enc(s.where)}` : "") + (s.orderby ? `&orderby=${enc(s.orderby)}` : "") + page;
    return `/rows?${splitParams(s)}${page}`;
  };

  async function go(state, push) {
    const mine = ++seq;
    section.setAttribute("aria-busy", "true");
    let body = null, error = null;
    try {
      body = await getJson(apiPath(state));
    } catch (e) {
      error = e;
    }
    if (mine !== seq) return;
    section.removeAttribute("aria-busy");
    if (!body && !error.code) return showError(error);  // the network: stay where we were
    if (push) history.pushState({ viewer: state }, "", pageUrl(state));
    current = state;
    render(state, body, error);
  }

  function showError(error) {
    section.querySelectorAll(":scope > p.flash.error").forEach((e) => e.remove());
    const p = el("p", "flash error");
    if (error.code) p.append(el("strong", null, error.code), ": ");
    p.append(error.message);
    section.querySelector(".viewer-tools").after(p);
  }

  // The page the server renders for `state`: the forms' values, the split links, then the
  // table or the error.
  function render(state, body, error) {
    section.dataset.config = state.config;
    section.dataset.split = state.split;
    search.action = filter.action = state.base;
    search.elements.q.value = state.q;
    filter.elements.where.value = state.where;
    filter.elements.orderby.value = state.orderby;
    filter.querySelector("a")?.remove();
    if (state.q || state.where || state.orderby) filter.append(Object.assign(el("a", null, "Clear"), { href: state.base }));
    section.querySelectorAll(".viewer-splits a").forEach((a) => {
      const on = new URL(a.href).pathname === state.base;
      a.classList.toggle("on", on);
      if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    });
    const api = section.querySelector("a[href^='/rows?']");
    if (api) api.href = api.textContent = `/rows?${splitParams(state)}`;

    section.querySelectorAll(":scope > p.flash.error, :scope > p.viewer-count, :scope > nav.pager").forEach((e) => e.remove());
    let scroll = section.querySelector(":scope > .viewer-scroll");
    if (error) {
      scroll?.remove();
      headKey = null;
      return showError(error);
    }
    const rows = body.rows;
    const count = el("p", "viewer-count muted", `Rows ${rows.length ? state.offset + 1 : 0}–${state.offset + rows.length} of ${body.num_rows_total}`);
    if (body.partial) count.append(" (a partial export of a larger split)");
    scroll ||= el("div", "viewer-scroll", el("table", "viewer-table", el("thead"), el("tbody")));
    const table = scroll.querySelector("table");
    if (headKey !== splitKey(state)) {
      table.tHead.replaceChildren(headRow(body.features));
      headKey = splitKey(state);
      drawHistograms(state);
    }
    const names = body.features.map((f) => f.name);
    table.tBodies[0].replaceChildren(...rows.map((r) => el("tr", null, el("td", "idx", String(r.row_idx)), ...names.map((n) => cell(r.row[n])))));
    const pager = el("nav", "pager");
    if (state.offset > 0) pager.append(link(pageUrl({ ...state, offset: Math.max(0, state.offset - PAGE_ROWS) }), "prev", "← Previous"));
    if (state.offset + PAGE_ROWS < body.num_rows_total) pager.append(link(pageUrl({ ...state, offset: state.offset + PAGE_ROWS }), "next", "Next →"));
    section.querySelector(".viewer-tools").after(count, scroll, pager);
    scroll.scrollTop = 0;
  }

  const link = (href, rel, text) => Object.assign(el("a", null, text), { href, rel });

  function headRow(features) {
    return el("tr", null, el("th", "idx", "#"), ...features.map((f) => {
      const th = el("th", null, el("span", "col-name", f.name), " ", el("span", "col-type", typeLabel(f.type)), el("span", "hist"));
      th.dataset.column = f.name;
      th.lastChild.setAttribute("aria-hidden", "true");
      return th;
    }));
  }

  function drawHistograms(state) {
    const key = splitKey(state);
    if (!statistics.has(key)) statistics.set(key, getJson(`/statistics?${splitParams(state)}`).catch(() => statistics.delete(key) && null));
    statistics.get(key).then((body) => {
      if (!body || headKey !== key) return;  // no statistics (yet), or another split by now
      const hists = new Map([...section.querySelectorAll("th[data-column]")].map((th) => [th.dataset.column, th.querySelector(".hist")]));
      for (const s of body.statistics) if (hists.has(s.column_name)) drawHistogram(hists.get(s.column_name), s);
    });
  }

  section.addEventListener("click", (e) => {
    const a = e.target.closest("a[href]");
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    let next;
    if (a.closest("nav.pager")) {
      next = { ...current, ...query(a.href) };
    } else if (a.closest(".viewer-splits")) {
      const path = new URL(a.href).pathname;
      const [config, split] = path.split("/").slice(-2).map(decodeURIComponent);
      next = { base: path, config, split, offset: 0, q: "", where: "", orderby: "" };
    } else if (a.parentElement === filter) {  // Clear
      next = { ...current, offset: 0, q: "", where: "", orderby: "" };
    } else {
      return;
    }
    e.preventDefault();
    go(next, true);
  });
  section.addEventListener("submit", (e) => {
    if (e.target !== search && e.target !== filter) return;
    e.preventDefault();
    const value = (name) => (e.target.elements[name]?.value || "").trim();
    if (e.target === search) go({ ...current, offset: 0, q: value("q"), where: "", orderby: "" }, true);
    else go({ ...current, offset: 0, q: "", where: value("where"), orderby: value("orderby") }, true);
  });
  window.addEventListener("popstate", (e) => e.state && e.state.viewer && go(e.state.viewer, false));
  if (headKey) drawHistograms(current);
}
