//===- GradientOpInterface.cpp - ops that know their gradient -------------===//
#include "dialects/Graph/GradientOpInterface.h"

#include "dialects/Graph/GradientOpInterface.cpp.inc"
