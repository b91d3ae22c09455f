#pragma once
// The rules for paths inside a repository (hf-api.md §1.5; issue #13 point 4): the one
// validator every writer calls (commit operations, preupload, copies, initial files) and
// its lenient form for reads.

#include <string_view>

#include "core/result.h"

namespace hangar {

// Whether one path component would name the `.git` directory on some filesystem git
// runs on: ".git" in any case, with trailing dots or spaces (".git.", ".git "), with an
// NTFS stream or a '\\' after it (".git::$INDEX_ALLOCATION", ".git:$DATA", ".git\\x"),
// as an 8.3 short name ("GIT~1"), or with code points HFS+ ignores (U+200C, U+FEFF, ...)
// inside it. Git refuses the same names (fsck's hasDotgit, core.protectNTFS/HFS).
bool IsGitDirName(std::string_view component);

// Whether one path component would name a `.gitmodules` file on some filesystem, by the
// same leniencies (".GitModules", ".gitmodules.", "GITMOD~1"). Its content must pass
// git's submodule checks (git::CheckGitmodules).
bool IsGitmodulesName(std::string_view component);

// Validates a path a client asks to write (or to delete, or copy from): not empty, at most
// 4096 bytes, no leading '/', no NUL, '\\' or other control bytes (< 0x20, 0x7f), no
// empty, '.' or '..' components, none IsGitDirName refuses, and no folder IsGitmodulesName
// names.
// Errors: BadRequest "invalid path '<path>': <why>" (the path shown escaped, cut at 200).
Result<void> ValidateRepoPath(std::string_view path);

// A path to read that git may hold although Hangar never writes one like it: as
// ValidateRepoPath, but backslashes and control characters (a newline in a file name
// pushed with git) are allowed. Errors: BadRequest, as ValidateRepoPath.
Result<void> ValidateReadPath(std::string_view path);

}  // namespace hangar
