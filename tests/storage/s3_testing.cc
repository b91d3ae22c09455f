#include "s3_testing.h"

#include <gtest/gtest.h>

#include "core/util.h"
#include "net/http_client.h"
#include "testing/s3_server.h"

namespace hangar::storage::s3_testing {

S3Options FreshBucket() {
  S3Options o;
  o.path_style = true;
  o.prefix = "hub/";
  o.bucket = "hangar-test-" + RandomHex(6);
  std::string error;
  auto* s3 = hangar::testing::S3Server::Shared(&error);
  if (s3 == nullptr) {
    ADD_FAILURE() << error;
    o.region = "us-east-1";
    o.endpoint = "http://127.0.0.1:1";
    return o;
  }
  o.endpoint = s3->endpoint();
  o.region = s3->region();
  o.access_key = s3->access_key();
  o.secret_key = s3->secret_key();
  net::HttpClient client;
  net::HttpRequest req;
  req.method = "PUT";
  req.url = o.endpoint + "/" + o.bucket;
  req.sigv4 = net::AwsSigV4{o.region, o.access_key, o.secret_key};
  auto res = client.Perform(req);
  if (!res || res->status != 200) {
    ADD_FAILURE() << "cannot create bucket " << o.bucket << " on " << o.endpoint << ": "
                  << (res ? std::to_string(res->status) + " " + res->body : res.error().message);
  }
  return o;
}

std::unique_ptr<S3BlobStore> MakeStore() { return std::make_unique<S3BlobStore>(FreshBucket()); }

size_t Leftovers(BlobStore& store) {
  auto& s3 = static_cast<S3BlobStore&>(store);
  auto staged = s3.StagingCount();
  EXPECT_TRUE(staged.has_value()) << staged.error().message;
  return s3.PendingWriters() + (staged ? *staged : 0);
}

std::pair<long, std::string> Fetch(const std::string& url) {
  net::HttpClient client;
  net::HttpRequest req;
  req.url = url;
  auto res = client.Perform(req);
  if (!res) return {0, res.error().message};
  return {res->status, res->body};
}

}  // namespace hangar::storage::s3_testing
