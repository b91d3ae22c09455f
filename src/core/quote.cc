#include "core/quote.h"

namespace hangar {

std::string QuoteDoubled(std::string_view s, char quote) {
  std::string out(1, quote);
  for (char c : s) {
    if (c == quote) out += quote;
    out += c;
  }
  return out + quote;
}

}  // namespace hangar
