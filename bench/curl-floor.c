/*
 * curl-floor: the libcurl floor for pushq's APNs sender.
 *
 * Drives libcurl's multi interface exactly as PushSender does — one multi handle and
 * one thread per HTTP/2 connection (CURLMOPT_MAX_HOST_CONNECTIONS=1, PIPEWAIT,
 * MAX_CONCURRENT_STREAMS=1000), pooled easy handles whose header lists are rewritten in
 * place, the same headers (authorization, apns-push-type, apns-topic, apns-priority,
 * apns-id; accept/content-type/expect removed), the same header callback (keeps
 * apns-id) — and nothing else: no queue, no result objects, no JSON.
 *
 * usage: curl-floor URL JWT CONNECTIONS STREAMS_PER_CONNECTION TOTAL CAFILE [TOPIC]
 * prints: "requests=N ok=N failed=N seconds=S rate=R cpu_us_per_req=C" (C: process CPU, user+sys,
 *         during the timed part, per request)
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

struct slot {
    CURL *easy;
    struct curl_slist *headers;
    char *id_node;          /* the apns-id node's string, rewritten per request */
    char apns_id[64];
    char url[512];
    char body[64];
    long body_len;
};

struct conn {
    int index;
    int streams;
    long total;             /* requests this connection sends */
    long ok, failed;
};

static const char *g_url, *g_jwt, *g_topic, *g_cafile;
static char *g_ca_blob;
static size_t g_ca_blob_len;

static size_t on_header(char *data, size_t size, size_t n, void *user) {
    struct slot *s = user;
    size_t len = size * n;
    if (len > 8 && (data[0] == 'a' || data[0] == 'A') && strncasecmp(data, "apns-id:", 8) == 0) {
        size_t v = len - 8;
        if (v > sizeof(s->apns_id) - 1) v = sizeof(s->apns_id) - 1;
        memcpy(s->apns_id, data + 8, v);
        s->apns_id[v] = 0;
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *user) {
    (void)data; (void)user;
    return size * n;
}

static struct curl_slist *append_placeholder(struct curl_slist *list, size_t capacity) {
    char *p = malloc(capacity);
    memset(p, 'x', capacity - 1);
    p[capacity - 1] = 0;
    list = curl_slist_append(list, p);
    free(p);
    return list;
}

static void slot_init(struct slot *s) {
    char auth[1200];
    s->easy = curl_easy_init();
    snprintf(auth, sizeof auth, "authorization: bearer %s", g_jwt);
    s->headers = curl_slist_append(NULL, auth);
    s->headers = curl_slist_append(s->headers, "apns-push-type: alert");
    char topic[600];
    snprintf(topic, sizeof topic, "apns-topic: %s", g_topic);
    s->headers = curl_slist_append(s->headers, topic);
    s->headers = curl_slist_append(s->headers, "apns-priority: 10");
    s->headers = append_placeholder(s->headers, 128);
    struct curl_slist *last = s->headers;
    while (last->next) last = last->next;
    s->id_node = last->data;
    s->headers = curl_slist_append(s->headers, "accept:");
    s->headers = curl_slist_append(s->headers, "content-type:");
    s->headers = curl_slist_append(s->headers, "expect:");
    strcpy(s->body, "{\"aps\":{\"alert\":\"bench\"}}");
    s->body_len = (long)strlen(s->body);

    CURL *e = s->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, s);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, s->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, s->body_len);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (g_ca_blob) {
        struct curl_blob blob = { g_ca_blob, g_ca_blob_len, CURL_BLOB_COPY };
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    }
}

static void slot_load(struct slot *s, long seq, int conn) {
    snprintf(s->url, sizeof s->url, "%s/3/device/%064lx", g_url, (unsigned long)(seq * 64 + conn));
    curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
    snprintf(s->id_node, 128, "apns-id: %08x-0000-4000-8000-%012lx", (unsigned)conn, (unsigned long)seq);
    s->apns_id[0] = 0;
}

static void *run_conn(void *arg) {
    struct conn *c = arg;
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, 1L);
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 1L);
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, 1L);
    curl_multi_setopt(m, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    struct slot *slots = calloc((size_t)c->streams, sizeof *slots);
    struct slot **free_list = calloc((size_t)c->streams, sizeof *free_list);
    int nfree = 0;
    for (int i = 0; i < c->streams; i++) { slot_init(&slots[i]); free_list[nfree++] = &slots[i]; }
    long started = 0, done = 0;
    while (done < c->total) {
        while (nfree > 0 && started < c->total) {
            struct slot *s = free_list[--nfree];
            slot_load(s, started++, c->index);
            curl_multi_add_handle(m, s->easy);
        }
        int running = 0;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            struct slot *s;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            long status = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            if (msg->data.result == CURLE_OK && status == 200) c->ok++; else c->failed++;
            curl_multi_remove_handle(m, s->easy);
            free_list[nfree++] = s;
            done++;
        }
        if (done < c->total && !(nfree > 0 && started < c->total))
            curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    for (int i = 0; i < c->streams; i++) { curl_easy_cleanup(slots[i].easy); curl_slist_free_all(slots[i].headers); }
    curl_multi_cleanup(m);
    free(slots);
    free(free_list);
    return NULL;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(2); }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s URL JWT CONNECTIONS STREAMS TOTAL CAFILE [TOPIC]\n", argv[0]);
        return 2;
    }
    g_url = argv[1];
    g_jwt = argv[2];
    int connections = atoi(argv[3]);
    int streams = atoi(argv[4]);
    long total = atol(argv[5]);
    g_cafile = argv[6];
    g_topic = argc > 7 ? argv[7] : "com.example.pushq.test";
    curl_global_init(CURL_GLOBAL_ALL);
    g_ca_blob = read_file(g_cafile, &g_ca_blob_len);

    struct conn *conns = calloc((size_t)connections, sizeof *conns);
    pthread_t *threads = calloc((size_t)connections, sizeof *threads);
    struct timespec t0, t1;
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < connections; i++) {
        conns[i].index = i;
        conns[i].streams = streams;
        conns[i].total = total / connections + (i < total % connections ? 1 : 0);
        pthread_create(&threads[i], NULL, run_conn, &conns[i]);
    }
    long ok = 0, failed = 0;
    for (int i = 0; i < connections; i++) {
        pthread_join(threads[i], NULL);
        ok += conns[i].ok;
        failed += conns[i].failed;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &r1);
    double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6
               + (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("requests=%ld ok=%ld failed=%ld seconds=%.3f rate=%.0f cpu_us_per_req=%.1f\n", ok + failed, ok, failed, seconds,
           (double)(ok + failed) / seconds, cpu / (double)(ok + failed));
    return failed == 0 ? 0 : 1;
}
