/*
 * checkload: a closed-loop HTTP/1.1 keep-alive load generator that checks every answer byte for byte.
 *
 * ServerBench's query rows run it beside wrk. wrk checks answers through a Lua `response` hook, which builds a Lua
 * table of every header and a Lua string of every body: on this two-core machine, where the load generator shares
 * the cores with the server it measures, that check costs more CPU per answer than nginx spends serving it, and
 * it is charged to every contender's rate. checkload does the same check (status 200, the exact body, and an
 * optional header with an exact value) with a compare of the bytes it has already read, so that a row measures the
 * server rather than the checker.
 *
 *   checkload -c CONNECTIONS -t THREADS -d SECONDS -r REQUEST_FILE -e BODY_FILE [-a "Name: value"] HOST PORT
 *
 * REQUEST_FILE holds the whole request as sent (request line, headers, blank line, body); every connection sends
 * it, waits for the whole answer, checks it and sends it again. An answer must carry Content-Length (chunked
 * answers are counted as errors). It prints one line in the shape ServerBench's wrk script prints:
 *
 *   SERVERBENCH requests=N seconds=S wrong=W errors=E
 *
 * requests counts every whole answer received before the turn's end, wrong the 200 answers whose body or checked
 * header differs (or whose checked header appears twice), errors the answers with another status, the unreadable
 * answers, the broken connections and the answers awaited longer than -T SECONDS (default 1; also at the end, so a
 * connection stalled for the whole turn is counted). A connection the server closes is opened again, as wrk does
 * (an error when an answer was cut). Only 127.0.0.1/localhost targets are meant; the host is used as given.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct connection {
    int fd;
    size_t sent;          /* bytes of the request written so far */
    char *buffer;         /* the answer's bytes read so far */
    size_t length, capacity;
    long headerEnd;       /* offset of the body, or -1 while the head is incomplete */
    long bodyLength;
    double sentAt;        /* when the request went out (or the connection was opened) */
    int closing;          /* the answer said `Connection: close` */
};

struct worker {
    pthread_t thread;
    int connections;
    long requests, wrong, errors;
};

static const char *request, *expected, *checkedName, *checkedValue;
static size_t requestLength, expectedLength, checkedNameLength;
static struct sockaddr_storage address;
static socklen_t addressLength;
static atomic_int stopping;
static pthread_barrier_t started;
static double timeout = 1.0;  /* seconds an answer may take before it counts as an error */

static double now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "checkload: %s: %s\n", what, strerror(errno));
    exit(1);
}

static char *readFile(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) fail(path);
    size_t capacity = 4096, used = 0;
    char *bytes = malloc(capacity);
    if (!bytes) fail("malloc");
    size_t count;
    while ((count = fread(bytes + used, 1, capacity - used, file)) > 0) {
        used += count;
        if (used == capacity) {
            capacity *= 2;
            bytes = realloc(bytes, capacity);
            if (!bytes) fail("realloc");
        }
    }
    fclose(file);
    *length = used;
    return bytes;
}

static int openConnection(void) {
    int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&address, addressLength) < 0 && errno != EINPROGRESS) fail("connect");
    return fd;
}

/* Writes what is left of the request; returns 0 when all of it is written, 1 when the socket is full, -1 on error. */
static int sendRequest(struct connection *connection) {
    while (connection->sent < requestLength) {
        ssize_t count =
            send(connection->fd, request + connection->sent, requestLength - connection->sent, MSG_NOSIGNAL);
        if (count < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
            return -1;
        }
        connection->sent += (size_t)count;
    }
    return 0;
}

/* The value of header `name` in the head [start, end), or NULL when it is missing or appears more than once (a
   doubled Content-Length is a broken answer, a doubled Access-Control-Allow-Origin one a browser refuses);
   *valueLength is set. */
static const char *header(const char *start, const char *end, const char *name, size_t nameLength,
                          size_t *valueLength) {
    const char *found = NULL;
    const char *line = memchr(start, '\n', (size_t)(end - start));  /* skip the status line */
    while (line && line + 1 < end) {
        line += 1;
        const char *lineEnd = memchr(line, '\n', (size_t)(end - line));
        if (!lineEnd) return NULL;
        const char *colon = memchr(line, ':', (size_t)(lineEnd - line));
        if (colon && (size_t)(colon - line) == nameLength && strncasecmp(line, name, nameLength) == 0) {
            const char *value = colon + 1;
            const char *valueEnd = lineEnd;
            while (value < valueEnd && (*value == ' ' || *value == '\t')) value++;
            while (valueEnd > value && (valueEnd[-1] == '\r' || valueEnd[-1] == ' ' || valueEnd[-1] == '\t')) valueEnd--;
            if (found) return NULL;
            found = value;
            *valueLength = (size_t)(valueEnd - value);
        }
        line = lineEnd;
    }
    return found;
}

enum outcome { incomplete, right, wrongAnswer, badAnswer };

/* Checks the bytes read so far: incomplete until the whole answer is in. */
static enum outcome examine(struct connection *connection) {
    if (connection->headerEnd < 0) {
        char *found = memmem(connection->buffer, connection->length, "\r\n\r\n", 4);
        if (!found) return incomplete;
        connection->headerEnd = found - connection->buffer + 4;
        const char *head = connection->buffer, *headEnd = found + 2;
        size_t valueLength;
        const char *value = header(head, headEnd, "content-length", 14, &valueLength);
        if (!value || valueLength == 0 || valueLength > 12) return badAnswer;
        long bodyLength = 0;
        for (size_t index = 0; index < valueLength; index++) {
            if (value[index] < '0' || value[index] > '9') return badAnswer;
            bodyLength = bodyLength * 10 + (value[index] - '0');
        }
        connection->bodyLength = bodyLength;
        value = header(head, headEnd, "connection", 10, &valueLength);
        connection->closing = value && valueLength == 5 && strncasecmp(value, "close", 5) == 0;
    }
    size_t total = (size_t)connection->headerEnd + (size_t)connection->bodyLength;
    if (connection->length < total) return incomplete;
    if (connection->length > total) return badAnswer;  /* bytes no request asked for */
    const char *head = connection->buffer;
    if (connection->length < 12 || memcmp(head, "HTTP/1.", 7) != 0) return badAnswer;
    if (memcmp(head + 8, " 200", 4) != 0) return badAnswer;
    if ((size_t)connection->bodyLength != expectedLength ||
        memcmp(head + connection->headerEnd, expected, expectedLength) != 0)
        return wrongAnswer;
    if (checkedName) {
        size_t valueLength;
        const char *value =
            header(head, head + connection->headerEnd - 2, checkedName, checkedNameLength, &valueLength);
        if (!value || valueLength != strlen(checkedValue) || memcmp(value, checkedValue, valueLength) != 0)
            return wrongAnswer;
    }
    return right;
}

/* Counts an error and closes the connection; the turn goes on with the others (and fails, by its error count). */
/* Opens the connection's socket and registers it; the request goes out once the socket is writable. */
static void start(int poller, struct connection *connection) {
    connection->fd = openConnection();
    connection->sent = 0;
    connection->length = 0;
    connection->headerEnd = -1;
    connection->sentAt = now();
    struct epoll_event event = {.events = EPOLLIN | EPOLLOUT, .data.ptr = connection};
    if (epoll_ctl(poller, EPOLL_CTL_ADD, connection->fd, &event) < 0) fail("epoll_ctl");
}

/* Closes the connection and opens a new one, as wrk does; with a reason, the answer it was waiting for counts as an
   error (the first few reasons are printed). A server that closes after a whole answer is no error. */
static void reconnect(int poller, struct connection *connection, struct worker *worker, const char *why) {
    if (why) {
        if (worker->errors < 5) fprintf(stderr, "checkload: %s\n", why);
        worker->errors++;
    }
    epoll_ctl(poller, EPOLL_CTL_DEL, connection->fd, NULL);
    close(connection->fd);
    start(poller, connection);
}

/* Counts as errors the answers waited for longer than `timeout` (a stalled connection is no answer, and without
   this it would only lower the rate) and opens their connections again. */
static void expire(int poller, struct connection *connections, int count, struct worker *worker) {
    double limit = now() - timeout;
    for (int index = 0; index < count; index++) {
        if (connections[index].sentAt < limit) reconnect(poller, &connections[index], worker, "an answer timed out");
    }
}

static void *run(void *argument) {
    struct worker *worker = argument;
    int poller = epoll_create1(EPOLL_CLOEXEC);
    if (poller < 0) fail("epoll_create1");
    struct connection *connections = calloc((size_t)worker->connections, sizeof *connections);
    if (!connections) fail("calloc");
    for (int index = 0; index < worker->connections; index++) {
        struct connection *connection = &connections[index];
        connection->capacity = 64 * 1024;
        connection->buffer = malloc(connection->capacity);
        if (!connection->buffer) fail("malloc");
        start(poller, connection);
    }
    pthread_barrier_wait(&started);
    struct epoll_event events[64];
    unsigned long batches = 0;
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        int ready = epoll_wait(poller, events, 64, 20);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        if (ready == 0 || ++batches % 4096 == 0) expire(poller, connections, worker->connections, worker);
        for (int index = 0; index < ready; index++) {
            struct connection *connection = events[index].data.ptr;
            uint32_t flags = events[index].events;
            if (flags & (EPOLLERR | EPOLLHUP) && !(flags & EPOLLIN)) {
                reconnect(poller, connection, worker, "a connection failed");
                continue;
            }
            if (flags & EPOLLOUT) {
                int state = sendRequest(connection);
                if (state < 0) {
                    reconnect(poller, connection, worker, "a request could not be sent");
                    continue;
                }
                struct epoll_event event = {.events = state == 0 ? EPOLLIN : EPOLLIN | EPOLLOUT,
                                            .data.ptr = connection};
                epoll_ctl(poller, EPOLL_CTL_MOD, connection->fd, &event);
            }
            if (!(flags & EPOLLIN)) continue;
            int closed = 0;
            for (;;) {
                if (connection->length == connection->capacity) {
                    connection->capacity *= 2;
                    connection->buffer = realloc(connection->buffer, connection->capacity);
                    if (!connection->buffer) fail("realloc");
                }
                ssize_t count = read(connection->fd, connection->buffer + connection->length,
                                     connection->capacity - connection->length);
                if (count > 0) {
                    connection->length += (size_t)count;
                    /* A read that did not fill the buffer took all there was: the next byte comes with another
                       readiness event, so no second read is spent on learning EAGAIN. */
                    if (connection->length < connection->capacity) break;
                    continue;
                }
                if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (count < 0 && errno == EINTR) continue;
                closed = 1;  /* the server closed the connection, or it broke */
                break;
            }
            enum outcome outcome = examine(connection);
            if (outcome == incomplete) {
                if (closed) reconnect(poller, connection, worker, "a connection closed before its answer was whole");
                continue;
            }
            if (outcome == badAnswer) {
                reconnect(poller, connection, worker, "an answer was not one 200 with one Content-Length");
                continue;
            }
            /* Answers that arrive after the turn's end are not counted: the turn's time is taken at its end. */
            if (atomic_load_explicit(&stopping, memory_order_relaxed)) break;
            worker->requests++;
            if (outcome == wrongAnswer) worker->wrong++;
            if (closed || connection->closing) {
                reconnect(poller, connection, worker, NULL);
                continue;
            }
            connection->length = 0;
            connection->headerEnd = -1;
            connection->sent = 0;
            connection->sentAt = now();
            int state = sendRequest(connection);
            if (state < 0) {
                reconnect(poller, connection, worker, "a request could not be sent");
            } else if (state == 1) {
                struct epoll_event event = {.events = EPOLLIN | EPOLLOUT, .data.ptr = connection};
                epoll_ctl(poller, EPOLL_CTL_MOD, connection->fd, &event);
            }
        }
    }
    /* An answer still awaited past the timeout at the end (a connection stalled for the turn) is an error too. */
    double limit = now() - timeout;
    for (int index = 0; index < worker->connections; index++) {
        if (connections[index].sentAt < limit) {
            if (worker->errors < 5) fprintf(stderr, "checkload: an answer timed out\n");
            worker->errors++;
        }
        close(connections[index].fd);
        free(connections[index].buffer);
    }
    free(connections);
    close(poller);
    return NULL;
}

int main(int argc, char **argv) {
    int connections = 1, threads = 1, seconds = 2, option;
    const char *requestPath = NULL, *bodyPath = NULL;
    while ((option = getopt(argc, argv, "c:t:d:r:e:a:T:")) != -1) {
        switch (option) {
        case 'T': timeout = atof(optarg); break;
        case 'c': connections = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'd': seconds = atoi(optarg); break;
        case 'r': requestPath = optarg; break;
        case 'e': bodyPath = optarg; break;
        case 'a': {
            char *colon = strchr(optarg, ':');
            if (!colon) {
                fprintf(stderr, "checkload: -a takes \"Name: value\"\n");
                return 2;
            }
            *colon = 0;
            checkedName = optarg;
            checkedNameLength = strlen(optarg);
            checkedValue = colon + 1;
            while (*checkedValue == ' ') checkedValue++;
            break;
        }
        default:
            fprintf(stderr, "usage: checkload -c N -t N -d SECONDS -r REQUEST_FILE -e BODY_FILE [-a \"Name: value\"] [-T SECONDS] "
                            "HOST PORT\n");
            return 2;
        }
    }
    if (!requestPath || !bodyPath || optind + 2 != argc || connections < 1 || threads < 1 || seconds < 1) {
        fprintf(stderr, "usage: checkload -c N -t N -d SECONDS -r REQUEST_FILE -e BODY_FILE [-a \"Name: value\"] [-T SECONDS] "
                        "HOST PORT\n");
        return 2;
    }
    if (threads > connections) threads = connections;
    if (!(timeout > 0)) timeout = 1.0;
    signal(SIGPIPE, SIG_IGN);
    request = readFile(requestPath, &requestLength);
    expected = readFile(bodyPath, &expectedLength);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *found;
    int status = getaddrinfo(argv[optind], argv[optind + 1], &hints, &found);
    if (status != 0) {
        fprintf(stderr, "checkload: %s:%s: %s\n", argv[optind], argv[optind + 1], gai_strerror(status));
        return 1;
    }
    memcpy(&address, found->ai_addr, found->ai_addrlen);
    addressLength = found->ai_addrlen;
    freeaddrinfo(found);

    struct worker *workers = calloc((size_t)threads, sizeof *workers);
    if (!workers) fail("calloc");
    pthread_barrier_init(&started, NULL, (unsigned)threads + 1);
    for (int index = 0; index < threads; index++) {
        workers[index].connections = connections / threads + (index < connections % threads ? 1 : 0);
        if (pthread_create(&workers[index].thread, NULL, run, &workers[index]) != 0) fail("pthread_create");
    }
    pthread_barrier_wait(&started);
    double start = now();
    struct timespec duration = {.tv_sec = seconds};
    while (nanosleep(&duration, &duration) < 0 && errno == EINTR) {}
    atomic_store(&stopping, 1);
    double elapsed = now() - start;
    long requests = 0, wrong = 0, errors = 0;
    for (int index = 0; index < threads; index++) {
        pthread_join(workers[index].thread, NULL);
        requests += workers[index].requests;
        wrong += workers[index].wrong;
        errors += workers[index].errors;
    }
    printf("SERVERBENCH requests=%ld seconds=%.6f wrong=%ld errors=%ld\n", requests, elapsed, wrong, errors);
    return 0;
}
