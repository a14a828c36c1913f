// Implementation detail of status.h: variadic message building.
#pragma once

#include <sstream>

namespace nxrt {

template <class... Parts>
Status make_error(StatusCode code, Parts&&... parts) {
  std::ostringstream stream;
  (stream << ... << std::forward<Parts>(parts));
  return Status(code, stream.str());
}

}  // namespace nxrt
