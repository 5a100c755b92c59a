// The physical limit for a curl-based client: plain C on libcurl's multi interface, N
// transfers in flight, each easy handle re-added as soon as it completes (connections and
// handles reused). Usage: curl-multi <url> <in-flight> <seconds> [socket] [requests=N] [insecure] [http1|http2] [fresh]
// With "socket", it drives curl through curl_multi_socket_action over epoll, as Courier does;
// otherwise curl_multi_perform + curl_multi_poll. With "requests=N" it sends exactly N requests
// with no warm-up and ignores <seconds>: the fixed work that an instruction count needs
// (Benchmarks/scripts/instructions.py). "insecure" skips certificate checks (a self-signed test
// server); "http1" forces HTTP/1.1 (over TLS too); "http2" negotiates HTTP/2 and multiplexes
// every transfer on one connection (CURLPIPE_MULTIPLEX, CURLOPT_PIPEWAIT). "fresh" destroys each
// handle when its transfer completes and makes a new one: what a C program pays for safety on
// libcurl 7.84.0 to 8.0.1, where a reused handle lets a server crash it (curl/curl#11101), as
// Courier does on those versions.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

static size_t discard(char *ptr, size_t size, size_t n, void *user) {
    size_t *bytes = user;
    *bytes += size * n;
    return size * n;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int epfd;
static long timeout_ms = -1;

// Events registered with epoll and events curl wants, per descriptor. As Courier's EpollDriver
// does: libcurl 7.88 stops watching a kept-alive connection when its transfer ends and watches it
// again for the next, so a socket parked for reading stays registered (removed only if it fires
// while curl does not want it) instead of a DEL and an ADD per request.
#define MAX_FDS 65536
static unsigned registered[MAX_FDS], wanted[MAX_FDS];

static int on_socket(CURL *e, curl_socket_t s, int what, void *u, void *sp) {
    if (s < 0 || s >= MAX_FDS) return 0;
    struct epoll_event ev = {0};
    ev.data.fd = s;
    if (what == CURL_POLL_REMOVE) {
        wanted[s] = 0;
        if (registered[s] & EPOLLOUT) { epoll_ctl(epfd, EPOLL_CTL_DEL, s, NULL); registered[s] = 0; }
        return 0;
    }
    unsigned mask = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    wanted[s] = mask;
    if (mask == registered[s]) return 0;
    ev.events = mask;
    int rc = epoll_ctl(epfd, registered[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev);
    if (rc != 0) rc = epoll_ctl(epfd, registered[s] ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev); // a stale entry
    registered[s] = rc == 0 ? mask : 0;
    return 0;
}

static int on_timer(CURLM *m, long ms, void *u) { timeout_ms = ms; return 0; }

static CURL *new_handle(const char *url, size_t *bytes_out, struct curl_slist *headers, int insecure, int http_version) {
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, bytes_out);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (http_version == 1) curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    if (http_version == 2) {
        curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    }
    return h;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s url in-flight seconds [socket]\n", argv[0]); return 2; }
    const char *url = argv[1];
    int inflight = atoi(argv[2]);
    double seconds = atof(argv[3]);
    int socket_mode = 0;
    long total = 0; // requests=N: exactly N requests, no warm-up
    int insecure = 0, http_version = 0, fresh = 0; // 0: libcurl's default (HTTP/2 over TLS when offered)
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "socket") == 0) socket_mode = 1;
        else if (strcmp(argv[i], "insecure") == 0) insecure = 1;
        else if (strcmp(argv[i], "http1") == 0) http_version = 1;
        else if (strcmp(argv[i], "http2") == 0) http_version = 2;
        else if (strcmp(argv[i], "fresh") == 0) fresh = 1;
        else if (strncmp(argv[i], "requests=", 9) == 0) total = atol(argv[i] + 9);
    }
    curl_global_init(CURL_GLOBAL_ALL);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, http_version == 2 ? 1L : (long)inflight);
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    /* As many HTTP/2 streams per connection as Courier asks for (its default
       maxConcurrentStreamsPerConnection): libcurl's own default of 100 would cap one connection at
       100 / RTT requests per second, a limit of the setting, not of C. */
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    if (socket_mode) {
        epfd = epoll_create1(0);
        curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    }
    // The same request bytes Courier sends: its default User-Agent, as a header line (the
    // cheaper of libcurl's two ways; CURLOPT_USERAGENT formats the line twice per request).
    struct curl_slist *headers = curl_slist_append(NULL, "User-Agent: Courier/0.1.0 (Linux; Swift 6.3)");
    size_t bytes = 0;
    if (total > 0 && inflight > total) inflight = (int)total;
    CURL **handles = calloc(inflight, sizeof(CURL *));
    long issued = inflight;
    for (int i = 0; i < inflight; i++) {
        handles[i] = new_handle(url, &bytes, headers, insecure, http_version);
        curl_multi_add_handle(multi, handles[i]);
    }
    long done = 0, errors = 0, measured = 0;
    double start = now(), warm = start + 1.0, end = warm + seconds, cpu0 = 0, t0 = 0;
    int running = 1, warmed = total > 0;
    if (warmed) { cpu0 = cpu(); t0 = start; }
    struct epoll_event events[256];
    while (1) {
        double t = now();
        if (!warmed && t >= warm) { warmed = 1; measured = 0; cpu0 = cpu(); t0 = t; }
        if (total > 0 ? done >= total : t >= end) break;
        if (socket_mode) {
            int n = epoll_wait(epfd, events, 256, timeout_ms < 0 ? 100 : (int)timeout_ms);
            if (n == 0 || timeout_ms == 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
            for (int i = 0; i < n; i++) {
                int fd = events[i].data.fd;
                if (fd >= 0 && fd < MAX_FDS && wanted[fd] == 0) { // a parked connection fired: curl finds it dead on reuse
                    epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
                    registered[fd] = 0;
                    continue;
                }
                // As Courier's EpollDriver and curl's own poll loop: an error or hang-up on a socket
                // curl reads from is readable (curl reads and meets it); on one it only writes to, an error.
                unsigned ev = events[i].events, bad = ev & (EPOLLERR | EPOLLHUP);
                int mask = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0);
                if (bad && fd >= 0 && fd < MAX_FDS) mask |= wanted[fd] & EPOLLIN ? CURL_CSELECT_IN : CURL_CSELECT_ERR;
                curl_multi_socket_action(multi, events[i].data.fd, mask, &running);
            }
        } else {
            curl_multi_perform(multi, &running);
        }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *e = msg->easy_handle;
            long code = 0;
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
            if (msg->data.result != CURLE_OK || code != 200) errors++;
            done++; measured++;
            curl_multi_remove_handle(multi, e);
            if (fresh) {
                curl_easy_cleanup(e);
                e = new_handle(url, &bytes, headers, insecure, http_version);
            }
            if (total == 0 || issued < total) { issued++; curl_multi_add_handle(multi, e); }
            else if (fresh) curl_easy_cleanup(e);
        }
        if (!socket_mode) curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    double wall = now() - t0, used = cpu() - cpu0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("requests/s %.0f  cpu-us/request %.1f  peak-rss-MiB %.1f  requests %ld  errors %ld\n",
           measured / wall, used / measured * 1e6, ru.ru_maxrss / 1024.0, measured, errors);
    return 0;
}
