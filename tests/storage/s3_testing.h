#pragma once
// S3 stores for the storage tests: an S3BlobStore on a fresh bucket of the RADOS gateway
// the tests share (tests/testing/s3_server.h). Without it the test FAILS.

#include <memory>
#include <string>

#include "storage/s3/s3_blob_store.h"

namespace hangar::storage::s3_testing {

// Options for a new, empty bucket on the shared S3 server (path style, a key prefix).
// Adds a gtest failure naming the problem when the server is missing; the options then point
// at a closed port, so the test's calls fail too.
S3Options FreshBucket();

// An S3BlobStore on FreshBucket().
std::unique_ptr<S3BlobStore> MakeStore();

// Writers alive plus staging objects and multipart uploads left in the bucket.
size_t Leftovers(BlobStore& store);

// GET of `url` without credentials: (status, body).
std::pair<long, std::string> Fetch(const std::string& url);

}  // namespace hangar::storage::s3_testing
