#pragma once
// The submodule rules git's fsck applies to every `.gitmodules` blob (fsck.c:
// gitmodulesName, gitmodulesUrl, gitmodulesPath, gitmodulesUpdate), for writers that make
// blobs without git's receive-pack (the commit API), so that a file a push would be refused
// for cannot come in another way. A clone with --recurse-submodules acts on these values:
// a name with "..", or a url or path that looks like an option, runs code on the client.

#include <string_view>

#include "core/result.h"

namespace hangar::git {

// Checks `content`, a .gitmodules file: for each `submodule.<name>.*` key (parsed by `git
// config --file -`), <name> may not be empty or hold a ".." component ('/' or '\\'
// separated), `url` may not start with '-' or hold a newline (also percent-encoded),
// `path` may not start with '-', and `update` may not be a "!command"; a url also not as
// git's check_submodule_url says (a relative one climbing onto ':' or '/', a helper's
// address without "://", an empty host). Text git cannot parse as a config is refused
// (git's fsck checks the entries before the error; nothing can use such a file).
// Errors: BadRequest naming the key and the rule; Internal when git cannot run.
Result<void> CheckGitmodules(std::string_view content);

}  // namespace hangar::git
