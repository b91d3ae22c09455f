// pkt-lines (src/git/pkt_line.h) as git clients send them to upload-pack/receive-pack:
// PktReader over arbitrary bytes; every packet read must re-serialize to the bytes it
// came from, and an error packet built from the input must read back.

#include "core/util.h"
#include "fuzz_check.h"
#include "git/pkt_line.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view buf = fuzz::AsText(data, size);
  git::PktReader reader(buf);
  while (true) {
    size_t start = reader.Offset();
    auto next = reader.Next();
    FUZZ_CHECK(reader.Offset() <= buf.size());
    if (!next) {
      FUZZ_CHECK(reader.Offset() == start);
      break;
    }
    if (!next->has_value()) {
      FUZZ_CHECK(reader.Offset() == buf.size());
      break;
    }
    const git::Pkt& pkt = **next;
    std::string_view consumed = buf.substr(start, reader.Offset() - start);
    std::string again;
    switch (pkt.type) {
      case git::PktType::Data:
        FUZZ_CHECK(pkt.payload.size() <= git::kMaxPktPayload);
        again = git::PktLine(pkt.payload);
        break;
      case git::PktType::Flush:
        again = git::PktFlush();
        break;
      case git::PktType::Delim:
        again = git::PktDelim();
        break;
      case git::PktType::ResponseEnd:
        again = "0002";
        break;
    }
    // Length digits may come in either case; git writes lower case.
    FUZZ_CHECK(AsciiLower(consumed.substr(0, 4)) == again.substr(0, 4));
    FUZZ_CHECK(consumed.substr(4) == std::string_view(again).substr(4));
    FUZZ_CHECK(reader.Rest() == buf.substr(reader.Offset()));
  }

  std::string err = git::PktError(buf);
  git::PktReader err_reader(err);
  auto pkt = err_reader.Next();
  FUZZ_CHECK(pkt && pkt->has_value() && (*pkt)->type == git::PktType::Data);
  FUZZ_CHECK((*pkt)->payload.starts_with("ERR ") && (*pkt)->payload.ends_with('\n'));
  FUZZ_CHECK((*pkt)->Text().substr(4) == buf.substr(0, git::kMaxPktPayload - 5));
  FUZZ_CHECK(err_reader.Rest().empty());
  return 0;
}
