#include "ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace ptxjit::runtime {

struct ThreadPool::Job {
  void *Context;
  ptxjit_task_fn Task;
  uint8_t *Closure;
  int32_t Next, End;
  int Running = 0;
  int32_t Error = 0;
};

ThreadPool &ThreadPool::instance() {
  static ThreadPool pool([] {
    const char *env = std::getenv("PTXJIT_NUM_THREADS");
    int n = env ? std::atoi(env) : static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, n);
  }());
  return pool;
}

ThreadPool::ThreadPool(int threads) : Threads(threads) {
  if (threads > 1)
    Starter = std::thread([this] {
      for (int i = 1; i < Threads; ++i) {
        std::thread worker([this] { workerLoop(); }); // returns at once if shutting down
        std::lock_guard<std::mutex> lock(Mutex);
        Workers.push_back(std::move(worker));
        if (ShuttingDown)
          return;
      }
    });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(Mutex);
    ShuttingDown = true;
  }
  WorkAvailable.notify_all();
  if (Starter.joinable())
    Starter.join();
  for (std::thread &t : Workers) // no longer changing: the starter is done
    t.join();
}

void ThreadPool::dequeue(Job &job) {
  Jobs.erase(std::remove(Jobs.begin(), Jobs.end(), &job), Jobs.end());
  Queued.store(static_cast<int>(Jobs.size()), std::memory_order_relaxed);
}

void ThreadPool::work(Job &job, std::unique_lock<std::mutex> &lock) {
  while (job.Next < job.End && job.Error == 0) {
    int32_t index = job.Next++;
    if (job.Next == job.End)
      dequeue(job);
    ++job.Running;
    lock.unlock();
    int32_t result = job.Task(job.Context, index, job.Closure);
    lock.lock();
    --job.Running;
    if (result != 0 && job.Error == 0) {
      job.Error = result;
      dequeue(job);
    }
  }
  if (job.Running == 0)
    JobFinished.notify_all();
}

void ThreadPool::workerLoop() {
  std::unique_lock<std::mutex> lock(Mutex);
  while (true) {
    if (Jobs.empty() && !ShuttingDown) {
      // Spin a little before sleeping: the next parallel loop of a pipeline (or of the next
      // realize) usually comes within microseconds, and waking a sleeping thread takes tens.
      lock.unlock();
      auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
      while (Queued.load(std::memory_order_relaxed) == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      lock.lock();
    }
    WorkAvailable.wait(lock, [this] { return ShuttingDown || !Jobs.empty(); });
    if (ShuttingDown)
      return;
    work(*Jobs.front(), lock);
  }
}

int32_t ThreadPool::parallel_for(void *context, ptxjit_task_fn task, int32_t min, int32_t extent, uint8_t *closure) {
  if (extent <= 0)
    return 0;
  Job job{context, task, closure, min, min + extent};
  std::unique_lock<std::mutex> lock(Mutex);
  if (Threads > 1 && extent > 1) {
    Jobs.push_back(&job);
    Queued.store(static_cast<int>(Jobs.size()), std::memory_order_relaxed);
    WorkAvailable.notify_all();
  }
  work(job, lock);
  JobFinished.wait(lock, [&] { return job.Running == 0 && (job.Next >= job.End || job.Error != 0); });
  return job.Error;
}

} // namespace ptxjit::runtime
