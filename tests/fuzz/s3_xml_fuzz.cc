// The S3 response reader (src/storage/s3/s3_xml.h), which reads whatever an S3 endpoint
// answers: Elements and Text over arbitrary bytes, and Escape/Unescape round trips.

#include <string>

#include "fuzz_check.h"
#include "storage/s3/s3_xml.h"

using namespace hangar;
namespace s3xml = storage::s3xml;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view xml = fuzz::AsText(data, size);
  for (std::string_view name : {"Part", "ETag", "Code", "Contents", "Key", "UploadId"}) {
    for (std::string_view e : s3xml::Elements(xml, name)) {
      FUZZ_CHECK(e.empty() ||
                 (e.data() >= xml.data() && e.data() + e.size() <= xml.data() + xml.size()));
    }
    if (auto text = s3xml::Text(xml, name)) FUZZ_CHECK(text->size() <= xml.size() * 4);
  }
  // XML cannot carry NUL: Escape drops it, so the round trip gives the rest.
  std::string without_nul(xml);
  std::erase(without_nul, '\0');
  FUZZ_CHECK(s3xml::Unescape(s3xml::Escape(xml)) == without_nul);
  std::string wrapped = "<R><Key>" + s3xml::Escape(xml) + "</Key></R>";
  FUZZ_CHECK(s3xml::Text(wrapped, "Key") == without_nul);
  return 0;
}
