// HttpClient and HttpStream against a local python server (http_test_server.py).

#include "net/http_client.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/sha256.h"
#include "testing/subprocess.h"

namespace hangar::net {
namespace {

// The server, started once for the binary.
std::string BaseUrl() {
  static hangar::testing::ChildProcess child;  // stopped by its destructor at exit
  static std::string base = [] {
    child.Start({"python3", HANGAR_HTTP_TEST_SERVER});
    auto line = child.ReadLine(std::chrono::seconds(30));
    return line ? "http://127.0.0.1:" + *line : std::string("http://127.0.0.1:1");
  }();
  return base;
}

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i % 251) * 7 % 251);
  return s;
}

// A source of `n` bytes of 'x' that also reports a fixed size.
class FixedSource final : public ByteSource {
 public:
  explicit FixedSource(uint64_t n) : left_(n) {}
  Result<size_t> Read(std::span<char> buf) override {
    size_t n = std::min<uint64_t>(buf.size(), left_);
    std::fill_n(buf.data(), n, 'x');
    left_ -= n;
    return n;
  }
  std::optional<uint64_t> Size() const override { return left_; }

 private:
  uint64_t left_;
};

class FailingSource final : public ByteSource {
 public:
  Result<size_t> Read(std::span<char>) override {
    return MakeError(ErrorCode::BadRequest, "request body cut short");
  }
  std::optional<uint64_t> Size() const override { return 10; }
};

TEST(HttpClient, GetIntoBody) {
  HttpClient client;
  HttpRequest req;
  req.url = BaseUrl() + "/bytes/1000";
  auto res = client.Perform(req);
  ASSERT_TRUE(res.has_value()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, Pattern(1000));
  EXPECT_EQ(res->Header("X-TEST"), "Yes");
  EXPECT_EQ(res->Header("content-length"), "1000");
  EXPECT_FALSE(res->Header("missing").has_value());
}

TEST(HttpClient, ReusesTheClientAcrossRequests) {
  HttpClient client;
  for (int i = 0; i < 5; ++i) {
    HttpRequest req;
    req.url = BaseUrl() + "/bytes/" + std::to_string(10 + i);
    auto res = client.Perform(req);
    ASSERT_TRUE(res.has_value());
    EXPECT_EQ(res->body.size(), 10u + i);
  }
}

TEST(HttpClient, SinkReceivesTheBodyAndCanAbort) {
  HttpClient client;
  HttpRequest req;
  req.url = BaseUrl() + "/bytes/300000";
  std::string got;
  BodySink sink = [&](std::span<const char> d) -> Result<void> {
    got.append(d.data(), d.size());
    return {};
  };
  auto res = client.Perform(req, &sink);
  ASSERT_TRUE(res.has_value());
  EXPECT_TRUE(res->body.empty());
  EXPECT_EQ(got, Pattern(300000));

  BodySink refuse = [](std::span<const char>) -> Result<void> {
    return MakeError(ErrorCode::PayloadTooLarge, "too much");
  };
  auto aborted = client.Perform(req, &refuse);
  ASSERT_FALSE(aborted.has_value());
  EXPECT_EQ(aborted.error().code, ErrorCode::PayloadTooLarge);
  EXPECT_EQ(aborted.error().message, "too much");
}

TEST(HttpClient, PutsAStreamedBodyAndSmallBodies) {
  HttpClient client;
  HttpRequest req;
  req.method = "PUT";
  req.url = BaseUrl() + "/echo";
  FixedSource body(3 << 20);
  req.body = &body;
  req.headers = {{"X-One", "1"}};
  auto res = client.Perform(req);
  ASSERT_TRUE(res.has_value()) << res.error().message;
  auto j = boost::json::parse(res->body).as_object();
  EXPECT_EQ(j["method"].as_string(), "PUT");
  EXPECT_EQ(j["length"].as_int64(), 3 << 20);
  EXPECT_EQ(j["sha256"].as_string(), Sha256::Of(std::string(3 << 20, 'x')).Hex());
  EXPECT_EQ(j["headers"].as_object()["x-one"].as_string(), "1");
  EXPECT_FALSE(j["headers"].as_object().contains("expect"));

  HttpRequest post;
  post.method = "POST";
  post.url = BaseUrl() + "/echo";
  post.body_bytes = "<xml/>";
  res = client.Perform(post);
  ASSERT_TRUE(res.has_value());
  j = boost::json::parse(res->body).as_object();
  EXPECT_EQ(j["method"].as_string(), "POST");
  EXPECT_EQ(j["length"].as_int64(), 6);

  HttpRequest empty_post;
  empty_post.method = "POST";
  empty_post.url = BaseUrl() + "/echo";
  res = client.Perform(empty_post);
  ASSERT_TRUE(res.has_value());
  j = boost::json::parse(res->body).as_object();
  EXPECT_EQ(j["headers"].as_object()["content-length"].as_string(), "0");
}

TEST(HttpClient, BodyReadErrorIsReturnedAsIs) {
  HttpClient client;
  HttpRequest req;
  req.method = "PUT";
  req.url = BaseUrl() + "/echo";
  FailingSource body;
  req.body = &body;
  auto res = client.Perform(req);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(res.error().message, "request body cut short");
}

TEST(HttpClient, MethodsStatusesHeadAndDelete) {
  HttpClient client;
  HttpRequest req;
  req.url = BaseUrl() + "/status/404";
  EXPECT_EQ(client.Perform(req)->status, 404);
  req.method = "HEAD";
  req.url = BaseUrl() + "/bytes/5000";
  auto head = client.Perform(req);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->Header("content-length"), "5000");
  EXPECT_TRUE(head->body.empty());
  req.method = "DELETE";
  req.url = BaseUrl() + "/echo";
  auto del = client.Perform(req);
  ASSERT_TRUE(del.has_value());
  EXPECT_EQ(boost::json::parse(del->body).as_object()["method"].as_string(), "DELETE");
}

TEST(HttpClient, RedirectsOnlyWhenAsked) {
  HttpClient client;
  HttpRequest req;
  req.url = BaseUrl() + "/redirect";
  auto res = client.Perform(req);
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->Header("location"), "/bytes/10");
  req.follow_redirects = true;
  res = client.Perform(req);
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, Pattern(10));
  EXPECT_FALSE(res->Header("location").has_value());  // headers of the final response
}

TEST(HttpClient, BasicAuthAndSigV4Headers) {
  HttpClient client;
  HttpRequest req;
  req.url = BaseUrl() + "/basic";
  EXPECT_EQ(client.Perform(req)->status, 401);
  req.username = "hangar";
  req.password = "secret";
  EXPECT_EQ(client.Perform(req)->status, 200);

  HttpRequest s3;
  s3.url = BaseUrl() + "/echo";
  s3.sigv4 = AwsSigV4{"eu-west-1", "AKIDEXAMPLE", "secret"};
  auto res = client.Perform(s3);
  ASSERT_TRUE(res.has_value());
  auto h = boost::json::parse(res->body).as_object()["headers"].as_object();
  std::string auth(h["authorization"].as_string());
  EXPECT_EQ(auth.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u) << auth;
  EXPECT_NE(auth.find("/eu-west-1/s3/aws4_request"), std::string::npos) << auth;
  EXPECT_EQ(h["x-amz-content-sha256"].as_string(), "UNSIGNED-PAYLOAD");
  EXPECT_TRUE(h.contains("x-amz-date"));
}

TEST(HttpClient, TransportFailureIsUnavailable) {
  HttpClient client;
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(hangar::testing::FreeLocalPort()) + "/x";
  auto res = client.Perform(req);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().code, ErrorCode::Unavailable);
  EXPECT_NE(res.error().message.find(req.url), std::string::npos) << res.error().message;
  EXPECT_EQ(client.Perform(HttpRequest{}).error().code, ErrorCode::BadRequest);
}

TEST(HttpStream, PullsALargeBodyInSmallReads) {
  HttpRequest req;
  req.url = BaseUrl() + "/bytes/" + std::to_string(5 << 20);
  auto s = HttpStream::Open(req);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ((*s)->Status(), 200);
  EXPECT_EQ((*s)->Head().Header("x-test"), "Yes");
  EXPECT_EQ((*s)->Size(), uint64_t{5} << 20);
  Sha256Hasher h;
  std::vector<char> buf(1000);
  uint64_t total = 0;
  for (;;) {
    auto n = (*s)->Read(buf);
    ASSERT_TRUE(n.has_value()) << n.error().message;
    if (*n == 0) break;
    h.Update(std::string_view(buf.data(), *n));
    total += *n;
  }
  EXPECT_EQ(total, uint64_t{5} << 20);
  EXPECT_EQ(h.Finish(), Sha256::Of(Pattern(5 << 20)));
  EXPECT_EQ((*s)->Size(), 0u);
}

TEST(HttpStream, StatusAndEmptyBodiesAndEarlyDrop) {
  HttpRequest req;
  req.url = BaseUrl() + "/status/404";
  auto s = HttpStream::Open(req);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)->Status(), 404);
  char c;
  EXPECT_EQ((*s)->Read({&c, 1}).value(), 0u);

  // Dropping a stream mid-body is fine.
  req.url = BaseUrl() + "/bytes/" + std::to_string(20 << 20);
  auto big = HttpStream::Open(req);
  ASSERT_TRUE(big.has_value());
  char buf[100];
  EXPECT_GT((*big)->Read(buf).value(), 0u);
  big->reset();

  req.url = "http://127.0.0.1:" + std::to_string(hangar::testing::FreeLocalPort()) + "/x";
  EXPECT_EQ(HttpStream::Open(req).error().code, ErrorCode::Unavailable);
}

}  // namespace
}  // namespace hangar::net
