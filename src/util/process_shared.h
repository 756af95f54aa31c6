#pragma once
// One T for a process and the children it forks: a private instance until create_shared() puts
// a fresh one in an anonymous shared mapping (the master, before it forks its workers), which
// this process and its future children then share. T must hold only address-free state
// (lock-free atomics). Used by the worker's scoreboard and its new-row window.
#include <sys/mman.h>

#include <new>
#include <stdexcept>

namespace connector::util {

template <typename T>
class ProcessShared {
 public:
  T& get() {
    if (current_ == nullptr) {
      static T private_instance;
      current_ = &private_instance;
    }
    return *current_;
  }

  T& create_shared() {
    void* memory =
        ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::runtime_error("cannot map shared memory");
    current_ = new (memory) T();
    return *current_;
  }

 private:
  T* current_ = nullptr;
};

}  // namespace connector::util
