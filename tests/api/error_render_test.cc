#include "api/error_render.h"

#include <gtest/gtest.h>

namespace hangar::api {
namespace {

http::Request Req() {
  http::Request r;
  r.request_id = "abc";
  return r;
}

TEST(RenderError, HfShapeCarriesCodeMessageAndJsonBody) {
  auto res = RenderError(http::ApiFamily::Hf,
                         MakeError(ErrorCode::RevisionNotFound, "Invalid rev id: v9"), Req());
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(res.GetHeader("X-Error-Code"), "RevisionNotFound");
  EXPECT_EQ(res.GetHeader("X-Error-Message"), "Invalid rev id: v9");
  EXPECT_EQ(res.body, R"({"error":"Invalid rev id: v9"})");
}

TEST(RenderError, InvalidTokenHasNoErrorCodeButAChallenge) {
  auto res = RenderError(
      http::ApiFamily::Hf,
      MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header"), Req());
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.GetHeader("X-Error-Code"), "");
  EXPECT_EQ(res.GetHeader("WWW-Authenticate"), "Basic realm=\"Hangar\"");
}

TEST(RenderError, StaleParentCarriesItsCode) {
  auto res = RenderError(http::ApiFamily::Hf,
                         MakeError(ErrorCode::PreconditionFailed, "parent moved"), Req());
  EXPECT_EQ(res.status, 412);
  EXPECT_EQ(res.GetHeader("X-Error-Code"), "PreconditionFailed");
}

TEST(RenderError, MlflowShapeWithMlflowsStatuses) {
  auto exists =
      RenderError(http::ApiFamily::Mlflow, MakeError(ErrorCode::Conflict, "taken"), Req());
  EXPECT_EQ(exists.status, 400);  // MLflow answers RESOURCE_ALREADY_EXISTS with 400
  EXPECT_EQ(exists.body, R"({"error_code":"RESOURCE_ALREADY_EXISTS","message":"taken"})");
  auto missing =
      RenderError(http::ApiFamily::Mlflow, MakeError(ErrorCode::RepoNotFound, "no repo"), Req());
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("RESOURCE_DOES_NOT_EXIST"), std::string::npos);
  auto big =
      RenderError(http::ApiFamily::Mlflow, MakeError(ErrorCode::PayloadTooLarge, "big"), Req());
  EXPECT_EQ(big.status, 400);
  EXPECT_NE(big.body.find("INVALID_PARAMETER_VALUE"), std::string::npos);
}

TEST(RenderError, OpenAiShape) {
  auto res = RenderError(http::ApiFamily::OpenAi,
                         MakeError(ErrorCode::TooManyRequests, "slow down"), Req());
  EXPECT_EQ(res.status, 429);
  EXPECT_EQ(
      res.body,
      R"({"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"TooManyRequests"}})");
  EXPECT_FALSE(res.GetHeader("Retry-After").empty());
}

TEST(RenderError, LfsShape) {
  auto res = RenderError(http::ApiFamily::Lfs, MakeError(ErrorCode::Unauthorized, "login"), Req());
  EXPECT_EQ(res.GetHeader("Content-Type"), "application/vnd.git-lfs+json");
  EXPECT_EQ(res.GetHeader("LFS-Authenticate"), "Basic realm=\"Hangar\"");
  EXPECT_EQ(res.body, R"({"message":"login","request_id":"abc"})");
}

TEST(RenderError, HeaderValuesCannotBeSplit) {
  auto res =
      RenderError(http::ApiFamily::Hf, MakeError(ErrorCode::BadRequest, "bad\r\nX-Evil: 1"), Req());
  EXPECT_EQ(res.GetHeader("X-Error-Message").find('\n'), std::string::npos);
}

TEST(RenderError, UnavailableSaysWhenToRetry) {
  auto res = RenderError(http::ApiFamily::Git, MakeError(ErrorCode::Unavailable, "busy"), Req());
  EXPECT_EQ(res.status, 503);
  EXPECT_FALSE(res.GetHeader("Retry-After").empty());
}

}  // namespace
}  // namespace hangar::api
