/* SPDX-License-Identifier: MIT */
/*
 * Between the agent's HTTP server (http.c) and its routes (routes.c): one
 * request's state, and the routes' two steps: parse (at once, in the
 * server's thread: a bad request is answered there) and run (in a job
 * thread: waiting for slices, merging, encoding).
 */
#ifndef SFPROF_AGENT_INT_H
#define SFPROF_AGENT_INT_H

#include <microhttpd.h>

#include "agent/agent.h"

/* a request's header and everything libmicrohttpd keeps of it */
#define AGENT_HTTP_REQUEST_MAX (16 * 1024)
/* the addresses pprof may post to /debug/pprof/symbol (read, discarded) */
#define AGENT_SYMBOL_BODY_MAX (4u << 20)

enum agent_req_state {
	AGENT_REQ_NEW = 0,
	AGENT_REQ_RUNNING, /* suspended, a job thread has it */
	AGENT_REQ_DONE,
};

struct agent_req {
	struct agent_http *h;
	struct MHD_Connection *conn;
	enum agent_req_state state;
	int has_body;
	size_t body_bytes;
	/* the route, parsed */
	uint32_t sel;	  /* SFPROF_SEL_* the endpoint serves */
	unsigned seconds; /* the window asked for */
	struct agent_filter f;
	char comm[32];
	char cgroup[1024];
	char error[160]; /* a bad request's one line */
	/* the answer */
	unsigned code;
	const char *ctype;
	char *body;
	size_t len;
};

/*
 * The route of url with its query: 0 when it is a profile route (r holds
 * what to do), else r->code (404: no such route or event not profiled;
 * 400: a bad parameter) and r->error.
 */
int agent_route__parse(struct agent *a, struct MHD_Connection *c, const char *url,
		       struct agent_req *r);
/* The profile r asks for into r->code, r->ctype, r->body (malloc'd). */
void agent_route__profile(struct agent *a, struct agent_req *r);

#endif
