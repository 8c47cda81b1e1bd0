/*
 * rfsd: the server of the rfs: driver (and, later, of rdma:'s stripes).
 *
 *   rfsd --root DIR [OPTION]...      rfsd --config FILE [OPTION]...
 *
 * Every option is stated once, in opts[] below: the command line, the
 * config file (NAME = VALUE lines), --help and the man page's OPTIONS
 * section (--man-options, man/rfsd.8) are all made from it.
 *
 * Serves the files under DIR from an event loop and a pool of worker
 * threads (adio/server/rfs_loop.h): an idle connection costs a descriptor
 * and a few KiB, not a thread. At most N connections at once, by default
 * as many as the descriptor limit (raised to its hard limit) allows: one
 * more is refused at once (RFS_REFUSAL_OP), so that its client reports
 * "server busy" instead of waiting in the listen backlog. SIGTERM or
 * SIGINT stop it cleanly: no new connections, open connections are shut
 * down, every worker is joined. SIGHUP reads the key file again. With --keys, a client must prove it holds
 * one of the keys before anything else is served, within --auth-timeout;
 * with --tls-cert, every connection is TLS (docs/security.md). No MPI here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"
#include "verbs/net_verbs.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_proto.h"
#include "server/rfs_coll.h"
#include "server/rfs_log.h"
#include "server/rfs_loop.h"
#include "server/rfs_server.h"
#include "server/rfs_server_auth.h"

/* Descriptors kept for the files clients open, the listeners and logs when
 * the connection limit follows from RLIMIT_NOFILE. */
#define FD_RESERVE 1024
#define STR_(x) #x
#define STR(x) STR_(x)
/* A config file is a few lines: anything this big is a mistake. */
#define CONFIG_MAX (1 << 20)

static struct {
    struct rfs_server server;
    struct rfs_keyring keys;
    struct net_tls *tls;        /* NULL: plain TCP */
    struct rfs_loop *loop;
    char *config_text;          /* the config file: its values point into it */
    const char *keys_path;      /* --keys, read again at SIGHUP; NULL: none */
    pthread_t reloader;         /* waits for SIGHUP (sigwait) */
    atomic_int stopping;        /* the reloader ends at its next wake-up */
} g;

/* What the options set, from their defaults, the config file and the
 * command line (which wins). */
struct settings {
    const char *config, *root, *bind, *port, *port_file, *keys, *tls_cert, *tls_key;
    long max_conns, max_per_addr, threads, max_threads, auth_timeout_s, idle_timeout_s,
        max_data_mib, coll_cache_mib, coll_timeout_s, lease_timeout_s;
    double rate_mb;
    int rdma, log_level, help, man_options;
};

enum opt_kind { OPT_TEXT, OPT_COUNT, OPT_RATE, OPT_LEVEL, OPT_FLAG };

/* One option, for the command line, the config file, --help and the man
 * page alike: each is stated here once, so they cannot disagree. */
struct opt {
    const char *name;           /* --NAME on the command line, NAME = in a file */
    enum opt_kind kind;
    const char *arg;            /* what the value is, in help; NULL for a flag */
    size_t off;                 /* where the value goes in struct settings */
    long lo, hi;                /* OPT_COUNT: the values accepted */
    const char *unit;           /* OPT_COUNT: "" or the unit, in messages */
    const char *def;            /* the default, read as a value given would be */
    int cli_only;               /* not in a config file */
    const char *help;           /* one sentence or two; says a default `def` cannot */
};

#define AT(field) offsetof(struct settings, field)
/* --max-data's bound and default below: the protocol's limit. */
_Static_assert((RFS_MAX_DATA >> 20) == 64, "max-data's bound and default are 64 MiB");

static const struct opt opts[] = {
    { .name = "config", .kind = OPT_TEXT, .arg = "FILE", .off = AT(config), .cli_only = 1,
      .help = "Read settings from FILE: NAME = VALUE lines, NAME an option's name without "
              "the dashes; options on the command line override it." },
    { .name = "root", .kind = OPT_TEXT, .arg = "DIR", .off = AT(root),
      .help = "The export root (required): every path a client names is confined beneath "
              "it." },
    { .name = "bind", .kind = OPT_TEXT, .arg = "ADDR", .off = AT(bind), .def = "127.0.0.1",
      .help = "The address to listen on." },
    { .name = "port", .kind = OPT_TEXT, .arg = "N", .off = AT(port), .def = "0",
      .help = "The TCP port to listen on; 0: any free port." },
    { .name = "port-file", .kind = OPT_TEXT, .arg = "FILE", .off = AT(port_file),
      .help = "Write the port bound to FILE (atomically) once listening." },
    { .name = "rdma", .kind = OPT_FLAG, .off = AT(rdma),
      .help = "Also listen with rdma_cm (the verbs transport) on the same address and port "
              "number; ADDR must then be an RDMA device's address. In a config file: "
              "rdma = yes or no." },
    { .name = "max-connections", .kind = OPT_COUNT, .arg = "N", .off = AT(max_conns), .lo = 1,
      .hi = INT_MAX, .unit = "",
      .help = "Connections at once; one more is refused at once (its client reports "
              "\"server busy\"). Default: the descriptors rfsd can open (it raises its "
              "limit to the hard limit) less " STR(FD_RESERVE) "." },
    { .name = "max-per-address", .kind = OPT_COUNT, .arg = "N", .off = AT(max_per_addr),
      .lo = 0, .hi = INT_MAX, .unit = "", .def = "0",
      .help = "TCP connections one client address may hold; 0: any." },
    { .name = "threads", .kind = OPT_COUNT, .arg = "N", .off = AT(threads), .lo = 1,
      .hi = 4096, .unit = "", .def = "16",
      .help = "Worker threads kept (at most --max-threads when that is set alone)." },
    { .name = "max-threads", .kind = OPT_COUNT, .arg = "N", .off = AT(max_threads), .lo = 1,
      .hi = 65536, .unit = "", .def = "1024",
      .help = "Worker threads when requests wait (locks, collective calls)." },
    { .name = "auth-timeout", .kind = OPT_COUNT, .arg = "S", .off = AT(auth_timeout_s),
      .lo = 1, .hi = 3600, .unit = "seconds", .def = "5",
      .help = "With --keys or TLS: a connection not authenticated within S seconds is "
              "closed." },
    { .name = "idle-timeout", .kind = OPT_COUNT, .arg = "S", .off = AT(idle_timeout_s),
      .lo = 0, .hi = 86400 * 24, .unit = "seconds", .def = "0",
      .help = "A connection that sent no request for S seconds is closed; 0: never." },
    { .name = "max-data", .kind = OPT_COUNT, .arg = "MiB", .off = AT(max_data_mib), .lo = 1,
      .hi = RFS_MAX_DATA >> 20, .unit = "MiB", .def = "64",
      .help = "Data of one request or reply a connection holds in memory." },
    { .name = "keys", .kind = OPT_TEXT, .arg = "FILE", .off = AT(keys),
      .help = "Clients must prove they hold a key of FILE (NAME HEXSECRET [ro] [root=DIR] "
              "per line, mode 600); SIGHUP reads it again." },
    { .name = "tls-cert", .kind = OPT_TEXT, .arg = "FILE", .off = AT(tls_cert),
      .help = "With --tls-key: every connection is TLS 1.3, with this certificate (PEM, "
              "may hold a chain)." },
    { .name = "tls-key", .kind = OPT_TEXT, .arg = "FILE", .off = AT(tls_key),
      .help = "The private key of --tls-cert (PEM)." },
    { .name = "coll-cache", .kind = OPT_COUNT, .arg = "MiB", .off = AT(coll_cache_mib),
      .lo = 0, .hi = 1L << 20, .unit = "MiB", .def = "256",
      .help = "Memory for hot collective buffers; 0: none." },
    { .name = "coll-timeout", .kind = OPT_COUNT, .arg = "S", .off = AT(coll_timeout_s),
      .lo = 1, .hi = 86400, .unit = "seconds", .def = "60",
      .help = "How long a collective call waits for a missing participant." },
    { .name = "lease-timeout", .kind = OPT_COUNT, .arg = "S", .off = AT(lease_timeout_s),
      .lo = 1, .hi = 86400, .unit = "seconds", .def = "60",
      .help = "How long a request on bytes another client holds buffered (an abt: "
              "writer's extent lease) waits for them to land before it fails." },
    { .name = "log-level", .kind = OPT_LEVEL, .arg = "LEVEL", .off = AT(log_level),
      .def = "info", .help = "error, warn, info or debug." },
    { .name = "rate-limit", .kind = OPT_RATE, .arg = "MB/s", .off = AT(rate_mb),
      .help = "Emulate a link of this bandwidth (1 MB = 10^6 bytes), shared by all "
              "connections." },
    { .name = "help", .kind = OPT_FLAG, .off = AT(help), .cli_only = 1,
      .help = "Print this help and exit." },
    { .name = "man-options", .kind = OPT_FLAG, .off = AT(man_options), .cli_only = 1,
      .help = "Print the options as the OPTIONS section of rfsd(8) (roff) and exit." },
};
#define NOPTS (sizeof opts / sizeof opts[0])

/* Where each option's value came from, for precedence and messages. */
enum { FROM_DEFAULT = 0, FROM_COMMAND_LINE = -1 };  /* > 0: the config file's line */

static void on_signal(int sig)
{
    int saved = errno;
    if (sig != SIGUSR1 && g.loop)
        rfs_loop_stop(g.loop);
    errno = saved;
}

/* A whole number of lo..hi for flag `name` (in `unit`, "" for a count),
 * or -1 with a message. */
static int parse_count(const char *arg, const char *name, long lo, long hi, const char *unit,
                       long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < lo || v > hi) {
        fprintf(stderr, "rfsd: %s must be %ld..%ld%s%s%s\n", name, lo, hi, *unit ? " (" : "",
                unit, *unit ? ")" : "");
        return -1;
    }
    *out = v;
    return 0;
}

/* A flag's value in a config file (on the command line it has none). */
static int parse_flag(const char *arg, const char *name, int *out)
{
    if (!strcmp(arg, "yes") || !strcmp(arg, "true") || !strcmp(arg, "no") ||
        !strcmp(arg, "false")) {
        *out = arg[0] == 'y' || arg[0] == 't';
        return 0;
    }
    fprintf(stderr, "rfsd: %s must be yes or no\n", name);
    return -1;
}

/* Option o's value `arg` (NULL: a flag on the command line) into s; `name`
 * is how the user wrote the option, for messages. 0, or -1 with a message:
 * a value is refused alike from the command line and a file. */
static int set_value(const struct opt *o, const char *arg, const char *name, struct settings *s)
{
    void *v = (char *) s + o->off;
    char *end;
    int level;
    switch (o->kind) {
    case OPT_TEXT:
        *(const char **) v = arg;
        return 0;
    case OPT_COUNT:
        return parse_count(arg, name, o->lo, o->hi, o->unit, v);
    case OPT_RATE:
        *(double *) v = strtod(arg, &end);
        if (end == arg || *end || !(*(double *) v > 0 && *(double *) v < 1e9)) {
            fprintf(stderr, "rfsd: %s must be a positive number of MB/s\n", name);
            return -1;
        }
        return 0;
    case OPT_LEVEL:
        if ((level = rfs_log_parse_level(arg)) < 0) {
            fprintf(stderr, "rfsd: %s must be error, warn, info or debug\n", name);
            return -1;
        }
        *(int *) v = level;
        return 0;
    case OPT_FLAG:
        if (arg)
            return parse_flag(arg, name, v);
        *(int *) v = 1;
        return 0;
    }
    return -1;
}

static int apply_defaults(struct settings *s)
{
    *s = (struct settings) { 0 };
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].def && set_value(&opts[i], opts[i].def, opts[i].name, s) < 0)
            return -1;
    return 0;
}

/* `text` from column `col` on, wrapped at 79 columns, continued at `indent`. */
static void print_wrapped(FILE *out, const char *text, int col, int indent)
{
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + (int) word > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int) word, text);
        col += (int) word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: rfsd --root DIR [OPTION]...\n"
                 "       rfsd --config FILE [OPTION]...\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt *o = &opts[i];
        char head[64], text[512];
        snprintf(head, sizeof head, "  --%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        snprintf(text, sizeof text, "%s%s%s%s", o->help, o->def ? " Default: " : "",
                 o->def ? o->def : "", o->def ? "." : "");
        int col = fprintf(out, "%-26s", head);
        if (col > 26) {
            fprintf(out, "\n%26s", "");
            col = 26;
        }
        print_wrapped(out, text, col, 26);
    }
}

/* `text` for roff: no request at the start of a line, no escape, no hyphen
 * that a dash was meant as (options are typed from man pages). */
static void print_roff(const char *text)
{
    if (*text == '.' || *text == '\'')
        fputs("\\&", stdout);
    for (; *text; text++) {
        if (*text == '-')
            fputs("\\-", stdout);
        else if (*text == '\\')
            fputs("\\e", stdout);
        else
            putchar(*text);
    }
}

/* The OPTIONS section of man/rfsd.8 (which holds this very output). */
static void print_man_options(void)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt *o = &opts[i];
        /* .TP's tag is one line: the name bold, its value italic */
        fputs(o->arg ? ".TP\n.BI \\-\\-" : ".TP\n.B \\-\\-", stdout);
        print_roff(o->name);
        if (o->arg) {
            fputs(" \" ", stdout);
            print_roff(o->arg);
            putchar('"');
        }
        putchar('\n');
        print_roff(o->help);
        if (o->def) {
            fputs(" Default: ", stdout);
            print_roff(o->def);
            putchar('.');
        }
        if (o->cli_only)
            fputs(" Command line only.", stdout);
        putchar('\n');
    }
}

/* getopt_long's value for opts[i]: beyond every character, no short options. */
#define OPT_VAL(i) (256 + (int) (i))

/* 0, 1 for usage (getopt_long said what is wrong), -1 after a message. */
static int parse_command_line(int argc, char **argv, struct settings *s, int *from)
{
    struct option lopts[NOPTS + 1];
    for (size_t i = 0; i < NOPTS; i++)
        lopts[i] = (struct option) { opts[i].name, opts[i].kind == OPT_FLAG ? no_argument :
                                     required_argument, NULL, OPT_VAL(i) };
    lopts[NOPTS] = (struct option) { 0 };
    int c;
    while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        if (c < OPT_VAL(0) || c >= OPT_VAL(NOPTS))
            return 1;
        const struct opt *o = &opts[c - OPT_VAL(0)];
        char name[80];
        snprintf(name, sizeof name, "--%s", o->name);
        if (set_value(o, optarg, name, s) < 0)
            return -1;
        from[c - OPT_VAL(0)] = FROM_COMMAND_LINE;
    }
    return optind == argc ? 0 : 1;
}

static const struct opt *find_opt(const char *name)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (!strcmp(opts[i].name, name))
            return &opts[i];
    return NULL;
}

/* s without the blanks around it (in place). */
static char *trim(char *s)
{
    s += strspn(s, " \t\r");
    size_t n = strlen(s);
    while (n && strchr(" \t\r", s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* One NAME = VALUE line (comments and blank lines already skipped). */
static int config_line(char *line, const char *where, struct settings *s, int *from, int lineno)
{
    char *eq = strchr(line, '=');
    if (!eq) {
        fprintf(stderr, "rfsd: %s expected NAME = VALUE\n", where);
        return -1;
    }
    *eq = '\0';
    char *name = trim(line), *value = trim(eq + 1);
    const struct opt *o = find_opt(name);
    if (!o || o->cli_only) {
        fprintf(stderr, o ? "rfsd: %s '%s' is an option of the command line only\n" :
                "rfsd: %s unknown option '%s'\n", where, name);
        return -1;
    }
    size_t i = (size_t) (o - opts);
    if (from[i] > 0) {
        fprintf(stderr, "rfsd: %s %s set before, on line %d\n", where, name, from[i]);
        return -1;
    }
    if (!*value) {
        fprintf(stderr, "rfsd: %s %s without a value\n", where, name);
        return -1;
    }
    char label[PATH_MAX + 96];
    snprintf(label, sizeof label, "%s %s", where, name);
    /* A value the command line overrides is still checked: the file must
     * be right for the next start without that flag. */
    struct settings ignored;
    if (set_value(o, value, label, from[i] == FROM_COMMAND_LINE ? &ignored : s) < 0)
        return -1;
    if (from[i] != FROM_COMMAND_LINE)
        from[i] = lineno;
    return 0;
}

/* The whole config file, NUL-terminated, into g.config_text. */
static int read_config_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rfsd: config file %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *text = malloc(CONFIG_MAX + 1);
    size_t n = text ? fread(text, 1, CONFIG_MAX + 1, f) : 0;
    int bad = !text || ferror(f) || n > CONFIG_MAX || memchr(text, '\0', n);
    fclose(f);
    if (bad) {
        fprintf(stderr, "rfsd: config file %s: %s\n", path, !text ? "out of memory" :
                n > CONFIG_MAX ? "over 1 MiB" : n && memchr(text, '\0', n) ? "a NUL byte in it" :
                "cannot be read");
        free(text);
        return -1;
    }
    text[n] = '\0';
    g.config_text = text;
    return 0;
}

/* The config file's settings under those of the command line (from[]). */
static int read_config(const char *path, struct settings *s, int *from)
{
    if (read_config_text(path) < 0)
        return -1;
    int lineno = 0;
    for (char *text = g.config_text, *line; (line = rfs_text_next_line(&text, &lineno));) {
        char where[PATH_MAX + 32];
        snprintf(where, sizeof where, "%s:%d:", path, lineno);
        if (config_line(line, where, s, from, lineno) < 0)
            return -1;
    }
    return 0;
}

/* What no single option can check. 0, 1 for usage, or -1 after a message. */
static int check_settings(struct settings *s, const int *from)
{
    if (!s->root || !s->tls_cert != !s->tls_key)
        return 1;
    if (from[find_opt("threads") - opts] == FROM_DEFAULT && s->threads > s->max_threads)
        s->threads = s->max_threads;
    if (s->max_threads < s->threads) {
        fprintf(stderr, "rfsd: --max-threads must be at least --threads (%ld)\n", s->threads);
        return -1;
    }
    return 0;
}

/* Defaults, the config file, the command line, in that order of strength:
 * 0, or 2 to exit with (after a message). With --help or --man-options the
 * rest is not read. */
static int settings_from(int argc, char **argv, struct settings *s)
{
    int from[NOPTS] = { 0 };
    if (apply_defaults(s) < 0)
        return 2;
    int rc = parse_command_line(argc, argv, s, from);
    if (rc == 0 && (s->help || s->man_options))
        return 0;
    if (rc == 0 && s->config && read_config(s->config, s, from) < 0)
        return 2;
    if (rc == 0)
        rc = check_settings(s, from);
    if (rc > 0)
        usage(stderr);
    return rc ? 2 : 0;
}

/* Raise the descriptor limit to its hard limit: the default connection
 * limit follows from what rfsd got. */
static long raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX ? INT_MAX : (long) rl.rlim_cur;
}

static int write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int) getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    fprintf(f, "%d\n", port);
    if (fclose(f) != 0 || rename(tmp, path) < 0) {
        int rc = -errno;
        unlink(tmp);
        return rc;
    }
    return 0;
}

static int install_signals(void)
{
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: SIGUSR1 must interrupt a worker's lock wait. */
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0 ||
        sigaction(SIGUSR1, &sa, NULL) < 0)
        return -errno;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* SIGHUP: the key file read again. The new keys serve the proofs that
 * follow; a file that does not load (or names a root that is missing)
 * leaves the old keys in place. */
static void reload_keys(void)
{
    char err[512];
    struct rfs_keyring fresh;
    /* The roots are checked with a copy of the server that holds the new
     * keys: the running one goes on with the old ones until the swap. */
    struct rfs_server probe = g.server;
    probe.keys = &fresh;
    if (rfs_keyring_load(g.keys_path, &fresh, err, sizeof err) < 0 ||
        rfs_server_check_keys(&probe, err, sizeof err) < 0) {
        rfs_log(RFS_LOG_ERROR, "SIGHUP: keys not read again, the old ones stay: %s", err);
        rfs_keyring_free(&fresh);
        return;
    }
    rfs_server_auth_swap_keys(&g.keys, &fresh);
    rfs_keyring_free(&fresh);
    rfs_log(RFS_LOG_INFO, "SIGHUP: clients must authenticate: %zu keys from %s", g.keys.count,
            g.keys_path);
}

/* A thread of its own waits for SIGHUP, blocked in every other thread: a
 * handler could not load a file. */
static void *reloader(void *unused)
{
    (void) unused;
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    int sig;
    while (sigwait(&hup, &sig) == 0 && !atomic_load(&g.stopping)) {
        if (g.keys_path)
            reload_keys();
        else
            rfs_log(RFS_LOG_INFO, "SIGHUP: no --keys, nothing to read again");
    }
    return NULL;
}

static void stop_reloader(void)
{
    atomic_store(&g.stopping, 1);
    pthread_kill(g.reloader, SIGHUP);
    pthread_join(g.reloader, NULL);
}

/* SIGHUP blocked before any thread starts, so that every thread inherits
 * it (it waits, pending, for the reloader). */
static int block_sighup(void)
{
    sigset_t hup;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    return -pthread_sigmask(SIG_BLOCK, &hup, NULL);
}

static void log_stats(void)
{
    struct rfs_loop_stats ls;
    rfs_loop_get_stats(g.loop, &ls);
    rfs_log(RFS_LOG_INFO, "connections: %llu taken, %llu refused, %llu closed unauthenticated, "
            "%llu closed idle; workers: at most %d", (unsigned long long) ls.accepted,
            (unsigned long long) ls.refused, (unsigned long long) ls.auth_closed,
            (unsigned long long) ls.idle_closed, ls.threads_peak);
    struct rfs_coll_stats s;
    rfs_coll_table_stats(g.server.coll, &s);
    if (s.calls || s.timeouts)
        rfs_log(RFS_LOG_INFO, "collective calls: %llu (%llu pieces in %llu accesses, %llu bytes), "
                "hot buffers: %llu hits, %llu misses, %llu timeouts",
                (unsigned long long) s.calls, (unsigned long long) s.pieces,
                (unsigned long long) s.accesses, (unsigned long long) s.access_bytes,
                (unsigned long long) s.cache_hits, (unsigned long long) s.cache_misses,
                (unsigned long long) s.timeouts);
}

static int setup_security(const char *keys, const char *tls_cert, const char *tls_key)
{
    char err[512];
    int rc = 0;
    g.server.keys = keys ? &g.keys : NULL;
    g.keys_path = keys;
    if (keys && ((rc = rfs_keyring_load(keys, &g.keys, err, sizeof err)) < 0 ||
                 (rc = rfs_server_check_keys(&g.server, err, sizeof err)) < 0))
        rfs_log(RFS_LOG_ERROR, "%s", err);
    else if (keys)
        rfs_log(RFS_LOG_INFO, "clients must authenticate: %zu keys from %s", g.keys.count, keys);
    if (rc == 0 && tls_cert && (rc = net_tls_server_new(tls_cert, tls_key, &g.tls, err,
                                                        sizeof err)) < 0)
        rfs_log(RFS_LOG_ERROR, "TLS: %s", err);
    return rc;
}

int main(int argc, char **argv)
{
    struct settings set;
    int rc = settings_from(argc, argv, &set);
    if (rc != 0 || set.help || set.man_options) {
        if (rc == 0)
            set.help ? usage(stdout) : print_man_options();
        free(g.config_text);
        return rc;
    }
    rfs_log_set_level((enum rfs_log_level) set.log_level);
    if ((rc = block_sighup()) < 0) {
        rfs_log(RFS_LOG_ERROR, "signals: %s", strerror(-rc));
        return 1;
    }
    long nofile = raise_nofile();
    if (!set.max_conns)
        set.max_conns = nofile > 2 * FD_RESERVE ? nofile - FD_RESERVE : nofile / 2;
    else if (set.max_conns > nofile - 64)
        rfs_log(RFS_LOG_WARN, "--max-connections %ld: only %ld descriptors to be had", set.max_conns,
                nofile);

    rc = rfs_server_init(&g.server, set.root);
    if (rc < 0) {
        rfs_log(RFS_LOG_ERROR, "export root %s: %s", set.root, strerror(-rc));
        return 1;
    }
    static struct rfs_rate rate;
    if (set.rate_mb > 0) {
        rfs_rate_init(&rate, set.rate_mb * 1e6);
        g.server.rate = &rate;
    }
    g.server.max_data = (uint64_t) set.max_data_mib << 20;
    g.server.coll_timeout_ms = (int) set.coll_timeout_s * 1000;
    g.server.lease_timeout_ms = (int) set.lease_timeout_s * 1000;
    if (rfs_coll_table_new(&g.server.coll, (uint64_t) set.coll_cache_mib << 20) < 0) {
        rfs_log(RFS_LOG_ERROR, "out of memory");
        return 1;
    }
    if (setup_security(set.keys, set.tls_cert, set.tls_key) < 0)
        return 1;
    int lfd, bound;
    if ((rc = net_tcp_listen(set.bind, set.port, &lfd, &bound)) < 0) {
        rfs_log(RFS_LOG_ERROR, "listen on %s:%s: %s", set.bind, set.port, strerror(-rc));
        return 1;
    }
    struct net_verbs_listener *rl = NULL;
    if (set.rdma && (rc = net_verbs_listen(set.bind, bound, &rl)) < 0) {
        rfs_log(RFS_LOG_ERROR, "rdma listen on %s:%d: %s", set.bind, bound, strerror(-rc));
        return 1;
    }
    struct rfs_loop_opts lo = { .max_conns = (int) set.max_conns,
                                .max_per_addr = (int) set.max_per_addr, .threads = (int) set.threads,
                                .max_threads = (int) set.max_threads,
                                .auth_timeout_ms = (int) set.auth_timeout_s * 1000,
                                .idle_timeout_ms = (int) set.idle_timeout_s * 1000, .tls = g.tls };
    if ((rc = rfs_loop_new(&g.server, &lo, lfd, rl, &g.loop)) < 0) {
        rfs_log(RFS_LOG_ERROR, "event loop: %s", strerror(-rc));
        return 1;
    }
    if (install_signals() < 0) {
        rfs_log(RFS_LOG_ERROR, "signals: %s", strerror(errno));
        return 1;
    }
    if (set.port_file && (rc = write_port_file(set.port_file, bound)) < 0) {
        rfs_log(RFS_LOG_ERROR, "port file %s: %s", set.port_file, strerror(-rc));
        return 1;
    }
    rfs_log(RFS_LOG_INFO, "serving %s on %s port %d%s (at most %ld connections with %ld "
            "descriptors, %ld-%ld workers, %ld MiB each)", set.root, set.bind, bound,
            rl ? " (tcp and rdma)" : "", set.max_conns, nofile, set.threads, set.max_threads,
            set.max_data_mib);

    if ((rc = pthread_create(&g.reloader, NULL, reloader, NULL)) != 0) {
        rfs_log(RFS_LOG_ERROR, "SIGHUP thread: %s", strerror(rc));
        return 1;
    }
    rc = rfs_loop_run(g.loop);
    stop_reloader();
    if (rc < 0)
        rfs_log(RFS_LOG_ERROR, "cannot start workers: %s", strerror(-rc));
    log_stats();
    /* No signal handler may reach the loop once it is freed. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    rfs_loop_free(g.loop);
    close(lfd);
    if (rl)
        net_verbs_listener_close(rl);
    net_tls_free(g.tls);
    rfs_coll_table_free(g.server.coll);
    rfs_keyring_free(&g.keys);
    rfs_server_fini(&g.server);
    free(g.config_text);
    rfs_log(RFS_LOG_INFO, "stopped");
    return rc < 0 ? 1 : 0;
}
