// delayline: a userspace link between two network namespaces that delays every packet.
//
// This kernel has no netem, so latency and jitter are made here: two TUN devices, one in each
// namespace, and this process between them. A packet read from one device is written to the
// other after the one-way delay (± jitter, uniformly). Departures in a direction never overtake
// each other (a queue, not a scatter), as on a real path where jitter comes from queues.
// Bandwidth (tbf), loss (nftables) and link flaps (ip link set down) are added by Netem/netem.sh
// on the TUN devices themselves.
//
//   delayline NS_A DEV_A NS_B DEV_B DELAY_MS JITTER_MS [SEED]
//
// The devices must exist (`ip -n NS tuntap add dev DEV mode tun`); this attaches to them. Runs
// until SIGTERM or SIGINT; prints "ready" on stdout once both are attached, and on exit the
// packets forwarded and dropped (queue full, or the far device down) in each direction.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_PACKET 65536
#define QUEUE_SLOTS 8192 // per direction: ~12 MB of 1500-byte packets, far above any BDP here

typedef struct {
    uint64_t due;
    uint32_t length;
    unsigned char data[1600];
} Slot;

typedef struct {
    int from, to;
    Slot *slots;
    size_t head, count;
    uint64_t last_due;
    uint64_t forwarded, dropped_full, dropped_write, oversize;
} Direction;

static volatile sig_atomic_t stopping = 0;
static void on_signal(int signal_number) { (void)signal_number; stopping = 1; }

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// xorshift64*: reproducible jitter from the seed.
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

// Opens DEV inside namespace NS (its fd stays bound to that namespace's device).
static int attach(const char *ns, const char *dev) {
    char path[256];
    snprintf(path, sizeof path, "/var/run/netns/%s", ns);
    int own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int target = open(path, O_RDONLY | O_CLOEXEC);
    if (own < 0 || target < 0 || setns(target, CLONE_NEWNET) != 0) {
        fprintf(stderr, "delayline: cannot enter namespace %s: %s\n", ns, strerror(errno));
        exit(2);
    }
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(request.ifr_name, dev, IFNAMSIZ - 1);
    if (fd < 0 || ioctl(fd, TUNSETIFF, &request) != 0) {
        fprintf(stderr, "delayline: cannot attach to %s in %s: %s\n", dev, ns, strerror(errno));
        exit(2);
    }
    if (setns(own, CLONE_NEWNET) != 0) {
        fprintf(stderr, "delayline: cannot return to the first namespace: %s\n", strerror(errno));
        exit(2);
    }
    close(own);
    close(target);
    return fd;
}

static uint64_t delay_ns, jitter_ns;

static void receive(Direction *d, unsigned char *buffer) {
    for (;;) {
        ssize_t n = read(d->from, buffer, MAX_PACKET);
        if (n <= 0) return; // EAGAIN: drained
        if ((size_t)n > sizeof d->slots[0].data) { d->oversize++; continue; }
        if (d->count == QUEUE_SLOTS) { d->dropped_full++; continue; }
        double offset = jitter_ns ? (uniform() * 2 - 1) * (double)jitter_ns : 0;
        uint64_t due = now_ns() + (uint64_t)((double)delay_ns + offset);
        if (due < d->last_due) due = d->last_due; // FIFO: no overtaking
        d->last_due = due;
        Slot *slot = &d->slots[(d->head + d->count) % QUEUE_SLOTS];
        slot->due = due;
        slot->length = (uint32_t)n;
        memcpy(slot->data, buffer, (size_t)n);
        d->count++;
    }
}

// Sends what is due; returns nanoseconds until the next departure (or UINT64_MAX).
static uint64_t send_due(Direction *d) {
    uint64_t now = now_ns();
    while (d->count > 0) {
        Slot *slot = &d->slots[d->head];
        if (slot->due > now) return slot->due - now;
        if (write(d->to, slot->data, slot->length) == (ssize_t)slot->length) d->forwarded++;
        else d->dropped_write++; // the far link is down (EIO): the packet is lost, as on a cut cable
        d->head = (d->head + 1) % QUEUE_SLOTS;
        d->count--;
    }
    return UINT64_MAX;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: delayline NS_A DEV_A NS_B DEV_B DELAY_MS JITTER_MS [SEED]\n");
        return 64;
    }
    delay_ns = (uint64_t)(atof(argv[5]) * 1e6);
    jitter_ns = (uint64_t)(atof(argv[6]) * 1e6);
    if (jitter_ns > delay_ns) jitter_ns = delay_ns;
    if (argc > 7) rng_state += strtoull(argv[7], NULL, 10) * 0xD1B54A32D192ED03ull;
    if (rng_state == 0) rng_state = 1; // xorshift's one fixed point
    int a = attach(argv[1], argv[2]);
    int b = attach(argv[3], argv[4]);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    Direction ab = {.from = a, .to = b}, ba = {.from = b, .to = a};
    ab.slots = malloc(sizeof(Slot) * QUEUE_SLOTS);
    ba.slots = malloc(sizeof(Slot) * QUEUE_SLOTS);
    unsigned char *buffer = malloc(MAX_PACKET);
    if (!ab.slots || !ba.slots || !buffer) return 70;
    printf("ready\n");
    fflush(stdout);
    while (!stopping) {
        uint64_t wait_ab = send_due(&ab), wait_ba = send_due(&ba);
        uint64_t wait = wait_ab < wait_ba ? wait_ab : wait_ba;
        struct pollfd fds[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        struct timespec timeout = {.tv_sec = 1, .tv_nsec = 0};
        if (wait != UINT64_MAX) { timeout.tv_sec = (time_t)(wait / 1000000000ull); timeout.tv_nsec = (long)(wait % 1000000000ull); }
        int ready = ppoll(fds, 2, &timeout, NULL);
        if (ready < 0 && errno != EINTR) { perror("delayline: ppoll"); return 1; }
        if (ready > 0) {
            if (fds[0].revents & POLLIN) receive(&ab, buffer);
            if (fds[1].revents & POLLIN) receive(&ba, buffer);
        }
    }
    fprintf(stderr, "delayline: %s→%s forwarded %llu, dropped %llu (queue) %llu (link down); %s→%s forwarded %llu, dropped %llu (queue) %llu (link down)\n",
            argv[1], argv[3], (unsigned long long)ab.forwarded, (unsigned long long)ab.dropped_full, (unsigned long long)ab.dropped_write,
            argv[3], argv[1], (unsigned long long)ba.forwarded, (unsigned long long)ba.dropped_full, (unsigned long long)ba.dropped_write);
    return 0;
}
