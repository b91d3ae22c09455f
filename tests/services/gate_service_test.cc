// Gated repos (issue 19 §1, docs/gating.md): who passes RepoService's gate, and
// GateService's access requests — asking, the auto and manual gates, the writers' lists,
// handling and granting, and their refusals.

#include "services/repo/gate_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "fixtures.h"
#include "service_test.h"

namespace hangar::services {
namespace {

class GateTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    repos_->SetGates(stores_.gates.get());
    gates_ = std::make_unique<GateService>(*repos_, *stores_.gates, *stores_.users);
    owner_ = testing::MakeUser(*accounts_, "owner");
    bob_ = testing::MakeUser(*accounts_, "bob");
    cat_ = testing::MakeUser(*accounts_, "cat");
    reader_member_ = testing::MakeUser(*accounts_, "rita");
    ASSERT_TRUE(accounts_->CreateOrg("acme", "owner").has_value());
    ASSERT_TRUE(accounts_->AddMember("acme", "rita", db::OrgRole::Read).has_value());
    repo_id_ = testing::MakeRepoRow(*stores_.repos, "acme", "m");
    Gate("manual");
  }
  void Gate(const std::string& mode) {
    RepoSettings settings;
    settings.gated = mode;
    auto set = repos_->UpdateSettings(owner_, id_, settings);
    ASSERT_TRUE(set.has_value()) << set.error().message;
  }
  // The gate's answer to `who` reading the repo's files: "" when they pass, else the
  // error's message (its code checked to be GatedRepo).
  std::string Refusal(const Principal& who) {
    auto opened = repos_->Open(who, id_, Access::Read);
    if (opened) return "";
    EXPECT_EQ(opened.error().code, ErrorCode::GatedRepo) << opened.error().message;
    return opened.error().message;
  }

  const RepoId id_{RepoType::Model, "acme", "m"};
  int64_t repo_id_ = 0;
  std::unique_ptr<GateService> gates_;
  Principal owner_, bob_, cat_, reader_member_;
};

TEST_F(GateTest, MetadataStaysOpenAndFilesNeedAnAcceptedRequest) {
  const Principal anonymous;
  for (const Principal* p :
       {&anonymous, &std::as_const(bob_), &std::as_const(owner_), &std::as_const(reader_member_)}) {
    EXPECT_TRUE(repos_->OpenMetadata(*p, id_).has_value()) << p->name;
  }
  EXPECT_EQ(
      Refusal(anonymous),
      "Access to model acme/m is restricted: sign in and ask for access on its page, /acme/m");
  EXPECT_EQ(Refusal(bob_),
            "Access to model acme/m is restricted and you are not in the authorized list: ask "
            "for access on its page, /acme/m");
  // Members of its namespace, with any role, and site admins pass without asking.
  EXPECT_EQ(Refusal(owner_), "");
  EXPECT_EQ(Refusal(reader_member_), "");
  EXPECT_EQ(Refusal(Principal::User(999, "root", /*is_admin=*/true, TokenRole::Read, "")), "");

  auto asked = gates_->Ask(bob_, id_, {{"company", "Acme"}});
  ASSERT_TRUE(asked.has_value()) << asked.error().message;
  EXPECT_EQ(asked->status, db::AccessStatus::Pending);
  EXPECT_EQ(asked->fields, R"({"company":"Acme"})");
  EXPECT_EQ(Refusal(bob_),
            "Your request for access to model acme/m is awaiting a review from its authors");

  ASSERT_TRUE(
      gates_->Handle(owner_, id_, "bob", db::AccessStatus::Rejected, "students only").has_value());
  EXPECT_EQ(Refusal(bob_),
            "Your request for access to model acme/m was rejected by its authors: students only");
  // Asking again changes nothing: a rejected request stays rejected.
  EXPECT_EQ(gates_->Ask(bob_, id_, {}).value().status, db::AccessStatus::Rejected);

  ASSERT_TRUE(gates_->Handle(owner_, id_, "bob", db::AccessStatus::Accepted, "").has_value());
  EXPECT_EQ(Refusal(bob_), "");
  // Ungated, the files are open to everyone again.
  Gate("");
  EXPECT_EQ(Refusal(anonymous), "");
  EXPECT_EQ(Refusal(cat_), "");
}

TEST_F(GateTest, AnAutoGateAcceptsAtOnce) {
  Gate("auto");
  auto asked = gates_->Ask(cat_, id_, {});
  ASSERT_TRUE(asked.has_value()) << asked.error().message;
  EXPECT_EQ(asked->status, db::AccessStatus::Accepted);
  EXPECT_EQ(asked->fields, "");
  EXPECT_EQ(Refusal(cat_), "");
  // Asking once more answers the accepted request.
  EXPECT_EQ(gates_->Ask(cat_, id_, {}).value().status, db::AccessStatus::Accepted);
}

TEST_F(GateTest, APendingRequestIsAcceptedOnceTheGateTurnsAuto) {
  ASSERT_EQ(gates_->Ask(bob_, id_, {}).value().status, db::AccessStatus::Pending);
  ASSERT_EQ(gates_->Ask(cat_, id_, {}).value().status, db::AccessStatus::Pending);
  ASSERT_TRUE(gates_->Handle(owner_, id_, "cat", db::AccessStatus::Rejected, "no").has_value());
  Gate("auto");
  EXPECT_FALSE(Refusal(bob_).empty()) << "until bob asks again";
  EXPECT_EQ(gates_->Ask(bob_, id_, {}).value().status, db::AccessStatus::Accepted);
  EXPECT_EQ(Refusal(bob_), "");
  // A rejection was the writers' word: it stands.
  EXPECT_EQ(gates_->Ask(cat_, id_, {}).value().status, db::AccessStatus::Rejected);
}

TEST_F(GateTest, AskingIsRefusedWhereItMeansNothing) {
  EXPECT_EQ(gates_->Ask(Principal(), id_, {}).error().code, ErrorCode::Unauthorized);
  Principal key = bob_;
  key.deploy_key_id = 3;
  key.repo_scope = repo_id_;
  EXPECT_EQ(gates_->Ask(key, id_, {}).error().code, ErrorCode::Forbidden);
  auto member = gates_->Ask(reader_member_, id_, {});
  ASSERT_FALSE(member.has_value());
  EXPECT_EQ(member.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(member.error().message, "you have access to acme/m already");

  GateFields many;
  for (int i = 0; i < 21; ++i) many.emplace_back("f" + std::to_string(i), "v");
  EXPECT_EQ(gates_->Ask(bob_, id_, many).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(gates_->Ask(bob_, id_, {{std::string(101, 'n'), "v"}}).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(gates_->Ask(bob_, id_, {{"", "v"}}).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(gates_->Ask(bob_, id_, {{"why", std::string(2001, 'x')}}).error().message,
            "field 'why' is over 2000 bytes");
  EXPECT_EQ(gates_->Ask(bob_, id_, {{"note", "caf\xe9"}}).error().message,
            "field 'note' is not valid UTF-8");
  EXPECT_EQ(gates_->Ask(bob_, id_, {{"note", "a\x1b]0;x\x07"}}).error().message,
            "field 'note' holds a control character");
  EXPECT_EQ(gates_->Ask(bob_, id_, {{std::string("Com\0pany", 8), "x"}}).error().message,
            "a field's name holds a control character");
  // None of the refused asks left a request behind.
  EXPECT_FALSE(stores_.gates->Get(repo_id_, bob_.user_id).value().has_value());

  Gate("");
  EXPECT_EQ(gates_->Ask(bob_, id_, {}).error().message,
            "acme/m is not gated: its files are open to you");
  EXPECT_EQ(gates_->Ask(bob_, {RepoType::Model, "acme", "nope"}, {}).error().code,
            ErrorCode::RepoNotFound);
}

TEST_F(GateTest, WritersListPageByPage) {
  for (const auto* p : {&bob_, &cat_}) ASSERT_TRUE(gates_->Ask(*p, id_, {}).has_value());
  auto first = gates_->List(owner_, id_, db::AccessStatus::Pending, "", 1);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_EQ(first->items.size(), 1u);
  ASSERT_FALSE(first->next_cursor.empty());
  auto second = gates_->List(owner_, id_, db::AccessStatus::Pending, first->next_cursor, 1);
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_NE(first->items[0].user_name, second->items[0].user_name);
  EXPECT_TRUE(second->next_cursor.empty()) << "the last page says so, even when full";
  EXPECT_TRUE(gates_->List(owner_, id_, db::AccessStatus::Accepted, "", 10)->items.empty());

  for (const char* bad : {"x", "1_", "_1", "1_2_3", "12"}) {
    EXPECT_EQ(gates_->List(owner_, id_, db::AccessStatus::Pending, bad, 10).error().code,
              ErrorCode::BadRequest)
        << bad;
  }
  // Only its writers see who asked: a read-only member, another user, a read token.
  EXPECT_EQ(gates_->List(reader_member_, id_, db::AccessStatus::Pending, "", 10).error().code,
            ErrorCode::Forbidden);
  EXPECT_EQ(gates_->List(bob_, id_, db::AccessStatus::Pending, "", 10).error().code,
            ErrorCode::Forbidden);
  Principal read_token = owner_;
  read_token.role = TokenRole::Read;
  EXPECT_EQ(gates_->List(read_token, id_, db::AccessStatus::Pending, "", 10).error().code,
            ErrorCode::Forbidden);
}

TEST_F(GateTest, HandleAndGrantRefuseWhatTheyCannotDo) {
  ASSERT_TRUE(gates_->Ask(bob_, id_, {}).has_value());
  auto same = gates_->Handle(owner_, id_, "bob", db::AccessStatus::Pending, "");
  ASSERT_FALSE(same.has_value());
  EXPECT_EQ(same.error().code, ErrorCode::NotFound);
  EXPECT_EQ(same.error().message, "bob's request is already in the pending list");
  EXPECT_EQ(gates_->Handle(owner_, id_, "bob", db::AccessStatus::Accepted, "why").error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(gates_->Handle(owner_, id_, "bob", db::AccessStatus::Rejected, std::string(2001, 'r'))
                .error()
                .code,
            ErrorCode::BadRequest);
  EXPECT_EQ(
      gates_->Handle(owner_, id_, "bob", db::AccessStatus::Rejected, "\x1b[2Jfake").error().message,
      "the reason holds a control character");
  EXPECT_EQ(gates_->Handle(owner_, id_, "cat", db::AccessStatus::Accepted, "").error().message,
            "cat has no access request on acme/m");
  EXPECT_FALSE(gates_->Handle(owner_, id_, "nobody", db::AccessStatus::Accepted, "").has_value());
  EXPECT_EQ(gates_->Handle(bob_, id_, "bob", db::AccessStatus::Accepted, "").error().code,
            ErrorCode::Forbidden);
  EXPECT_EQ(stores_.gates->Get(repo_id_, bob_.user_id).value()->status, db::AccessStatus::Pending);

  // Granting: a user who never asked is accepted, marked granted.
  ASSERT_TRUE(gates_->Grant(owner_, id_, "cat").has_value());
  auto cat = stores_.gates->Get(repo_id_, cat_.user_id).value().value();
  EXPECT_EQ(cat.status, db::AccessStatus::Accepted);
  EXPECT_TRUE(cat.granted);
  EXPECT_EQ(Refusal(cat_), "");
  EXPECT_EQ(gates_->Grant(owner_, id_, "cat").error().message, "cat has access to acme/m already");
  EXPECT_EQ(gates_->Grant(owner_, id_, "rita").error().message,
            "rita has access to acme/m already (a member of its namespace)");
  EXPECT_FALSE(gates_->Grant(owner_, id_, "nobody").has_value());

  Gate("");
  EXPECT_EQ(gates_->Grant(owner_, id_, "bob").error().message, "acme/m is not gated");
}

}  // namespace
}  // namespace hangar::services
