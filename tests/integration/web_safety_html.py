#!/usr/bin/env python3
"""HTML helpers for web_safety.sh: parse Hangar's pages with html.parser (as a browser
would read them: entities decoded) and follow their links the way a browser would.

  audit FILE                 unsafe parts of a page, one per line (nothing = clean)
  text FILE TAG.CLASS|#ID    the text content of the first matching element
  csrf FILE                  the value of the first <input name="_csrf">
  href FILE TEXT             the href of the first <a> whose text is TEXT
  count FILE TAG             how many TAG elements the page has
  imgs FILE                  the src of every <img>, one per line
  walk BASE REPO DIR SPEC    follow every link to the files in SPEC (JSON: name -> content)
                             from the tree, blob, commit, history and blame pages; prints
                             PASS/FAIL lines
"""

import http.client
import json
import re
import sys
import urllib.parse
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = attrs  # list of (name, value) with entities decoded
        self.parent = parent
        self.children = []  # Node or str

    def attr(self, name):
        for k, v in self.attrs:
            if k == name:
                return v
        return None

    def text(self):
        out = []
        for c in self.children:
            out.append(c if isinstance(c, str) else c.text())
        return "".join(out)

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def classes(self):
        return (self.attr("class") or "").split()


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, [(k, v if v is not None else "") for k, v in attrs], self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, [(k, v if v is not None else "") for k, v in attrs], self.cur)
        self.cur.children.append(n)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html):
    b = TreeBuilder()
    b.feed(html)
    b.close()
    return b.root


def load(path):
    with open(path, "rb") as f:
        return parse(f.read().decode("utf-8", "replace"))


def find(root, sel):
    """TAG.CLASS, TAG#ID, .CLASS, #ID or TAG: the first match."""
    for n in find_all(root, sel):
        return n
    return None


def find_all(root, sel):
    m = re.fullmatch(r"([a-z0-9]*)(?:([.#])([\w-]+))?", sel)
    tag, kind, name = m.group(1), m.group(2), m.group(3)
    for n in root.iter():
        if tag and n.tag != tag:
            continue
        if kind == "." and name not in n.classes():
            continue
        if kind == "#" and n.attr("id") != name:
            continue
        if n.tag == "#root":
            continue
        yield n


URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster",
             "background", "srcset", "cite", "longdesc", "ping", "manifest", "codebase"}


def scheme_of(url):
    # Browsers drop tabs/newlines anywhere and C0 controls/spaces at the ends.
    u = re.sub(r"[\t\n\r]", "", url).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c"
                                            "\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18"
                                            "\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
    m = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", u)
    return m.group(1).lower() if m else ""


def audit(root):
    problems = []
    for n in root.iter():
        if n.tag == "script":
            src = n.attr("src")
            if src is None or not src.startswith("/static/"):
                problems.append("a <script> that is not ours: src=%r text=%r" % (src, n.text()[:80]))
            elif n.text().strip():
                problems.append("a <script src> with inline content")
        if n.tag in ("iframe", "frame", "frameset", "object", "embed", "applet", "style", "svg",
                     "math", "base", "template", "noscript", "textarea", "select", "button"):
            if n.tag == "button" and (_in_our_form(n) or (n.attr("type") == "button" and
                                                           n.attr("data-copy") is not None)):
                continue  # our sign-out and copy buttons
            problems.append("a <%s> element" % n.tag)
        if n.tag == "meta" and (n.attr("http-equiv") or "").lower() == "refresh":
            problems.append("a <meta http-equiv=refresh>")
        if n.tag == "link" and not (n.attr("href") or "").startswith("/static/"):
            problems.append("a <link> to %r" % n.attr("href"))
        if n.tag == "form" and not _our_form(n):
            problems.append("a <form action=%r> that is not ours" % n.attr("action"))
        if n.tag == "input" and not _in_our_form(n):
            if (n.attr("type") or "") != "checkbox" or n.attr("disabled") is None:
                problems.append("an <input type=%r> outside our forms" % n.attr("type"))
        for k, v in n.attrs:
            if k.startswith("on"):
                problems.append("an event handler attribute %s=%r on <%s>" % (k, v, n.tag))
            if k in ("style", "srcdoc", "formaction"):
                problems.append("an attribute %s on <%s>" % (k, n.tag))
            if k in URL_ATTRS and scheme_of(v) not in ("", "http", "https", "mailto"):
                problems.append("a %s: URL in %s of <%s>: %r" % (scheme_of(v), k, n.tag, v[:80]))
    return problems


def _our_form(n):
    # The layout's search box (GET /models) and sign-out form.
    return (n.attr("action"), (n.attr("method") or "get").lower()) in (("/models", "get"),
                                                                      ("/logout", "post"))


def _in_our_form(n):
    p = n.parent
    while p is not None:
        if p.tag == "form":
            return _our_form(p)
        p = p.parent
    return False


# ---- following links as a browser does ------------------------------------------------

# The WHATWG URL parser's path and query percent-encode sets (beyond non-ASCII and C0).
PATH_ENC = set(' "#<>?`{}')
QUERY_ENC = set(' "#<>\'')


def browser_target(page_url, href):
    """The request target ("/path?query") a browser sends when following href on page_url."""
    href = re.sub(r"[\t\n\r]", "", href).strip(" \x00")
    url = urllib.parse.urljoin(page_url, href)
    url, _frag = urllib.parse.urldefrag(url)
    parts = urllib.parse.urlsplit(url)

    def enc(s, extra):
        out = []
        for ch in s:
            b = ch.encode("utf-8")
            if len(b) > 1 or ord(ch) < 0x21 or ord(ch) == 0x7F or (ch in extra and ch not in "#?"):
                out.append("".join("%%%02X" % x for x in b))
            else:
                out.append(ch)
        return "".join(out)

    target = enc(parts.path, PATH_ENC)
    if parts.query:
        target += "?" + enc(parts.query, QUERY_ENC)
    return target


class Client:
    def __init__(self, base):
        u = urllib.parse.urlsplit(base)
        self.base = base
        self.host, self.port = u.hostname, u.port

    def get(self, target):
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        c.putrequest("GET", target, skip_accept_encoding=True)
        c.endheaders()
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body


class Checks:
    def __init__(self):
        self.n = 0

    def ok(self, desc, *_detail):
        print("PASS\t" + desc.replace("\n", "\\n"))

    def bad(self, desc, *detail):
        print("FAIL\t" + desc.replace("\n", "\\n") + "".join("\t" + d.replace("\n", "\\n") for d in detail))

    def check(self, cond, desc, *detail):
        (self.ok if cond else self.bad)(desc, *detail)
        return cond


def code_text(root, table_id):
    t = find(root, "table#" + table_id)
    if t is None:
        return None
    return "\n".join(td.text() for td in find_all(t, "td.src"))


def walk(base, repo, directory, spec_file):
    with open(spec_file, encoding="utf-8") as f:
        spec = json.load(f)
    names = spec["files"]      # name in `directory` -> content
    commit = spec["commit"]    # the commit that added them
    subject = spec["subject"]
    cl = Client(base)
    ck = Checks()

    def page(target):
        st, hdrs, body = cl.get(target)
        return st, parse(body.decode("utf-8", "replace")), body

    # The repo's root tree lists the directory under its real name.
    root_url = base + repo + "/tree/main"
    st, root_page, _ = page(repo + "/tree/main")
    ck.check(st == 200, "root tree page 200", "got %d" % st)
    dir_link = None
    for a in find_all(root_page, "td.name"):
        for link in find_all(a, "a"):
            if link.text() == directory:
                dir_link = link.attr("href")
    if not ck.check(dir_link is not None, "root tree lists the directory %r by its name" % directory,
                    "labels: %r" % [l.text() for l in find_all(root_page, "a") if l.parent.tag == "td"]):
        return
    dir_target = browser_target(root_url, dir_link)
    st, dir_page, _ = page(dir_target)
    dir_url = base + dir_target
    ck.check(st == 200 and find(dir_page, "table#files") is not None,
             "the directory link opens its tree page", "GET %s -> %d" % (dir_target, st))
    crumbs = find(dir_page, "p.crumbs")
    ck.check(crumbs is not None and crumbs.text().strip().endswith(directory),
             "the directory's breadcrumbs end with its name",
             "crumbs: %r" % (crumbs.text() if crumbs else None))

    # Each file: listed by its exact name, its link opens its blob page with its content.
    listed = {}
    for td in find_all(dir_page, "td.name"):
        for a in find_all(td, "a"):
            listed[a.text()] = a.attr("href")
    downloads = {}
    for tr in find_all(dir_page, "tr"):
        tds = list(find_all(tr, "td"))
        name_a = [a for td in tds if "name" in td.classes() for a in find_all(td, "a")]
        dl = [a for td in tds if "when" in td.classes() for a in find_all(td, "a")]
        if name_a and dl:
            downloads[name_a[0].text()] = dl[0].attr("href")
    for name, content in names.items():
        href = listed.get(name)
        if not ck.check(href is not None, "tree shows %r exactly" % name,
                        "labels: %r" % sorted(listed)):
            continue
        target = browser_target(dir_url, href)
        st, blob, _ = page(target)
        got = code_text(blob, "code")
        ck.check(st == 200 and got == content.rstrip("\n"),
                 "%r: its tree link opens its blob page with its content" % name,
                 "GET %s -> %d, content %r" % (target, st, got))
        if st != 200:
            continue
        blob_url = base + target
        cr = find(blob, "p.crumbs")
        strong = find(cr, "strong") if cr else None
        ck.check(strong is not None and strong.text() == name,
                 "%r: the blob breadcrumb names the file" % name,
                 "got %r" % (strong.text() if strong else None))
        # The breadcrumb links: the repo root and the directory.
        crumb_links = list(find_all(cr, "a")) if cr else []
        dir_crumb = [a for a in crumb_links if a.text() == directory]
        if ck.check(len(dir_crumb) == 1, "%r: a breadcrumb link named %r" % (name, directory)):
            t = browser_target(blob_url, dir_crumb[0].attr("href"))
            st2, p2, _ = page(t)
            ck.check(st2 == 200 and name in [a.text() for a in find_all(p2, "a")],
                     "%r: the directory breadcrumb opens the directory" % name, "GET %s -> %d" % (t, st2))
        actions = {a.text(): a.attr("href") for a in find_all(blob, "a")
                   if a.parent is not None and "actions" in a.parent.classes()}
        for label in ("Raw", "Download"):
            h = actions.get(label)
            if not ck.check(h is not None, "%r: a %s link" % (name, label)):
                continue
            t = browser_target(blob_url, h)
            st2, _, body = cl.get(t)
            ck.check(st2 == 200 and body == content.encode("utf-8"),
                     "%r: %s link serves the file" % (name, label), "GET %s -> %d %r" % (t, st2, body[:60]))
        h = actions.get("History")
        if ck.check(h is not None, "%r: a History link" % name):
            t = browser_target(blob_url, h)
            st2, p2, _ = page(t)
            heading = find(p2, "h2")
            code = find(heading, "code") if heading else None
            subjects = [a.text() for a in find_all(p2, "a.subject")]
            ck.check(st2 == 200 and code is not None and code.text() == directory + "/" + name and
                     subject in subjects,
                     "%r: History lists the commit that added it, under its path" % name,
                     "GET %s -> %d, heading %r, subjects %r" % (t, st2, code.text() if code else None, subjects))
        h = actions.get("Blame")
        if ck.check(h is not None, "%r: a Blame link" % name):
            t = browser_target(blob_url, h)
            st2, p2, _ = page(t)
            got = code_text(p2, "blame")
            ck.check(st2 == 200 and got == content.rstrip("\n"),
                     "%r: Blame shows the file" % name, "GET %s -> %d, %r" % (t, st2, got))
        h = downloads.get(name)
        if ck.check(h is not None, "%r: a download link in the tree" % name):
            t = browser_target(dir_url, h)
            st2, _, body = cl.get(t)
            ck.check(st2 == 200 and body == content.encode("utf-8"),
                     "%r: the tree's download link serves the file" % name, "GET %s -> %d" % (t, st2))

    # The commit page: each file named by its path, each link opens it.
    commit_url = base + repo + "/commit/" + commit
    st, cpage, _ = page(repo + "/commit/" + commit)
    ck.check(st == 200, "commit page 200", "got %d" % st)
    shown = {}
    for sec in find_all(cpage, "section.diff"):
        h3 = find(sec, "h3")
        for a in find_all(h3, "a"):
            shown[a.text()] = a.attr("href")
    for name, content in names.items():
        path = directory + "/" + name
        href = shown.get(path)
        if not ck.check(href is not None, "commit page names %r exactly" % path, "names: %r" % sorted(shown)):
            continue
        t = browser_target(commit_url, href)
        st2, p2, _ = page(t)
        got = code_text(p2, "code")
        ck.check(st2 == 200 and got == content.rstrip("\n"),
                 "%r: the commit page's link opens the file" % path, "GET %s -> %d %r" % (t, st2, got))


def main():
    cmd = sys.argv[1]
    if cmd == "audit":
        for p in audit(load(sys.argv[2])):
            print(p)
    elif cmd == "text":
        n = find(load(sys.argv[2]), sys.argv[3])
        sys.stdout.write(n.text() if n is not None else "")
    elif cmd == "csrf":
        for n in load(sys.argv[2]).iter():
            if n.tag == "input" and n.attr("name") == "_csrf":
                sys.stdout.write(n.attr("value") or "")
                break
    elif cmd == "href":
        for n in load(sys.argv[2]).iter():
            if n.tag == "a" and n.text().strip() == sys.argv[3]:
                sys.stdout.write(n.attr("href") or "")
                break
    elif cmd == "count":
        print(sum(1 for n in load(sys.argv[2]).iter() if n.tag == sys.argv[3]))
    elif cmd == "imgs":
        for n in load(sys.argv[2]).iter():
            if n.tag == "img":
                print(n.attr("src"))
    elif cmd == "walk":
        walk(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
