// The error catalog's status mapping for clients (core/error.h ErrorCodeForStatus).

#include "core/error.h"

#include <gtest/gtest.h>

namespace hangar {
namespace {

TEST(ErrorCodeForStatus, GivesEachStatusItsGenericCode) {
  EXPECT_EQ(ErrorCodeForStatus(401), ErrorCode::Unauthorized);
  EXPECT_EQ(ErrorCodeForStatus(403), ErrorCode::Forbidden);
  EXPECT_EQ(ErrorCodeForStatus(404), ErrorCode::NotFound);
  EXPECT_EQ(ErrorCodeForStatus(409), ErrorCode::Conflict);
  EXPECT_EQ(ErrorCodeForStatus(412), ErrorCode::PreconditionFailed);
  EXPECT_EQ(ErrorCodeForStatus(413), ErrorCode::PayloadTooLarge);
  EXPECT_EQ(ErrorCodeForStatus(416), ErrorCode::RangeNotSatisfiable);
  EXPECT_EQ(ErrorCodeForStatus(429), ErrorCode::TooManyRequests);
  EXPECT_EQ(ErrorCodeForStatus(503), ErrorCode::Unavailable);
  EXPECT_EQ(ErrorCodeForStatus(400), ErrorCode::BadRequest);
  EXPECT_EQ(ErrorCodeForStatus(418), ErrorCode::BadRequest);
  EXPECT_EQ(ErrorCodeForStatus(500), ErrorCode::Internal);
  EXPECT_EQ(ErrorCodeForStatus(502), ErrorCode::Internal);
  // Each code it gives answers with that status itself (the catalog agrees).
  for (int s : {401, 403, 404, 409, 412, 413, 416, 429, 503}) {
    EXPECT_EQ(Describe(ErrorCodeForStatus(s)).http_status, s) << s;
  }
}

}  // namespace
}  // namespace hangar
