#pragma once
// Result<T>: a T or an Error, with the part of std::expected's interface Hangar uses,
// so it can become an alias of std::expected<T, Error> at C++23.

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/error.h"

namespace hangar {

// Wraps an Error so `return Unexpected(err)` reads as with std::expected.
struct Unexpected {
  Error error;
  explicit Unexpected(Error e) : error(std::move(e)) {}
  Unexpected(ErrorCode code, std::string message) : error{code, std::move(message)} {}
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}         // NOLINT: implicit
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}             // NOLINT: implicit
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}  // NOLINT
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Error> &&
                                                    !std::is_same_v<std::decay_t<U>, Unexpected>>>
  Result(U&& value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}  // NOLINT

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : error_(std::move(e)), ok_(false) {}             // NOLINT: implicit
  Result(Unexpected u) : error_(std::move(u.error)), ok_(false) {}  // NOLINT: implicit
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const { assert(ok_); }
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

// Returns early from a function returning Result<...> when `expr` failed;
// otherwise evaluates to nothing. Usage: HANGAR_TRY(store.Put(x));
#define HANGAR_TRY(expr)                                         \
  do {                                                           \
    auto hangar_try_r_ = (expr);                                 \
    if (!hangar_try_r_) return std::move(hangar_try_r_).error(); \
  } while (0)

// Declares `lhs` from a Result-returning `expr`, or returns its error early.
// Usage: HANGAR_ASSIGN_OR_RETURN(auto parts, store.ListParts(handle));
#define HANGAR_ASSIGN_OR_RETURN(lhs, expr) \
  HANGAR_ASSIGN_OR_RETURN_IMPL_(HANGAR_CONCAT_(hangar_assign_r_, __LINE__), lhs, expr)
#define HANGAR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp) return std::move(tmp).error();            \
  lhs = std::move(*tmp)
#define HANGAR_CONCAT_(a, b) HANGAR_CONCAT_INNER_(a, b)
#define HANGAR_CONCAT_INNER_(a, b) a##b

}  // namespace hangar
