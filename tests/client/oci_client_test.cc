// Unit tests of the OCI client (client/oci_client.h, oci_manifest.h): references, part
// planning, the manifest layout read back, path-escape refusal, auth challenges, Docker
// config credentials, the retry policy; and OciClient's retry and auth flows against a
// scripted HTTP server on 127.0.0.1. Push/pull against real registries:
// tests/integration/oci_client.sh.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/oci_client.h"
#include "client/oci_manifest.h"
#include "core/sha256.h"

namespace hangar::client {
namespace {

const std::string kD1 = "sha256:" + std::string(64, 'a');
const std::string kD2 = "sha256:" + std::string(64, 'b');
const std::string kD3 = "sha256:" + std::string(64, 'c');
const std::string kFileSha(64, 'f');

// ---- references ----

TEST(OciRef, ParsesHostNameTagAndDigest) {
  auto r = OciRef::Parse("127.0.0.1:5000/acme/bert:v1.0");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->registry, "127.0.0.1:5000");
  EXPECT_EQ(r->repository, "acme/bert");
  EXPECT_EQ(r->tag, "v1.0");
  EXPECT_EQ(r->Reference(), "v1.0");

  auto latest = OciRef::Parse("registry.example.org/a/b/c");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->repository, "a/b/c");
  EXPECT_EQ(latest->tag, "latest");

  auto d = OciRef::Parse("localhost:5000/acme/bert@" + kD1);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->digest, kD1);
  EXPECT_EQ(d->Reference(), kD1);

  auto both = OciRef::Parse("h:1/a/b:t@" + kD2);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->tag, "t");
  EXPECT_EQ(both->Reference(), kD2);  // the digest wins

  auto v6 = OciRef::Parse("[::1]:5000/x/y:z");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->registry, "[::1]:5000");
  EXPECT_EQ(v6->repository, "x/y");
}

TEST(OciRef, RefusesBadParts) {
  for (std::string bad : std::vector<std::string>{
           "bert", "/acme/bert", "h:5000/", "h/Acme/bert", "h/acme/../bert", "h/acme//bert",
           "h/acme/bert:", "h/acme/bert:-x", "h/acme/bert@sha256:abc",
           "h/acme/bert@md5:" + std::string(32, 'a'),
           "h/acme/bert@" + std::string("sha256:") + std::string(64, 'A'), "ho st/a/b", "h/a_-b"}) {
    auto r = OciRef::Parse(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    EXPECT_NE(r.error().message.find("reference '" + bad + "'"), std::string::npos)
        << r.error().message;
  }
  EXPECT_FALSE(OciRef::Parse("h/a:" + std::string(129, 't')).has_value());
  EXPECT_TRUE(OciRef::Parse("h/a:" + std::string(128, 't')).has_value());
}

TEST(OciRef, LoopbackHostsGetPlainHttp) {
  for (const char* r : {"127.0.0.1:5000", "127.3.4.5", "localhost", "LOCALHOST:80", "[::1]:5000"}) {
    EXPECT_TRUE(IsLoopbackRegistry(r)) << r;
  }
  for (const char* r :
       {"128.0.0.1", "example.com", "localhost.example.com", "[::2]:5000", "127.example.com"}) {
    EXPECT_FALSE(IsLoopbackRegistry(r)) << r;
  }
  auto base = [](const char* registry, bool plain) {
    OciClientOptions o;
    o.registry = registry;
    o.plain_http = plain;
    return OciClient(o).base_url();
  };
  EXPECT_EQ(base("127.0.0.1:5000", false), "http://127.0.0.1:5000");
  EXPECT_EQ(base("reg.example", false), "https://reg.example");
  EXPECT_EQ(base("reg.example:80", true), "http://reg.example:80");
}

// ---- parts and manifests ----

TEST(PlanParts, SplitsWithAShorterLastPart) {
  using P = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(PlanParts(0, 10), (P{{0, 0}}));
  EXPECT_EQ(PlanParts(10, 10), (P{{0, 10}}));
  EXPECT_EQ(PlanParts(25, 10), (P{{0, 10}, {10, 10}, {20, 5}}));
  EXPECT_EQ(PlanParts(30, 10).size(), 3u);
  EXPECT_EQ(PlanParts(uint64_t{4} << 30, uint64_t{128} << 20).size(), 32u);
  EXPECT_EQ(PlanParts(3, 1024), (P{{0, 3}}));
}

std::vector<FileEntry> SampleFiles() {
  FileEntry big{"weights/model.bin", 25, kFileSha, {{0, 10, kD1}, {10, 10, kD2}, {20, 5, kD3}}};
  FileEntry small{
      "config.json", 7, std::string(64, 'e'), {{0, 7, "sha256:" + std::string(64, 'e')}}};
  return {small, big};
}

TEST(Manifest, AnnotationsRoundTrip) {
  auto files = SampleFiles();
  std::string m = BuildManifest(files, {{"com.example.note", "hi"}}, "2025-01-02T03:04:05Z");
  EXPECT_EQ(m, BuildManifest(files, {{"com.example.note", "hi"}}, "2025-01-02T03:04:05Z"));
  EXPECT_NE(m.find("\"artifactType\":\"application/vnd.hangar.files.v1\""), std::string::npos);
  EXPECT_NE(m.find("\"org.opencontainers.image.created\":\"2025-01-02T03:04:05Z\""),
            std::string::npos);
  EXPECT_NE(m.find("\"com.example.note\":\"hi\""), std::string::npos);
  EXPECT_NE(m.find(std::string(kEmptyConfigDigest)), std::string::npos);
  // Only the single-part file gets a title (oras would write each part over the last).
  EXPECT_NE(m.find("\"org.opencontainers.image.title\":\"config.json\""), std::string::npos);
  EXPECT_EQ(m.find("\"org.opencontainers.image.title\":\"weights/model.bin\""), std::string::npos);

  size_t skipped = 99;
  auto back = FilesOfManifest(m, &skipped);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, files);
  EXPECT_EQ(skipped, 0u);
}

TEST(Manifest, PartsInAnyLayerOrderAreRegrouped) {
  auto files = SampleFiles();
  std::string m = BuildManifest(files, {}, "t");
  // Swap the first and the last part layer of the big file.
  size_t a = m.find(kD1), c = m.find(kD3);
  ASSERT_NE(a, std::string::npos);
  std::string swapped = m;
  swapped.replace(c, kD3.size(), kD1);
  swapped.replace(a, kD1.size(), kD3);
  // Digests moved but not their annotations: now part 0 claims kD3. Regrouping is by
  // index, so the file comes back with the digests swapped, still tiling the file.
  auto back = FilesOfManifest(swapped);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ((*back)[1].parts[0].digest, kD3);
}

std::string Layer(const std::string& digest, uint64_t size, const std::string& annotations) {
  return "{\"mediaType\":\"x\",\"digest\":\"" + digest + "\",\"size\":" + std::to_string(size) +
         (annotations.empty() ? "" : ",\"annotations\":{" + annotations + "}") + "}";
}

std::string Manifest(const std::vector<std::string>& layers) {
  std::string s = "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"c\",\"digest\":\"" + kD1 +
                  "\",\"size\":2},\"layers\":[";
  for (size_t i = 0; i < layers.size(); ++i) s += (i ? "," : "") + layers[i];
  return s + "]}";
}

std::string PartNotes(const std::string& path, int index, int count, uint64_t offset,
                      uint64_t file_size) {
  return "\"org.hangar.file.path\":\"" + path + "\",\"org.hangar.file.sha256\":\"" + kFileSha +
         "\",\"org.hangar.file.size\":\"" + std::to_string(file_size) +
         "\",\"org.hangar.part.index\":\"" + std::to_string(index) +
         "\",\"org.hangar.part.count\":\"" + std::to_string(count) +
         "\",\"org.hangar.part.offset\":\"" + std::to_string(offset) + "\"";
}

// A multi-part file pushed without --file-sha256 carries no org.hangar.file.sha256: it
// round-trips with an empty sha256 (pull then relies on the part digests); a present but
// malformed one is still refused.
TEST(Manifest, WholeFileSha256IsOptional) {
  FileEntry big{"model.bin", 25, "", {{0, 10, kD1}, {10, 10, kD2}, {20, 5, kD3}}};
  std::string m = BuildManifest({big}, {}, "2025-01-02T03:04:05Z");
  EXPECT_EQ(m.find("org.hangar.file.sha256"), std::string::npos) << m;
  auto back = FilesOfManifest(m);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0], big);

  std::string notes = PartNotes("f", 0, 1, 0, 10);
  std::string bad = notes;
  bad.replace(bad.find(kFileSha), kFileSha.size(), "XYZ");
  auto r = FilesOfManifest(Manifest({Layer(kD1, 10, bad)}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::ManifestInvalid);
  // Parts of one file must agree: one with the sha256 and one without is inconsistent.
  std::string without = PartNotes("g", 1, 2, 10, 20);
  without.erase(without.find(",\"org.hangar.file.sha256\""),
                std::string(",\"org.hangar.file.sha256\":\"\"").size() + kFileSha.size());
  auto mixed = FilesOfManifest(
      Manifest({Layer(kD1, 10, PartNotes("g", 0, 2, 0, 20)), Layer(kD2, 10, without)}));
  ASSERT_FALSE(mixed.has_value());
  EXPECT_EQ(mixed.error().code, ErrorCode::ManifestInvalid);
}

TEST(Manifest, OrasLayersPullByTitle) {
  std::string m = Manifest({Layer(kD1, 12, "\"org.opencontainers.image.title\":\"hello.txt\""),
                            Layer(kD2, 5, ""),  // no title: oras skips it too
                            Layer(kD3, 3, "\"org.opencontainers.image.title\":\"./dir//a.txt\"")});
  size_t skipped = 0;
  auto files = FilesOfManifest(m, &skipped);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0], (FileEntry{"hello.txt", 12, std::string(64, 'a'), {{0, 12, kD1}}}));
  EXPECT_EQ((*files)[1].path, "dir/a.txt");
  EXPECT_EQ(skipped, 1u);
}

TEST(Manifest, RefusesPartsThatDoNotTileTheFile) {
  struct Case {
    const char* what;
    std::vector<std::string> layers;
  };
  std::vector<Case> cases = {
      {"missing part", {Layer(kD1, 10, PartNotes("f", 0, 2, 0, 20))}},
      {"gap",
       {Layer(kD1, 10, PartNotes("f", 0, 2, 0, 20)), Layer(kD2, 9, PartNotes("f", 1, 2, 11, 20))}},
      {"overlap",
       {Layer(kD1, 10, PartNotes("f", 0, 2, 0, 15)), Layer(kD2, 10, PartNotes("f", 1, 2, 5, 15))}},
      {"repeated index",
       {Layer(kD1, 10, PartNotes("f", 0, 2, 0, 20)), Layer(kD2, 10, PartNotes("f", 0, 2, 10, 20))}},
      {"short total", {Layer(kD1, 10, PartNotes("f", 0, 1, 0, 11))}},
      {"sizes disagree",
       {Layer(kD1, 10, PartNotes("f", 0, 2, 0, 20)), Layer(kD2, 10, PartNotes("f", 1, 2, 10, 21))}},
      {"bad digest", {Layer("sha256:xyz", 10, PartNotes("f", 0, 1, 0, 10))}},
      {"bad index",
       {Layer(kD1, 10, "\"org.hangar.file.path\":\"f\",\"org.hangar.part.index\":\"x\"")}},
  };
  for (const auto& c : cases) {
    auto r = FilesOfManifest(Manifest(c.layers));
    ASSERT_FALSE(r.has_value()) << c.what;
    EXPECT_EQ(r.error().code, ErrorCode::ManifestInvalid) << c.what << ": " << r.error().message;
  }
  auto ok = FilesOfManifest(Manifest(
      {Layer(kD2, 10, PartNotes("f", 1, 2, 10, 20)), Layer(kD1, 10, PartNotes("f", 0, 2, 0, 20))}));
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ((*ok)[0].parts[0].digest, kD1);
  EXPECT_EQ(FilesOfManifest("[1]").error().code, ErrorCode::ManifestInvalid);
  EXPECT_EQ(FilesOfManifest("{\"mediaType\":\"application/vnd.oci.image.index.v1+json\","
                            "\"manifests\":[]}")
                .error()
                .code,
            ErrorCode::ManifestInvalid);
}

TEST(Manifest, RefusesEscapingAndDuplicateNames) {
  for (std::string title : {"../evil", "a/../../evil", "/etc/passwd", "..", "a/..", "."}) {
    auto r = FilesOfManifest(
        Manifest({Layer(kD1, 1, "\"org.opencontainers.image.title\":\"" + title + "\"")}));
    ASSERT_FALSE(r.has_value()) << title;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << title;
    EXPECT_NE(r.error().message.find(title), std::string::npos) << r.error().message;
  }
  auto hangar = FilesOfManifest(Manifest({Layer(kD1, 10, PartNotes("../x", 0, 1, 0, 10))}));
  ASSERT_FALSE(hangar.has_value());
  EXPECT_EQ(hangar.error().code, ErrorCode::BadRequest);
  auto dup =
      FilesOfManifest(Manifest({Layer(kD1, 1, "\"org.opencontainers.image.title\":\"a\""),
                                Layer(kD2, 1, "\"org.opencontainers.image.title\":\"./a\"")}));
  ASSERT_FALSE(dup.has_value());
  EXPECT_NE(dup.error().message.find("twice"), std::string::npos);
}

TEST(SafeRelativePath, NormalisesOrRefuses) {
  EXPECT_EQ(SafeRelativePath("a/b.txt").value(), "a/b.txt");
  EXPECT_EQ(SafeRelativePath("./a//b/./c").value(), "a/b/c");
  EXPECT_EQ(SafeRelativePath("..a/b..").value(), "..a/b..");  // not a ".." component
  EXPECT_FALSE(SafeRelativePath("").has_value());
  EXPECT_FALSE(SafeRelativePath("/abs").has_value());
  EXPECT_FALSE(SafeRelativePath("a/../b").has_value());
  EXPECT_FALSE(SafeRelativePath(std::string("a\0b", 3)).has_value());
  EXPECT_FALSE(SafeRelativePath("./").has_value());
  // A pull into a git work tree must not write into its .git (issue #13).
  for (std::string git : {".git/config", "./.GIT/hooks/x", "a/GIT~1/x", ".git./x"}) {
    EXPECT_FALSE(SafeRelativePath(git).has_value()) << git;
  }
}

// ---- auth challenges, Docker config ----

TEST(ParseChallenges, BearerWithQuotedCommas) {
  auto cs = ParseChallenges(
      "Bearer realm=\"https://auth.example/token\",service=\"registry.example\","
      "scope=\"repository:a/b:pull,push repository:c/d:pull\"");
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].scheme, "bearer");
  EXPECT_EQ(cs[0].params["realm"], "https://auth.example/token");
  EXPECT_EQ(cs[0].params["service"], "registry.example");
  EXPECT_EQ(cs[0].params["scope"], "repository:a/b:pull,push repository:c/d:pull");
}

TEST(ParseChallenges, SeveralSchemesTokensAndEscapes) {
  auto cs = ParseChallenges(
      "Basic realm=\"say \\\"hi\\\"\" , BEARER Realm=http://x/t, error=invalid_token");
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].scheme, "basic");
  EXPECT_EQ(cs[0].params["realm"], "say \"hi\"");
  EXPECT_EQ(cs[1].scheme, "bearer");
  EXPECT_EQ(cs[1].params["realm"], "http");  // a token value stops at ':'
  EXPECT_TRUE(ParseChallenges("").empty());
  auto open = ParseChallenges("Bearer realm=\"unterminated");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_TRUE(open[0].params.empty());
}

TEST(DockerConfig, FindsAuthByHostInAnyKeyForm) {
  // "user:pa:ss" base64: the password may hold ':'.
  std::string cfg = R"({"auths":{
      "https://reg.example:5000/v1/": {"auth": "dXNlcjpwYTpzcw=="},
      "other.example": {"username": "u2", "password": "p2"},
      "helper.example": {},
      "https://index.docker.io/v1/": {"auth": "ZDpw"}}})";
  auto a = DockerConfigCredentials(cfg, "reg.example:5000");
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->username, "user");
  EXPECT_EQ((*a)->password, "pa:ss");
  auto b = DockerConfigCredentials(cfg, "OTHER.example");
  ASSERT_TRUE(b.has_value() && b->has_value());
  EXPECT_EQ((*b)->username, "u2");
  EXPECT_EQ((*b)->password, "p2");
  auto hub = DockerConfigCredentials(cfg, "docker.io");
  ASSERT_TRUE(hub.has_value() && hub->has_value());
  EXPECT_EQ((*hub)->username, "d");
  EXPECT_FALSE(DockerConfigCredentials(cfg, "reg.example").value().has_value());  // port differs
  EXPECT_FALSE(DockerConfigCredentials(cfg, "helper.example").value().has_value());
  EXPECT_FALSE(DockerConfigCredentials("{}", "x").value().has_value());
  auto unpadded = DockerConfigCredentials(R"({"auths":{"h":{"auth":"dTpw"}}})", "h");
  EXPECT_EQ(unpadded.value()->password, "p");
}

TEST(DockerConfig, RefusesMalformedFiles) {
  EXPECT_EQ(DockerConfigCredentials("not json", "h").error().code, ErrorCode::BadRequest);
  auto no_colon = DockerConfigCredentials(R"({"auths":{"h":{"auth":"bm9jb2xvbg=="}}})", "h");
  ASSERT_FALSE(no_colon.has_value());
  EXPECT_NE(no_colon.error().message.find("user:password"), std::string::npos);
  EXPECT_FALSE(DockerConfigCredentials(R"({"auths":{"h":{"auth":"!!!!"}}})", "h").has_value());
}

// ---- retries ----

TEST(RetryPolicy, RetriesOnlyTransientStatuses) {
  for (long s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(RetryPolicy::RetryableStatus(s)) << s;
  for (long s : {200, 201, 400, 401, 403, 404, 405, 413, 416, 501}) {
    EXPECT_FALSE(RetryPolicy::RetryableStatus(s)) << s;
  }
}

TEST(RetryPolicy, DoublesUpToTheCapAndHonoursRetryAfter) {
  RetryPolicy p;
  p.base = std::chrono::milliseconds(100);
  p.max_delay = std::chrono::milliseconds(1000);
  p.max_retry_after = std::chrono::milliseconds(5000);
  EXPECT_EQ(p.Delay(1, std::nullopt).count(), 100);
  EXPECT_EQ(p.Delay(2, std::nullopt).count(), 200);
  EXPECT_EQ(p.Delay(4, std::nullopt).count(), 800);
  EXPECT_EQ(p.Delay(5, std::nullopt).count(), 1000);
  EXPECT_EQ(p.Delay(60, std::nullopt).count(), 1000);  // no overflow
  EXPECT_EQ(p.Delay(1, std::chrono::seconds(3)).count(), 3000);
  EXPECT_EQ(p.Delay(1, std::chrono::seconds(0)).count(), 0);
  EXPECT_EQ(p.Delay(1, std::chrono::seconds(3600)).count(), 5000);
}

TEST(ParseRetryAfter, SecondsOrHttpDate) {
  EXPECT_EQ(ParseRetryAfter("120", 0), std::chrono::seconds(120));
  EXPECT_EQ(ParseRetryAfter(" 0 ", 0), std::chrono::seconds(0));
  // Wed, 21 Oct 2015 07:28:00 GMT = 1445412480.
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470), std::chrono::seconds(10));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490), std::chrono::seconds(0));
  EXPECT_FALSE(ParseRetryAfter("", 0).has_value());
  EXPECT_FALSE(ParseRetryAfter("-5", 0).has_value());
  EXPECT_FALSE(ParseRetryAfter("soon", 0).has_value());
  EXPECT_FALSE(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT trailing", 0).has_value());
}

TEST(OciHttpError, MapsOciCodesAndQuotesTheMessage) {
  net::HttpResponse res;
  res.status = 400;
  res.body = R"({"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match"}]})";
  Error e = OciHttpError(res, "finish upload");
  EXPECT_EQ(e.code, ErrorCode::DigestInvalid);
  EXPECT_EQ(e.message, "finish upload: HTTP 400 DIGEST_INVALID: provided digest did not match");
  res.status = 404;
  res.body = R"({"errors":[{"code":"NAME_UNKNOWN"}]})";
  EXPECT_EQ(OciHttpError(res, "x").code, ErrorCode::RepoNotFound);
  res.status = 502;
  res.body = "<html>bad gateway</html>";
  Error g = OciHttpError(res, "x");
  EXPECT_EQ(g.code, ErrorCode::Internal);
  EXPECT_EQ(g.message, "x: HTTP 502");
}

// ---- OciClient against a scripted server ----

struct Seen {
  std::string method, target, authorization, body;
};
struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// A one-connection-at-a-time HTTP/1.1 server on 127.0.0.1:<ephemeral>; answers every
// request with handler(request) and closes the connection.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<Reply(const Seen&)> handler)
      : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string registry() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  void Loop() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      Serve(c);
      ::close(c);
    }
  }
  void Serve(int c) {
    std::string in;
    char buf[65536];
    size_t head_end;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
    }
    Seen s;
    std::string head = in.substr(0, head_end);
    size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
    s.method = head.substr(0, sp1);
    s.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t length = 0;
    size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      size_t next = head.find("\r\n", pos + 2);
      std::string line =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      std::string lower = line;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower.starts_with("content-length:")) length = std::stoull(line.substr(15));
      if (lower.starts_with("authorization:")) s.authorization = line.substr(15);
      pos = next;
    }
    s.body = in.substr(head_end + 4);
    while (s.body.size() < length) {
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) return;
      s.body.append(buf, static_cast<size_t>(n));
    }
    Reply r = handler_(s);
    {
      std::lock_guard lock(mu_);
      seen_.push_back(s);
    }
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " X\r\nConnection: close\r\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n\r\n";
    if (s.method != "HEAD") out += r.body;
    ::send(c, out.data(), out.size(), MSG_NOSIGNAL);
  }

  std::function<Reply(const Seen&)> handler_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Seen> seen_;
  std::thread thread_;
};

OciClientOptions Fast(const std::string& registry) {
  OciClientOptions o;
  o.registry = registry;
  o.retry.base = std::chrono::milliseconds(1);
  o.retry.max_attempts = 4;
  return o;
}

TEST(OciClient, RetriesTransientStatusesThenSucceeds) {
  std::atomic<int> n{0};
  ScriptedServer srv([&](const Seen&) {
    int i = n++;
    if (i == 0) return Reply{503, {}, ""};
    if (i == 1) return Reply{429, {{"Retry-After", "0"}}, ""};
    return Reply{200, {{"Docker-Content-Digest", kD1}}, std::string(42, 'x')};
  });
  OciClient client(Fast(srv.registry()));
  auto size = client.BlobSize("acme/bert", kD1);
  ASSERT_TRUE(size.has_value()) << size.error().message;
  ASSERT_TRUE(size->has_value());
  EXPECT_EQ(**size, 42u);
  EXPECT_EQ(srv.seen().size(), 3u);
  EXPECT_EQ(srv.seen()[0].target, "/v2/acme/bert/blobs/" + kD1);
}

TEST(OciClient, GivesUpAfterMaxAttemptsAndNeverRetriesA4xx) {
  ScriptedServer always503([](const Seen&) { return Reply{503, {}, ""}; });
  OciClient a(Fast(always503.registry()));
  auto r = a.BlobSize("a/b", kD1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(always503.seen().size(), 4u);

  ScriptedServer bad([](const Seen&) {
    return Reply{400, {}, R"({"errors":[{"code":"NAME_INVALID","message":"no"}]})"};
  });
  OciClient b(Fast(bad.registry()));
  auto m = b.GetManifest("a/b", "v1");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::NameInvalid);
  EXPECT_EQ(bad.seen().size(), 1u);
}

TEST(OciClient, BearerTokenFetchedOnceWithBasicCredentialsAndScope) {
  std::atomic<int> token_calls{0};
  std::string realm;
  ScriptedServer srv([&](const Seen& s) {
    if (s.target.starts_with("/token?")) {
      ++token_calls;
      if (s.authorization != "Basic " + std::string("dTpzZWNyZXQ=")) return Reply{401, {}, ""};
      return Reply{200, {}, R"({"token":"tok-1","expires_in":300})"};
    }
    if (s.authorization == "Bearer tok-1") {
      return Reply{200, {{"Content-Type", std::string(kOciManifestType)}}, "{\"schemaVersion\":2}"};
    }
    return Reply{401,
                 {{"WWW-Authenticate",
                   "Bearer realm=\"" + realm + "\",service=\"svc\",scope=\"repository:a/b:pull\""}},
                 R"({"errors":[{"code":"UNAUTHORIZED"}]})"};
  });
  realm = "http://" + srv.registry() + "/token";
  OciClientOptions o = Fast(srv.registry());
  o.credentials = {"u", "secret"};
  OciClient client(o);
  auto m1 = client.GetManifest("a/b", "v1");
  ASSERT_TRUE(m1.has_value()) << m1.error().message;
  EXPECT_EQ(m1->bytes, "{\"schemaVersion\":2}");
  EXPECT_EQ(m1->media_type, kOciManifestType);
  EXPECT_EQ(m1->digest, "sha256:" + Sha256::Of("{\"schemaVersion\":2}").Hex());
  auto m2 = client.GetManifest("a/b", "v2");
  ASSERT_TRUE(m2.has_value());
  EXPECT_EQ(token_calls.load(), 1);
  auto seen = srv.seen();
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[1].target, "/token?service=svc&scope=repository%3Aa%2Fb%3Apull");
  EXPECT_EQ(seen[3].authorization, "Bearer tok-1");  // sent up front the second time

  OciClientOptions wrong = Fast(srv.registry());
  wrong.credentials = {"u", "nope"};
  OciClient bad(wrong);
  auto refused = bad.GetManifest("a/b", "v1");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(refused.error().message.find("refused the credentials of user 'u'"), std::string::npos)
      << refused.error().message;
}

TEST(OciClient, BasicChallengeUsesCredentialsOrSaysWhichAreMissing) {
  ScriptedServer srv([](const Seen& s) {
    if (s.authorization == "Basic dTpw") return Reply{200, {}, ""};
    return Reply{401, {{"WWW-Authenticate", "Basic realm=\"reg\""}}, ""};
  });
  OciClientOptions o = Fast(srv.registry());
  o.credentials = {"u", "p"};
  EXPECT_TRUE(OciClient(o).Check("a/b", true).has_value());

  auto anon = OciClient(Fast(srv.registry())).Check("a/b", true);
  ASSERT_FALSE(anon.has_value());
  EXPECT_EQ(anon.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(anon.error().message.find("wants credentials"), std::string::npos)
      << anon.error().message;

  o.credentials = {"u", "wrong"};
  auto wrong = OciClient(o).Check("a/b", true);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(wrong.error().message.find("refused"), std::string::npos) << wrong.error().message;
}

TEST(OciClient, StreamedPushFollowsEachLocationAndSendsTheDigest) {
  std::string received;
  ScriptedServer srv([&](const Seen& s) {
    if (s.method == "POST")
      return Reply{202, {{"Location", "/v2/a/b/blobs/uploads/u1?_state=1"}}, ""};
    if (s.method == "PATCH") {
      if (s.target != "/v2/a/b/blobs/uploads/u1?_state=1") return Reply{404, {}, ""};
      received = s.body;
      return Reply{202, {{"Location", "/v2/a/b/blobs/uploads/u1?_state=2"}}, ""};
    }
    if (s.method == "PUT") {
      std::string want =
          "/v2/a/b/blobs/uploads/u1?_state=2&digest=sha256%3A" + Sha256::Of(received).Hex();
      if (s.target != want) return Reply{400, {}, R"({"errors":[{"code":"DIGEST_INVALID"}]})"};
      return Reply{201, {{"Docker-Content-Digest", "sha256:" + Sha256::Of(received).Hex()}}, ""};
    }
    return Reply{500, {}, ""};
  });
  OciClient client(Fast(srv.registry()));
  std::string data(100000, 'z');
  int64_t counted = 0;
  auto d = client.PushBlobStreamed(
      "a/b", [&] { return std::make_unique<StringSource>(data); }, data.size(),
      [&](int64_t n) { counted += n; });
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(*d, "sha256:" + Sha256::Of(data).Hex());
  EXPECT_EQ(received, data);
  EXPECT_EQ(counted, static_cast<int64_t>(data.size()));
}

TEST(OciClient, StreamedPushStartsOverAfterAFailedPatch) {
  std::atomic<int> patches{0};
  ScriptedServer srv([&](const Seen& s) {
    if (s.method == "POST") return Reply{202, {{"Location", "/v2/a/b/blobs/uploads/u"}}, ""};
    if (s.method == "PATCH") return patches++ == 0 ? Reply{500, {}, ""} : Reply{202, {}, ""};
    if (s.method == "PUT") return Reply{201, {}, ""};
    return Reply{404, {}, ""};
  });
  OciClient client(Fast(srv.registry()));
  int64_t counted = 0;
  auto d = client.PushBlobStreamed(
      "a/b", [&] { return std::make_unique<StringSource>("hello"); }, 5,
      [&](int64_t n) { counted += n; });
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(patches.load(), 2);
  EXPECT_EQ(counted, 5);  // the failed try's bytes were taken back
  int posts = 0;
  for (const auto& s : srv.seen()) posts += s.method == "POST";
  EXPECT_EQ(posts, 2);
}

}  // namespace
}  // namespace hangar::client
