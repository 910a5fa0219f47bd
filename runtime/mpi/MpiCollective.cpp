//===- MpiCollective.cpp - the processes of an mpirun launch --------------===//

#include "runtime/mpi/MpiCollective.h"

#include "runtime/Half.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ampc::rt::mpi {
namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

/// The tag of the messages that tell rank 0 a rank is at a collective (the
/// collectives have their own channel).
constexpr int kArrivalTag = 7301;

using Clock = std::chrono::steady_clock;

/// How long a wait yields its core between polls before it sleeps between
/// them: a step's exchange is over within it, and each poll moves it on,
/// where a sleep would hold it up.
constexpr std::chrono::milliseconds kYieldFor(20);

std::string secondsText(double seconds) {
  return std::to_string(static_cast<int64_t>(boundedSeconds(seconds)));
}

} // namespace

/// Who is at which collective round. Every other rank tells rank 0 when it
/// arrives at a round, and again every `interval` while it waits in it: a
/// rank that hangs, before the round or in the middle of it, falls silent.
/// Rank 0 reads the messages as it waits and, on a timeout, names the
/// ranks it has not heard from in this round for three intervals.
struct MpiCollective::Arrivals {
  int rank, size;
  int64_t round = 0;
  /// Rank 0: the last round each rank said it is at, and when it said so.
  std::vector<int64_t> at;
  std::vector<Clock::time_point> heard;
  /// Another rank: its messages in flight (a deque keeps each buffer in
  /// place until its send completes).
  std::deque<std::pair<int64_t, MPI_Request>> sending;

  Arrivals(int rank, int size)
      : rank(rank), size(size), at(static_cast<size_t>(size), 0),
        heard(static_cast<size_t>(size), Clock::now()),
        finished(static_cast<size_t>(size), false) {}

  /// Before MPI_Finalize, which must find no message on its way: the other
  /// ranks send kDone and see their sends complete; rank 0 reads until it
  /// has every rank's kDone. Bounded by `seconds`, for a rank that died.
  void drain(double seconds) {
    auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    if (rank != 0 && !send(kDone))
      return;
    for (;;) {
      bool done = true;
      if (rank == 0) {
        if (!take())
          return;
        for (int r = 1; r < size; ++r)
          done &= finished[static_cast<size_t>(r)];
      } else {
        for (auto &[value, request] : sending) {
          int complete = 1;
          if (request != MPI_REQUEST_NULL)
            MPI_Test(&request, &complete, MPI_STATUS_IGNORE);
          done &= complete != 0;
        }
      }
      if (done || Clock::now() > deadline)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto &[value, request] : sending)
      if (request != MPI_REQUEST_NULL)
        MPI_Request_free(&request);
    sending.clear();
  }

  /// Rank 0: the ranks whose last message (kDone) has come.
  std::vector<bool> finished;
  /// The round another rank sends last, when it finalises: nothing it sent
  /// before is then still on its way (messages between two ranks arrive in
  /// order).
  static constexpr int64_t kDone = -1;

  /// Another rank tells rank 0 it is at the current round.
  Status tell() { return send(round); }

  Status send(int64_t value) {
    while (!sending.empty()) {
      int done = 0;
      MPI_Test(&sending.front().second, &done, MPI_STATUS_IGNORE);
      if (!done)
        break;
      sending.pop_front();
    }
    auto &[buffer, request] = sending.emplace_back(value, MPI_REQUEST_NULL);
    if (int rc = MPI_Isend(&buffer, 1, MPI_INT64_T, 0, kArrivalTag,
                           MPI_COMM_WORLD, &request);
        rc != MPI_SUCCESS)
      return Status::error("telling rank 0 this rank arrived: " + mpiError(rc));
    return Status::ok();
  }

  /// Rank 0 reads the messages that have come.
  Status take() {
    for (;;) {
      int waiting = 0;
      MPI_Status status;
      if (int rc = MPI_Iprobe(MPI_ANY_SOURCE, kArrivalTag, MPI_COMM_WORLD,
                              &waiting, &status);
          rc != MPI_SUCCESS)
        return Status::error("reading the ranks' arrivals: " + mpiError(rc));
      if (!waiting)
        return Status::ok();
      int64_t round = 0;
      if (int rc = MPI_Recv(&round, 1, MPI_INT64_T, status.MPI_SOURCE,
                            kArrivalTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          rc != MPI_SUCCESS)
        return Status::error("reading the ranks' arrivals: " + mpiError(rc));
      auto r = static_cast<size_t>(status.MPI_SOURCE);
      if (round == kDone) {
        finished[r] = true;
        continue;
      }
      at[r] = std::max(at[r], round);
      heard[r] = Clock::now();
    }
  }

  /// The next collective round starts.
  Status arrive() {
    ++round;
    return rank == 0 ? take() : tell();
  }

  /// Whom a wait of this round that timed out was for: on rank 0, the
  /// ranks not at it or silent for three intervals; elsewhere, rank 0 knows.
  std::string late(std::chrono::duration<double> interval) {
    if (rank != 0)
      return "the other ranks (rank 0 names the ones missing)";
    (void)take();
    std::string names;
    int count = 0;
    for (int r = 1; r < size; ++r) {
      auto i = static_cast<size_t>(r);
      if (at[i] < round || Clock::now() - heard[i] > 3 * interval)
        names += (count++ ? ", " : "") + std::to_string(r);
    }
    if (!count)
      return "the other ranks";
    return (count == 1 ? "rank " : "ranks ") + names +
           (count == 1 ? ", which has" : ", which have") +
           " stopped before or in it";
  }

  /// Completes `request` of this round, polling until `timeout` seconds
  /// have passed; `what` names the wait in the error.
  Status wait(MPI_Request &request, double timeout, const char *what) {
    timeout = boundedSeconds(timeout);
    auto start = Clock::now();
    auto deadline = start + std::chrono::duration<double>(timeout);
    // Often enough that a rank that stops is silent for three intervals
    // before the deadline.
    auto interval =
        std::chrono::duration<double>(std::clamp(timeout / 6, 0.01, 1.0));
    auto next = start + interval;
    int done = 0;
    // Spins briefly (a loopback all-reduce takes microseconds), then yields
    // the core, which another rank of the same machine may need to arrive.
    for (int polls = 0;; ++polls) {
      if (int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
          rc != MPI_SUCCESS)
        return Status::error(std::string(what) + ": " + mpiError(rc));
      if (done)
        return Status::ok();
      auto now = Clock::now();
      if (now > deadline)
        return Status::error(std::string(what) + " waited " +
                             secondsText(timeout) + " s for " + late(interval) +
                             " (one died or hangs; --collective-timeout)");
      if (now > next) {
        AMPC_RETURN_IF_ERROR(rank == 0 ? take() : tell());
        next = now + interval;
      }
      if (polls > 1000) {
        if (now - start < kYieldFor)
          std::this_thread::yield();
        else
          std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
};

/// A thread that runs jobs one at a time, in the order they are given: the
/// only thread of the process that calls MPI (it initialises it, so it is
/// MPI's main thread for MPI_THREAD_FUNNELED).
class MpiCollective::Caller {
public:
  Caller() : thread_([this] { serve(); }) {}
  ~Caller() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }

  std::future<Status> submit(std::function<Status()> job) {
    std::packaged_task<Status()> task(std::move(job));
    std::future<Status> done = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(task));
    }
    ready_.notify_one();
    return done;
  }

private:
  void serve() {
    for (;;) {
      std::packaged_task<Status()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty())
          return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<Status()>> jobs_;
  bool stopping_ = false;
  std::thread thread_; // last: starts once the members above exist
};

/// startMean's slicing and the slices it receives, kept by the collective
/// (caller_'s thread only): an exchange that timed out may still write
/// into them, and a step's buckets reuse them.
struct MpiCollective::Slicing {
  std::vector<int> counts, displs, mine, at;
  std::vector<uint16_t> slices;
  std::vector<float> sum, next; // the f32 blocks the mean is taken in
};

MpiCollective::MpiCollective(double timeout)
    : timeout_(timeout), slicing_(new Slicing), caller_(new Caller) {}

std::future<Status> MpiCollective::round(std::function<Status()> job) {
  return caller_->submit([this, job = std::move(job)] {
    // After a failed round (a rank died or hangs) the rounds queued behind
    // it fail at once instead of each waiting out the timeout again.
    if (broken_)
      return Status::error("a collective round not started: an earlier one "
                           "of this rank failed");
    if (left_)
      return Status::error("a collective round not started: this rank has "
                           "left the ranks (MPI is finalised)");
    // Every round starts with this rank telling rank 0 it is there.
    Status s = arrivals_->arrive();
    if (s)
      s = job();
    broken_ = !s;
    return s;
  });
}

Status MpiCollective::create(double timeoutSeconds, const std::string &tool,
                             std::unique_ptr<MpiCollective> &out) {
  std::unique_ptr<MpiCollective> c(new MpiCollective(timeoutSeconds));
  int rank = 0, size = 1;
  std::future<Status> joined = c->caller_->submit([&]() -> Status {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      if (int rc =
              MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
          rc != MPI_SUCCESS)
        return Status::error("MPI_Init: " + mpiError(rc));
    }
    // Errors come back as codes, to be reported with the rank, not as
    // MPI's own abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return Status::ok();
  });
  // MPI_Init waits for every rank of the launch (OpenMPI's start-up fence)
  // and has no timeout: a rank that dies or hangs before it would hang the
  // others. This process ends after the timeout, which makes mpirun end
  // the job.
  if (joined.wait_for(std::chrono::duration<double>(
          boundedSeconds(timeoutSeconds))) != std::future_status::ready) {
    std::string who = "?";
    for (const char *v : {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"})
      if (const char *r = std::getenv(v))
        who = r;
    std::string message = tool + ": rank " + who + ": error: MPI_Init waited " +
                          secondsText(timeoutSeconds) +
                          " s for the other ranks to start (one died or "
                          "hangs before it; --collective-timeout)\n";
    std::fputs(message.c_str(), stderr);
    std::fflush(stderr);
    std::_Exit(1);
  }
  AMPC_RETURN_IF_ERROR(joined.get());
  c->rank_ = rank;
  c->size_ = size;
  c->arrivals_ = std::make_unique<Arrivals>(rank, size);
  out = std::move(c);
  return Status::ok();
}

MpiCollective::~MpiCollective() { leave(); }

void MpiCollective::leave() {
  finishAll();
  if (!arrivals_) // MPI_Init failed
    return;
  caller_
      ->submit([this] {
        // After a failed round an all-reduce may still be under way into
        // a buffer that is gone: no MPI call may move it on. The process
        // is ending (the tools abort the job first).
        if (broken_ || left_)
          return Status::ok();
        left_ = true;
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) {
          arrivals_->drain(std::min(timeout_, 10.0));
          MPI_Finalize();
        }
        return Status::ok();
      })
      .wait();
}

Status MpiCollective::start(const void *data, size_t count,
                            std::function<Status()> exchange) {
  if (count > static_cast<size_t>(INT_MAX))
    return Status::error("an all-reduce of " + std::to_string(count) +
                         " values, over MPI's 2^31 - 1 per call");
  auto start = Clock::now();
  started_.emplace_back(data, round(std::move(exchange)));
  allReduceSeconds_ +=
      std::chrono::duration<double>(Clock::now() - start).count();
  return Status::ok();
}

Status MpiCollective::startSum(float *data, size_t count) {
  return start(data, count, [this, data, count] {
    MPI_Request request;
    if (int rc = MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                                MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
        rc != MPI_SUCCESS)
      return Status::error("the gradient all-reduce: " + mpiError(rc));
    return arrivals_->wait(request, timeout_, "the gradient all-reduce");
  });
}

Status MpiCollective::startMean(uint16_t *data, size_t count, DType dtype) {
  return start(
      data, count, [this, data, count, dtype] {
        // Rank r owns the slice [r*count/N, (r+1)*count/N): it receives every
        // rank's values of it, takes their mean, and all gather the slices.
        auto begun = Clock::now();
        int n = size_, me = rank_;
        // The collective's: an exchange that timed out may still write
        // into them.
        std::vector<int> &counts = slicing_->counts, &displs = slicing_->displs,
                         &mine = slicing_->mine, &at = slicing_->at;
        counts.resize(n);
        displs.resize(n);
        mine.resize(n);
        at.resize(n);
        for (int r = 0; r < n; ++r) {
          displs[r] = static_cast<int>(count * r / n);
          counts[r] = static_cast<int>(count * (r + 1) / n) - displs[r];
        }
        int own = counts[me];
        for (int r = 0; r < n; ++r) {
          mine[r] = own;
          at[r] = r * own;
        }
        std::vector<uint16_t> &slices = slicing_->slices;
        slices.resize(static_cast<size_t>(own) * n);
        MPI_Request request;
        if (int rc = MPI_Ialltoallv(
                data, counts.data(), displs.data(), MPI_UINT16_T, slices.data(),
                mine.data(), at.data(), MPI_UINT16_T, MPI_COMM_WORLD, &request);
            rc != MPI_SUCCESS)
          return Status::error("the gradient all-reduce: " + mpiError(rc));
        AMPC_RETURN_IF_ERROR(
            arrivals_->wait(request, timeout_, "the gradient all-reduce"));
        // Widen each rank's values of the slice and add them in rank
        // order, in blocks (the bulk conversions are vectorised).
        bool half = dtype == DType::F16;
        const float inverse = static_cast<float>(1.0 / static_cast<double>(n));
        uint16_t *out = data + displs[me];
        constexpr int kBlock = 4096;
        std::vector<float> &sum = slicing_->sum, &next = slicing_->next;
        sum.resize(kBlock);
        next.resize(kBlock);
        for (int b = 0; b < own; b += kBlock) {
          int len = std::min(kBlock, own - b);
          for (int r = 0; r < n; ++r) {
            const uint16_t *in =
                slices.data() + static_cast<size_t>(r) * own + b;
            float *to = r == 0 ? sum.data() : next.data();
            if (half)
              halfToFloat(in, to, static_cast<size_t>(len));
            else
              bfloatToFloat(in, to, static_cast<size_t>(len));
            if (r > 0)
              for (int i = 0; i < len; ++i)
                sum[i] += next[i];
          }
          for (int i = 0; i < len; ++i)
            sum[i] *= inverse;
          if (half)
            floatToHalf(sum.data(), out + b, static_cast<size_t>(len));
          else
            floatToBFloat(sum.data(), out + b, static_cast<size_t>(len));
        }
        if (int rc = MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data,
                                     counts.data(), displs.data(), MPI_UINT16_T,
                                     MPI_COMM_WORLD, &request);
            rc != MPI_SUCCESS)
          return Status::error("the gradient all-reduce: " + mpiError(rc));
        // Both moves within one timeout.
        double left =
            timeout_ -
            std::chrono::duration<double>(Clock::now() - begun).count();
        return arrivals_->wait(request, std::max(left, 0.0),
                               "the gradient all-reduce");
      });
}

Status MpiCollective::finish(const void *data) {
  auto it = std::find_if(started_.begin(), started_.end(),
                         [&](const auto &s) { return s.first == data; });
  if (it == started_.end())
    return Status::error("the gradient all-reduce: no exchange was started on "
                         "this buffer");
  auto start = Clock::now();
  Status s = it->second.get();
  started_.erase(it);
  allReduceSeconds_ +=
      std::chrono::duration<double>(Clock::now() - start).count();
  return s;
}

void MpiCollective::finishAll() {
  for (auto &[data, done] : started_)
    done.wait();
  started_.clear();
}

Status MpiCollective::waitForAll(double timeoutSeconds) {
  return round([this, timeoutSeconds] {
           MPI_Request request;
           if (int rc = MPI_Ibarrier(MPI_COMM_WORLD, &request);
               rc != MPI_SUCCESS)
             return Status::error("waiting for rank 0: " + mpiError(rc));
           return arrivals_->wait(request, timeoutSeconds,
                                  "waiting for rank 0");
         })
      .get();
}

Status MpiCollective::sumOverRanks(double *values, size_t count) {
  if (count > static_cast<size_t>(INT_MAX))
    return Status::error("a sum over the ranks of " + std::to_string(count) +
                         " values, over MPI's 2^31 - 1 per call");
  return round([this, values, count] {
           MPI_Request request;
           if (int rc = MPI_Iallreduce(MPI_IN_PLACE, values,
                                       static_cast<int>(count), MPI_DOUBLE,
                                       MPI_SUM, MPI_COMM_WORLD, &request);
               rc != MPI_SUCCESS)
             return Status::error("a sum over the ranks: " + mpiError(rc));
           return arrivals_->wait(request, timeout_, "a sum over the ranks");
         })
      .get();
}

Status MpiCollective::broadcast(void *data, size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX))
    return Status::error("a broadcast of " + std::to_string(bytes) +
                         " bytes, over MPI's 2^31 - 1 per call");
  return round([this, data, bytes] {
           MPI_Request request;
           if (int rc = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, 0,
                                   MPI_COMM_WORLD, &request);
               rc != MPI_SUCCESS)
             return Status::error("a broadcast from rank 0: " + mpiError(rc));
           return arrivals_->wait(request, timeout_, "a broadcast from rank 0");
         })
      .get();
}

void MpiCollective::abortAll(int code) {
  // From this thread, not the MPI caller's, which may be inside a wait:
  // OpenMPI's abort ends the job from any thread, and nothing after it
  // needs MPI. After leave() this process is no rank to end others.
  if (!left_)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // namespace ampc::rt::mpi
