// Model and dataset cards (README.md front matter; services::SplitFrontMatter and
// ParseCardData), read from every pushed README and from /api/validate-yaml. The split
// must give views that cover the README, and parsing must end in an object or an error.

#include "fuzz_check.h"
#include "services/repo/model_card.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view readme = fuzz::AsText(data, size);
  services::CardParts parts = services::SplitFrontMatter(readme);
  auto inside = [&](std::string_view v) {
    return v.empty() ||
           (v.data() >= readme.data() && v.data() + v.size() <= readme.data() + readme.size());
  };
  FUZZ_CHECK(inside(parts.yaml) && inside(parts.body));
  if (!parts.has_yaml) {
    FUZZ_CHECK(parts.yaml.empty() && parts.body == readme);
  } else {
    FUZZ_CHECK(readme.starts_with("---"));
    if (!parts.body.empty()) FUZZ_CHECK(readme.ends_with(parts.body));
  }

  auto card = services::ParseCardData(readme);
  if (!card) {
    FUZZ_CHECK(card.error().code == ErrorCode::BadRequest && parts.has_yaml);
  } else if (card->has_value()) {
    FUZZ_CHECK(parts.has_yaml);
  }
  return 0;
}
