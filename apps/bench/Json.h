#ifndef PTXJIT_APPS_BENCH_JSON_H
#define PTXJIT_APPS_BENCH_JSON_H

// The few JSON pieces the benchmark and its peers write and read back.

#include <string>

namespace bench {

/// A number as JSON; NaN and infinities (a measurement that failed or was skipped) are null.
std::string json_number(double v);

/// `s` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
std::string json_string(const std::string &s);

/// The number after "key": in a JSON text; NaN when the key is absent or its value is null.
double json_field(const std::string &text, const std::string &key);

} // namespace bench

#endif
