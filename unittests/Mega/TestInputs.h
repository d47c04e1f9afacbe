//===- TestInputs.h - model configs of test/Mega/Inputs for unit tests ----===//

#ifndef TAWA_UNITTESTS_MEGA_TESTINPUTS_H
#define TAWA_UNITTESTS_MEGA_TESTINPUTS_H

#include "tawa/Mega/ModelConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace tawa::mega {

/// The config test/Mega/Inputs/`name`; a failure to read it fails the test.
inline ModelConfig loadInputConfig(const std::string &name) {
  ModelConfig c;
  std::string error;
  EXPECT_TRUE(
      loadModelConfig(std::string(TAWA_MEGA_INPUTS) + "/" + name, c, error))
      << error;
  return c;
}

} // namespace tawa::mega

#endif // TAWA_UNITTESTS_MEGA_TESTINPUTS_H
