//===- PassEnums.cpp - the choices pass options name ----------------------===//
#include "compiler/Transforms/PassEnums.h"

#include "compiler/Transforms/PassEnums.cpp.inc"
