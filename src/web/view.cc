#include "web/view.h"

#include <map>
#include <memory>

#include "web/assets.h"

namespace hangar::web {
namespace {

namespace mu = kainjow::mustache;

constexpr const char* kPartials[] = {"_repo_header", "_pager",  "_csrf",      "_repo_list",
                                     "_file_table",  "_crumbs", "_signature", "_diff"};

// Parsed templates of this thread (kainjow's render is not const).
mu::mustache* Compiled(const std::string& name) {
  thread_local std::map<std::string, std::unique_ptr<mu::mustache>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  auto text = Asset("templates/" + name + ".mustache");
  if (!text) return nullptr;
  auto t = std::make_unique<mu::mustache>(std::string(*text));
  return cache.emplace(name, std::move(t)).first->second.get();
}

}  // namespace

Result<std::string> RenderTemplate(std::string_view name, Data& data) {
  mu::mustache* t = Compiled(std::string(name));
  if (!t) return MakeError(ErrorCode::Internal, "no template " + std::string(name));
  if (!t->is_valid())
    return MakeError(ErrorCode::Internal,
                     "template " + std::string(name) + ": " + t->error_message());
  for (const char* p : kPartials) {
    std::string pname = p;
    data.set(pname, mu::partial([pname]() -> std::string {
               auto text = Asset("templates/" + pname + ".mustache");
               return text ? std::string(*text) : std::string();
             }));
  }
  return t->render(data);
}

}  // namespace hangar::web
