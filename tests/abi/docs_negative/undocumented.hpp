/// \file
/// tests/abi/docs_negative/undocumented.hpp — input of the sdk.docs test: a documented file with
/// an undocumented class, which the SDK's Doxygen configuration must reject (warnings are fatal).
#pragma once

namespace litmus_docs_negative {

class Undocumented {
 public:
  int value() const { return 0; }
};

}  // namespace litmus_docs_negative
