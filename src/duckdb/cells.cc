// One cell of a flat DuckDB vector as a Value (value.h lists what each ColumnType gives).

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/base64.h"
#include "duckdb/internal.h"

namespace hangar::duckdb::internal {
namespace {

template <typename T>
T At(duckdb_vector v, uint64_t row) {
  T value;
  std::memcpy(&value, static_cast<const char*>(duckdb_vector_get_data(v)) + row * sizeof(T),
              sizeof(T));
  return value;
}

std::string Int128Text(__int128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  for (; u; u /= 10) digits.insert(digits.begin(), static_cast<char>('0' + u % 10));
  return negative ? "-" + digits : digits;
}

std::string UInt128Text(unsigned __int128 u) {
  std::string digits;
  for (; u; u /= 10) digits.insert(digits.begin(), static_cast<char>('0' + u % 10));
  return digits.empty() ? "0" : digits;
}

// An integer cell: int64 when it fits, else its decimal digits (value.h).
Value IntegerAt(duckdb_vector v, duckdb_type id, uint64_t row) {
  switch (id) {
    case DUCKDB_TYPE_TINYINT:
      return int64_t{At<int8_t>(v, row)};
    case DUCKDB_TYPE_SMALLINT:
      return int64_t{At<int16_t>(v, row)};
    case DUCKDB_TYPE_INTEGER:
      return int64_t{At<int32_t>(v, row)};
    case DUCKDB_TYPE_BIGINT:
      return At<int64_t>(v, row);
    case DUCKDB_TYPE_UTINYINT:
      return int64_t{At<uint8_t>(v, row)};
    case DUCKDB_TYPE_USMALLINT:
      return int64_t{At<uint16_t>(v, row)};
    case DUCKDB_TYPE_UINTEGER:
      return int64_t{At<uint32_t>(v, row)};
    case DUCKDB_TYPE_UBIGINT: {
      uint64_t u = At<uint64_t>(v, row);
      if (u <= INT64_MAX) return static_cast<int64_t>(u);
      return UInt128Text(u);
    }
    case DUCKDB_TYPE_HUGEINT: {
      auto h = At<duckdb_hugeint>(v, row);
      __int128 x = (static_cast<__int128>(h.upper) << 64) | h.lower;
      if (x >= INT64_MIN && x <= INT64_MAX) return static_cast<int64_t>(x);
      return Int128Text(x);
    }
    default: {  // UHUGEINT
      auto h = At<duckdb_uhugeint>(v, row);
      unsigned __int128 x = (static_cast<unsigned __int128>(h.upper) << 64) | h.lower;
      if (x <= INT64_MAX) return static_cast<int64_t>(x);
      return UInt128Text(x);
    }
  }
}

// The unscaled integer of a DECIMAL cell.
__int128 DecimalRaw(duckdb_vector v, const TypeInfo& t, uint64_t row) {
  switch (t.physical) {
    case DUCKDB_TYPE_SMALLINT:
      return At<int16_t>(v, row);
    case DUCKDB_TYPE_INTEGER:
      return At<int32_t>(v, row);
    case DUCKDB_TYPE_BIGINT:
      return At<int64_t>(v, row);
    default: {
      auto h = At<duckdb_hugeint>(v, row);
      return (static_cast<__int128>(h.upper) << 64) | h.lower;
    }
  }
}

// "-12.345" from the unscaled integer and the scale: exact, as JSON numbers may be.
std::string DecimalText(__int128 raw, uint8_t scale) {
  std::string digits = Int128Text(raw < 0 ? -raw : raw);
  if (scale > 0) {
    if (digits.size() <= scale) digits.insert(0, scale + 1 - digits.size(), '0');
    digits.insert(digits.size() - scale, ".");
  }
  return raw < 0 ? "-" + digits : digits;
}

uint64_t EnumIndex(duckdb_vector v, duckdb_type physical, uint64_t row) {
  switch (physical) {
    case DUCKDB_TYPE_UTINYINT:
      return At<uint8_t>(v, row);
    case DUCKDB_TYPE_USMALLINT:
      return At<uint16_t>(v, row);
    default:
      return At<uint32_t>(v, row);
  }
}

// BIT: its first byte counts the padding bits that precede the value in the second.
std::string BitText(std::string_view bytes) {
  std::string out;
  if (bytes.empty()) return out;
  unsigned padding = static_cast<unsigned char>(bytes[0]);
  for (size_t i = 1; i < bytes.size(); ++i)
    for (int b = 7; b >= 0; --b) out += (bytes[i] >> b) & 1 ? '1' : '0';
  return out.substr(std::min<size_t>(padding, out.size()));
}

std::string UuidText(duckdb_hugeint h) {
  // DuckDB stores a UUID with its top bit flipped so that signed order is UUID order.
  uint64_t hi = static_cast<uint64_t>(h.upper) ^ (uint64_t{1} << 63), lo = h.lower;
  char buf[40];
  std::snprintf(buf, sizeof buf,
                "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64, hi >> 32,
                (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48, lo & uint64_t{0xffffffffffff});
  return buf;
}

// The text of a temporal, UUID or BIT cell (the kinds whose Value is a string).
std::string TextAt(duckdb_vector v, const TypeInfo& t, uint64_t row) {
  std::string out;
  switch (t.id) {
    case DUCKDB_TYPE_DATE:
      AppendDate(out, At<int32_t>(v, row));
      break;
    case DUCKDB_TYPE_TIME:
      AppendTime(out, At<int64_t>(v, row));
      break;
    case DUCKDB_TYPE_TIME_NS:
      AppendTimeNs(out, At<int64_t>(v, row));
      break;
    case DUCKDB_TYPE_TIME_TZ:
      AppendTimeTz(out, At<duckdb_time_tz>(v, row));
      break;
    case DUCKDB_TYPE_TIMESTAMP:
      AppendTimestamp(out, At<int64_t>(v, row));
      break;
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      AppendTimestamp(out, At<int64_t>(v, row));
      if (out.back() != 'y') out += 'Z';  // not after "infinity"
      break;
    case DUCKDB_TYPE_TIMESTAMP_S: {
      int64_t s = At<int64_t>(v, row);
      if (!duckdb_is_finite_timestamp_s(duckdb_timestamp_s{s}))
        return s > 0 ? "infinity" : "-infinity";
      AppendTimestamp(out, s * 1'000'000);
      break;
    }
    case DUCKDB_TYPE_TIMESTAMP_MS: {
      int64_t ms = At<int64_t>(v, row);
      if (!duckdb_is_finite_timestamp_ms(duckdb_timestamp_ms{ms}))
        return ms > 0 ? "infinity" : "-infinity";
      AppendTimestamp(out, ms * 1'000);
      break;
    }
    case DUCKDB_TYPE_TIMESTAMP_NS:
      AppendTimestampNs(out, At<int64_t>(v, row));
      break;
    case DUCKDB_TYPE_INTERVAL:
      AppendInterval(out, At<duckdb_interval>(v, row));
      break;
    case DUCKDB_TYPE_UUID:
      return UuidText(At<duckdb_hugeint>(v, row));
    case DUCKDB_TYPE_BIT:
      return BitText(StringAt(v, row));
    default:
      break;
  }
  return out;
}

}  // namespace

std::string_view StringAt(duckdb_vector v, uint64_t row) {
  auto* s = static_cast<duckdb_string_t*>(duckdb_vector_get_data(v)) + row;
  return {duckdb_string_t_data(s), duckdb_string_t_length(*s)};
}

Value ReadCell(duckdb_vector v, const TypeInfo& t, uint64_t row) {
  if (!IsValid(v, row)) return std::monostate{};
  switch (t.kind) {
    case ColumnType::Null:
      return std::monostate{};
    case ColumnType::Boolean:
      return At<bool>(v, row);
    case ColumnType::Integer:
      return IntegerAt(v, t.id, row);
    case ColumnType::Float:
      return t.id == DUCKDB_TYPE_FLOAT ? double{At<float>(v, row)} : At<double>(v, row);
    case ColumnType::Decimal:
      return static_cast<double>(DecimalRaw(v, t, row)) / std::pow(10.0, t.decimal_scale);
    case ColumnType::String:
      if (t.id == DUCKDB_TYPE_ENUM) {
        uint64_t i = EnumIndex(v, t.physical, row);
        return i < t.labels.size() ? t.labels[i] : std::string();
      }
      return std::string(StringAt(v, row));
    case ColumnType::Blob:
      if (t.id == DUCKDB_TYPE_BIT) return TextAt(v, t, row);
      return Blob{std::string(StringAt(v, row))};
    case ColumnType::List:
    case ColumnType::Struct:
    case ColumnType::Map: {
      std::string json;
      AppendJson(json, v, t, row);
      return json;
    }
    default:
      return TextAt(v, t, row);
  }
}

void AppendScalar(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  char buf[64];
  switch (t.kind) {
    case ColumnType::Decimal:
      out += DecimalText(DecimalRaw(v, t, row), t.decimal_scale);
      return;
    case ColumnType::Blob:  // JSON has no bytes: base64 text (BIT: its '0'/'1' text)
      if (t.id == DUCKDB_TYPE_BLOB) return AppendJsonString(out, Base64Encode(StringAt(v, row)));
      break;
    case ColumnType::Float: {
      // The shortest text that reads back as the same float or double (std::to_chars).
      double d = t.id == DUCKDB_TYPE_FLOAT ? At<float>(v, row) : At<double>(v, row);
      if (!std::isfinite(d)) {
        out += "null";  // JSON has no NaN or infinity (the viewer's reference writes null)
        return;
      }
      auto r = t.id == DUCKDB_TYPE_FLOAT ? std::to_chars(buf, buf + sizeof buf, At<float>(v, row))
                                         : std::to_chars(buf, buf + sizeof buf, d);
      out.append(buf, r.ptr);
      return;
    }
    default:
      break;
  }
  Value cell = ReadCell(v, t, row);
  if (const auto* b = std::get_if<bool>(&cell)) {
    out += *b ? "true" : "false";
  } else if (const auto* i = std::get_if<int64_t>(&cell)) {
    out += std::to_string(*i);
  } else if (const auto* s = std::get_if<std::string>(&cell)) {
    // Integers past int64 are digits: bare in JSON, as numbers.
    if (t.kind == ColumnType::Integer)
      out += *s;
    else
      AppendJsonString(out, *s);
  } else {
    out += "null";
  }
}

}  // namespace hangar::duckdb::internal
