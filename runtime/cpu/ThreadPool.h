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

private:
  explicit ThreadPool(int threads);
  struct Job;
  void workerLoop();
  void dequeue(Job &job); // with Lock held
  // Runs iterations of `job` until none are left to claim. Called with Lock held; returns with it held.
  void work(Job &job, std::unique_lock<std::mutex> &lock);

  std::mutex Mutex; // guards Jobs, ShuttingDown, Workers and every Job's counters
  std::condition_variable WorkAvailable, JobFinished;
  std::deque<Job *> Jobs; // jobs with iterations left to claim
  std::atomic<int> Queued{0}; // Jobs.size(), for workers to poll without the lock
  bool ShuttingDown = false;
  const int Threads; // the calling thread included
  // Started by Starter, one after another, while the first loop already runs on the calling
  // thread: starting 15 threads took half a millisecond of a process's first realize.
  std::vector<std::thread> Workers;
  std::thread Starter;
};

} // namespace ptxjit::runtime

#endif
