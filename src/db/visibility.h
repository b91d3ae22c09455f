#pragma once
// NamespaceVisibility: which private rows a reader sees in a listing that joins repos or
// other namespace-owned things (likes, collections): public ones always; private ones when
// all_private (a site admin) or their namespace is in readable_namespaces. Built by
// services::AccessPolicy::VisibilityOf, as RepoQuery's own visibility fields are.

#include <string>
#include <vector>

namespace hangar::db {

struct NamespaceVisibility {
  bool all_private = false;
  std::vector<std::string> readable_namespaces;
};

}  // namespace hangar::db
