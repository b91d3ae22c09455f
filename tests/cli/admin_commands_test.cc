// `hangar admin ssh-key` and `hangar admin deploy-key` (cli/admin_commands.cc), run in
// process as main.cc runs them: parsed by CLI11 on a temporary data dir, their output and
// exit status checked (0 done, 2 refused, 1 failed).

#include "cli/admin_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "git/test_repo.h"

namespace hangar::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Made with `ssh-keygen -t ed25519 -N ''`, and their `ssh-keygen -lf`.
constexpr const char kKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe ann@laptop";
constexpr const char kFingerprint[] = "SHA256:UjKIvHhdckOpM9k6opAkjXbonwEew6MmFxPcsSKFMoo";
constexpr const char kCiKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImvoSaAW6h2k3beqM8fGJPF8k+CnbhsCcPhGxBjs5m2 second";
constexpr const char kCiFingerprint[] = "SHA256:C0yR3WGZalfU5kX+kWLDafU/V4zSvZwnwtyA5jEaOYE";

struct Ran {
  int code = -1;
  std::string out, err;
};

class AdminCommandsTest : public ::testing::Test {
 protected:
  // Runs `hangar admin <args> --data-dir <temp>`.
  Ran Admin(std::vector<std::string> args) {
    args.insert(args.begin(), {"hangar", "admin"});
    args.push_back("--data-dir");
    args.push_back(dir_.path() + "/data");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    CLI::App app("hangar");
    std::optional<int> code;
    AddAdminCommands(*app.add_subcommand("admin")->require_subcommand(1), &code);
    Ran ran;
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
      ran.code = code.value_or(-1);
    } catch (const CLI::ParseError&) {
      ran.code = 64;  // a usage error, as CLI11 would exit with
    }
    std::fflush(stdout);
    std::fflush(stderr);
    ran.out = ::testing::internal::GetCapturedStdout();
    ran.err = ::testing::internal::GetCapturedStderr();
    return ran;
  }
  void SetUp() override { ASSERT_EQ(Admin({"user", "create", "ann"}).code, 0); }
  git::testing::TempDir dir_;
};

TEST_F(AdminCommandsTest, SshKeyAddListDelete) {
  Ran added = Admin({"ssh-key", "add", "ann", "--key", kKey, "--title", "laptop"});
  ASSERT_EQ(added.code, 0) << added.err;
  EXPECT_EQ(added.out, std::string("1\t") + kFingerprint + "\tlaptop\tssh-ed25519\tnever\n");
  // From a file, the title from its comment.
  const std::string file = dir_.path() + "/id_ci.pub";
  std::ofstream(file) << kCiKey << "\n";
  Ran from_file = Admin({"ssh-key", "add", "ann", "--key-file", file});
  ASSERT_EQ(from_file.code, 0) << from_file.err;
  EXPECT_THAT(from_file.out, StartsWith(std::string("2\t") + kCiFingerprint + "\tsecond\t"));

  Ran list = Admin({"ssh-key", "list", "ann"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(list.out, added.out + from_file.out);

  Ran deleted = Admin({"ssh-key", "delete", "ann", "1"});
  EXPECT_EQ(deleted.code, 0) << deleted.err;
  EXPECT_EQ(Admin({"ssh-key", "list", "ann"}).out, from_file.out);
}

TEST_F(AdminCommandsTest, SshKeyRefusals) {
  ASSERT_EQ(Admin({"ssh-key", "add", "ann", "--key", kKey}).code, 0);
  Ran twice = Admin({"ssh-key", "add", "ann", "--key", kKey});
  EXPECT_EQ(twice.code, 2);
  EXPECT_THAT(twice.err, HasSubstr("key is already in use"));
  Ran bad = Admin({"ssh-key", "add", "ann", "--key", "ssh-ed25519"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("not an OpenSSH public key"));
  Ran neither = Admin({"ssh-key", "add", "ann"});
  EXPECT_EQ(neither.code, 2);
  EXPECT_THAT(neither.err, HasSubstr("--key or --key-file"));
  EXPECT_EQ(Admin({"ssh-key", "add", "ann", "--key", kCiKey, "--key-file", "x"}).code, 2);
  Ran missing_file = Admin({"ssh-key", "add", "ann", "--key-file", dir_.path() + "/none.pub"});
  EXPECT_EQ(missing_file.code, 2);
  EXPECT_THAT(missing_file.err, HasSubstr("cannot read"));
  EXPECT_EQ(Admin({"ssh-key", "add", "nobody", "--key", kCiKey}).code, 2);
  EXPECT_EQ(Admin({"ssh-key", "list", "nobody"}).code, 2);
  Ran not_theirs = Admin({"ssh-key", "delete", "ann", "99"});
  EXPECT_EQ(not_theirs.code, 2);
  EXPECT_THAT(not_theirs.err, HasSubstr("not found"));
  Ran bad_id = Admin({"ssh-key", "delete", "ann", "1x"});
  EXPECT_EQ(bad_id.code, 2);
  EXPECT_THAT(bad_id.err, HasSubstr("a key id is a positive decimal number"));
}

TEST_F(AdminCommandsTest, DeployKeys) {
  {
    auto hub = App::OpenFor("", dir_.path() + "/data");
    ASSERT_TRUE(hub.has_value()) << hub.error().message;
    Principal ann;
    ann.anonymous = false;
    ann.name = "ann";
    ann.user_id = (*hub)->accounts().FindUser("ann").value().id;
    ann.role = TokenRole::Write;
    ASSERT_TRUE((*hub)->repos().Create(ann, {RepoType::Dataset, "ann", "data"}, true).has_value());
  }
  Ran added = Admin({"deploy-key", "add", "ann/data", "--type", "dataset", "--key", kCiKey,
                     "--read-write", "--title", "ci"});
  ASSERT_EQ(added.code, 0) << added.err;
  EXPECT_EQ(added.out,
            std::string("1\t") + kCiFingerprint + "\tci\tssh-ed25519\tnever\tread-write\n");
  Ran ro = Admin({"deploy-key", "add", "ann/data", "--type", "dataset", "--key", kKey});
  ASSERT_EQ(ro.code, 0) << ro.err;
  EXPECT_THAT(ro.out, HasSubstr("\tread-only\n"));
  EXPECT_EQ(Admin({"deploy-key", "list", "ann/data", "--type", "dataset"}).out, added.out + ro.out);

  // A model ann/data does not exist; nor does a repo without its namespace.
  Ran wrong_type = Admin({"deploy-key", "list", "ann/data"});
  EXPECT_EQ(wrong_type.code, 2);
  EXPECT_THAT(wrong_type.err, HasSubstr("not found"));
  EXPECT_EQ(Admin({"deploy-key", "list", "data"}).code, 2);
  EXPECT_EQ(Admin({"deploy-key", "add", "ann/data", "--type", "dataset", "--key", kKey}).code, 2);

  EXPECT_EQ(Admin({"deploy-key", "delete", "ann/data", "--type", "dataset", "1"}).code, 0);
  EXPECT_EQ(Admin({"deploy-key", "delete", "ann/data", "--type", "dataset", "1"}).code, 2);
  EXPECT_EQ(Admin({"deploy-key", "list", "ann/data", "--type", "dataset"}).out, ro.out);
}

}  // namespace
}  // namespace hangar::cli
