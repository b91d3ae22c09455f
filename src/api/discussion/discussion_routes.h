#pragma once
// Routes of discussions and pull requests (issue 19 §2, docs/discussions.md), in
// ApiFamily::Hf, as huggingface_hub calls them (hf_api.py, community.py):
//   GET  /api/{models,datasets,spaces}/{ns}/{name}/discussions[?type=&status=&author=&p=]
//        → {discussions: [...], count, start} (get_repo_discussions; 50 per page)
//   POST …/discussions {title, description, pullRequest} → {num, url, pullRequest}
//   GET  …/discussions/{num}[?diff=1] → the discussion with its events (and, for pull
//        requests, changes.base, changes.mergeCommitId, filesWithConflicts, diff)
//   POST …/discussions/{num}/comment {comment} → {newMessage: event}
//   POST …/discussions/{num}/status {status, comment?} → {newStatus: event}
//   POST …/discussions/{num}/title {title} → {newTitle: event}
//   POST …/discussions/{num}/merge [{comment}] → {newStatus: event}
//   POST …/discussions/{num}/comment/{id}/edit {content} → {updatedComment: event}
//   POST …/discussions/{num}/comment/{id}/hide → {updatedComment: event}
// Writes need a write credential; bodies are JSON objects of at most kMaxDiscussionBody.

#include "http/router.h"
#include "services/discussion/discussion_service.h"

namespace hangar::api {

// The largest body a discussion call takes (a comment of 64 KiB, JSON-escaped).
inline constexpr size_t kMaxDiscussionBody = 512 << 10;

// `discussions` must outlive the router. Register before the `/{ns}/{name}/...` file
// routes.
void AddDiscussionRoutes(http::Router& router, services::DiscussionService& discussions);

}  // namespace hangar::api
