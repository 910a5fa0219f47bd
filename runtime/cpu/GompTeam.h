//===- GompTeam.h - libgomp's C entry points the CPU backend calls --------===//
//
// The CPU kernels and oneDNN share one OpenMP team (Parallel.h). Debian's
// oneDNN is built on libgomp, so the backend calls libgomp directly through
// its C ABI instead of compiling `#pragma omp`: clang (the sanitizer build)
// would compile the pragmas for its own runtime, libomp, and two OpenMP
// runtimes in one process would each start a team.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_GOMPTEAM_H
#define AMPC_RUNTIME_CPU_GOMPTEAM_H

extern "C" {
// What `#pragma omp parallel num_threads(n)` compiles to with GCC: runs
// fn(data) on a team of n threads (the caller is thread 0) and returns when
// all are done. flags 0: no proc_bind clause.
void GOMP_parallel(void (*fn)(void *), void *data, unsigned numThreads,
                   unsigned flags);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
void omp_set_num_threads(int threads);
}

#endif // AMPC_RUNTIME_CPU_GOMPTEAM_H
