// SPDX-License-Identifier: MIT
/*
 * The agent's HTTP server: libmicrohttpd with one epoll thread for every
 * connection, so idle or slow clients cost a file descriptor and never a
 * thread. A profile request that must wait or merge is suspended and
 * answered by a job thread (at most max_profiles at once; more get 503),
 * so /metrics keeps answering meanwhile. Limits: connections (all and per
 * address), request memory (headers included), idle time, and the time a
 * connection may take to send a request's header (a watchdog shuts down
 * the socket of one that trickles it). No request names a file: the
 * routes read memory only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_int.h"
#include "util.h"

/* the header of a request must be in this long after the connection
 * opened (or its last response went out) */
struct conn_watch {
	int fd;
	uint64_t deadline; /* CLOCK_MONOTONIC ns; 0: in a request or done */
	struct conn_watch *next, *prev;
};

struct agent_http {
	struct MHD_Daemon *d;
	struct agent *a;
	struct agent_http_opts o;
	char *token;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* jobs ended */
	unsigned jobs;
	unsigned answering; /* requests of jobs whose answers are not out yet */
	struct conn_watch head; /* list of connections */
	pthread_t watchdog;
	int stopping, watchdog_started;
	unsigned port;
};

static void watch_set(struct agent_http *h, struct conn_watch *w, uint64_t deadline)
{
	pthread_mutex_lock(&h->mu);
	w->deadline = deadline;
	pthread_mutex_unlock(&h->mu);
}

static void notify_conn(void *cls, struct MHD_Connection *c, void **sock_ctx,
			enum MHD_ConnectionNotificationCode toe)
{
	struct agent_http *h = cls;
	struct conn_watch *w = *sock_ctx;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(w = calloc(1, sizeof(*w))))
			return;
		w->fd = ci->connect_fd;
		pthread_mutex_lock(&h->mu);
		w->deadline = util__now_ns() + (uint64_t)h->o.header_timeout_s * 1000000000ull;
		w->next = h->head.next;
		w->prev = &h->head;
		h->head.next->prev = w;
		h->head.next = w;
		pthread_mutex_unlock(&h->mu);
		*sock_ctx = w;
	} else if (w) {
		/* before libmicrohttpd closes the fd: the watchdog, which
		 * holds the lock while it shuts one down, never sees it reused */
		pthread_mutex_lock(&h->mu);
		w->prev->next = w->next;
		w->next->prev = w->prev;
		pthread_mutex_unlock(&h->mu);
		free(w);
		*sock_ctx = NULL;
	}
}

static void *watchdog_main(void *arg)
{
	struct agent_http *h = arg;

	pthread_mutex_lock(&h->mu);
	while (!h->stopping) {
		struct timespec ts;
		uint64_t now = util__now_ns();

		for (struct conn_watch *w = h->head.next; w != &h->head; w = w->next) {
			if (w->deadline && now > w->deadline) {
				shutdown(w->fd, SHUT_RDWR);
				w->deadline = 0;
				h->a->http_header_timeouts++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&h->cv, &h->mu, &ts);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* Equal strings, in time that depends on the given one's length only. */
static int token_equal(const char *given, size_t glen, const char *want)
{
	size_t wlen = strlen(want);
	unsigned char diff = glen != wlen;

	for (size_t i = 0; i < glen; i++)
		diff |= (unsigned char)given[i] ^ (unsigned char)want[i % (wlen ? wlen : 1)];
	return diff == 0;
}

static int authorized(struct agent_http *h, struct MHD_Connection *c)
{
	const char *v;

	if (!h->token)
		return 1;
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!v || strncasecmp(v, "Bearer ", 7))
		return 0;
	v += 7;
	while (*v == ' ')
		v++;
	return token_equal(v, strlen(v), h->token);
}

static enum MHD_Result send_buf(struct agent_http *h, struct MHD_Connection *c, unsigned code,
				const char *ctype, char *buf, size_t len, int must_free)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, buf, must_free ? MHD_RESPMEM_MUST_FREE :
								    MHD_RESPMEM_MUST_COPY);
	if (!r) {
		if (must_free)
			free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* go tool pprof shows a text answer's body when this is set */
	if (code != 200)
		MHD_add_response_header(r, "X-Go-Pprof", "1");
	if (code == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (!strcmp(ctype, "application/octet-stream"))
		MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	agent__count_http(h->a, code);
	return ret;
}

static enum MHD_Result send_text(struct agent_http *h, struct MHD_Connection *c, unsigned code,
				 const char *text)
{
	return send_buf(h, c, code, "text/plain; charset=utf-8", (char *)text, strlen(text), 0);
}

static void *job_main(void *arg)
{
	struct agent_req *r = arg;
	struct agent_http *h = r->h;

	agent_route__profile(h->a, r);
	/* r is libmicrohttpd's again after this: not touched */
	MHD_resume_connection(r->conn);
	pthread_mutex_lock(&h->mu);
	h->jobs--;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static enum MHD_Result start_job(struct agent_http *h, struct agent_req *r)
{
	pthread_attr_t at;
	pthread_t t;
	int busy, err;

	pthread_mutex_lock(&h->mu);
	busy = h->stopping || h->jobs >= h->o.max_profiles;
	if (!busy) {
		h->jobs++;
		h->answering++;
	}
	pthread_mutex_unlock(&h->mu);
	if (busy)
		return send_text(h, r->conn, 503, "sfprof agent: too many profile requests at "
				 "once; retry later\n");
	r->state = AGENT_REQ_RUNNING;
	MHD_suspend_connection(r->conn);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &at, job_main, r);
	pthread_attr_destroy(&at);
	if (err) {
		r->code = 503;
		r->body = strdup("sfprof agent: cannot start a profile job\n");
		r->len = r->body ? strlen(r->body) : 0;
		r->ctype = "text/plain; charset=utf-8";
		MHD_resume_connection(r->conn);
		pthread_mutex_lock(&h->mu);
		h->jobs--;
		pthread_mutex_unlock(&h->mu);
	}
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **req_cls)
{
	struct agent_http *h = cls;
	struct agent_req *r = *req_cls;
	const union MHD_ConnectionInfo *ci;
	char *body;
	size_t len;

	(void)version;
	(void)upload;
	if (!r) { /* the header is in */
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		if (ci && ci->socket_context)
			watch_set(h, ci->socket_context, 0);
		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		r->h = h;
		r->conn = c;
		*req_cls = r;
		return MHD_YES;
	}
	if (*upload_size) { /* only /debug/pprof/symbol takes one: discarded */
		r->body_bytes += *upload_size;
		*upload_size = 0;
		r->has_body = 1;
		return MHD_YES;
	}
	if (r->state == AGENT_REQ_RUNNING) { /* resumed: the job's answer */
		body = r->body;
		r->body = NULL;
		r->state = AGENT_REQ_DONE;
		return send_buf(h, c, r->code, r->ctype, body, r->len, 1);
	}
	if (!authorized(h, c))
		return send_text(h, c, 401, "sfprof agent: a bearer token is needed "
				 "(Authorization: Bearer TOKEN)\n");
	/*
	 * pprof asks here for the names of addresses in mappings whose
	 * functions a profile does not all name (POST "0xADDR+0xADDR...").
	 * The profile carries every name the agent has: it answers that it
	 * serves symbols and names none, so pprof keeps the addresses (a 405
	 * would end `go tool pprof` with an error).
	 */
	if (!strcmp(url, "/debug/pprof/symbol") && (!strcmp(method, MHD_HTTP_METHOD_POST) ||
						    !strcmp(method, MHD_HTTP_METHOD_GET)))
		return r->body_bytes > AGENT_SYMBOL_BODY_MAX ?
			send_text(h, c, 413, "sfprof agent: too many addresses\n") :
			send_text(h, c, 200, "num_symbols: 1\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_text(h, c, 405, "sfprof agent: only GET is served\n");
	if (r->has_body)
		return send_text(h, c, 400, "sfprof agent: a GET request has no body\n");
	if (!strcmp(url, "/healthz"))
		return __atomic_load_n(&h->a->running, __ATOMIC_ACQUIRE) ?
			send_text(h, c, 200, "ok\n") :
			send_text(h, c, 503, "sfprof agent: starting (attaching)\n");
	if (!strcmp(url, "/metrics")) {
		body = agent_metrics__text(h->a, &len);
		if (!body)
			return send_text(h, c, 503, "sfprof agent: out of memory\n");
		return send_buf(h, c, 200, "text/plain; version=0.0.4; charset=utf-8", body, len, 1);
	}
	if (agent_route__parse(h->a, c, url, r)) {
		if (r->code == 404)
			return send_text(h, c, 404, r->error);
		return send_text(h, c, 400, r->error);
	}
	return start_job(h, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct agent_http *h = cls;
	struct agent_req *r = *req_cls;
	const union MHD_ConnectionInfo *ci;

	(void)toe;
	if (r && r->state != AGENT_REQ_NEW) { /* a job's answer is out (or given up) */
		pthread_mutex_lock(&h->mu);
		h->answering--;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
	}
	if (r) {
		free(r->body);
		free(r);
		*req_cls = NULL;
	}
	/* keep-alive: the next request's header is due in time too */
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci && ci->socket_context)
		watch_set(h, ci->socket_context,
			  util__now_ns() + (uint64_t)h->o.header_timeout_s * 1000000000ull);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
	/* per-connection noise (resets, timeouts) stays off stderr */
}

struct agent_http *agent_http__start(const struct agent_http_opts *o, struct agent *a)
{
	struct agent_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *di;
	pthread_condattr_t ca;
	int err;

	if (!h)
		return NULL;
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, o->host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)o->port);
	} else if (inet_pton(AF_INET6, o->host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)o->port);
		flags |= MHD_USE_IPv6;
	} else {
		free(h);
		errno = EINVAL;
		return NULL;
	}
	if (o->tls_cert)
		flags |= MHD_USE_TLS;
	h->a = a;
	h->o = *o;
	h->head.next = h->head.prev = &h->head;
	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (o->token && !(h->token = strdup(o->token)))
		goto err_out;
	h->d = MHD_start_daemon(
		flags, (uint16_t)o->port, NULL, NULL, on_request, h,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, o->max_conns,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)AGENT_HTTP_REQUEST_MAX,
		MHD_OPTION_NOTIFY_CONNECTION, notify_conn, h,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		o->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, o->tls_cert,
		MHD_OPTION_HTTPS_MEM_KEY, o->tls_key,
		MHD_OPTION_END);
	if (!h->d) {
		fprintf(stderr, "sfprof: cannot listen on %s port %u: %s\n", o->host, o->port,
			errno ? strerror(errno) : "libmicrohttpd refused the options");
		goto err_out;
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di ? di->port : o->port;
	err = pthread_create(&h->watchdog, NULL, watchdog_main, h);
	if (err) {
		errno = err;
		goto err_out;
	}
	h->watchdog_started = 1;
	return h;

err_out:
	agent_http__stop(h);
	return NULL;
}

unsigned agent_http__port(const struct agent_http *h)
{
	return h->port;
}

int agent_http__stop(struct agent_http *h)
{
	struct timespec ts;
	int busy;

	if (!h)
		return 0;
	pthread_mutex_lock(&h->mu);
	h->stopping = 1;
	pthread_cond_broadcast(&h->cv);
	/* the jobs see the slices closed and end; their connections must
	 * be resumed before the daemon stops, and their answers sent (at
	 * most 2 s) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 2;
	while ((h->jobs || h->answering) && pthread_cond_timedwait(&h->cv, &h->mu, &ts) == 0)
		;
	pthread_mutex_unlock(&h->mu);
	if (h->watchdog_started)
		pthread_join(h->watchdog, NULL);
	if (h->d && !h->jobs)
		MHD_stop_daemon(h->d);
	/* (a job still merging past the deadline: the process is exiting,
	 * its daemon is left to the exit; the stopped one freed every
	 * connection's watch) */
	free(h->token);
	h->token = NULL;
	busy = h->jobs != 0;
	if (!busy) {
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
		free(h);
	}
	return busy ? -EBUSY : 0;
}
