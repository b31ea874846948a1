// Recycled fixed-size blocks for what every launch makes and drops: its Completion (with the
// shared_ptr's control block), its GPU work, its CPU job. The launch path aims at zero heap
// allocations once warm (tests/runtime/launch_alloc_test.cpp counts them); a freed block goes on a
// free list that the next launch takes it from, on any thread. Private to the runtime.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace tessera::runtime {

// The free list of blocks of `Size` bytes aligned to `Align`, one per process. Leaked on purpose:
// a block may be given back during static destruction (a storage released by a static).
template <std::size_t Size, std::size_t Align>
class BlockPool {
 public:
  static void* take() {
    State& s = state();
    {
      std::lock_guard lock(s.mu);
      if (Node* n = s.free) {
        s.free = n->next;
        --s.count;
        return n;
      }
    }
    return ::operator new (kBytes, std::align_val_t{kAlign});
  }
  static void give(void* p) noexcept {
    State& s = state();
    {
      std::lock_guard lock(s.mu);
      // Bounded: after a burst of many launches in flight, the rest goes back to the heap.
      if (s.count < kKeep) {
        s.free = new (p) Node{s.free};
        ++s.count;
        return;
      }
    }
    ::operator delete (p, std::align_val_t{kAlign});
  }

 private:
  struct Node {
    Node* next;
  };
  static constexpr std::size_t kAlign = Align < alignof(Node) ? alignof(Node) : Align;
  static constexpr std::size_t kBytes = Size < sizeof(Node) ? sizeof(Node) : Size;
  static constexpr std::size_t kKeep = 4096;
  struct State {
    std::mutex mu;
    Node* free = nullptr;
    std::size_t count = 0;
  };
  static State& state() {
    static State* s = new State;
    return *s;
  }
};

// A standard allocator over BlockPool, for std::allocate_shared: single objects come from the
// pool of their size, arrays from the heap.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n == 1) return static_cast<T*>(BlockPool<sizeof(T), alignof(T)>::take());
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1) return BlockPool<sizeof(T), alignof(T)>::give(p);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

// For classes allocated with new/delete (a launch's DeviceWork, owned by a unique_ptr): derive to
// take the blocks from the pool.
template <class T>
struct PooledNew {
  static void* operator new(std::size_t n) {
    return n == sizeof(T) ? BlockPool<sizeof(T), alignof(T)>::take() : ::operator new(n);
  }
  static void operator delete(void* p, std::size_t n) noexcept {
    if (n == sizeof(T)) return BlockPool<sizeof(T), alignof(T)>::give(p);
    ::operator delete(p);
  }
};

}  // namespace tessera::runtime

namespace tessera::runtime {

// Spare std::vector buffers of one element type, shared by every thread: a launch's lists
// (CheckedLaunch's arguments and storages) take one and give it back once the launch has
// started (a CPU launch's arguments, once its worker ran it), so that a repeated launch reuses
// their memory instead of allocating. Leaked on purpose, like BlockPool's lists.
// Each thread keeps one spare in front of the shared list, with no lock: a list taken and given
// back on the launching thread (every list of a GPU launch, the storages of a CPU one) never
// touches the shared list's lock (four lock pairs a launch before).
template <class T>
class SpareVectors {
 public:
  // An empty vector, with the capacity of one given back earlier if there is one.
  static std::vector<T> take() {
    if (!t_front_gone && t_front.v.capacity() != 0) return std::move(t_front.v);
    State& s = state();
    std::lock_guard lock(s.mu);
    if (s.spare.empty()) return {};
    std::vector<T> v = std::move(s.spare.back());
    s.spare.pop_back();
    return v;
  }
  // Keeps v's memory for a later take() (its elements are destroyed here). Never throws.
  static void give(std::vector<T>&& v) noexcept {
    if (v.capacity() == 0) return;
    v.clear();
    if (!t_front_gone && t_front.v.capacity() == 0) {
      t_front.v = std::move(v);
      return;
    }
    State& s = state();
    std::lock_guard lock(s.mu);
    // Bounded (the list's own memory is reserved once): the rest goes back to the heap.
    if (s.spare.size() < kKeep) s.spare.push_back(std::move(v));
  }

 private:
  static constexpr std::size_t kKeep = 1024;
  struct State {
    State() { spare.reserve(kKeep); }
    std::mutex mu;
    std::vector<std::vector<T>> spare;
  };
  static State& state() {
    static State* s = new State;
    return *s;
  }
  // This thread's spare. Once the thread is ending and it is destroyed, t_front_gone (trivially
  // destructible, so still readable) sends every take and give to the shared list.
  struct Front {
    std::vector<T> v;
    ~Front() { t_front_gone = true; }
  };
  static inline thread_local Front t_front;
  static inline thread_local bool t_front_gone = false;
};

}  // namespace tessera::runtime
