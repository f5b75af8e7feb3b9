#ifndef PUSHQ_CCURL_SHIM_H
#define PUSHQ_CCURL_SHIM_H
#include <curl/curl.h>
#include <signal.h>

/* Typed wrappers for libcurl's variadic calls, which Swift cannot call directly. */
static inline CURLcode ccurl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_write_cb(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
static inline CURLcode ccurl_easy_setopt_header_cb(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
static inline CURLcode ccurl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode ccurl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLcode ccurl_easy_setopt_blob(CURL *h, CURLoption o, struct curl_blob *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_opensocket_cb(CURL *h, curl_opensocket_callback cb) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb); }
static inline CURLcode ccurl_easy_setopt_closesocket_cb(CURL *h, curl_closesocket_callback cb) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, cb); }
/* The running library's version data (CURLVERSION_NOW is a macro Swift cannot see). */
static inline curl_version_info_data *ccurl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
static inline CURLcode ccurl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }
/* CURLMsg's `data` is a union; these read its members without Swift touching the union. */
static inline CURLcode ccurl_msg_result(const CURLMsg *m) { return m->data.result; }
/* Ignores SIGPIPE for the whole process unless the program installed a handler of its own:
   returns 1 when SIGPIPE is now ignored (or was), 0 when a handler stands, -1 if sigaction failed.
   Swift cannot compare the SIG_DFL / SIG_IGN macros with a handler, so the check lives here. */
static inline int ccurl_ignore_sigpipe(void) {
    struct sigaction old;
    if (sigaction(SIGPIPE, NULL, &old) != 0) return -1;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) return 1;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) return 0;
    struct sigaction ignore;
    sigemptyset(&ignore.sa_mask);
    ignore.sa_flags = 0;
    ignore.sa_handler = SIG_IGN;
    return sigaction(SIGPIPE, &ignore, NULL) == 0 ? 1 : -1;
}
#endif
