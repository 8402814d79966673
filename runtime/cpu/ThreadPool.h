#ifndef PTXJIT_RUNTIME_CPU_THREADPOOL_H
#define PTXJIT_RUNTIME_CPU_THREADPOOL_H

// The process's worker threads for parallel loops. The thread that starts a loop works on it
// too, so nested parallel loops cannot deadlock. PTXJIT_NUM_THREADS sets the thread count
// (the calling thread included; default: the number of hardware threads).

#include "RuntimeInterface.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ptxjit::runtime {

class ThreadPool {
public:
  static ThreadPool &instance();
  ~ThreadPool();

  int32_t parallel_for(void *context, ptxjit_task_fn task, int32_t min, int32_t extent, uint8_t *closure);
  int num_threads() const { return static_cast<int>(Workers.size()) + 1; }

private:
  explicit ThreadPool(int threads);
  struct Job;
  void workerLoop();
  void dequeue(Job &job); // with Lock held
  // Runs iterations of `job` until none are left to claim. Called with Lock held; returns with it held.
  void work(Job &job, std::unique_lock<std::mutex> &lock);

  std::mutex Mutex; // guards Jobs, ShuttingDown and every Job's counters
  std::condition_variable WorkAvailable, JobFinished;
  std::deque<Job *> Jobs; // jobs with iterations left to claim
  std::atomic<int> Queued{0}; // Jobs.size(), for workers to poll without the lock
  bool ShuttingDown = false;
  std::vector<std::thread> Workers;
};

} // namespace ptxjit::runtime

#endif
