#!/usr/bin/env python3
"""OCI Distribution conformance and bad-input checks (issue #5; oci.md §10).

Walks the spec's four workflow categories (pull, push, content discovery, content
management) the way the v1.1.1 conformance suite does (oci.md §10.1), adds the main-branch
expectations (§10.2: Range on blobs, zero-byte blobs, sha512 blobs and manifests,
nondistributable layers never uploaded, custom fields and `data` stored verbatim,
referrers with and without the artifactType filter, a subject pushed after its referrers,
tag pagination with n/last and Link, deletes), and the bad-input cases of issue #5 (wrong
digest, chunk gap/overlap, missing blob, malformed manifest, unknown media type, invalid
names, a manifest over 4 MiB, size mismatch): each must get the spec's status and JSON
error code and store nothing, which is checked with GETs afterwards.

Python standard library only. Usage:

  oci_conformance.py --url http://127.0.0.1:PORT --repo ns/conformance \
      --mount-repo ns/crossmount [--username U --password P] [--expect-fail FILE]

Credentials are sent as a client would: after a 401 with a Basic challenge, as Basic; after
a Bearer challenge, as a token fetched from the challenge's realm (GET with Basic
credentials, service and scope parameters, oci.md §9.2).

Output: one line per check, `PASS id`, `FAIL id: expected ..., got ...`, `XFAIL id: ...`
(failed, and listed in the expect-fail file), `XPASS id` (listed but passed: the list is
stale), `SKIP id: why`. Exit status 0 when every check passed or failed as listed, else 1.
The expect-fail file holds one check id per line; `#` starts a comment.
"""

import argparse
import base64
import gzip
import hashlib
import http.client
import io
import json
import os
import re
import sys
import tarfile
import urllib.parse
import uuid

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_LAYER_ND = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
ACCEPT_ALL = ", ".join([OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST,
                        "application/vnd.docker.distribution.manifest.list.v2+json"])
EMPTY_JSON = b"{}"
EMPTY_JSON_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
ZERO_DIGEST = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
MAX_MANIFEST = 4 * 1024 * 1024

# Every check, with what it shows. Ids are stable: expect-fail lists and docs name them.
CHECKS = {
    # -- base and auth (oci.md §2 end-1, §9)
    "base.v2_200": "GET /v2/ with credentials: 200 and Docker-Distribution-API-Version: registry/2.0",
    "auth.anonymous_push_401": "anonymous POST upload: 401, WWW-Authenticate Basic/Bearer with realm, JSON UNAUTHORIZED",
    "auth.bad_credentials_401": "a wrong password ends in 401 (registry, or token endpoint of a Bearer realm)",
    "auth.bearer_token_response": "Bearer realm: token JSON has token/access_token, expires_in >= 60 when given",
    # -- pull (§10.1 Pull, §3)
    "pull.setup": "setup: config, layer and two manifests (by tag, by digest) pushed with 201",
    "pull.blob.head_absent_404": "HEAD absent blob: 404",
    "pull.blob.get_absent_404": "GET absent blob: 404 BLOB_UNKNOWN",
    "pull.blob.head_200": "HEAD blob: 200, Content-Length, Docker-Content-Digest, no body",
    "pull.blob.get_200": "GET blob: 200, exact bytes, Content-Type application/octet-stream, Content-Length, Docker-Content-Digest",
    "pull.manifest.head_invalid_name_404": "HEAD manifest .INVALID_MANIFEST_NAME: 404",
    "pull.manifest.get_invalid_name_404": "GET manifest .INVALID_MANIFEST_NAME: 404",
    "pull.manifest.head_by_digest_200": "HEAD manifest by digest: 200, Content-Type, Content-Length, Docker-Content-Digest",
    "pull.manifest.get_by_digest_200": "GET manifest by digest: 200, exact bytes, Content-Type, Content-Length, Docker-Content-Digest",
    "pull.manifest.head_by_tag_200": "HEAD manifest by tag: 200, Content-Type, Content-Length, Docker-Content-Digest",
    "pull.manifest.get_by_tag_200": "GET manifest by tag: 200, exact bytes and headers",
    "pull.manifest.get_malformed_digest": "GET manifest sha256:totallywrong: 404, or 400 with a spec error code",
    "pull.manifest.get_absent_tag_404": "GET manifest of an absent tag: 404 MANIFEST_UNKNOWN",
    "pull.repo.absent_manifest_404": "GET manifest in an absent repository: 404 NAME_UNKNOWN/MANIFEST_UNKNOWN",
    "pull.repo.absent_tags_404": "tags/list of an absent repository: 404 NAME_UNKNOWN",
    "pull.range.bounded": "Range bytes=500-1499 on a 2048-byte blob: 206, 1000 bytes, Content-Range bytes 500-1499/2048",
    "pull.range.open_end": "Range bytes=500-: 206, bytes 500-2047",
    "pull.range.suffix": "Range bytes=-500: 206, last 500 bytes, Content-Range bytes 1548-2047/2048",
    "pull.range.end_past_eof": "Range bytes=2000-5000: 206 clamped to bytes 2000-2047/2048",
    "pull.range.end_before_start_416": "Range bytes=500-0: 416",
    "pull.range.start_past_eof_416": "Range bytes=5000-10000: 416",
    # -- push (§10.1 Push, §4, §5)
    "push.streamed.post_202": "POST upload: 202 with a Location under /v2/<name>/blobs/uploads/",
    "push.streamed.patch_202": "PATCH whole blob without Content-Range (chunked transfer): 202, Location, Range 0-<n-1>",
    "push.streamed.put_201": "PUT ?digest= with empty body: 201, Docker-Content-Digest, Location serving the blob",
    "push.streamed.get_200": "GET the streamed blob: 200, exact bytes",
    "push.monolithic.get_absent_404": "GET blob before pushing: 404",
    "push.monolithic.single_post": "POST ?digest= with the body: 201 (Location and GET serve it) or 202 (upload Location, GET 404)",
    "push.monolithic.post_202": "POST upload: 202 with a Location under /v2/<name>/blobs/uploads/",
    "push.monolithic.put_201": "PUT ?digest= with the body: 201, Docker-Content-Digest, Location serving the blob",
    "push.monolithic.get_200": "GET the blob: 200, exact bytes",
    "push.chunked.post_202": "POST with Content-Length 0: 202 with Location",
    "push.chunked.first_202": "PATCH first chunk: 202, Location, Range exactly 0-<end>",
    "push.chunked.status_204": "GET upload: 204, Location, Range 0-<end>",
    "push.chunked.second_202": "PATCH second chunk: 202, Location, Range 0-<size-1>",
    "push.chunked.put_201": "PUT ?digest= with Content-Length 0: 201, Docker-Content-Digest, Location serving the blob",
    "push.chunked.get_200": "GET the chunked blob: 200, exact bytes",
    "push.chunked.out_of_order_416": "PATCH of the second chunk first (new upload): 416",
    "push.chunked.resend_first_416": "re-PATCH of an accepted first chunk: 416; GET upload still Range 0-<end>",
    "push.chunked.final_chunk_in_put_201": "PUT ?digest= carrying the last chunk with Content-Range: 201, bytes exact",
    "push.chunked.final_chunk_out_of_order_416": "[post-1.1] PUT with an out-of-order final chunk: 416, blob 404",
    "push.upload.cancel_204": "[post-1.1] DELETE upload: 204, then GET upload 404 BLOB_UPLOAD_UNKNOWN",
    "push.zero_byte.put_201": "zero-byte blob POST+PUT: 201",
    "push.zero_byte.head_200": "HEAD zero-byte blob: 200, Content-Length 0, Docker-Content-Digest",
    "push.sha512.blob_put_201": "sha512 blob (POST ?digest-algorithm=sha512, PUT ?digest=sha512:...): 201, Docker-Content-Digest sha512",
    "push.sha512.blob_get_200": "GET the sha512 blob: 200, exact bytes, Docker-Content-Digest sha512",
    "push.sha512.manifest_put_201": "PUT manifest by sha512 digest: 201, Docker-Content-Digest sha512",
    "push.sha512.manifest_get_200": "GET manifest by sha512 digest: 200, exact bytes, Docker-Content-Digest sha512",
    "push.mount.not_linked_404": "blob of repo A is 404 in repo B before a mount",
    "push.mount.absent_202": "POST ?mount=<absent digest> without from: 202, Location under /v2/<B>/blobs/uploads/",
    "push.mount.from_201": "POST ?mount=<digest>&from=<A>: 201, Location /v2/<B>/blobs/<digest>, Docker-Content-Digest",
    "push.mount.get_200": "GET the mounted blob in B: 200, exact bytes",
    "push.manifest.get_absent_404": "GET manifest before pushing: 404",
    "push.manifest.put_tags_201": "PUT one manifest to tags test0..test3: 201, Docker-Content-Digest and a Location serving it, each",
    "push.manifest.empty_layers_201": "PUT a manifest with layers [] (tag emptylayer): 201",
    "push.manifest.get_by_digest_200": "GET the pushed manifest by digest: 200, exact bytes",
    "push.manifest.custom_fields_verbatim": "custom fields, `data`, odd whitespace: 201; GET by digest and tag returns the bytes verbatim",
    "push.manifest.nondistributable_201": "a manifest with a nondistributable layer (with urls) never uploaded: 201, GET 200",
    "push.manifest.no_media_type": "manifest without mediaType pushed as OCI manifest: GET Content-Type is that type",
    "push.manifest.docker_v2": "Docker schema 2 manifest: 201; GET with Accept of it: its Content-Type, exact bytes",
    "push.manifest.index": "OCI index of two manifests: 201; GET Content-Type index, exact bytes",
    "push.manifest.tag_overwrite": "PUT another manifest to an existing tag: 201; the tag now resolves to it",
    "push.manifest.4mib_201": "a manifest of exactly 4 MiB is accepted (201)",
    # -- content discovery (§10.1 Content Discovery, §6)
    "discovery.setup": "setup: the empty JSON blob and the configs and layer of the subject and referrers pushed",
    "discovery.referrers.put_oci_subject": "referrers pushed before their subject: 201 and OCI-Subject = subject digest, each",
    "discovery.referrers.subject_after_201": "4 tags (one the subject) and 2 more referrers pushed after the first referrers: 201",
    "discovery.tags.list_200": "tags/list: 200, JSON name and tags containing every pushed tag",
    "discovery.tags.sorted": "tags/list in lexical order",
    "discovery.tags.n": "tags/list?n=<half>: exactly n tags, the first n, and a Link rel=next",
    "discovery.tags.link_next": "following Link gives the rest, no overlap, same scheme/host",
    "discovery.tags.n_last": "tags/list?n=<half>&last=<tag>: 200, at most n tags, each > last",
    "discovery.tags.last_only": "tags/list?last=<tag>: the tags after last",
    "discovery.tags.n_zero": "[post-1.1] tags/list?n=0: an empty list and no Link",
    "discovery.referrers.unknown_empty": "referrers of an unknown digest: 200, Content-Type index, manifests []",
    "discovery.referrers.list": "referrers of the subject: 5 entries, distinct, digest/size/mediaType/artifactType/annotations right",
    "discovery.referrers.filter": "?artifactType=: OCI-Filters-Applied: artifactType and only the 2 matches",
    "discovery.referrers.missing_subject": "referrers of a never-pushed subject: exactly its 1 referrer",
    "discovery.referrers.malformed_400": "referrers of a malformed digest: 400",
    # -- content management (§10.1 Content Management, §7)
    "management.delete_tag_202": "DELETE manifest by tag: 202",
    "management.deleted_tag_404": "the deleted tag is 404; the manifest itself still 200 by digest",
    "management.tags_count_decreased": "tags/list has one tag fewer",
    "management.delete_manifest_202": "DELETE manifest by digest: 202",
    "management.deleted_manifest_404": "GET the deleted manifest by digest and by its tags: 404",
    "management.deleted_referrer_gone": "a deleted referrer leaves the referrers list",
    "management.delete_blob_202": "DELETE config and layer blobs: 202",
    "management.deleted_blob_404": "GET the deleted blobs: 404",
    "management.delete_absent_manifest_404": "DELETE an absent manifest: 404 MANIFEST_UNKNOWN",
    "management.delete_absent_blob_404": "DELETE an absent blob: 404 BLOB_UNKNOWN",
    # -- bad input (issue #5): the spec's status and code, and nothing stored
    "bad.digest.mismatch_400": "PUT ?digest= of other bytes: 400 DIGEST_INVALID",
    "bad.digest.mismatch_nothing_stored": "after a digest mismatch: both digests 404",
    "bad.digest.missing_400": "PUT without ?digest=: 400 DIGEST_INVALID",
    "bad.digest.malformed_400": "PUT ?digest=sha256:xyz: 400 DIGEST_INVALID",
    "bad.digest.uppercase_400": "PUT ?digest=sha256:<UPPERCASE HEX>: 400 DIGEST_INVALID, nothing stored",
    "bad.chunk.gap_416": "PATCH leaving a gap (0-9 then 20-29): 416",
    "bad.chunk.overlap_416": "PATCH overlapping (0-9 then 5-14): 416",
    "bad.chunk.state_kept": "after the refused chunks the upload still reports Range 0-9 and completes with 201",
    "bad.chunk.nothing_stored": "the gapped upload cannot be completed with the refused chunk; those contents are 404",
    "bad.upload.unknown_404": "PATCH to an unknown upload id: 404 BLOB_UPLOAD_UNKNOWN",
    "bad.size.range_length_mismatch_400": "PATCH Content-Range 0-9 with 5 bytes: 400 SIZE_INVALID, upload unchanged",
    "bad.manifest.blob_unknown_400": "manifest referencing a missing layer: 400 MANIFEST_BLOB_UNKNOWN",
    "bad.manifest.blob_unknown_nothing_stored": "after MANIFEST_BLOB_UNKNOWN: manifest and tag 404",
    "bad.manifest.malformed_400": "malformed JSON manifest: 400 MANIFEST_INVALID, tag 404",
    "bad.manifest.unknown_media_type_400": "manifest of an unknown media type: 400 MANIFEST_INVALID, tag 404",
    "bad.manifest.media_type_mismatch_400": "mediaType index sent as Content-Type manifest: 400 MANIFEST_INVALID, tag 404",
    "bad.manifest.schema_version_400": "schemaVersion 3: 400 MANIFEST_INVALID, tag 404",
    "bad.manifest.digest_mismatch_400": "PUT manifests/<digest of other bytes>: 400 DIGEST_INVALID, both digests 404",
    "bad.manifest.too_large_413": "a manifest of 4 MiB + 1 byte: 413, tag 404",
    "bad.tag.invalid_400": "PUT manifest to a 129-character tag: 400 TAG_INVALID/MANIFEST_INVALID",
    "bad.name.dotdot_inside_400": "name <ns>/a..b: POST upload and PUT manifest 400 NAME_INVALID, nothing stored",
    "bad.name.dotdot_segment_400": "name <ns>/x/../<name>: POST upload and PUT manifest 400 NAME_INVALID, nothing stored in <ns>/<name>",
    "bad.name.uppercase_400": "name <ns>/<Name>: POST upload and PUT manifest 400 NAME_INVALID, nothing stored",
    # -- every response
    "headers.api_version_all": "Docker-Distribution-API-Version: registry/2.0 on every response seen",
}


class Fail(Exception):
    """A check's expectation was not met (message: expected ..., got ...)."""


class Response:
    def __init__(self, method, target, status, headers, body, error=None):
        self.method = method
        self.target = target
        self.status = status
        self.headers = headers  # list of (name, value)
        self.body = body
        self.error = error  # transport error while sending, if any

    def header(self, name):
        name = name.lower()
        found = None
        for k, v in self.headers:
            if k.lower() == name:
                found = v
        return found

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def error_codes(self):
        """The `code`s of a JSON {"errors":[{"code":...}]} body, or None if not that shape."""
        doc = self.json()
        if not isinstance(doc, dict) or not isinstance(doc.get("errors"), list):
            return None
        codes = [e.get("code") for e in doc["errors"] if isinstance(e, dict)]
        return codes if codes else None

    def brief(self):
        b = self.body[:160].decode("utf-8", "replace").replace("\n", " ")
        s = f"{self.status} to {self.method} {self.target}"
        if b:
            s += f" body {b!r}"
        if self.error:
            s += f" (send error: {self.error})"
        return s


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha512(data):
    return "sha512:" + hashlib.sha512(data).hexdigest()


def parse_challenge(value):
    """'Bearer realm="x",service="y",scope="z"' -> ("bearer", {"realm": "x", ...})."""
    scheme, _, rest = value.strip().partition(" ")
    params = dict(re.findall(r'(\w+)="([^"]*)"', rest))
    return scheme.lower(), params


class Registry:
    """HTTP/1.1 to one registry, one connection per request, with a client's auth flow."""

    def __init__(self, url, username, password):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http":
            raise SystemExit("only http:// URLs are supported")
        self.host = u.hostname
        self.port = u.port or 80
        self.username = username
        self.password = password
        self.mode = None  # None, "basic" or "bearer": learnt from the first challenge
        self.tokens = {}  # token-request scope string -> token
        self.scope_of = {}  # (repo, method) -> scope string of its last challenge
        self.seen = []  # every response (for headers.api_version_all)
        self.token_response = None  # the last token endpoint response

    def basic(self, username=None, password=None):
        user = self.username if username is None else username
        pw = self.password if password is None else password
        return "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()

    def raw(self, method, target, headers=(), body=None, chunked=False, host=None, port=None):
        """One request; `target` is the request-target exactly as sent. Never raises for HTTP
        statuses; a transport error while sending is kept in Response.error."""
        conn = http.client.HTTPConnection(host or self.host, port or self.port, timeout=30)
        send_error = None
        try:
            conn.putrequest(method, target, skip_accept_encoding=True)
            names = set()
            for k, v in headers:
                conn.putheader(k, v)
                names.add(k.lower())
            if chunked:
                conn.putheader("Transfer-Encoding", "chunked")
            elif body is not None and "content-length" not in names:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders()
            try:
                if chunked:
                    for i in range(0, len(body), 4096):
                        part = body[i:i + 4096]
                        conn.send(b"%x\r\n" % len(part) + part + b"\r\n")
                    conn.send(b"0\r\n\r\n")
                elif body:
                    conn.send(body)
            except OSError as e:
                send_error = str(e)
            try:
                r = conn.getresponse()
                try:
                    data = r.read()
                except http.client.IncompleteRead as e:  # framing broken: keep the status
                    data = e.partial
                    send_error = (f"body of {len(data)} bytes, shorter than its "
                                  f"Content-Length {r.getheader('Content-Length')}")
                resp = Response(method, target, r.status, r.getheaders(), data, send_error)
            except (OSError, http.client.HTTPException) as e:
                resp = Response(method, target, 0, [], b"", send_error or f"no response: {e}")
        finally:
            conn.close()
        self.seen.append(resp)
        return resp

    @staticmethod
    def repo_of(target):
        path = urllib.parse.urlsplit(target).path
        if not path.startswith("/v2/"):
            return ""
        rest = path[4:]
        for marker in ("/blobs/", "/manifests/", "/tags/list", "/referrers/"):
            i = rest.rfind(marker)
            if i >= 0:
                return rest[:i]
        return ""

    def fetch_token(self, params, extra_scopes):
        realm = urllib.parse.urlsplit(params.get("realm", ""))
        scopes = [s for s in params.get("scope", "").split(" ") if s] + list(extra_scopes)
        query = []
        if params.get("service"):
            query.append(("service", params["service"]))
        query += [("scope", s) for s in scopes]
        target = (realm.path or "/") + "?" + urllib.parse.urlencode(query)
        if realm.query:
            target += "&" + realm.query
        headers = [("Authorization", self.basic())] if self.username is not None else []
        r = self.raw("GET", target, headers, host=realm.hostname or self.host,
                     port=realm.port or (80 if realm.hostname else self.port))
        self.token_response = r
        doc = r.json() if r.status == 200 else None
        if not isinstance(doc, dict):
            return None
        return doc.get("token") or doc.get("access_token")

    def request(self, method, target, headers=(), body=None, auth=True, chunked=False,
                extra_scopes=()):
        headers = list(headers)
        if not auth:
            return self.raw(method, target, headers, body, chunked)
        key = (self.repo_of(target), method, tuple(extra_scopes))
        sent = list(headers)
        if self.mode == "basic":
            sent.append(("Authorization", self.basic()))
        elif self.mode == "bearer" and key in self.scope_of and self.scope_of[key] in self.tokens:
            sent.append(("Authorization", "Bearer " + self.tokens[self.scope_of[key]]))
        r = self.raw(method, target, sent, body, chunked)
        if r.status != 401 or self.username is None:
            return r
        challenge = r.header("WWW-Authenticate") or ""
        scheme, params = parse_challenge(challenge)
        if scheme == "basic":
            if self.mode == "basic":
                return r
            self.mode = "basic"
            return self.raw(method, target, headers + [("Authorization", self.basic())], body,
                            chunked)
        if scheme == "bearer" and params.get("realm"):
            self.mode = "bearer"
            scope = " ".join([params.get("scope", "")] + list(extra_scopes))
            token = self.fetch_token(params, extra_scopes)
            if token is None:
                return r
            self.tokens[scope] = token
            self.scope_of[key] = scope
            return self.raw(method, target, headers + [("Authorization", "Bearer " + token)],
                            body, chunked)
        return r


# ---------------------------------------------------------------------------------------
# Test data


def rand_bytes(n):
    return os.urandom(n)


def make_layer():
    """A small tar.gz layer with one random file (like the v1.1.1 suite's test data)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        content = rand_bytes(64).hex().encode()
        info = tarfile.TarInfo("hangar-conformance.txt")
        info.size = len(content)
        info.mtime = 0
        tar.addfile(info, io.BytesIO(content))
    return gzip.compress(raw.getvalue(), mtime=0)


def make_config(tag):
    """An OCI image config with a random author, so every run's manifests are new."""
    cfg = {"author": f"hangar-conformance-{tag}-{uuid.uuid4().hex}", "architecture": "amd64",
           "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}
    return json.dumps(cfg).encode()


def desc(media_type, data, **extra):
    d = {"mediaType": media_type, "digest": sha256(data), "size": len(data)}
    d.update(extra)
    return d


def manifest_bytes(config_desc, layers, **extra):
    m = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config_desc, "layers": layers}
    m.update(extra)
    return json.dumps(m, indent=2).encode()


# ---------------------------------------------------------------------------------------
# The checks


class Conformance:
    def __init__(self, reg, repo, mount_repo, expect_fail):
        self.reg = reg
        self.repo = repo
        self.mount = mount_repo
        self.ns = repo.rsplit("/", 1)[0] if "/" in repo else ""
        self.expect_fail = expect_fail
        self.results = {}  # id -> "PASS" | "FAIL" | "XFAIL" | "XPASS" | "SKIP"
        self.unexpected = 0
        self.run_id = uuid.uuid4().hex[:8]

    # -- reporting

    def report(self, cid, ok, detail=""):
        assert cid in CHECKS, cid
        if cid in self.results:
            raise AssertionError(f"check {cid} reported twice")
        listed = cid in self.expect_fail
        if ok is None:
            status = "SKIP"
        elif ok:
            status = "XPASS" if listed else "PASS"
        else:
            status = "XFAIL" if listed else "FAIL"
        self.results[cid] = status
        if status in ("FAIL", "XPASS"):
            self.unexpected += 1
        line = f"{status} {cid}"
        if status == "XPASS":
            line += ": listed in the expect-fail file but passed"
        elif detail and status != "PASS":
            line += f": {detail}"
        print(line, flush=True)

    def check(self, cid, fn):
        """Runs fn(); a Fail (or any exception) fails the check with its message."""
        try:
            skip = fn()
            if isinstance(skip, str) and skip.startswith("SKIP"):
                self.report(cid, None, skip[5:].strip())
            else:
                self.report(cid, True)
        except Fail as e:
            self.report(cid, False, str(e))
        except KeyError as e:  # a value an earlier step should have produced
            self.report(cid, False, f"not run: an earlier step of this workflow failed (no {e})")
        except Exception as e:  # a bug in the test or a broken response: still a FAIL line
            self.report(cid, False, f"exception {type(e).__name__}: {e}")

    # -- request helpers

    def v2(self, repo, suffix):
        return f"/v2/{repo}/{suffix}"

    def req(self, method, target, headers=(), body=None, **kw):
        return self.reg.request(method, target, headers, body, **kw)

    @staticmethod
    def expect_status(r, *statuses):
        if r.status not in statuses:
            raise Fail(f"expected status {'/'.join(map(str, statuses))}, got {r.brief()}")
        if r.error:
            raise Fail(f"expected a well-formed {r.status} response, got {r.brief()}")

    @staticmethod
    def expect_header(r, name, value=None, pattern=None):
        got = r.header(name)
        if got is None:
            raise Fail(f"expected header {name}, got none ({r.status} to {r.method} {r.target})")
        if value is not None and got != value:
            raise Fail(f"expected {name}: {value}, got {name}: {got} ({r.method} {r.target})")
        if pattern is not None and not re.fullmatch(pattern, got):
            raise Fail(f"expected {name} matching {pattern}, got {name}: {got}")
        return got

    @staticmethod
    def expect_error(r, statuses, codes):
        """Status in `statuses` and, unless HEAD, a JSON {"errors":[{"code"}]} with one of `codes`."""
        if isinstance(statuses, int):
            statuses = (statuses,)
        if isinstance(codes, str):
            codes = (codes,)
        if r.status not in statuses:
            raise Fail(f"expected {'/'.join(map(str, statuses))} {'/'.join(codes)}, got {r.brief()}")
        if r.error:
            raise Fail(f"expected a well-formed {r.status} response, got {r.brief()}")
        if r.method == "HEAD" or not codes:
            return
        got = r.error_codes()
        if got is None:
            raise Fail(f"expected a JSON body {{\"errors\":[{{\"code\":\"{codes[0]}\"}}]}}, got {r.brief()}")
        if not any(c in codes for c in got):
            raise Fail(f"expected error code {'/'.join(codes)}, got codes {got} ({r.brief()})")

    def location_target(self, r, under=None):
        """The Location of `r` as a request-target on this registry; with `under`, it must
        start with that path (an upload URL under /v2/<name>/blobs/uploads/, oci.md §1.5)."""
        loc = self.expect_header(r, "Location")
        u = urllib.parse.urlsplit(urllib.parse.urljoin(f"http://{self.reg.host}:{self.reg.port}/v2/", loc))
        if u.netloc and (u.hostname, u.port or 80) != (self.reg.host, self.reg.port):
            raise Fail(f"Location {loc} points at another host")
        if under is not None and not u.path.startswith(under):
            raise Fail(f"expected a Location under {under}, got {loc}")
        return u.path + (("?" + u.query) if u.query else "")

    def upload_location(self, r, repo):
        return self.location_target(r, f"/v2/{repo}/blobs/uploads/")

    def follow_location(self, r, data):
        """GET the Location of a 201: it must serve exactly `data`."""
        g = self.req("GET", self.location_target(r), [("Accept", ACCEPT_ALL)])
        if g.status != 200 or g.body != data:
            raise Fail(f"expected the Location {r.header('Location')} to serve the {len(data)} pushed bytes, "
                       f"got {g.brief()}")

    @staticmethod
    def with_query(target, **params):
        sep = "&" if "?" in target else "?"
        return target + sep + urllib.parse.urlencode(params)

    def start_upload(self, repo, query="", body=b""):
        r = self.req("POST", self.v2(repo, "blobs/uploads/") + query, body=body)
        return r

    def push_blob(self, repo, data, digest=None):
        """POST + PUT ?digest= with the body. Returns the PUT response; raises Fail unless 201."""
        digest = digest or sha256(data)
        r = self.start_upload(repo)
        self.expect_status(r, 202)
        loc = self.location_target(r)
        r = self.req("PUT", self.with_query(loc, digest=digest), [("Content-Type", "application/octet-stream")], data)
        self.expect_status(r, 201)
        return r

    def put_manifest(self, repo, ref, data, media_type=OCI_MANIFEST):
        return self.req("PUT", self.v2(repo, f"manifests/{ref}"), [("Content-Type", media_type)], data)

    def get_manifest(self, repo, ref, method="GET", accept=ACCEPT_ALL):
        return self.req(method, self.v2(repo, f"manifests/{ref}"), [("Accept", accept)])

    def get_blob(self, repo, digest, method="GET", headers=()):
        return self.req(method, self.v2(repo, f"blobs/{digest}"), headers)

    def expect_absent_manifest(self, repo, ref, what):
        r = self.get_manifest(repo, ref)
        if r.status != 404:
            raise Fail(f"nothing stored: expected {what} to be 404, got {r.brief()}")

    def expect_absent_blob(self, repo, digest, what):
        r = self.get_blob(repo, digest)
        if r.status != 404:
            raise Fail(f"nothing stored: expected {what} to be 404, got {r.brief()}")

    def expect_manifest_headers(self, r, data, media_type, digest):
        self.expect_header(r, "Content-Type", media_type)
        self.expect_header(r, "Content-Length", str(len(data)))
        self.expect_header(r, "Docker-Content-Digest", digest)
        if r.method == "GET" and r.body != data:
            raise Fail(f"expected the pushed {len(data)} bytes, got {len(r.body)} different bytes")
        if r.method == "HEAD" and r.body:
            raise Fail("HEAD returned a body")

    def expect_blob_headers(self, r, data, digest):
        self.expect_header(r, "Content-Length", str(len(data)))
        self.expect_header(r, "Docker-Content-Digest", digest)
        if r.method == "GET":
            self.expect_header(r, "Content-Type", "application/octet-stream")
            if r.body != data:
                raise Fail(f"expected the pushed {len(data)} bytes, got {len(r.body)} different bytes")
        elif r.body:
            raise Fail("HEAD returned a body")

    def tags(self, repo, query=""):
        r = self.req("GET", self.v2(repo, "tags/list") + query)
        doc = r.json() if r.status == 200 else None
        return r, (doc.get("tags") if isinstance(doc, dict) else None)

    # -- categories

    def run(self):
        for group in (self.base_and_auth, self.pull, self.push, self.discovery_and_management,
                      self.bad_input):
            try:
                group()
            except Exception as e:  # keep going: unreported ids are failed at the end
                print(f"ERROR in {group.__name__}: {type(e).__name__}: {e}", flush=True)
        self.check("headers.api_version_all", self.api_version_everywhere)
        for cid in CHECKS:
            if cid not in self.results:
                self.report(cid, False, "not run: an earlier step of its group failed")
        return self.unexpected

    def base_and_auth(self):
        def base():
            r = self.req("GET", "/v2/")
            self.expect_status(r, 200)
            self.expect_header(r, "Docker-Distribution-API-Version", "registry/2.0")
        self.check("base.v2_200", base)

        def anonymous():
            r = self.req("POST", self.v2(self.repo, "blobs/uploads/"), body=b"", auth=False)
            self.expect_error(r, 401, "UNAUTHORIZED")
            ch = self.expect_header(r, "WWW-Authenticate")
            scheme, params = parse_challenge(ch)
            if scheme not in ("basic", "bearer") or "realm" not in params:
                raise Fail(f"expected a Basic or Bearer challenge with a realm, got {ch}")
            if scheme == "bearer" and not params["realm"].startswith(("http://", "https://")):
                raise Fail(f"expected an absolute realm URL, got {ch}")
        self.check("auth.anonymous_push_401", anonymous)

        def bad_credentials():
            if self.reg.username is None:
                return "SKIP no credentials given"
            bad = Registry(f"http://{self.reg.host}:{self.reg.port}", self.reg.username,
                           "wrong-" + uuid.uuid4().hex)
            r = bad.request("POST", self.v2(self.repo, "blobs/uploads/"), body=b"")
            self.reg.seen += bad.seen
            final = bad.token_response if bad.mode == "bearer" and bad.token_response else r
            if final.status != 401:
                raise Fail(f"expected 401, got {final.brief()}")
            if r.status in (200, 201, 202):
                raise Fail(f"the registry accepted the request: {r.brief()}")
        self.check("auth.bad_credentials_401", bad_credentials)

        def bearer():
            if self.reg.mode != "bearer":
                return f"SKIP the registry challenges with {self.reg.mode or 'nothing'}, not Bearer"
            r = self.reg.token_response
            doc = r.json() if r is not None else None
            if not isinstance(doc, dict) or not (doc.get("token") or doc.get("access_token")):
                raise Fail(f"expected JSON with token/access_token, got {r.brief() if r else 'no token request'}")
            if "expires_in" in doc and (not isinstance(doc["expires_in"], int) or doc["expires_in"] < 60):
                raise Fail(f"expected expires_in >= 60, got {doc['expires_in']!r}")
        self.check("auth.bearer_token_response", bearer)

    def pull(self):
        repo = self.repo
        cfg = make_config("pull")
        layer = make_layer()
        m1 = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)])
        m2 = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)],
                            annotations={"org.example.run": self.run_id})
        d1, d2 = sha256(m1), sha256(m2)
        range_blob = rand_bytes(2048)
        rd = sha256(range_blob)

        def setup():
            self.push_blob(repo, cfg)
            self.push_blob(repo, layer)
            self.push_blob(repo, range_blob)
            r = self.put_manifest(repo, "tagtest0", m1)
            self.expect_status(r, 201)
            r = self.put_manifest(repo, d2, m2)
            self.expect_status(r, 201)
        self.check("pull.setup", setup)

        absent = sha256(b"hello world")
        self.check("pull.blob.head_absent_404",
                   lambda: self.expect_error(self.get_blob(repo, absent, "HEAD"), 404, ()))
        self.check("pull.blob.get_absent_404",
                   lambda: self.expect_error(self.get_blob(repo, absent), 404, "BLOB_UNKNOWN"))

        def blob(method):
            r = self.get_blob(repo, sha256(layer), method)
            self.expect_status(r, 200)
            self.expect_blob_headers(r, layer, sha256(layer))
        self.check("pull.blob.head_200", lambda: blob("HEAD"))
        self.check("pull.blob.get_200", lambda: blob("GET"))

        self.check("pull.manifest.head_invalid_name_404",
                   lambda: self.expect_status(self.get_manifest(repo, ".INVALID_MANIFEST_NAME", "HEAD"), 404))
        self.check("pull.manifest.get_invalid_name_404",
                   lambda: self.expect_status(self.get_manifest(repo, ".INVALID_MANIFEST_NAME"), 404))

        def manifest(ref, method, data, digest):
            r = self.get_manifest(repo, ref, method, accept=OCI_MANIFEST)
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, data, OCI_MANIFEST, digest)
        self.check("pull.manifest.head_by_digest_200", lambda: manifest(d2, "HEAD", m2, d2))
        self.check("pull.manifest.get_by_digest_200", lambda: manifest(d2, "GET", m2, d2))
        self.check("pull.manifest.head_by_tag_200", lambda: manifest("tagtest0", "HEAD", m1, d1))
        self.check("pull.manifest.get_by_tag_200", lambda: manifest("tagtest0", "GET", m1, d1))

        def malformed():
            r = self.get_manifest(repo, "sha256:totallywrong")
            if r.status == 400:
                codes = r.error_codes()
                if not codes or not all(re.fullmatch(r"[A-Z_]+", c or "") for c in codes):
                    raise Fail(f"a 400 must carry a JSON error with a spec code, got {r.brief()}")
                return
            self.expect_status(r, 404)
        self.check("pull.manifest.get_malformed_digest", malformed)
        self.check("pull.manifest.get_absent_tag_404",
                   lambda: self.expect_error(self.get_manifest(repo, "absent-" + self.run_id), 404,
                                             "MANIFEST_UNKNOWN"))
        absent_repo = f"{self.ns}/absent-{self.run_id}".lstrip("/")
        self.check("pull.repo.absent_manifest_404",
                   lambda: self.expect_error(self.get_manifest(absent_repo, "latest"), 404,
                                             ("NAME_UNKNOWN", "MANIFEST_UNKNOWN")))
        self.check("pull.repo.absent_tags_404",
                   lambda: self.expect_error(self.tags(absent_repo)[0], 404, "NAME_UNKNOWN"))

        def ranged(spec, status, start=None, end=None):
            r = self.get_blob(repo, rd, headers=[("Range", f"bytes={spec}")])
            self.expect_status(r, status)
            if status == 416:
                return
            want = range_blob[start:end + 1]
            self.expect_header(r, "Content-Range", pattern=rf"bytes {start}-{end}/(2048|\*)")
            self.expect_header(r, "Content-Length", str(len(want)))
            if r.body != want:
                raise Fail(f"expected bytes {start}-{end} ({len(want)} bytes), got {len(r.body)} other bytes")
        self.check("pull.range.bounded", lambda: ranged("500-1499", 206, 500, 1499))
        self.check("pull.range.open_end", lambda: ranged("500-", 206, 500, 2047))
        self.check("pull.range.suffix", lambda: ranged("-500", 206, 1548, 2047))
        self.check("pull.range.end_past_eof", lambda: ranged("2000-5000", 206, 2000, 2047))
        self.check("pull.range.end_before_start_416", lambda: ranged("500-0", 416))
        self.check("pull.range.start_past_eof_416", lambda: ranged("5000-10000", 416))

    def push(self):
        repo, mount = self.repo, self.mount
        self.push_streamed(repo)
        self.push_monolithic(repo)
        self.push_chunked(repo)
        self.push_special_blobs(repo)
        self.push_mount(repo, mount)
        self.push_manifests(repo)

    def push_streamed(self, repo):
        data = rand_bytes(3000)
        st = {}

        def post():
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            st["loc"] = self.upload_location(r, repo)
        self.check("push.streamed.post_202", post)

        def patch():
            r = self.req("PATCH", st["loc"], [("Content-Type", "application/octet-stream")], data, chunked=True)
            self.expect_status(r, 202)
            st["loc"] = self.upload_location(r, repo)
            self.expect_header(r, "Range", f"0-{len(data) - 1}")
        self.check("push.streamed.patch_202", patch)

        def put():
            r = self.req("PUT", self.with_query(st["loc"], digest=sha256(data)), body=b"")
            self.expect_status(r, 201)
            self.expect_header(r, "Docker-Content-Digest", sha256(data))
            self.follow_location(r, data)
        self.check("push.streamed.put_201", put)

        def get():
            r = self.get_blob(repo, sha256(data))
            self.expect_status(r, 200)
            self.expect_blob_headers(r, data, sha256(data))
        self.check("push.streamed.get_200", get)

    def push_monolithic(self, repo):
        data = rand_bytes(1500)
        d = sha256(data)
        self.check("push.monolithic.get_absent_404",
                   lambda: self.expect_status(self.get_blob(repo, d), 404))

        def single_post():
            one = rand_bytes(700)
            r = self.req("POST", self.v2(repo, "blobs/uploads/") + "?digest=" + sha256(one),
                         [("Content-Type", "application/octet-stream")], one)
            self.expect_status(r, 201, 202)
            if r.status == 201:
                self.follow_location(r, one)
            else:
                self.upload_location(r, repo)
            g = self.get_blob(repo, sha256(one))
            if r.status == 201:
                self.expect_status(g, 200)
                self.expect_blob_headers(g, one, sha256(one))
            else:
                self.expect_status(g, 404)
        self.check("push.monolithic.single_post", single_post)
        st = {}

        def post():
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            st["loc"] = self.upload_location(r, repo)
        self.check("push.monolithic.post_202", post)

        def put():
            r = self.req("PUT", self.with_query(st["loc"], digest=d), [("Content-Type", "application/octet-stream")], data)
            self.expect_status(r, 201)
            self.expect_header(r, "Docker-Content-Digest", d)
            self.follow_location(r, data)
        self.check("push.monolithic.put_201", put)

        def get():
            r = self.get_blob(repo, d)
            self.expect_status(r, 200)
            self.expect_blob_headers(r, data, d)
        self.check("push.monolithic.get_200", get)

    def push_chunked(self, repo):
        """The v1.1.1 chunked sequence (22 + 20 bytes, larger if OCI-Chunk-Min-Length asks),
        with the in-order path and the refused chunks on separate uploads so that a registry
        accepting an out-of-order chunk does not hide whether in-order chunks work."""
        st = {}
        sizes = [22, 20]

        def post():
            r = self.req("POST", self.v2(repo, "blobs/uploads/"), [("Content-Length", "0")], b"")
            self.expect_status(r, 202)
            st["loc"] = self.upload_location(r, repo)
            minimum = r.header("OCI-Chunk-Min-Length")
            if minimum and minimum.isdigit() and int(minimum) > sizes[0]:
                sizes[0] = int(minimum)
                sizes[1] = int(minimum)
        self.check("push.chunked.post_202", post)
        data = rand_bytes(sizes[0] + sizes[1])
        c1, c2 = data[:sizes[0]], data[sizes[0]:]
        e1, e2 = len(c1) - 1, len(data) - 1

        def patch(loc, chunk, start, end):
            return self.req("PATCH", loc, [("Content-Type", "application/octet-stream"),
                                           ("Content-Range", f"{start}-{end}")], chunk)

        def first():
            r = patch(st["loc"], c1, 0, e1)
            self.expect_status(r, 202)
            st["loc"] = self.upload_location(r, repo)
            self.expect_header(r, "Range", f"0-{e1}")
        self.check("push.chunked.first_202", first)

        def status():
            r = self.req("GET", st["loc"])
            self.expect_status(r, 204)
            self.upload_location(r, repo)
            self.expect_header(r, "Range", f"0-{e1}")
        self.check("push.chunked.status_204", status)

        def second():
            r = patch(st["loc"], c2, len(c1), e2)
            self.expect_status(r, 202)
            st["loc"] = self.upload_location(r, repo)
            self.expect_header(r, "Range", f"0-{e2}")
        self.check("push.chunked.second_202", second)

        def put():
            r = self.req("PUT", self.with_query(st["loc"], digest=sha256(data)), [("Content-Length", "0")], b"")
            self.expect_status(r, 201)
            self.expect_header(r, "Docker-Content-Digest", sha256(data))
            self.follow_location(r, data)
        self.check("push.chunked.put_201", put)

        def get():
            r = self.get_blob(repo, sha256(data))
            self.expect_status(r, 200)
            self.expect_blob_headers(r, data, sha256(data))
        self.check("push.chunked.get_200", get)

        def out_of_order():
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            st["loc2"] = self.location_target(r)
            self.expect_status(patch(st["loc2"], c2, len(c1), e2), 416)
        self.check("push.chunked.out_of_order_416", out_of_order)

        def resend_first():
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = patch(loc, c1, 0, e1)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            self.expect_status(patch(loc, c1, 0, e1), 416)
            r = self.req("GET", loc)
            self.expect_status(r, 204)
            self.expect_header(r, "Range", f"0-{e1}")
        self.check("push.chunked.resend_first_416", resend_first)

        def final_in_put():
            blob = rand_bytes(40)
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = self.req("PATCH", loc, [("Content-Type", "application/octet-stream"), ("Content-Range", "0-19")], blob[:20])
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = self.req("PUT", self.with_query(loc, digest=sha256(blob)),
                         [("Content-Type", "application/octet-stream"), ("Content-Range", "20-39")], blob[20:])
            self.expect_status(r, 201)
            g = self.get_blob(repo, sha256(blob))
            self.expect_status(g, 200)
            self.expect_blob_headers(g, blob, sha256(blob))
        self.check("push.chunked.final_chunk_in_put_201", final_in_put)

        def final_out_of_order():
            blob = rand_bytes(30)
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = self.req("PATCH", loc, [("Content-Type", "application/octet-stream"), ("Content-Range", "0-9")], blob[:10])
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = self.req("PUT", self.with_query(loc, digest=sha256(blob[:10] + blob[20:])),
                         [("Content-Type", "application/octet-stream"), ("Content-Range", "20-29")], blob[20:])
            self.expect_status(r, 416)
            self.expect_absent_blob(repo, sha256(blob[:10] + blob[20:]), "the gapped blob")
        self.check("push.chunked.final_chunk_out_of_order_416", final_out_of_order)

        def cancel():
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = self.req("DELETE", loc)
            self.expect_status(r, 204)
            r = self.req("GET", loc)
            self.expect_error(r, 404, "BLOB_UPLOAD_UNKNOWN")
        self.check("push.upload.cancel_204", cancel)

    def push_special_blobs(self, repo):
        def zero_put():
            r = self.push_blob(repo, b"")
            self.expect_header(r, "Docker-Content-Digest", ZERO_DIGEST)
        self.check("push.zero_byte.put_201", zero_put)

        def zero_head():
            r = self.get_blob(repo, ZERO_DIGEST, "HEAD")
            self.expect_status(r, 200)
            self.expect_blob_headers(r, b"", ZERO_DIGEST)
        self.check("push.zero_byte.head_200", zero_head)

        data = rand_bytes(1000)
        d512 = sha512(data)

        def sha512_put():
            r = self.start_upload(repo, "?digest-algorithm=sha512")
            self.expect_status(r, 202)
            loc = self.location_target(r)
            r = self.req("PUT", self.with_query(loc, digest=d512), [("Content-Type", "application/octet-stream")], data)
            self.expect_status(r, 201)
            self.expect_header(r, "Docker-Content-Digest", d512)
        self.check("push.sha512.blob_put_201", sha512_put)

        def sha512_get():
            r = self.get_blob(repo, d512)
            self.expect_status(r, 200)
            self.expect_blob_headers(r, data, d512)
        self.check("push.sha512.blob_get_200", sha512_get)

        cfg = make_config("sha512")
        layer = make_layer()
        m = manifest_bytes({"mediaType": OCI_CONFIG, "digest": sha512(cfg), "size": len(cfg)},
                           [{"mediaType": OCI_LAYER, "digest": sha512(layer), "size": len(layer)}])
        md = sha512(m)

        def sha512_manifest_put():
            for blob in (cfg, layer):
                r = self.start_upload(repo, "?digest-algorithm=sha512")
                self.expect_status(r, 202)
                r = self.req("PUT", self.with_query(self.location_target(r), digest=sha512(blob)), body=blob)
                self.expect_status(r, 201)
            r = self.put_manifest(repo, md, m)
            self.expect_status(r, 201)
            self.expect_header(r, "Docker-Content-Digest", md)
        self.check("push.sha512.manifest_put_201", sha512_manifest_put)

        def sha512_manifest_get():
            r = self.get_manifest(repo, md)
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, m, OCI_MANIFEST, md)
        self.check("push.sha512.manifest_get_200", sha512_manifest_get)

    def push_mount(self, repo, mount):
        data = rand_bytes(1200)
        d = sha256(data)

        def not_linked():
            self.push_blob(repo, data)
            self.expect_status(self.get_blob(mount, d), 404)
        self.check("push.mount.not_linked_404", not_linked)

        def absent():
            r = self.req("POST", self.v2(mount, "blobs/uploads/") + "?mount=" + sha256(rand_bytes(16)), body=b"")
            self.expect_status(r, 202)
            loc = self.location_target(r)
            if not loc.startswith(f"/v2/{mount}/blobs/uploads/"):
                raise Fail(f"expected Location under /v2/{mount}/blobs/uploads/, got {loc}")
        self.check("push.mount.absent_202", absent)

        def from_repo():
            r = self.req("POST", self.v2(mount, "blobs/uploads/") + f"?mount={d}&from={repo}", body=b"",
                         extra_scopes=[f"repository:{repo}:pull"])
            self.expect_status(r, 201)
            if self.location_target(r) != f"/v2/{mount}/blobs/{d}":
                raise Fail(f"expected Location /v2/{mount}/blobs/{d}, got {r.header('Location')}")
            self.expect_header(r, "Docker-Content-Digest", d)
        self.check("push.mount.from_201", from_repo)

        def get():
            r = self.get_blob(mount, d)
            self.expect_status(r, 200)
            self.expect_blob_headers(r, data, d)
        self.check("push.mount.get_200", get)

    def push_manifests(self, repo):
        cfg = make_config("push")
        layer = make_layer()
        m = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)])
        d = sha256(m)
        self.check("push.manifest.get_absent_404",
                   lambda: self.expect_status(self.get_manifest(repo, d), 404))

        def tags():
            self.push_blob(repo, cfg)
            self.push_blob(repo, layer)
            for i in range(4):
                r = self.put_manifest(repo, f"test{i}", m)
                self.expect_status(r, 201)
                self.expect_header(r, "Docker-Content-Digest", d)
                self.follow_location(r, m)
        self.check("push.manifest.put_tags_201", tags)

        st = {"empty": manifest_bytes(desc(OCI_CONFIG, cfg), [])}

        def empty_layers():
            r = self.put_manifest(repo, "emptylayer", st["empty"])
            self.expect_status(r, 201)
        self.check("push.manifest.empty_layers_201", empty_layers)

        def by_digest():
            r = self.get_manifest(repo, d)
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, m, OCI_MANIFEST, d)
        self.check("push.manifest.get_by_digest_200", by_digest)

        # Custom fields at every level, the optional `data`, odd whitespace and a float
        # written 2.50: a registry that re-serialises instead of storing bytes changes them.
        custom = (
            '{\n   "schemaVersion" : 2,\n\t"mediaType": "%s",\n   "config": {"mediaType": "%s", '
            '"digest": "%s", "size": %d, "data": "%s", "org.example.custom": {"nested": [1, 2.50, true]}},\n'
            '   "layers": [\n      {"mediaType": "%s", "digest": "%s", "size": %d, "org.example.unknown": "kept",'
            ' "annotations": {"a": "b"}}\n   ],\n   "org.example.top": "x",\n'
            '   "annotations": {"org.example.run": "%s"}\n}\n'
        ) % (OCI_MANIFEST, OCI_CONFIG, sha256(cfg), len(cfg), base64.b64encode(cfg).decode(), OCI_LAYER,
             sha256(layer), len(layer), self.run_id)
        custom = custom.encode()
        cd = sha256(custom)
        json.loads(custom)  # the test's own data must be valid JSON

        def verbatim():
            r = self.put_manifest(repo, "custom", custom)
            self.expect_status(r, 201)
            self.expect_header(r, "Docker-Content-Digest", cd)
            for ref in (cd, "custom"):
                r = self.get_manifest(repo, ref)
                self.expect_status(r, 200)
                self.expect_manifest_headers(r, custom, OCI_MANIFEST, cd)
        self.check("push.manifest.custom_fields_verbatim", verbatim)

        def nondistributable():
            nd_layer = make_layer()  # never uploaded
            body = manifest_bytes(desc(OCI_CONFIG, cfg), [
                desc(OCI_LAYER, layer),
                desc(OCI_LAYER_ND, nd_layer, urls=["https://example.com/layer.tar.gz"])])
            r = self.put_manifest(repo, "nondistributable", body)
            self.expect_status(r, 201)
            r = self.get_manifest(repo, sha256(body))
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, body, OCI_MANIFEST, sha256(body))
        self.check("push.manifest.nondistributable_201", nondistributable)

        def no_media_type():
            body = json.dumps({"schemaVersion": 2, "config": desc(OCI_CONFIG, cfg),
                               "layers": [desc(OCI_LAYER, layer)],
                               "annotations": {"org.example.run": self.run_id}}).encode()
            r = self.put_manifest(repo, "nomediatype", body)
            self.expect_status(r, 201)
            r = self.get_manifest(repo, "nomediatype")
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, body, OCI_MANIFEST, sha256(body))
        self.check("push.manifest.no_media_type", no_media_type)

        def docker_v2():
            dcfg = make_config("docker")
            self.push_blob(repo, dcfg)
            body = json.dumps({"schemaVersion": 2, "mediaType": DOCKER_MANIFEST,
                               "config": desc(DOCKER_CONFIG, dcfg),
                               "layers": [desc(DOCKER_LAYER, layer)]}, indent=3).encode()
            r = self.put_manifest(repo, "docker", body, DOCKER_MANIFEST)
            self.expect_status(r, 201)
            r = self.get_manifest(repo, "docker", accept=DOCKER_MANIFEST)
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, body, DOCKER_MANIFEST, sha256(body))
        self.check("push.manifest.docker_v2", docker_v2)

        def index():
            body = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
                dict(desc(OCI_MANIFEST, m), platform={"architecture": "amd64", "os": "linux"}),
                dict(desc(OCI_MANIFEST, st["empty"]), platform={"architecture": "arm64", "os": "linux"}),
            ]}).encode()
            r = self.put_manifest(repo, "index", body, OCI_INDEX)
            self.expect_status(r, 201)
            r = self.get_manifest(repo, "index")
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, body, OCI_INDEX, sha256(body))
        self.check("push.manifest.index", index)

        def overwrite():
            r = self.put_manifest(repo, "test3", st["empty"])
            self.expect_status(r, 201)
            r = self.get_manifest(repo, "test3")
            self.expect_status(r, 200)
            self.expect_manifest_headers(r, st["empty"], OCI_MANIFEST, sha256(st["empty"]))
        self.check("push.manifest.tag_overwrite", overwrite)

        def four_mib():
            body = self.padded_manifest(cfg, layer, MAX_MANIFEST)
            r = self.put_manifest(repo, "fourmib", body)
            self.expect_status(r, 201)
            r = self.get_manifest(repo, "fourmib", "HEAD")
            self.expect_status(r, 200)
            self.expect_header(r, "Content-Length", str(MAX_MANIFEST))
        self.check("push.manifest.4mib_201", four_mib)

    @staticmethod
    def padded_manifest(cfg, layer, size):
        """A valid manifest of exactly `size` bytes (padding in an annotation)."""
        base = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)],
                              annotations={"org.example.padding": ""})
        pad = size - len(base)
        body = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)],
                              annotations={"org.example.padding": "x" * pad})
        assert len(body) == size
        return body

    def discovery_and_management(self):
        repo = self.repo
        st = {}
        cfg = make_config("subject")
        layer = make_layer()
        subject = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)],
                                 annotations={"org.example.run": self.run_id})
        sd = sha256(subject)
        subject_desc = desc(OCI_MANIFEST, subject)
        missing = manifest_bytes(desc(OCI_CONFIG, make_config("never")), [])
        missing_desc = desc(OCI_MANIFEST, missing)
        bagel = "application/vnd.nhl.peanut.butter.bagel"
        empty = {"mediaType": OCI_EMPTY, "digest": EMPTY_JSON_DIGEST, "size": 2, "data": "e30="}

        def artifact(i, artifact_type, subj=subject_desc):
            return manifest_bytes(empty, [desc(OCI_LAYER, layer)], artifactType=artifact_type,
                                  subject=subj, annotations={"org.example.referrer": f"{i}-{self.run_id}"})

        # 5 referrers of the subject: three before it (two artifacts and one index), two after;
        # one of them typed by config.mediaType only; plus one whose subject is never pushed.
        other_cfg = make_config("ref-config")
        referrers = [
            (artifact(0, bagel), OCI_MANIFEST, bagel),
            (artifact(1, "application/vnd.example.sbom"), OCI_MANIFEST, "application/vnd.example.sbom"),
            (json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "artifactType": bagel,
                         "manifests": [], "subject": subject_desc,
                         "annotations": {"org.example.referrer": f"2-{self.run_id}"}}).encode(),
             OCI_INDEX, bagel),
        ]
        after = [
            (artifact(3, "application/vnd.example.signature"), OCI_MANIFEST, "application/vnd.example.signature"),
            (manifest_bytes(desc("application/vnd.example.config.v1+json", other_cfg), [desc(OCI_LAYER, layer)],
                            subject=subject_desc, annotations={"org.example.referrer": f"4-{self.run_id}"}),
             OCI_MANIFEST, "application/vnd.example.config.v1+json"),
        ]
        orphan = artifact(5, bagel, missing_desc)
        tag_names = [f"disc-{self.run_id}-{c}" for c in "abcd"]

        # The subject must not exist when its referrers are pushed; the 4 tags (tag "a" is the
        # subject itself) are pushed after them.
        def setup_blobs():
            for blob in (cfg, layer, EMPTY_JSON, other_cfg):
                self.push_blob(repo, blob)
        self.check("discovery.setup", setup_blobs)

        def put_referrers():
            r = self.get_manifest(repo, sd)
            self.expect_status(r, 404)  # the subject is not there yet
            problems = []  # push them all before complaining: later checks need them
            for body, mt, _ in referrers + [(orphan, OCI_MANIFEST, bagel)]:
                r = self.put_manifest(repo, sha256(body), body, mt)
                want = missing_desc["digest"] if body is orphan else sd
                try:
                    self.expect_status(r, 201)
                    self.expect_header(r, "OCI-Subject", want)
                except Fail as e:
                    problems.append(str(e))
            if problems:
                raise Fail("; ".join(problems))
        self.check("discovery.referrers.put_oci_subject", put_referrers)

        def subject_after():
            for t in tag_names:  # tag a is the subject itself
                body = subject if t.endswith("a") else manifest_bytes(
                    desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)], annotations={"t": t})
                self.expect_status(self.put_manifest(repo, t, body), 201)
            for body, mt, _ in after:
                r = self.put_manifest(repo, sha256(body), body, mt)
                self.expect_status(r, 201)
        self.check("discovery.referrers.subject_after_201", subject_after)

        def tag_list():
            r, tags = self.tags(repo)
            self.expect_status(r, 200)
            doc = r.json()
            if not isinstance(doc, dict) or doc.get("name") != repo or not isinstance(tags, list):
                raise Fail(f"expected {{\"name\": \"{repo}\", \"tags\": [...]}}, got {r.brief()}")
            lost = [t for t in tag_names + ["tagtest0", "test0"] if t not in tags]
            if lost:
                raise Fail(f"expected the pushed tags {lost} in the list, got {tags}")
            st["tags"], st["half"] = tags, max(1, len(tags) // 2)
        self.check("discovery.tags.list_200", tag_list)

        def sorted_():
            tags = st["tags"]
            if tags != sorted(tags) and tags != sorted(tags, key=str.lower):
                raise Fail(f"expected lexical order, got {tags}")
        self.check("discovery.tags.sorted", sorted_)

        def next_link(r):
            link = self.expect_header(r, "Link")
            m = re.fullmatch(r'\s*<([^>]+)>\s*;\s*rel="?next"?\s*', link)
            if not m:
                raise Fail(f'expected Link: <url>; rel="next", got {link}')
            return m.group(1)

        def paged():
            tags, half = st["tags"], st["half"]
            r, got = self.tags(repo, f"?n={half}")
            self.expect_status(r, 200)
            if got != tags[:half]:
                raise Fail(f"expected the first {half} tags {tags[:half]}, got {got}")
            next_link(r)
        self.check("discovery.tags.n", paged)

        def follow():
            tags = st["tags"]
            r, first = self.tags(repo, f"?n={st['half']}")
            u = urllib.parse.urlsplit(next_link(r))
            url = u.geturl()
            if u.netloc and (u.hostname, u.port or 80) != (self.reg.host, self.reg.port):
                raise Fail(f"Link points at another host: {url}")
            collected = list(first or [])
            target = u.path + ("?" + u.query if u.query else "")
            for _ in range(len(tags) + 2):
                r = self.req("GET", target)
                self.expect_status(r, 200)
                doc = r.json()
                collected += doc.get("tags") or []
                link = r.header("Link")
                if not link:
                    break
                m = re.fullmatch(r'\s*<([^>]+)>\s*;\s*rel="?next"?\s*', link)
                if not m:
                    raise Fail(f"bad Link {link}")
                u = urllib.parse.urlsplit(m.group(1))
                target = u.path + ("?" + u.query if u.query else "")
            if collected != tags:
                raise Fail(f"expected the pages to add up to {tags}, got {collected}")
        self.check("discovery.tags.link_next", follow)

        def n_last():
            tags, half = st["tags"], st["half"]
            last = tags[0]
            r, got = self.tags(repo, f"?n={half}&last={urllib.parse.quote(last)}")
            self.expect_status(r, 200)
            if got is None or len(got) > half or any(t not in tags or tags.index(t) <= 0 for t in got):
                raise Fail(f"expected at most {half} tags after {last}, got {got}")
            if got != tags[1:1 + half]:
                raise Fail(f"expected {tags[1:1 + half]}, got {got}")
        self.check("discovery.tags.n_last", n_last)

        def last_only():
            tags = st["tags"]
            last = tags[len(tags) // 2]
            r, got = self.tags(repo, f"?last={urllib.parse.quote(last)}")
            self.expect_status(r, 200)
            if got != tags[len(tags) // 2 + 1:]:
                raise Fail(f"expected the tags after {last}: {tags[len(tags) // 2 + 1:]}, got {got}")
        self.check("discovery.tags.last_only", last_only)

        def n_zero():
            r, got = self.tags(repo, "?n=0")
            self.expect_status(r, 200)
            if got not in ([], None) or r.header("Link"):
                raise Fail(f"expected an empty list and no Link, got tags {got}, Link {r.header('Link')}")
            doc = r.json()
            if not isinstance(doc, dict) or "tags" not in doc:
                raise Fail(f"expected a JSON body with tags [], got {r.brief()}")
        self.check("discovery.tags.n_zero", n_zero)

        def referrers_of(digest, query=""):
            r = self.req("GET", self.v2(repo, f"referrers/{digest}") + query)
            self.expect_status(r, 200)
            self.expect_header(r, "Content-Type", OCI_INDEX)
            doc = r.json()
            if not isinstance(doc, dict) or doc.get("schemaVersion") != 2 or \
                    doc.get("mediaType") != OCI_INDEX or not isinstance(doc.get("manifests"), list):
                raise Fail(f"expected an image index with manifests [...], got {r.brief()}")
            return r, doc["manifests"]

        def unknown():
            _, got = referrers_of(sha256(rand_bytes(8)))
            if got != []:
                raise Fail(f"expected manifests [], got {got}")
        self.check("discovery.referrers.unknown_empty", unknown)

        def expect_entries(got, wanted):
            want = {sha256(b): (b, mt, at) for b, mt, at in wanted}
            digests = [e.get("digest") for e in got]
            if sorted(digests) != sorted(want) or len(set(digests)) != len(digests):
                raise Fail(f"expected referrers {sorted(want)}, got {digests}")
            for e in got:
                body, mt, at = want[e["digest"]]
                ann = json.loads(body).get("annotations")
                if e.get("mediaType") != mt or e.get("size") != len(body) or \
                        e.get("artifactType") != at or e.get("annotations") != ann:
                    raise Fail(f"entry {e} should have mediaType {mt}, size {len(body)}, "
                               f"artifactType {at}, annotations {ann}")

        def listing():
            _, got = referrers_of(sd)
            expect_entries(got, referrers + after)
        self.check("discovery.referrers.list", listing)

        def filtered():
            r, got = referrers_of(sd, "?artifactType=" + urllib.parse.quote(bagel, safe=""))
            self.expect_header(r, "OCI-Filters-Applied", "artifactType")
            expect_entries(got, [x for x in referrers + after if x[2] == bagel])
        self.check("discovery.referrers.filter", filtered)

        def orphaned():
            _, got = referrers_of(missing_desc["digest"])
            expect_entries(got, [(orphan, OCI_MANIFEST, bagel)])
        self.check("discovery.referrers.missing_subject", orphaned)
        self.check("discovery.referrers.malformed_400",
                   lambda: self.expect_status(self.req("GET", self.v2(repo, "referrers/sha256:nothex")), 400))

        # -- content management
        def delete_tag():
            st["before"] = len(self.tags(repo)[1])
            r = self.req("DELETE", self.v2(repo, f"manifests/{tag_names[1]}"))
            self.expect_status(r, 202)
        self.check("management.delete_tag_202", delete_tag)

        def deleted_tag():
            self.expect_error(self.get_manifest(repo, tag_names[1]), 404, "MANIFEST_UNKNOWN")
            body = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)], annotations={"t": tag_names[1]})
            r = self.get_manifest(repo, sha256(body))
            self.expect_status(r, 200)
        self.check("management.deleted_tag_404", deleted_tag)

        def count():
            r, tags = self.tags(repo)
            self.expect_status(r, 200)
            if len(tags) != st["before"] - 1 or tag_names[1] in tags:
                raise Fail(f"expected {st['before'] - 1} tags without {tag_names[1]}, got {tags}")
        self.check("management.tags_count_decreased", count)

        victim = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)], annotations={"t": tag_names[2]})

        def delete_manifest():
            r = self.req("DELETE", self.v2(repo, f"manifests/{sha256(victim)}"))
            self.expect_status(r, 202)
        self.check("management.delete_manifest_202", delete_manifest)

        def deleted_manifest():
            self.expect_error(self.get_manifest(repo, sha256(victim)), 404, "MANIFEST_UNKNOWN")
            self.expect_error(self.get_manifest(repo, tag_names[2]), 404, "MANIFEST_UNKNOWN")
            _, tags = self.tags(repo)
            if tag_names[2] in (tags or []):
                raise Fail(f"tag {tag_names[2]} of the deleted manifest still listed: {tags}")
        self.check("management.deleted_manifest_404", deleted_manifest)

        def referrer_gone():
            gone = referrers[1][0]
            r = self.req("DELETE", self.v2(repo, f"manifests/{sha256(gone)}"))
            self.expect_status(r, 202)
            _, got = referrers_of(sd)
            expect_entries(got, [x for x in referrers + after if x[0] is not gone])
        self.check("management.deleted_referrer_gone", referrer_gone)

        def delete_blobs():
            for blob in (other_cfg, layer):
                r = self.req("DELETE", self.v2(repo, f"blobs/{sha256(blob)}"))
                self.expect_status(r, 202)
        self.check("management.delete_blob_202", delete_blobs)

        def deleted_blobs():
            for blob in (other_cfg, layer):
                self.expect_error(self.get_blob(repo, sha256(blob)), 404, "BLOB_UNKNOWN")
        self.check("management.deleted_blob_404", deleted_blobs)
        self.check("management.delete_absent_manifest_404",
                   lambda: self.expect_error(self.req("DELETE", self.v2(repo, f"manifests/{sha256(rand_bytes(8))}")),
                                             404, "MANIFEST_UNKNOWN"))
        self.check("management.delete_absent_blob_404",
                   lambda: self.expect_error(self.req("DELETE", self.v2(repo, f"blobs/{sha256(rand_bytes(8))}")),
                                             404, "BLOB_UNKNOWN"))

    def bad_input(self):
        repo = self.repo
        data = rand_bytes(100)
        other = rand_bytes(100)

        def put_digest(digest_query, body):
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            target = self.with_query(loc, digest=digest_query) if digest_query is not None else loc
            return self.req("PUT", target, [("Content-Type", "application/octet-stream")], body)

        self.check("bad.digest.mismatch_400",
                   lambda: self.expect_error(put_digest(sha256(other), data), 400, "DIGEST_INVALID"))

        def mismatch_stored():
            self.expect_absent_blob(repo, sha256(other), "the declared digest")
            self.expect_absent_blob(repo, sha256(data), "the digest of the sent bytes")
        self.check("bad.digest.mismatch_nothing_stored", mismatch_stored)
        self.check("bad.digest.missing_400",
                   lambda: self.expect_error(put_digest(None, data), 400, "DIGEST_INVALID"))
        self.check("bad.digest.malformed_400",
                   lambda: self.expect_error(put_digest("sha256:xyz", data), 400, "DIGEST_INVALID"))

        def uppercase():
            up = "sha256:" + hashlib.sha256(data).hexdigest().upper()
            self.expect_error(put_digest(up, data), 400, "DIGEST_INVALID")
            self.expect_absent_blob(repo, sha256(data), "the blob")
        self.check("bad.digest.uppercase_400", uppercase)

        st = {}
        chunk = rand_bytes(30)

        def patch(start, end, body, length=None):
            headers = [("Content-Type", "application/octet-stream"), ("Content-Range", f"{start}-{end}")]
            if length is not None:
                headers.append(("Content-Length", str(length)))
            return self.req("PATCH", st["loc"], headers, body)

        def upload_with_first_chunk():
            """A new upload holding chunk[0:10]; its next location goes to st["loc"]."""
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            st["loc"] = self.location_target(r)
            r = patch(0, 9, chunk[:10])
            self.expect_status(r, 202)
            st["loc"] = self.location_target(r)

        def gap():
            upload_with_first_chunk()
            st["gap_loc"] = st["loc"]
            r = patch(20, 29, chunk[20:30])
            if r.status == 202 and r.header("Location"):
                st["gap_loc"] = self.location_target(r)
            self.expect_status(r, 416)
        self.check("bad.chunk.gap_416", gap)

        def size_mismatch():
            upload_with_first_chunk()
            r = patch(10, 19, chunk[10:15])
            self.expect_error(r, 400, "SIZE_INVALID")
            s = self.req("GET", st["loc"])
            self.expect_status(s, 204)
            self.expect_header(s, "Range", "0-9")
        self.check("bad.size.range_length_mismatch_400", size_mismatch)

        def overlap():
            upload_with_first_chunk()
            self.expect_status(patch(5, 14, chunk[5:15]), 416)
        self.check("bad.chunk.overlap_416", overlap)

        def kept():
            r = self.req("GET", st["loc"])
            self.expect_status(r, 204)
            self.expect_header(r, "Range", "0-9")
            r = patch(10, 19, chunk[10:20])
            self.expect_status(r, 202)
            st["loc"] = self.location_target(r)
            r = self.req("PUT", self.with_query(st["loc"], digest=sha256(chunk[:20])), body=b"")
            self.expect_status(r, 201)
            g = self.get_blob(repo, sha256(chunk[:20]))
            self.expect_status(g, 200)
            self.expect_blob_headers(g, chunk[:20], sha256(chunk[:20]))
        self.check("bad.chunk.state_kept", kept)

        def chunk_nothing_stored():
            gapped = chunk[:10] + chunk[20:30]
            r = self.req("PUT", self.with_query(st["gap_loc"], digest=sha256(gapped)), body=b"")
            if 200 <= r.status < 300:
                raise Fail(f"completing the gapped upload as first+refused chunk must fail, got {r.brief()}")
            for bad in (gapped, chunk[:10] + chunk[5:15]):
                self.expect_absent_blob(repo, sha256(bad), "a blob made with the refused chunks")
        self.check("bad.chunk.nothing_stored", chunk_nothing_stored)

        def unknown_upload():
            r = self.start_upload(repo)
            self.expect_status(r, 202)
            loc = self.location_target(r)
            path, _, _ = loc.partition("?")
            fake = path.rsplit("/", 1)[0] + "/" + str(uuid.uuid4())
            r = self.req("PATCH", fake, [("Content-Type", "application/octet-stream"), ("Content-Range", "0-9")],
                         rand_bytes(10))
            self.expect_error(r, 404, "BLOB_UPLOAD_UNKNOWN")
        self.check("bad.upload.unknown_404", unknown_upload)

        cfg = make_config("bad")
        layer = make_layer()

        def pushed_cfg():
            if "cfg" not in st:
                self.push_blob(repo, cfg)
                st["cfg"] = True

        def refused_manifest(tag, body, media_type, status, codes, ref=None):
            pushed_cfg()
            r = self.put_manifest(repo, ref or tag, body, media_type)
            self.expect_error(r, status, codes)
            self.expect_absent_manifest(repo, tag, f"tag {tag}")
            self.expect_absent_manifest(repo, sha256(body), "the manifest by digest")

        def blob_unknown():
            body = manifest_bytes(desc(OCI_CONFIG, cfg), [desc(OCI_LAYER, layer)])
            pushed_cfg()
            r = self.put_manifest(repo, "bad-blob-unknown", body)
            self.expect_error(r, 400, "MANIFEST_BLOB_UNKNOWN")
            st["blob_unknown_body"] = body
        self.check("bad.manifest.blob_unknown_400", blob_unknown)

        def blob_unknown_stored():
            self.expect_absent_manifest(repo, "bad-blob-unknown", "the tag")
            self.expect_absent_manifest(repo, sha256(st["blob_unknown_body"]), "the manifest by digest")
        self.check("bad.manifest.blob_unknown_nothing_stored", blob_unknown_stored)
        self.check("bad.manifest.malformed_400",
                   lambda: refused_manifest("bad-malformed", b'{"schemaVersion": 2, "mediaType": "' +
                                            OCI_MANIFEST.encode() + b'", "config": {', OCI_MANIFEST, 400,
                                            "MANIFEST_INVALID"))
        unknown_type = "application/vnd.example.unknown.manifest.v1+json"
        self.check("bad.manifest.unknown_media_type_400",
                   lambda: refused_manifest("bad-media-type", manifest_bytes(desc(OCI_CONFIG, cfg), [], mediaType=unknown_type),
                                            unknown_type, 400, "MANIFEST_INVALID"))
        self.check("bad.manifest.media_type_mismatch_400",
                   lambda: refused_manifest("bad-mismatch", json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX,
                                                                        "manifests": []}).encode(),
                                            OCI_MANIFEST, 400, "MANIFEST_INVALID"))
        self.check("bad.manifest.schema_version_400",
                   lambda: refused_manifest("bad-schema", manifest_bytes(desc(OCI_CONFIG, cfg), [], schemaVersion=3),
                                            OCI_MANIFEST, 400, "MANIFEST_INVALID"))

        def digest_mismatch():
            body = manifest_bytes(desc(OCI_CONFIG, cfg), [], annotations={"x": self.run_id})
            wrong = sha256(body + b" ")
            pushed_cfg()
            r = self.put_manifest(repo, wrong, body)
            self.expect_error(r, 400, "DIGEST_INVALID")
            self.expect_absent_manifest(repo, wrong, "the declared digest")
            self.expect_absent_manifest(repo, sha256(body), "the digest of the sent bytes")
        self.check("bad.manifest.digest_mismatch_400", digest_mismatch)

        def too_large():
            pushed_cfg()
            self.push_blob(repo, layer)
            body = self.padded_manifest(cfg, layer, MAX_MANIFEST + 1)
            r = self.put_manifest(repo, "bad-too-large", body)
            self.expect_status(r, 413)
            if r.error_codes() is None and r.body:
                raise Fail(f"a 413 body must be a JSON error, got {r.brief()}")
            self.expect_absent_manifest(repo, "bad-too-large", "the tag")
            self.expect_absent_manifest(repo, sha256(body), "the manifest by digest")
        self.check("bad.manifest.too_large_413", too_large)

        def tag_invalid():
            pushed_cfg()
            body = manifest_bytes(desc(OCI_CONFIG, cfg), [], annotations={"bad-tag": self.run_id})
            tag = "t" * 129
            r = self.put_manifest(repo, tag, body)
            self.expect_error(r, 400, ("TAG_INVALID", "MANIFEST_INVALID"))
            self.expect_absent_manifest(repo, sha256(body), "the manifest by digest")
        self.check("bad.tag.invalid_400", tag_invalid)

        base = repo.rsplit("/", 1)[-1]

        def bad_name(name, lower):
            r = self.req("POST", self.v2(name, "blobs/uploads/"), body=b"")
            self.expect_error(r, 400, "NAME_INVALID")
            body = manifest_bytes(desc(OCI_CONFIG, cfg), [], annotations={"bad-name": name})
            r = self.put_manifest(name, "badname", body)
            self.expect_error(r, 400, "NAME_INVALID")
            for candidate in {lower, repo}:
                r, tags = self.tags(candidate)
                if r.status == 200 and "badname" in (tags or []):
                    raise Fail(f"nothing stored: tag badname appeared in {candidate}")
                r = self.get_manifest(candidate, sha256(body))
                # 404, or 400 NAME_INVALID where the registry refuses that name too
                if r.status != 404 and not (r.status == 400 and "NAME_INVALID" in (r.error_codes() or [])):
                    raise Fail(f"nothing stored: expected the manifest in {candidate} to be 404, got {r.brief()}")
        ns = self.ns + "/" if self.ns else ""
        self.check("bad.name.dotdot_inside_400", lambda: bad_name(f"{ns}con..formance", f"{ns}con.formance"))
        # <ns>/x/../<name> collapses to the test repository itself: a registry that cleaned
        # the path would store into it.
        self.check("bad.name.dotdot_segment_400", lambda: bad_name(f"{ns}x/../{base}", repo))
        self.check("bad.name.uppercase_400", lambda: bad_name(f"{ns}{base.capitalize()}X", f"{ns}{base}x"))

    def api_version_everywhere(self):
        missing = [r for r in self.reg.seen
                   if r.status and r.header("Docker-Distribution-API-Version") != "registry/2.0"
                   and urllib.parse.urlsplit(r.target).path.startswith("/v2/")
                   and self.reg.repo_of(r.target) is not None and not self.is_token_request(r)]
        if missing:
            sample = "; ".join(f"{r.status} {r.method} {r.target[:80]}" for r in missing[:4])
            raise Fail(f"expected the header on all {len(self.reg.seen)} responses, "
                       f"{len(missing)} lack it, e.g. {sample}")

    def is_token_request(self, r):
        return self.reg.token_response is not None and r.target.split("?")[0] == \
            self.reg.token_response.target.split("?")[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="registry base URL, http://127.0.0.1:PORT")
    p.add_argument("--repo", required=True, help="repository for the checks, e.g. ns/conformance")
    p.add_argument("--mount-repo", required=True, help="second repository (cross-repo mount target)")
    p.add_argument("--username")
    p.add_argument("--password")
    p.add_argument("--expect-fail", help="file of check ids expected to fail")
    p.add_argument("--list", action="store_true", help="print every check id and what it shows")
    args = p.parse_args()
    if args.list:
        for cid, what in CHECKS.items():
            print(f"{cid}\t{what}")
        return 0
    expect = set()
    if args.expect_fail:
        with open(args.expect_fail) as f:
            for line in f:
                cid = line.split("#", 1)[0].strip()
                if cid:
                    if cid not in CHECKS:
                        print(f"unknown check id in {args.expect_fail}: {cid}", file=sys.stderr)
                        return 2
                    expect.add(cid)
    reg = Registry(args.url, args.username, args.password)
    conf = Conformance(reg, args.repo, args.mount_repo, expect)
    unexpected = conf.run()
    summary = {}
    for status in conf.results.values():
        summary[status] = summary.get(status, 0) + 1
    print("summary: " + ", ".join(f"{n} {s}" for s, n in sorted(summary.items())) +
          f"; {unexpected} unexpected", flush=True)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
