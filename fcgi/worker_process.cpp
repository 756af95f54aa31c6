#include "worker_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <ctime>

#include "db/connection.h"
#include "util/access_log.h"
#include "util/log.h"
#include "worker_pool.h"

namespace connector::fcgi {

int run_worker_process(int listen_fd, const config::Config& config, metrics::ProcessSlot& slot,
                       pool::ProcessControl& control) {
  // If the master dies, so do we (as a drain), rather than serve on unsupervised.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() == 1) return 0;
  slot.pid.store(static_cast<std::int32_t>(::getpid()));
  ::unsetenv("NOTIFY_SOCKET");  // only the master speaks to systemd
  try {
    db::init_driver();
    const util::AccessLog access_log(config.worker.access_log);
    WorkerPool pool(listen_fd, config, slot, control, access_log);
    pool.start();

    // SIGTERM and SIGINT stay blocked (inherited from the master) and are taken here.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    const timespec tick{0, 100'000'000};
    bool signalled = false;
    while (!signalled && !pool.recycle_due()) {
      signalled = ::sigtimedwait(&stop_signals, nullptr, &tick) > 0;
    }
    pool.request_stop();
    pool.join();
    return pool.recycle_due() && !signalled ? kRecycleExitStatus : 0;
  } catch (const std::exception& e) {
    util::log_error(std::string("worker process: ") + e.what());
    return 1;
  }
}

}  // namespace connector::fcgi
