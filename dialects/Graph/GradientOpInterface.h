//===- GradientOpInterface.h - ops that know their gradient -----*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_GRADIENTOPINTERFACE_H
#define AMPC_DIALECTS_GRAPH_GRADIENTOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialects/Graph/GradientOpInterface.h.inc"

#endif // AMPC_DIALECTS_GRAPH_GRADIENTOPINTERFACE_H
