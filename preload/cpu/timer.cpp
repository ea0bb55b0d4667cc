#include "cpu/timer.h"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "cpu/sampler.h"
#include "stream/owned_file.h"

namespace prof {
namespace {

// Itimer: one clock for the process, armed by its first thread.
std::atomic<bool> g_itimer_armed{false};

// The CPU clock of thread `tid` of this process (the kernel's encoding,
// which pthread_getcpuclockid() makes from a pthread_t).
clockid_t thread_clock(pid_t tid) { return clockid_t((~unsigned(tid) << 3) | 6); }

uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

int open_task_clock(uint64_t interval_ns, pid_t tid) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = interval_ns;
  attr.disabled = 1;
  // XXX: the clock still counts the thread's kernel time, but signals only
  // while the thread runs its own code: a signal raised in a system call
  // about to sleep (poll, nanosleep, ...) makes it fail with EINTR at once,
  // SA_RESTART or not. The kernel time is weighed into the next sample
  // (sample_weight()).
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

bool arm_perf(int sig, uint64_t interval_ns, SampleSlot *slot) {
  const pid_t tid = pid_t(slot->tid);
  int fd = open_task_clock(interval_ns, tid);
  if (fd < 0) return false;
  fd = move_fd_high(fd);
  f_owner_ex owner{F_OWNER_TID, tid};
  if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, sig) != 0 ||
      fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 ||
      ioctl(fd, PERF_EVENT_IOC_ID, &slot->perf_id) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return false;
  }
  slot->perf_fd = fd;
  if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    const int e = errno;
    slot->perf_fd = -1;
    close(fd);
    errno = e;
    return false;
  }
  return true;
}

bool arm_timer(int sig, uint64_t interval_ns, SampleSlot *slot) {
  sigevent sev{};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = sig;
  sev._sigev_un._tid = pid_t(slot->tid);  // sigev_notify_thread_id (glibc < 2.35 names it so)
  timer_t timer;
  if (timer_create(thread_clock(pid_t(slot->tid)), &sev, &timer) != 0) return false;
  itimerspec spec{};
  spec.it_interval.tv_sec = time_t(interval_ns / 1000000000u);
  spec.it_interval.tv_nsec = long(interval_ns % 1000000000u);
  spec.it_value = spec.it_interval;
  slot->timer = timer;
  slot->has_timer = true;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    const int e = errno;
    slot->has_timer = false;
    timer_delete(timer);
    errno = e;
    return false;
  }
  return true;
}

bool arm_itimer(uint64_t interval_ns) {
  itimerval v{};
  v.it_interval.tv_sec = time_t(interval_ns / 1000000000u);
  v.it_interval.tv_usec = suseconds_t(interval_ns % 1000000000u / 1000);
  v.it_value = v.it_interval;
  return setitimer(ITIMER_PROF, &v, nullptr) == 0;
}

}  // namespace

const char *backend_name(SamplerBackend b) {
  switch (b) {
    case SamplerBackend::Perf: return "perf task-clock";
    case SamplerBackend::Timer: return "timer_create thread CPU clock";
    case SamplerBackend::Itimer: return "ITIMER_PROF";
  }
  return "?";
}

bool arm_thread(SamplerBackend b, int sig, uint64_t interval_ns, SampleSlot *slot) {
  slot->weighed_cpu_ns = clock_ns(thread_clock(pid_t(slot->tid)));
  switch (b) {
    case SamplerBackend::Perf: return arm_perf(sig, interval_ns, slot);
    case SamplerBackend::Timer: return arm_timer(sig, interval_ns, slot);
    case SamplerBackend::Itimer: {
      return g_itimer_armed.exchange(true) || arm_itimer(interval_ns);
    }
  }
  return false;
}

bool close_perf_event(SampleSlot *slot) {
  uint64_t id;
  const bool ours = ioctl(slot->perf_fd, PERF_EVENT_IOC_ID, &id) == 0 && id == slot->perf_id;
  if (ours) close(slot->perf_fd);
  slot->perf_fd = -1;
  return ours;
}

void disarm_thread(SamplerBackend b, SampleSlot *slot) {
  if (b == SamplerBackend::Perf && slot->perf_fd >= 0) {
    if (!close_perf_event(slot)) g_cpu.clocks_closed.fetch_add(1, std::memory_order_relaxed);
  } else if (b == SamplerBackend::Timer && slot->has_timer) {
    slot->has_timer = false;
    timer_delete(slot->timer);
  }
}

void disarm_process(SamplerBackend b) {
  if (b != SamplerBackend::Itimer) return;
  itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);
  g_itimer_armed.store(false);
}

bool pick_backend(CpuBackend wanted, int sig, uint64_t interval_ns, SampleSlot *slot,
                  SamplerBackend *picked) {
  static const SamplerBackend kOrder[] = {SamplerBackend::Perf, SamplerBackend::Timer,
                                          SamplerBackend::Itimer};
  for (SamplerBackend b : kOrder) {
    if (wanted != CpuBackend::Auto && uint8_t(wanted) != uint8_t(b)) continue;
    // ITIMER_PROF sends SIGPROF, whatever the handler waits for.
    if (b == SamplerBackend::Itimer && sig != SIGPROF) continue;
    if (arm_thread(b, sig, interval_ns, slot)) {
      *picked = b;
      return true;
    }
  }
  return false;
}

bool is_sampler_signal(SamplerBackend b, const siginfo_t *info, const SampleSlot *slot) {
  switch (b) {
    case SamplerBackend::Perf: return slot && info->si_fd == slot->perf_fd && info->si_code > 0;
    case SamplerBackend::Timer: return info->si_code == SI_TIMER;
    case SamplerBackend::Itimer: return info->si_code == SI_KERNEL;
  }
  return false;
}

uint64_t sample_weight(SampleSlot *slot, uint64_t interval_ns) {
  // XXX: no clock says well how much CPU time a signal stands for:
  // ITIMER_PROF gives no overrun count and goes to whichever thread runs,
  // weights from timer_create's si_overrun left one of two busy threads with
  // 228 of its 800 samples under load, and a perf task-clock whose timer
  // fires late folds the periods missed into one signal (874 samples for 1.0
  // CPU-s beside a 10 kHz test). The interrupted thread's CPU time not yet
  // weighed is the weight (at least 1, borrowed from its next sample), so
  // each thread's total follows its own CPU time (with weigh_thread_tail()
  // at its end).
  const uint64_t w = unweighed_intervals(slot, interval_ns);
  slot->weighed_cpu_ns += (w ? 0 : interval_ns);
  return w ? w : 1;
}

uint64_t unweighed_intervals(SampleSlot *slot, uint64_t interval_ns) {
  const uint64_t now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  const uint64_t w = now > slot->weighed_cpu_ns ? (now - slot->weighed_cpu_ns) / interval_ns : 0;
  slot->weighed_cpu_ns += w * interval_ns;
  return w;
}

}  // namespace prof
