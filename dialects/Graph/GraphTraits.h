//===- GraphTraits.h - what passes ask of a graph op ------------*- C++ -*-===//
//
// The marker traits of GraphTraits.td: ops declare them in ODS, passes ask
// op->hasTrait<OpTrait::Fusible>() (see GraphTraits.td for what each one
// promises). They carry no code: they are facts, not behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHTRAITS_H
#define AMPC_DIALECTS_GRAPH_GRAPHTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace ampc::graph::OpTrait {

template <typename ConcreteType>
class Fusible : public mlir::OpTrait::TraitBase<ConcreteType, Fusible> {};

template <typename ConcreteType>
class Accumulating
    : public mlir::OpTrait::TraitBase<ConcreteType, Accumulating> {};

template <typename ConcreteType>
class WideCompute : public mlir::OpTrait::TraitBase<ConcreteType, WideCompute> {
};

template <typename ConcreteType>
class Backward : public mlir::OpTrait::TraitBase<ConcreteType, Backward> {};

template <typename ConcreteType>
class Optimizer : public mlir::OpTrait::TraitBase<ConcreteType, Optimizer> {};

} // namespace ampc::graph::OpTrait

#endif // AMPC_DIALECTS_GRAPH_GRAPHTRAITS_H
