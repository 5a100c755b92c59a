// Typed, non-variadic wrappers over libcurl's variadic setopt/getinfo calls, plus the
// few Linux primitives the event loop needs (epoll's event struct is packed on x86_64,
// which Swift imports poorly, so it is flattened here), and malloc_usable_size, which
// BufferedBody reads its capacity from.
#ifndef COURIER_CCURL_SHIM_H
#define COURIER_CCURL_SHIM_H

#include <curl/curl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>

// MARK: - Function pointer types for curl callbacks

typedef size_t (*courier_data_cb)(char *buffer, size_t size, size_t nitems, void *userdata);
typedef int (*courier_xferinfo_cb)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                   curl_off_t ultotal, curl_off_t ulnow);
typedef int (*courier_seek_cb)(void *userdata, curl_off_t offset, int origin);
typedef curl_socket_t (*courier_opensocket_cb)(void *userdata, curlsocktype purpose,
                                               struct curl_sockaddr *address);
typedef int (*courier_closesocket_cb)(void *userdata, curl_socket_t fd);
typedef int (*courier_prereq_cb)(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port);
typedef int (*courier_resolver_start_cb)(void *resolver_state, void *reserved, void *userdata);
typedef int (*courier_socket_cb)(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp);
typedef int (*courier_timer_cb)(CURLM *multi, long timeout_ms, void *userp);

// MARK: - Easy handle options

static inline CURLcode courier_easy_setopt_long(CURL *h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode courier_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode courier_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode courier_easy_setopt_data_cb(CURL *h, CURLoption o, courier_data_cb cb) {
    return curl_easy_setopt(h, o, cb);
}
static inline CURLcode courier_easy_setopt_xferinfo_cb(CURL *h, courier_xferinfo_cb cb) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb);
}
static inline CURLcode courier_easy_setopt_seek_cb(CURL *h, courier_seek_cb cb) {
    return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, cb);
}
static inline CURLcode courier_easy_setopt_opensocket_cb(CURL *h, courier_opensocket_cb cb) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb);
}
static inline CURLcode courier_easy_setopt_prereq_cb(CURL *h, courier_prereq_cb cb) {
    return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, cb);
}
static inline CURLcode courier_easy_setopt_closesocket_cb(CURL *h, courier_closesocket_cb cb) {
    return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, cb);
}
static inline CURLcode courier_easy_setopt_resolver_start_cb(CURL *h, courier_resolver_start_cb cb) {
    return curl_easy_setopt(h, CURLOPT_RESOLVER_START_FUNCTION, cb);
}

/* Limits a handle to http and https, redirects included: libcurl checks a redirect's scheme
   against this set as well as the redirect set. The bitmask, not CURLOPT_PROTOCOLS_STR: the
   string is parsed against libcurl's scheme table on every setopt (about 680 instructions,
   callgrind, libcurl 7.88.1), paid per transfer where each transfer has a fresh handle.
   The bitmask is deprecated since 7.85.0 but kept working by libcurl's ABI promise, and it
   exists on every version (CURLOPT_PROTOCOLS_STR only from 7.85.0). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const CURLoption courier_option_protocols = CURLOPT_PROTOCOLS;
#pragma GCC diagnostic pop
static inline CURLcode courier_easy_allow_http_only(CURL *h) {
    return curl_easy_setopt(h, courier_option_protocols, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
}

// MARK: - Features

/* LIBCURL_VERSION_NUM of the library loaded at run time (0xXXYYZZ), which may differ from the headers'. */
static inline unsigned int courier_curl_version_num(void) {
    return curl_version_info(CURLVERSION_NOW)->version_num;
}

// MARK: - Easy handle info

static inline CURLcode courier_easy_getinfo_long(CURL *h, CURLINFO i, long *out) {
    return curl_easy_getinfo(h, i, out);
}
static inline CURLcode courier_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *out) {
    return curl_easy_getinfo(h, i, out);
}
static inline CURLcode courier_easy_getinfo_string(CURL *h, CURLINFO i, char **out) {
    return curl_easy_getinfo(h, i, out);
}
static inline CURLcode courier_easy_getinfo_ptr(CURL *h, CURLINFO i, void **out) {
    return curl_easy_getinfo(h, i, out);
}

// MARK: - Multi handle options

static inline CURLMcode courier_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return curl_multi_setopt(m, o, v);
}
static inline CURLMcode courier_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) {
    return curl_multi_setopt(m, o, v);
}
static inline CURLMcode courier_multi_setopt_socket_cb(CURLM *m, courier_socket_cb cb) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, cb);
}
static inline CURLMcode courier_multi_setopt_timer_cb(CURLM *m, courier_timer_cb cb) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, cb);
}

// MARK: - Share handle

/// A share handle holding TLS sessions only, or NULL. No lock callbacks: every handle that
/// uses it lives on one event loop thread.
static inline CURLSH *courier_share_tls_sessions(void) {
    CURLSH *share = curl_share_init();
    if (share && curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
        curl_share_cleanup(share);
        return NULL;
    }
    return share;
}

// MARK: - Multi messages

/// Reads one CURLMSG_DONE message; returns the easy handle or NULL when none is left.
static inline CURL *courier_multi_next_done(CURLM *m, CURLcode *result) {
    int left = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg == CURLMSG_DONE) {
            *result = msg->data.result;
            return msg->easy_handle;
        }
    }
    return NULL;
}

// MARK: - Constants that Swift cannot import from function-like macros

static const long courier_pause_cont = CURLPAUSE_CONT;
static const long courier_pause_recv = CURLPAUSE_RECV;
static const long courier_pause_send = CURLPAUSE_SEND;
static const size_t courier_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const size_t courier_readfunc_pause = CURL_READFUNC_PAUSE;
static const size_t courier_readfunc_abort = CURL_READFUNC_ABORT;
static const curl_socket_t courier_socket_timeout = CURL_SOCKET_TIMEOUT;
static const curl_socket_t courier_socket_bad = CURL_SOCKET_BAD;
static const curl_off_t courier_content_length_unknown = -1;

// MARK: - epoll and eventfd

typedef struct {
    int fd;
    uint32_t events;
} courier_event;

static inline int courier_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = 0;
    ev.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &ev);
}

/// epoll_wait into a flat, non-packed array; retries EINTR.
static inline int courier_epoll_wait(int epfd, courier_event *out, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n;
    do {
        n = epoll_wait(epfd, evs, max, timeout_ms);
    } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        out[i].fd = evs[i].data.fd;
        out[i].events = evs[i].events;
    }
    return n;
}

static inline int courier_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t r;
    do { r = write(fd, &one, sizeof one); } while (r < 0 && errno == EINTR);
    return (int)r;
}

static inline void courier_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t r;
    do { r = read(fd, &value, sizeof value); } while (r < 0 && errno == EINTR);
}

static inline int courier_errno(void) { return errno; }

// Declared here because glibc exposes it only under _GNU_SOURCE.
extern int pthread_setname_np(pthread_t thread, const char *name);
static inline void courier_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

static inline int courier_socket_cloexec(int family, int type, int protocol) {
    return socket(family, type | SOCK_CLOEXEC, protocol);
}

#endif
