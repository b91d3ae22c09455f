#pragma once
// S3 stores for the storage tests: an S3BlobStore on a fresh bucket of the moto server the
// test binary starts (tests/testing/moto_server.h). Without moto_server the test FAILS.

#include <memory>
#include <string>

#include "storage/s3/s3_blob_store.h"

namespace hangar::storage::s3_testing {

// Options for a new, empty bucket on the shared moto server (path style, a key prefix).
// Adds a gtest failure naming the problem when moto is missing; the options then point
// at a closed port, so the test's calls fail too.
S3Options FreshBucket();

// An S3BlobStore on FreshBucket().
std::unique_ptr<S3BlobStore> MakeStore();

// Writers alive plus staging objects and multipart uploads left in the bucket.
size_t Leftovers(BlobStore& store);

// GET of `url` without credentials: (status, body).
std::pair<long, std::string> Fetch(const std::string& url);

}  // namespace hangar::storage::s3_testing
