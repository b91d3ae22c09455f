#include "db/change_feed.h"

namespace hangar::db {

ChangeFeed::Subscription& ChangeFeed::Subscription::operator=(Subscription&& o) noexcept {
  if (this != &o) {
    if (feed_) feed_->Unsubscribe(id_);
    feed_ = o.feed_;
    id_ = o.id_;
    o.feed_ = nullptr;
  }
  return *this;
}

ChangeFeed::Subscription::~Subscription() {
  if (feed_) feed_->Unsubscribe(id_);
}

void ChangeFeed::Publish(std::string_view topic, std::string_view key) { Deliver(topic, key); }

ChangeFeed::Subscription ChangeFeed::Subscribe(std::string topic, Listener listener) {
  std::lock_guard lock(mu_);
  uint64_t id = next_id_++;
  listeners_.push_back({id, std::move(topic), std::move(listener)});
  return Subscription(this, id);
}

void ChangeFeed::Unsubscribe(uint64_t id) {
  std::lock_guard lock(mu_);
  std::erase_if(listeners_, [id](const Entry& e) { return e.id == id; });
}

void ChangeFeed::Deliver(std::string_view topic, std::string_view key) {
  // Under the lock: once Unsubscribe returns, its listener is not running and never will.
  std::lock_guard lock(mu_);
  for (const auto& e : listeners_) {
    if (topic.empty()) {
      e.listener("");
    } else if (e.topic == topic) {
      e.listener(key);
    }
  }
}

}  // namespace hangar::db
