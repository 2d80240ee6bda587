// callgrind-values.sh preloads this into the benchmarks it runs under valgrind. An `async` main ends in libdispatch's
// dispatch_main(), which parks the main thread with pthread_exit() inside a thread-specific-data destructor; valgrind
// 3.19 (Debian 12's) then crashes as the next thread starts ("the 'impossible' happened"). This dispatch_main()
// serves the main queue on the main thread instead, the way a run loop does: wait on the queue's event fd, drain.
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

void dispatch_main(void) {
    int handle = _dispatch_get_main_queue_handle_4CF();
    for (;;) {
        struct pollfd ready = {handle, POLLIN, 0};
        (void)poll(&ready, 1, -1);
        uint64_t count;
        (void)read(handle, &count, sizeof count);
        _dispatch_main_queue_callback_4CF(0);
    }
}
