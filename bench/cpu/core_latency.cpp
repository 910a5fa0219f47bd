//===- core_latency.cpp - how far apart two CPUs are, in nanoseconds ------===//
//
// Two threads, pinned to two CPUs, pass one cache line back and forth and
// the median time of a round trip is printed. On a virtual machine the
// host decides where the guest's CPUs run: two vCPUs on cores that share
// an L3 answer in tens of nanoseconds, two on different chiplets (AMD's
// CCDs) or sockets in hundreds, and every kernel that hands data from one
// thread to the other pays that difference. bench/amp_cpu.py runs this
// before and after each timed run to say which placement it ran in.
//
// usage: ampc-core-latency [CPU_A CPU_B [ROUND_TRIPS]]   (default 0 1 20000)
// prints: "cpu 0 <-> cpu 1: 58.2 ns per round trip"; exit status 1 with a
// message on stderr when a CPU cannot be used or does not answer.
//
//===----------------------------------------------------------------------===//
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// A side that waits this long for the other gives up: a CPU the host never
// runs would otherwise hang the benchmark that called us.
constexpr auto kPatience = std::chrono::seconds(5);
constexpr int kRepeats = 5;

struct alignas(64) Line {
  std::atomic<int64_t> value{0};
};

struct Shared {
  Line line;
  int64_t roundTrips = 0;
  int cpu = 0;
  int error = 0;         // pthread_setaffinity_np's, in the partner
  bool timedOut = false; // the partner waited kPatience for a ping
};

bool parseInt(const char *text, long lo, long hi, long &out) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

int pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Spins until `line` holds `want`; false when kPatience passes first (the
// clock is read every 4096 spins only, to keep the loop a load).
bool await(const Line &line, int64_t want) {
  auto deadline = Clock::now() + kPatience;
  for (uint32_t spins = 1;; ++spins) {
    if (line.value.load(std::memory_order_acquire) == want)
      return true;
    if (spins % 4096 == 0 && Clock::now() > deadline)
      return false;
  }
}

// The partner answers each odd value (a ping) with the next even one.
void *partner(void *arg) {
  auto &s = *static_cast<Shared *>(arg);
  if ((s.error = pin(s.cpu)))
    return nullptr;
  for (int r = 0; r < kRepeats; ++r)
    for (int64_t i = 0; i < s.roundTrips; ++i) {
      int64_t ping = (r * s.roundTrips + i) * 2 + 1;
      if (!await(s.line, ping)) {
        s.timedOut = true;
        return nullptr;
      }
      s.line.value.store(ping + 1, std::memory_order_release);
    }
  return nullptr;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "ampc-core-latency: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  long a = 0, b = 1, trips = 20000;
  if (argc != 1 && argc != 3 && argc != 4)
    return fail("usage: ampc-core-latency [CPU_A CPU_B [ROUND_TRIPS]]");
  if (argc >= 3 && (!parseInt(argv[1], 0, CPU_SETSIZE - 1, a) ||
                    !parseInt(argv[2], 0, CPU_SETSIZE - 1, b)))
    return fail("CPU_A and CPU_B must be CPU numbers from 0 to " +
                std::to_string(CPU_SETSIZE - 1));
  if (argc == 4 && !parseInt(argv[3], 1, 100000000, trips))
    return fail(std::string("ROUND_TRIPS must be 1 to 100000000, not '") +
                argv[3] + "'");
  if (a == b)
    return fail("CPU_A and CPU_B are both " + std::to_string(a) +
                ": a round trip needs two CPUs");
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed))
    return fail(std::string("sched_getaffinity: ") + std::strerror(errno));
  for (long cpu : {a, b})
    if (!CPU_ISSET(cpu, &allowed))
      return fail("cpu " + std::to_string(cpu) +
                  " is not one this process may run on (see `taskset -p $$` "
                  "or lscpu)");

  Shared s;
  s.roundTrips = trips;
  s.cpu = static_cast<int>(b);
  if (int err = pin(static_cast<int>(a)))
    return fail("cannot pin to cpu " + std::to_string(a) + ": " +
                std::strerror(err));
  pthread_t thread;
  if (int err = pthread_create(&thread, nullptr, &partner, &s))
    return fail(std::string("pthread_create: ") + std::strerror(err));

  std::vector<double> nsPerTrip;
  bool answered = true;
  for (int r = 0; r < kRepeats && answered; ++r) {
    auto t0 = Clock::now();
    for (int64_t i = 0; i < trips; ++i) {
      int64_t ping = (r * trips + i) * 2 + 1;
      s.line.value.store(ping, std::memory_order_release);
      if (!await(s.line, ping + 1)) {
        answered = false;
        break;
      }
    }
    std::chrono::duration<double, std::nano> took = Clock::now() - t0;
    nsPerTrip.push_back(took.count() / static_cast<double>(trips));
  }
  if (!answered) // The partner may still wait for a ping: let it time out.
    s.line.value.store(-1, std::memory_order_release);
  if (int err = pthread_join(thread, nullptr))
    return fail(std::string("pthread_join: ") + std::strerror(err));
  if (s.error)
    return fail("cannot pin to cpu " + std::to_string(b) + ": " +
                std::strerror(s.error));
  if (!answered || s.timedOut)
    return fail("cpu " + std::to_string(answered ? a : b) +
                " did not answer within 5 s");
  std::sort(nsPerTrip.begin(), nsPerTrip.end());
  std::printf("cpu %ld <-> cpu %ld: %.1f ns per round trip\n", a, b,
              nsPerTrip[kRepeats / 2]);
  return 0;
}
