// ISO 8601 text of DuckDB's dates, times, timestamps and intervals, in the shapes of
// Python's isoformat() (the dataset viewer's reference renders cells with it, spec §5).

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "duckdb/internal.h"

namespace hangar::duckdb::internal {
namespace {

constexpr int64_t kMicrosPerDay = 86'400'000'000;
constexpr int64_t kNanosPerDay = kMicrosPerDay * 1000;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Year, month, day of `days` since 1970-01-01 in the proleptic Gregorian calendar (Howard
// Hinnant's civil_from_days).
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

void AppendDays(std::string& out, int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  char buf[40];
  // ISO 8601's expanded years: a sign outside 0000..9999.
  if (y >= 0 && y <= 9999)
    std::snprintf(buf, sizeof buf, "%04" PRId64 "-%02u-%02u", y, m, d);
  else
    std::snprintf(buf, sizeof buf, "%+05" PRId64 "-%02u-%02u", y, m, d);
  out += buf;
}

// "HH:MM:SS" and, when `fraction` is not 0, "." and `fraction` in `digits` digits.
void AppendClock(std::string& out, int64_t seconds_of_day, int64_t fraction, int digits) {
  char buf[40];
  int n = std::snprintf(buf, sizeof buf, "%02" PRId64 ":%02" PRId64 ":%02" PRId64,
                        seconds_of_day / 3600, seconds_of_day / 60 % 60, seconds_of_day % 60);
  if (fraction != 0) std::snprintf(buf + n, sizeof buf - n, ".%0*" PRId64, digits, fraction);
  out += buf;
}

}  // namespace

void AppendDate(std::string& out, int32_t days) {
  if (!duckdb_is_finite_date(duckdb_date{days})) {
    out += days > 0 ? "infinity" : "-infinity";
    return;
  }
  AppendDays(out, days);
}

void AppendTime(std::string& out, int64_t micros) {
  AppendClock(out, micros / 1'000'000, micros % 1'000'000, 6);
}

void AppendTimeNs(std::string& out, int64_t nanos) {
  AppendClock(out, nanos / 1'000'000'000, nanos % 1'000'000'000, 9);
}

void AppendTimestamp(std::string& out, int64_t micros) {
  if (!duckdb_is_finite_timestamp(duckdb_timestamp{micros})) {
    out += micros > 0 ? "infinity" : "-infinity";
    return;
  }
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  AppendDays(out, days);
  out += 'T';
  AppendTime(out, micros - days * kMicrosPerDay);
}

void AppendTimestampNs(std::string& out, int64_t nanos) {
  if (!duckdb_is_finite_timestamp_ns(duckdb_timestamp_ns{nanos})) {
    out += nanos > 0 ? "infinity" : "-infinity";
    return;
  }
  int64_t days = FloorDiv(nanos, kNanosPerDay);
  AppendDays(out, days);
  out += 'T';
  AppendTimeNs(out, nanos - days * kNanosPerDay);
}

void AppendTimeTz(std::string& out, duckdb_time_tz value) {
  duckdb_time_tz_struct t = duckdb_from_time_tz(value);
  int64_t seconds = t.time.hour * 3600 + t.time.min * 60 + t.time.sec;
  AppendClock(out, seconds, t.time.micros, 6);
  char buf[16];
  int32_t offset = std::abs(t.offset);  // seconds east of UTC
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", t.offset < 0 ? '-' : '+', offset / 3600,
                offset / 60 % 60);
  out += buf;
}

void AppendInterval(std::string& out, const duckdb_interval& v) {
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, "P");
  if (v.months / 12) n += std::snprintf(buf + n, sizeof buf - n, "%dY", v.months / 12);
  if (v.months % 12) n += std::snprintf(buf + n, sizeof buf - n, "%dM", v.months % 12);
  if (v.days) n += std::snprintf(buf + n, sizeof buf - n, "%dD", v.days);
  int64_t micros = v.micros;
  if (micros != 0 || (v.months == 0 && v.days == 0)) {
    n += std::snprintf(buf + n, sizeof buf - n, "T");
    const char* sign = micros < 0 ? "-" : "";
    uint64_t m = micros < 0 ? 0 - static_cast<uint64_t>(micros) : micros;
    uint64_t h = m / 3'600'000'000, min = m / 60'000'000 % 60, s = m / 1'000'000 % 60;
    if (h) n += std::snprintf(buf + n, sizeof buf - n, "%s%" PRIu64 "H", sign, h);
    if (min) n += std::snprintf(buf + n, sizeof buf - n, "%s%" PRIu64 "M", sign, min);
    uint64_t frac = m % 1'000'000;
    if (s || frac || (!h && !min)) {
      n += std::snprintf(buf + n, sizeof buf - n, "%s%" PRIu64, sign, s);
      if (frac) {
        n += std::snprintf(buf + n, sizeof buf - n, ".%06" PRIu64, frac);
        while (buf[n - 1] == '0') buf[--n] = '\0';  // "6.5S", not "6.500000S"
      }
      n += std::snprintf(buf + n, sizeof buf - n, "S");
    }
  }
  out.append(buf, n);
}

}  // namespace hangar::duckdb::internal
