//===- OptimizerUpdateOpInterface.h - parameter updates ---------*- C++ -*-===//
#ifndef AMPC_DIALECTS_GRAPH_OPTIMIZERUPDATEOPINTERFACE_H
#define AMPC_DIALECTS_GRAPH_OPTIMIZERUPDATEOPINTERFACE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "dialects/Graph/OptimizerUpdateOpInterface.h.inc"

#endif // AMPC_DIALECTS_GRAPH_OPTIMIZERUPDATEOPINTERFACE_H
