// git::CheckGitmodules: git's fsck rules for .gitmodules (issue 13, the commit API).

#include "git/gitmodules.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace hangar::git {
namespace {

TEST(CheckGitmodules, AcceptsOrdinarySubmodules) {
  for (std::string ok : {
           "",
           "[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.com/lib.git\n",
           "[submodule \"a/b\"]\n\tpath = vendor/b\n\turl = ../b.git\n\tupdate = rebase\n",
           "[core]\n\tbare\n[submodule \"x\"]\n\tpath = x\n\tshallow\n",
           "[submodule \"r\"]\n\turl = ../sibling.git\n",
           "[submodule \"s\"]\n\turl = git@example.com:org/s.git\n",
           "[submodule \"h\"]\n\turl = https::https://example.com/h.git\n",
       }) {
    auto r = CheckGitmodules(ok);
    EXPECT_TRUE(r.has_value()) << ok << ": " << r.error().message;
  }
}

TEST(CheckGitmodules, RefusesWhatGitsFsckRefuses) {
  struct Case {
    std::string text;
    std::string says;
  };
  for (const Case& c : {
           Case{"[submodule \"../../modules/x\"]\n\tpath = x\n", "'..' component"},
           Case{"[submodule \"a\\\\..\\\\b\"]\n\tpath = x\n", "'..' component"},
           Case{"[submodule \"..\"]\n\turl = https://e.com/x\n", "'..' component"},
           Case{"[submodule \"\"]\n\tpath = x\n", "empty name"},
           Case{"[submodule \"x\"]\n\turl = --upload-pack=touch /tmp/p\n", "looks like an option"},
           Case{"[submodule \"x\"]\n\turl = https://a%0ahost=evil/x\n", "newline"},
           Case{"[submodule \"x\"]\n\tpath = -x\n", "looks like an option"},
           Case{"[submodule \"x\"]\n\tupdate = !sh -c id\n", "runs a command"},
           Case{"[submodule \"ok\"]\n\tpath = ok\n[submodule \"x\"]\n\tpath = --x\n",
                "'submodule.x.path'"},
           Case{"[submodule \"x\"]\n\turl = ../../:example.com/x\n", "gitmodulesUrl"},
           Case{"[submodule \"x\"]\n\turl = ..//etc/x\n", "gitmodulesUrl"},
           Case{"[submodule \"x\"]\n\turl = https:///example.com/x\n", "gitmodulesUrl"},
           Case{"[submodule \"x\"]\n\turl = http::example.com/x\n", "gitmodulesUrl"},
           // git checks the entries before a parse error; the file is refused whole.
           Case{"[submodule \"x\"]\n\turl = --evil\n[broken\n", "cannot read it"},
           Case{"not a config at all [", "cannot read it"},
           Case{std::string("[submodule \"x\"]\n\tupdate = !cmd\n\0garbage\n", 38),
                "cannot read it"},
       }) {
    auto r = CheckGitmodules(c.text);
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
  }
}

TEST(CheckGitmodules, FollowsNoInclude) {
  // Were the include followed, git would read a file of the server's, and its bad
  // submodule would be refused here.
  std::string path = ::testing::TempDir() + "/gitmodules_include_test.cfg";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("[submodule \"x\"]\n\tpath = -evil\n", f);
  std::fclose(f);
  ASSERT_FALSE(CheckGitmodules("[submodule \"x\"]\n\tpath = -evil\n").has_value());
  auto r = CheckGitmodules("[include]\n\tpath = " + path + "\n[submodule \"y\"]\n\tpath = y\n");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hangar::git
