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
});
