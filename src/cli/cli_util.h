#pragma once
// What every `hangar` command shares: how a failure is reported and what it exits with.

#include "core/error.h"

namespace hangar::cli {

// Prints "hangar: <message>" to stderr; returns the exit status: 1 when the hub failed
// (a 5xx code), 2 when the input was refused (4xx).
int Fail(const Error& e);

}  // namespace hangar::cli
